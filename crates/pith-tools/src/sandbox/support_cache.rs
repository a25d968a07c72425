//! What the kernel offers, remembered in the data dir until the next boot: probing it starts
//! four test processes (each entering one part of the sandbox), which is most of what a short
//! `pith run` costs beyond the request itself. The record is keyed by the boot, the user, pith's
//! version and the settings that allow or forbid user namespaces, so a reboot, an upgrade or a
//! changed sysctl probes again. Commands cannot touch it: the data dir is hidden from them.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::Support;

const FILE: &str = "sandbox-support.json";

#[derive(Serialize, Deserialize)]
struct Record {
    key: String,
    support: Support,
}

/// What decides whether a remembered probe still holds.
fn key() -> String {
    let read = |p: &str| {
        std::fs::read_to_string(p)
            .unwrap_or_default()
            .trim()
            .to_string()
    };
    format!(
        "{}|{}|{}|{}|{}|{}",
        read("/proc/sys/kernel/random/boot_id"),
        // SAFETY: geteuid has no preconditions.
        unsafe { libc::geteuid() },
        env!("CARGO_PKG_VERSION"),
        read("/proc/sys/kernel/unprivileged_userns_clone"),
        read("/proc/sys/user/max_user_namespaces"),
        read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"),
    )
}

/// The remembered probe, when it was made under the same conditions.
pub(super) fn load(data_dir: &Path) -> Option<Support> {
    let bytes = std::fs::read(data_dir.join(FILE)).ok()?;
    let r: Record = serde_json::from_slice(&bytes).ok()?;
    (r.key == key()).then_some(r.support)
}

/// Remembers `support` (best effort: a data dir that cannot be written just probes again).
pub(super) fn save(data_dir: &Path, support: &Support) {
    let record = Record {
        key: key(),
        support: support.clone(),
    };
    let Ok(json) = serde_json::to_vec(&record) else {
        return;
    };
    let tmp = data_dir.join(format!("{FILE}.tmp{}", std::process::id()));
    if std::fs::write(&tmp, json).is_ok() && std::fs::rename(&tmp, data_dir.join(FILE)).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_probe_is_remembered_under_the_same_conditions_only() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(load(dir.path()), None);
        let s = Support {
            landlock: Some(6),
            seccomp: true,
            namespaces: None,
            proc: true,
            missing: None,
        };
        save(dir.path(), &s);
        assert_eq!(load(dir.path()), Some(s.clone()));
        // Made under other conditions (another boot, user or version): probed again.
        let stale = Record {
            key: "another boot".into(),
            support: s,
        };
        std::fs::write(dir.path().join(FILE), serde_json::to_vec(&stale).unwrap()).unwrap();
        assert_eq!(load(dir.path()), None);
        std::fs::write(dir.path().join(FILE), b"not json").unwrap();
        assert_eq!(load(dir.path()), None);
    }
}
