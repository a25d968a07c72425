//! Caps on a sandboxed command — processes, memory, the size of its private `/tmp` — and what
//! of them this system cannot enforce (said once at start). The process cap is
//! `RLIMIT_NPROC`, which spares root: as root a pids cgroup holds it (`linux/cgroup.rs`).

use pith_config::SandboxMode;

use super::Support;

/// Caps on one command (`None`: no cap of that kind).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Limits {
    /// Processes at once (`RLIMIT_NPROC`, and a pids cgroup for root, which that limit spares).
    pub processes: Option<u64>,
    /// Bytes of memory for the whole tree (a memory cgroup).
    pub memory: Option<u64>,
    /// Bytes in the private `/tmp`.
    pub(crate) tmp_size: Option<u64>,
}

/// The configured caps this system cannot enforce, in words.
pub(super) fn missing(mode: SandboxMode, limits: &Limits, s: &Support) -> Option<String> {
    if mode == SandboxMode::Off {
        return None;
    }
    let mut lost = Vec::new();
    #[cfg(target_os = "linux")]
    {
        // SAFETY: geteuid cannot fail.
        let root = unsafe { libc::geteuid() } == 0;
        if let Some(n) = limits.processes.filter(|_| root)
            && let Err(why) = super::linux::cgroup_check("pids")
        {
            lost.push(format!(
                "pith runs as root, which the process limit spares, and no pids cgroup can be made ({why}): the cap of {n} processes is not enforced"
            ));
        }
        if limits.memory.is_some()
            && let Err(why) = super::linux::cgroup_check("memory")
        {
            lost.push(format!("sandbox_memory_max is not enforced ({why})"));
        }
    }
    #[cfg(not(target_os = "linux"))]
    if limits.memory.is_some() {
        lost.push("sandbox_memory_max is not enforced on this system".to_string());
    }
    if limits.tmp_size.is_some() && !s.has_namespaces() {
        lost.push("sandbox_tmp_size is not enforced without user namespaces".to_string());
    }
    (!lost.is_empty()).then(|| lost.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cap_that_cannot_hold_is_named_and_none_without_a_sandbox() {
        let limits = Limits {
            tmp_size: Some(1 << 20),
            ..Limits::default()
        };
        let no_ns = Support {
            landlock: Some(6),
            seccomp: true,
            namespaces: Some("unshare: EPERM".into()),
            ..Support::default()
        };
        let w = missing(SandboxMode::WorkspaceWrite, &limits, &no_ns).unwrap();
        assert!(w.contains("sandbox_tmp_size") && !w.contains('\n'), "{w}");
        assert_eq!(missing(SandboxMode::Off, &limits, &no_ns), None);
        assert_eq!(
            missing(SandboxMode::WorkspaceWrite, &Limits::default(), &no_ns),
            None
        );
    }
}
