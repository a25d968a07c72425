//! Caps that hold for root: a cgroup of its own per command with `pids.max` (root ignores
//! `RLIMIT_NPROC`) and, when configured, a memory cap.
//!
//! The cgroup is made in the parent below pith's own cgroup (cgroup v1 hierarchies of the
//! `pids` and `memory` controllers, or the v2 hierarchy when it offers them to children), and
//! the forked child joins it by writing `0` to its `cgroup.procs` before the command's process
//! is forked, so the reaper and everything the command starts are in it. An emptied cgroup is
//! removed when the next command starts, and one a pith left behind by the next pith (their
//! names carry the pid). Where no cgroup can be made (not root and nothing delegated, or a
//! read-only `/sys/fs/cgroup`), pith says at start that the cap is not enforced.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// The name every cgroup pith makes starts with.
const PREFIX: &str = "pith-";

/// A cgroup made for one command, ready for its child to join.
pub(super) struct Cgroup {
    procs: Vec<OwnedFd>,
    dirs: Vec<PathBuf>,
}

impl Drop for Cgroup {
    /// Dropped with the command's `Command` after the spawn (its child has joined by then):
    /// from now on the cgroup is removed once it is empty.
    fn drop(&mut self) {
        MADE.lock()
            .unwrap_or_else(|e| e.into_inner())
            .append(&mut self.dirs);
    }
}

/// The cgroups made and not yet removed (removed once empty).
static MADE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
static SWEPT: std::sync::Once = std::sync::Once::new();
static NEXT: AtomicU64 = AtomicU64::new(0);

/// A controller's folder for this process: (the cgroup folder, cgroup v2).
fn own_dir(controller: &str) -> Result<(PathBuf, bool), String> {
    let cgroups = std::fs::read_to_string("/proc/self/cgroup").map_err(|e| e.to_string())?;
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").map_err(|e| e.to_string())?;
    let mut v2_path = None;
    for line in cgroups.lines() {
        let mut f = line.splitn(3, ':');
        let (_, ctrls, path) = (f.next(), f.next().unwrap_or(""), f.next().unwrap_or(""));
        if ctrls.is_empty() {
            v2_path = Some(path.to_string());
        } else if ctrls.split(',').any(|c| c == controller)
            && let Some(dir) = mounted(&mountinfo, "cgroup", Some(controller), path)
        {
            return Ok((dir, false));
        }
    }
    if let Some(path) = v2_path
        && let Some(dir) = mounted(&mountinfo, "cgroup2", None, &path)
    {
        let offered = std::fs::read_to_string(dir.join("cgroup.subtree_control"))
            .unwrap_or_default()
            .split_whitespace()
            .any(|c| c == controller);
        if offered {
            return Ok((dir, true));
        }
        return Err(format!(
            "the {controller} controller is not enabled for child cgroups of {}",
            dir.display()
        ));
    }
    Err(format!("no {controller} cgroup is mounted"))
}

/// Where the cgroup `path` of a hierarchy (`fstype`, with `controller` among a v1 mount's
/// options) is mounted, from `/proc/self/mountinfo`.
fn mounted(mountinfo: &str, fstype: &str, controller: Option<&str>, path: &str) -> Option<PathBuf> {
    mountinfo
        .lines()
        .find_map(|line| mount_of(line, fstype, controller, path))
}

/// [`mounted`] for one line of `mountinfo`.
fn mount_of(line: &str, fstype: &str, controller: Option<&str>, path: &str) -> Option<PathBuf> {
    let (left, right) = line.split_once(" - ")?;
    let mut r = right.split(' ');
    let (fs, _source, opts) = (r.next()?, r.next()?, r.next().unwrap_or(""));
    if fs != fstype || controller.is_some_and(|c| !opts.split(',').any(|o| o == c)) {
        return None;
    }
    let l: Vec<&str> = left.split(' ').collect();
    let (root, point) = (*l.get(3)?, *l.get(4)?);
    let rel = Path::new(path).strip_prefix(root).ok()?;
    Some(Path::new(point).join(rel))
}

