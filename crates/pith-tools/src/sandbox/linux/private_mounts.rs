//! What a command sees instead of the machine's shared places: an empty tmpfs on `/tmp`
//! (with the workspace and the other folders it needs under `/tmp` bound back in), and a
//! minimal `/dev` — `null`, `zero`, `full`, `random`, `urandom`, a `devpts` instance of its own
//! (`/dev/pts`, `/dev/ptmx`: its own terminals, none of the user's), `/dev/fd` and the standard
//! streams as links to `/proc/self/fd`, an empty `/dev/shm`. No `/dev/tty*` of the machine, no
//! other `/dev/pts/N`: a command cannot read what the user types in another terminal.
//!
//! Prepared in the parent; [`PrivateMounts::enter`] runs in the forked child, in the new mount
//! namespace, with async-signal-safe system calls only.

use std::ffi::{CStr, CString};
use std::io;
use std::path::{Path, PathBuf};

use super::namespaces::{check, cstr, fd_path};

/// The device files a command keeps (bound from the machine's `/dev`).
const DEVICES: [&CStr; 5] = [
    c"/dev/null",
    c"/dev/zero",
    c"/dev/full",
    c"/dev/random",
    c"/dev/urandom",
];
/// Links in the private `/dev`: (link, target).
const DEV_LINKS: [(&CStr, &CStr); 4] = [
    (c"/dev/fd", c"/proc/self/fd"),
    (c"/dev/stdin", c"/proc/self/fd/0"),
    (c"/dev/stdout", c"/proc/self/fd/1"),
    (c"/dev/stderr", c"/proc/self/fd/2"),
];
/// At most this many folders under `/tmp` are bound back into the private one.
pub(super) const MAX_KEPT: usize = 16;

/// A path under `/tmp` the command needs (the workspace, a writable or read-only folder),
/// bound back into its private `/tmp`.
struct Kept {
    path: CString,
    /// The folders to make in the tmpfs first, outermost first (not `path` itself).
    dirs: Vec<CString>,
    file: bool,
}

/// The private mounts of one command.
pub(super) struct PrivateMounts {
    /// tmpfs options for `/tmp` and `/dev/shm` (`None`: the machine's `/tmp` stays).
    tmp_opts: Option<CString>,
    keep: Vec<Kept>,
    dev: bool,
}

impl PrivateMounts {
    /// `tmp`: a private `/tmp` of `tmp_size` bytes at most, into which the paths of `needed`
    /// that lie under `/tmp` are bound back; `dev`: a minimal `/dev`.
    pub(super) fn new(
        tmp: bool,
        tmp_size: Option<u64>,
        needed: &[PathBuf],
        dev: bool,
    ) -> io::Result<PrivateMounts> {
        let mut keep = Vec::new();
        let tmp_opts = if tmp {
            let size = tmp_size.map(|s| format!(",size={s}")).unwrap_or_default();
            let opts = CString::new(format!("mode=1777{size}")).map_err(io::Error::other)?;
            for path in kept_paths(needed) {
                let Ok(meta) = std::fs::metadata(&path) else {
                    continue;
                };
                let mut dirs = Vec::new();
                let mut at = PathBuf::from("/tmp");
                let rel = path.strip_prefix("/tmp").unwrap_or(&path);
                let parts: Vec<_> = rel.components().collect();
                for part in &parts[..parts.len().saturating_sub(1)] {
                    at.push(part);
                    dirs.push(cstr(&at)?);
                }
                keep.push(Kept {
                    path: cstr(&path)?,
                    dirs,
                    file: !meta.is_dir(),
                });
            }
            if keep.len() > MAX_KEPT {
                return Err(io::Error::other(format!(
                    "more than {MAX_KEPT} folders under /tmp to keep in a private /tmp"
                )));
            }
            Some(opts)
        } else {
            None
        };
        Ok(PrivateMounts {
            tmp_opts,
            keep,
            dev,
        })
    }

    /// Mounts them. In the child, in its mount namespace, before the read-only remount.
    pub(super) fn enter(&self) -> io::Result<()> {
        // SAFETY: system calls on prepared NUL-terminated strings and stack buffers.
        unsafe {
            if let Some(opts) = &self.tmp_opts {
                private_tmp(opts, &self.keep)?;
            }
            if self.dev {
                minimal_dev(self.tmp_opts.as_deref())?;
            }
        }
        Ok(())
    }
}

/// The paths of `needed` strictly under `/tmp`, without those inside another one.
pub(super) fn kept_paths(needed: &[PathBuf]) -> Vec<PathBuf> {
    let mut under: Vec<PathBuf> = needed
        .iter()
        .filter(|p| p.starts_with("/tmp") && p.as_path() != Path::new("/tmp"))
        .cloned()
        .collect();
    under.sort();
    under.dedup();
    let mut out: Vec<PathBuf> = Vec::new();
    for p in under {
        if !out.iter().any(|o| p.starts_with(o)) {
            out.push(p);
        }
    }
    out
}

unsafe fn mkdir_ok(path: &CStr, mode: libc::mode_t) -> io::Result<()> {
    // SAFETY: mkdir on a NUL-terminated path.
    if unsafe { libc::mkdir(path.as_ptr(), mode) } != 0 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EEXIST) {
            return Err(e);
        }
    }
    Ok(())
}

