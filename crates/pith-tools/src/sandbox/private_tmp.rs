//! The temp dir a sandboxed command gets instead of the machine's shared `/tmp`, where a
//! planted `.git` or `AGENTS.md` would reach every later program that looks there.
//!
//! With namespaces each command gets an empty tmpfs on `/tmp` (and `/dev/shm`) in its own mount
//! namespace, sized by `sandbox_tmp_size`: it is gone when the call ends, however it ends
//! (per call; a build caches nothing in it between calls). A workspace or writable folder that
//! lies under `/tmp` is bound back into it (`linux/private_mounts.rs`). Without namespaces the
//! command gets a private folder of this pith process as `TMPDIR` (kept for the session, so a
//! build can reuse it), and Landlock grants it instead of `/tmp`; a later pith removes the
//! folders of pith processes that are gone.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// What a command gets as its temp dir.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Tmp {
    /// The machine's `/tmp` (no sandbox, or one that cannot give it a private one).
    #[default]
    Shared,
    /// An empty tmpfs of its own on `/tmp`, in its mount namespace: gone with the call.
    Mounted,
    /// Without namespaces: a private folder of this pith process, `TMPDIR` (Landlock grants
    /// it and not `/tmp`).
    Dir(PathBuf),
}

/// The prefix of the private folders made without namespaces.
const DIR_PREFIX: &str = "pith-tmp-";

/// What the command's temp dir is, given what the sandbox can do here.
pub(super) fn choose(
    namespaces: bool,
    confined_writes: bool,
    workspace: &Path,
    notes: &mut Vec<String>,
) -> Tmp {
    if Path::new("/tmp").starts_with(workspace) {
        // A workspace that is /tmp (or holds it) must stay what the command sees.
        if namespaces || confined_writes {
            notes.push(format!(
                "the workspace {} is or holds /tmp, so commands share the machine's /tmp",
                workspace.display()
            ));
        }
        return Tmp::Shared;
    }
    if namespaces {
        return Tmp::Mounted;
    }
    if !confined_writes {
        return Tmp::Shared;
    }
    match session_dir() {
        Some(dir) => Tmp::Dir(dir.clone()),
        None => {
            notes.push("no private temp dir could be made, so commands share /tmp".into());
            Tmp::Shared
        }
    }
}

/// This process's private temp folder (made once, mode 0700), for kernels without namespaces.
fn session_dir() -> Option<&'static PathBuf> {
    static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    DIR.get_or_init(|| {
        let base = std::env::temp_dir();
        sweep(&base);
        use std::os::unix::fs::DirBuilderExt;
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir = base.join(format!("{DIR_PREFIX}{}-{nanos:x}", std::process::id()));
        // A new folder (mkdir fails on anything already there, a planted link included).
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&dir)
            .map_err(|e| tracing::warn!("cannot make a private temp dir for commands: {e}"))
            .ok()?;
        Some(dir)
    })
    .as_ref()
}

/// Removes the private folders of pith processes that have ended (at most a few per start).
fn sweep(base: &Path) {
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(DIR_PREFIX))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        // Old ones only: a pid namespace may hide a live pith that just made its own.
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age.as_secs() > 60);
        if !old || Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if is_dir && std::fs::remove_dir_all(entry.path()).is_ok() {
            removed += 1;
            if removed >= 16 {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_workspace_that_is_tmp_keeps_the_shared_one() {
        let mut notes = Vec::new();
        assert_eq!(
            choose(true, true, Path::new("/tmp"), &mut notes),
            Tmp::Shared
        );
        assert_eq!(notes.len(), 1);
        assert_eq!(
            choose(true, true, Path::new("/tmp/ws"), &mut notes),
            Tmp::Mounted
        );
        assert_eq!(
            choose(false, false, Path::new("/srv/ws"), &mut notes),
            Tmp::Shared
        );
        let Tmp::Dir(dir) = choose(false, true, Path::new("/srv/ws"), &mut notes) else {
            panic!("no private dir without namespaces");
        };
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
    }
}