/// Whether a cgroup with `controller` can be made here; why not otherwise.
pub(crate) fn check(controller: &str) -> Result<(), String> {
    let (dir, _) = own_dir(controller)?;
    let c =
        std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).map_err(|e| e.to_string())?;
    // SAFETY: access(2) on a NUL-terminated path.
    if unsafe { libc::access(c.as_ptr(), libc::W_OK) } != 0 {
        return Err(format!("{} is not writable", dir.display()));
    }
    Ok(())
}

impl Cgroup {
    /// A cgroup with at most `pids` tasks and `memory` bytes (each `None`: no cap of that
    /// kind); an error says which cap cannot be enforced and why.
    pub(super) fn new(pids: Option<u64>, memory: Option<u64>) -> io::Result<Cgroup> {
        sweep();
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let name = format!("{PREFIX}{}-{n}", std::process::id());
        let mut group = Cgroup {
            procs: Vec::new(),
            dirs: Vec::new(),
        };
        let mut made: Vec<(PathBuf, bool)> = Vec::new();
        for (controller, cap) in [("pids", pids), ("memory", memory)] {
            let Some(cap) = cap else { continue };
            let (dir, v2) = own_dir(controller).map_err(io::Error::other)?;
            let cg = dir.join(&name);
            if !made.iter().any(|(d, _)| d == &cg) {
                std::fs::create_dir(&cg)?;
                made.push((cg.clone(), v2));
                group.dirs.push(cg.clone());
                group.procs.push(OwnedFd::from(
                    std::fs::OpenOptions::new()
                        .write(true)
                        .open(cg.join("cgroup.procs"))?,
                ));
            }
            let file = match (controller, v2) {
                ("pids", _) => "pids.max",
                (_, true) => "memory.max",
                _ => "memory.limit_in_bytes",
            };
            std::fs::write(cg.join(file), cap.to_string())?;
            if controller == "memory" && v2 {
                let _ = std::fs::write(cg.join("memory.swap.max"), "0");
            }
        }
        Ok(group)
    }

    /// Moves the calling process into the cgroup. In the forked child: async-signal-safe.
    pub(super) fn join(&self) -> io::Result<()> {
        for fd in &self.procs {
            // SAFETY: write(2) of a static buffer to an open descriptor.
            if unsafe { libc::write(fd.as_raw_fd(), b"0".as_ptr().cast(), 1) } != 1 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    }
}

/// Removes the cgroups of earlier commands that are empty now, and, once, those of pith
/// processes that have ended.
fn sweep() {
    let mut made = MADE.lock().unwrap_or_else(|e| e.into_inner());
    made.retain(|d| std::fs::remove_dir(d).is_err() && d.exists());
    drop(made);
    SWEPT.call_once(|| {
        for controller in ["pids", "memory"] {
            let Ok((dir, _)) = own_dir(controller) else {
                continue;
            };
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let name = entry.file_name();
                let pid = name
                    .to_str()
                    .and_then(|n| n.strip_prefix(PREFIX))
                    .and_then(|r| r.split('-').next())
                    .and_then(|p| p.parse::<u32>().ok());
                // Old ones only: a pid namespace may hide a live pith that just made its own.
                let old = entry
                    .metadata()
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| t.elapsed().ok())
                    .is_some_and(|age| age.as_secs() > 60);
                if let Some(pid) = pid
                    && old
                    && !Path::new(&format!("/proc/{pid}")).exists()
                {
                    let _ = std::fs::remove_dir(entry.path());
                }
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cgroup_path_is_found_below_its_mount() {
        let info = "35 25 0:30 / /sys/fs/cgroup/pids rw,relatime shared:13 - cgroup cgroup rw,pids\n\
                    36 25 0:31 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n\
                    37 25 0:32 /ctr /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n";
        assert_eq!(
            mounted(info, "cgroup", Some("pids"), "/a/b"),
            Some(PathBuf::from("/sys/fs/cgroup/pids/a/b"))
        );
        assert_eq!(
            mounted(info, "cgroup", Some("memory"), "/ctr/x"),
            Some(PathBuf::from("/sys/fs/cgroup/memory/x"))
        );
        assert_eq!(
            mounted(info, "cgroup2", None, "/"),
            Some(PathBuf::from("/sys/fs/cgroup/unified"))
        );
        assert_eq!(mounted(info, "cgroup", Some("cpu"), "/"), None);
    }
}