/// An empty regular file at `path`, to bind a file onto.
unsafe fn touch(path: &CStr) -> io::Result<()> {
    // SAFETY: open/close on a NUL-terminated path.
    unsafe {
        let fd = libc::open(
            path.as_ptr(),
            libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC,
            0o600,
        );
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        libc::close(fd);
    }
    Ok(())
}

/// Binds what `fd` (an `O_PATH` descriptor) opens onto `target`.
unsafe fn bind_fd(fd: i32, target: &CStr) -> io::Result<()> {
    let source = fd_path(fd);
    // SAFETY: mount(2) on NUL-terminated paths.
    check(unsafe {
        libc::mount(
            source.as_ptr().cast(),
            target.as_ptr(),
            std::ptr::null(),
            libc::MS_BIND | libc::MS_REC,
            std::ptr::null(),
        )
    })
}

unsafe fn private_tmp(opts: &CStr, keep: &[Kept]) -> io::Result<()> {
    // SAFETY: as in `PrivateMounts::enter`.
    unsafe {
        // Held before the tmpfs covers them (a bind needs a source in this namespace).
        let mut fds = [-1i32; MAX_KEPT];
        for (fd, k) in fds.iter_mut().zip(keep) {
            *fd = libc::open(k.path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC);
        }
        let result = cover_tmp(opts, keep, &fds);
        for fd in fds.into_iter().filter(|&fd| fd >= 0) {
            libc::close(fd);
        }
        result
    }
}

unsafe fn cover_tmp(opts: &CStr, keep: &[Kept], fds: &[i32; MAX_KEPT]) -> io::Result<()> {
    // SAFETY: as in `PrivateMounts::enter`.
    unsafe {
        check(libc::mount(
            c"tmpfs".as_ptr(),
            c"/tmp".as_ptr(),
            c"tmpfs".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV,
            opts.as_ptr().cast(),
        ))?;
        for (k, &fd) in keep.iter().zip(fds) {
            if fd < 0 {
                continue; // it vanished since the plan
            }
            for dir in &k.dirs {
                mkdir_ok(dir, 0o755)?;
            }
            if k.file {
                touch(&k.path)?;
            } else {
                mkdir_ok(&k.path, 0o755)?;
            }
            bind_fd(fd, &k.path)?;
        }
    }
    Ok(())
}

/// The minimal `/dev`; `/dev/shm` gets a tmpfs with the private `/tmp`'s options (or none).
unsafe fn minimal_dev(shm_opts: Option<&CStr>) -> io::Result<()> {
    // SAFETY: as in `PrivateMounts::enter`.
    unsafe {
        let mut fds = [-1i32; DEVICES.len()];
        for (fd, dev) in fds.iter_mut().zip(DEVICES) {
            *fd = libc::open(dev.as_ptr(), libc::O_PATH | libc::O_CLOEXEC);
        }
        let result = cover_dev(&fds, shm_opts);
        for fd in fds.into_iter().filter(|&fd| fd >= 0) {
            libc::close(fd);
        }
        result
    }
}

unsafe fn cover_dev(fds: &[i32; DEVICES.len()], shm_opts: Option<&CStr>) -> io::Result<()> {
    let flags = libc::MS_NOSUID | libc::MS_NOEXEC;
    // SAFETY: as in `PrivateMounts::enter`.
    unsafe {
        check(libc::mount(
            c"tmpfs".as_ptr(),
            c"/dev".as_ptr(),
            c"tmpfs".as_ptr(),
            flags | libc::MS_NODEV,
            c"mode=755,size=64k,nr_inodes=64".as_ptr().cast(),
        ))?;
        for (&fd, dev) in fds.iter().zip(DEVICES) {
            if fd >= 0 {
                touch(dev)?;
                bind_fd(fd, dev)?;
            }
        }
        for (link, target) in DEV_LINKS {
            check(libc::symlink(target.as_ptr(), link.as_ptr()))?;
        }
        // Terminals of its own only: a fresh devpts instance (where the kernel allows one).
        mkdir_ok(c"/dev/pts", 0o755)?;
        if libc::mount(
            c"devpts".as_ptr(),
            c"/dev/pts".as_ptr(),
            c"devpts".as_ptr(),
            flags,
            c"newinstance,ptmxmode=0666,mode=620".as_ptr().cast(),
        ) == 0
        {
            check(libc::symlink(c"pts/ptmx".as_ptr(), c"/dev/ptmx".as_ptr()))?;
        }
        mkdir_ok(c"/dev/shm", 0o1777)?;
        check(libc::mount(
            c"tmpfs".as_ptr(),
            c"/dev/shm".as_ptr(),
            c"tmpfs".as_ptr(),
            flags | libc::MS_NODEV,
            shm_opts.unwrap_or(c"mode=1777").as_ptr().cast(),
        ))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_outermost_paths_under_tmp_are_kept() {
        let needed = [
            PathBuf::from("/tmp"),
            PathBuf::from("/tmp/a/ws"),
            PathBuf::from("/tmp/a/ws/.git"),
            PathBuf::from("/tmp/b"),
            PathBuf::from("/tmpfoo"),
            PathBuf::from("/home/u/ws"),
        ];
        assert_eq!(
            kept_paths(&needed),
            vec![PathBuf::from("/tmp/a/ws"), PathBuf::from("/tmp/b")]
        );
    }
}
