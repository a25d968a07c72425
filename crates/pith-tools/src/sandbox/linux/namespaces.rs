//! User, mount, PID, IPC (and, with the network off, network) namespaces for one command.
//!
//! In the new mount namespace the files git and pith take commands from are bind-mounted
//! read-only over themselves, and the hidden paths are covered: a directory by an empty
//! read-only tmpfs (with the tool-output folder bound back in), a file by `/dev/null`. Mounts
//! inherited into a namespace owned by a less privileged user namespace are locked by the
//! kernel, so a command cannot unmount them or bind the folder under them elsewhere.
//!
//! Everything is prepared in the parent: the child only makes system calls on that data.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::super::paths::Hidden;
use super::private_mounts::PrivateMounts;

/// One mount in the command's namespace.
enum Op {
    /// `path` bound onto itself and remounted read-only, keeping the mount's `flags` (the
    /// kernel refuses a remount that drops a locked flag such as `nosuid`).
    ReadOnly { path: CString, flags: libc::c_ulong },
    /// An empty tmpfs over a directory; `reveal` is bound back in before it is made read-only.
    HideDir { path: CString, reveal: Vec<Reveal> },
    /// `/dev/null` over a file.
    HideFile { path: CString },
}

/// A folder inside a hidden directory that stays visible: opened (`O_PATH`) in the new mount
/// namespace before the tmpfs covers it, then bound from `/proc/self/fd/N` onto a mount point
/// made in the tmpfs (`dirs`, outermost first, the last one being `path` again).
struct Reveal {
    path: CString,
    dirs: Vec<CString>,
}

/// The namespaces for one command, ready to enter.
pub(super) struct Namespaces {
    flags: libc::c_int,
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
    /// With writes confined: every mount read-only but these folders (metadata included:
    /// `chmod` or `touch -d` outside fail too, which Landlock does not cover).
    writable: Option<Vec<CString>>,
    /// The private `/tmp` and the minimal `/dev`, mounted first.
    private: PrivateMounts,
    ops: Vec<Op>,
    /// Mount a fresh `/proc` in the command's process (which is the PID namespace's first).
    pub proc: bool,
}

const TMPFS_OPTS: &[u8] = b"size=16k,nr_inodes=64,mode=755\0";

pub(super) fn cstr(p: &Path) -> io::Result<CString> {
    CString::new(p.as_os_str().as_bytes()).map_err(|_| io::Error::other("a path holds a NUL byte"))
}

/// The mount flags of the mount `path` is on that a bind remount must keep.
fn locked_flags(path: &Path) -> io::Result<libc::c_ulong> {
    let c = cstr(path)?;
    // SAFETY: `st` is a plain struct the call fills in.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let f = st.f_flag;
    let mut flags = 0;
    for (st_flag, ms_flag) in [
        (libc::ST_NOSUID, libc::MS_NOSUID),
        (libc::ST_NODEV, libc::MS_NODEV),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (libc::ST_RELATIME, libc::MS_RELATIME),
    ] {
        if f & st_flag != 0 {
            flags |= ms_flag;
        }
    }
    Ok(flags)
}

impl Namespaces {
    /// Plans the namespaces: `read_only` paths and `hidden` ones (both existing, absolute);
    /// `writable`, when writes are confined, the only folders left writable; `network` false
    /// gives the command a network namespace of its own; `proc` mounts a fresh `/proc`;
    /// `private` covers `/tmp` and `/dev`.
    pub(super) fn new(
        read_only: &[PathBuf],
        hidden: &[Hidden],
        writable: Option<&[PathBuf]>,
        (network, proc): (bool, bool),
        private: PrivateMounts,
    ) -> io::Result<Namespaces> {
        let mut flags =
            libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWPID | libc::CLONE_NEWIPC;
        if !network {
            flags |= libc::CLONE_NEWNET;
        }
        // SAFETY: getuid/getgid cannot fail.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        let mut ops = Vec::new();
        for path in read_only {
            ops.push(Op::ReadOnly {
                path: cstr(path)?,
                flags: locked_flags(path)?,
            });
        }
        for h in hidden {
            if !h.dir {
                ops.push(Op::HideFile {
                    path: cstr(&h.path)?,
                });
                continue;
            }
            let mut reveal = Vec::new();
            for r in &h.reveal {
                let Ok(rel) = r.strip_prefix(&h.path) else {
                    continue;
                };
                let mut dirs = Vec::new();
                let mut at = h.path.clone();
                for part in rel.components() {
                    at.push(part);
                    dirs.push(cstr(&at)?);
                }
                reveal.push(Reveal {
                    path: cstr(r)?,
                    dirs,
                });
            }
            ops.push(Op::HideDir {
                path: cstr(&h.path)?,
                reveal,
            });
        }
        let writable = match writable {
            Some(paths) => {
                // Outer folders first: a bind of `/tmp` must not cover one made below it.
                let mut paths = paths.to_vec();
                paths.sort();
                Some(paths.iter().map(|p| cstr(p)).collect::<io::Result<_>>()?)
            }
            None => None,
        };
        Ok(Namespaces {
            flags,
            uid_map: format!("{uid} {uid} 1\n").into_bytes(),
            gid_map: format!("{gid} {gid} 1\n").into_bytes(),
            writable,
            private,
            ops,
            proc,
        })
    }

    /// Enters the namespaces and makes the mounts. Runs in the forked child before the
    /// command's own process is forked (which is then the PID namespace's first process).
    /// Async-signal-safe: system calls on prepared data only.
    pub(super) fn enter(&self) -> io::Result<()> {
        // SAFETY: plain system calls on memory owned by `self`.
        unsafe {
            if libc::unshare(self.flags) != 0 {
                return Err(io::Error::last_os_error());
            }
            // pith is non-dumpable (its keys are in its memory), and so is this fork of it, which
            // gives its `/proc/self` files to root, so the kernel may refuse the map writes.
            // Dumpable for the writes only; the program executed next is dumpable again anyway.
            libc::prctl(libc::PR_SET_DUMPABLE, 1, 0, 0, 0);
            let maps = write_file(c"/proc/self/setgroups", b"deny")
                .and_then(|()| write_file(c"/proc/self/uid_map", &self.uid_map))
                .and_then(|()| write_file(c"/proc/self/gid_map", &self.gid_map));
            libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
            maps?;
            check(libc::mount(
                std::ptr::null(),
                c"/".as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ))?;
            self.private.enter()?;
            if let Some(writable) = &self.writable {
                read_only_except(writable)?;
            }
            for op in &self.ops {
                match op {
                    Op::ReadOnly { path, flags } => read_only(path, *flags)?,
                    Op::HideDir { path, reveal } => hide_dir(path, reveal)?,
                    Op::HideFile { path } => skip_missing(libc::mount(
                        c"/dev/null".as_ptr(),
                        path.as_ptr(),
                        std::ptr::null(),
                        libc::MS_BIND,
                        std::ptr::null(),
                    ))?,
                }
            }
            // The working directory was entered before these mounts: enter it again by its
            // path, through them (else writes there would meet the read-only mount below).
            let mut cwd = [0u8; 4096];
            if !libc::getcwd(cwd.as_mut_ptr().cast(), cwd.len()).is_null() {
                check(libc::chdir(cwd.as_ptr().cast()))?;
            }
        }
        Ok(())
    }

    /// Mounts a fresh `/proc` for the PID namespace (in its first process), so the command
    /// sees its own processes only.
    pub(super) fn mount_proc(&self) -> io::Result<()> {
        if !self.proc {
            return Ok(());
        }
        // SAFETY: a plain system call on static strings.
        check(unsafe {
            libc::mount(
                c"proc".as_ptr(),
                c"/proc".as_ptr(),
                c"proc".as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                std::ptr::null(),
            )
        })
    }
}

/// `struct mount_attr` of `mount_setattr(2)`.
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

const MOUNT_ATTR_RDONLY: u64 = 1;

unsafe fn set_read_only(path: &std::ffi::CStr, read_only: bool, recursive: bool) -> libc::c_long {
    let attr = MountAttr {
        attr_set: if read_only { MOUNT_ATTR_RDONLY } else { 0 },
        attr_clr: if read_only { 0 } else { MOUNT_ATTR_RDONLY },
        propagation: 0,
        userns_fd: 0,
    };
    let flags = if recursive { libc::AT_RECURSIVE } else { 0 };
    // SAFETY: mount_setattr on a NUL-terminated path and a live struct of the size given.
    unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            path.as_ptr(),
            flags as libc::c_uint,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    }
}

/// Makes every mount read-only, then binds each of `writable` onto itself and makes it
/// writable again. A kernel without `mount_setattr` (before 5.12) keeps Landlock alone.
unsafe fn read_only_except(writable: &[CString]) -> io::Result<()> {
    // SAFETY: system calls on NUL-terminated paths.
    unsafe {
        if set_read_only(c"/", true, true) != 0 {
            let e = io::Error::last_os_error();
            return match e.raw_os_error() {
                Some(libc::ENOSYS) => Ok(()),
                _ => Err(e),
            };
        }
        for path in writable {
            let r = libc::mount(
                path.as_ptr(),
                path.as_ptr(),
                std::ptr::null(),
                libc::MS_BIND | libc::MS_REC,
                std::ptr::null(),
            );
            skip_missing(r)?;
            if r != 0 {
                continue; // it does not exist
            }
            // A mount below that was read-only before the sandbox stays so (the kernel
            // refuses to clear a flag it locked): then only the folder's own mount is cleared.
            if set_read_only(path, false, true) != 0 && set_read_only(path, false, false) != 0 {
                return Err(io::Error::last_os_error());
            }
        }
    }
    Ok(())
}

pub(super) fn check(r: libc::c_int) -> io::Result<()> {
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// A path that vanished since the plan was made needs no mount.
fn skip_missing(r: libc::c_int) -> io::Result<()> {
    match check(r) {
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok(()),
        other => other,
    }
}

unsafe fn write_file(path: &std::ffi::CStr, data: &[u8]) -> io::Result<()> {
    // SAFETY: open/write/close on a NUL-terminated path and a live buffer.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let n = libc::write(fd, data.as_ptr().cast(), data.len());
        let err = io::Error::last_os_error();
        libc::close(fd);
        if n != data.len() as isize {
            return Err(err);
        }
    }
    Ok(())
}

unsafe fn read_only(path: &CString, flags: libc::c_ulong) -> io::Result<()> {
    // SAFETY: mount(2) on NUL-terminated paths.
    unsafe {
        let r = libc::mount(
            path.as_ptr(),
            path.as_ptr(),
            std::ptr::null(),
            libc::MS_BIND | libc::MS_REC,
            std::ptr::null(),
        );
        if let Err(e) = check(r) {
            return if e.raw_os_error() == Some(libc::ENOENT) {
                Ok(())
            } else {
                Err(e)
            };
        }
        check(libc::mount(
            std::ptr::null(),
            path.as_ptr(),
            std::ptr::null(),
            libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | flags,
            std::ptr::null(),
        ))
    }
}

unsafe fn hide_dir(path: &CString, reveal: &[Reveal]) -> io::Result<()> {
    let fs_flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
    // SAFETY: open/mount/mkdir/close on NUL-terminated paths and stack buffers.
    unsafe {
        // Held before the tmpfs hides them (a bind needs a source in this namespace).
        let mut fds = [-1i32; MAX_REVEALS];
        for (fd, r) in fds.iter_mut().zip(reveal) {
            *fd = libc::open(
                r.path.as_ptr(),
                libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
            );
        }
        let result = cover(path, reveal, &fds, fs_flags);
        for fd in fds.into_iter().filter(|&fd| fd >= 0) {
            libc::close(fd);
        }
        result
    }
}

/// At most this many folders are bound back into one hidden directory.
const MAX_REVEALS: usize = 4;

unsafe fn cover(
    path: &CString,
    reveal: &[Reveal],
    fds: &[i32; MAX_REVEALS],
    fs_flags: libc::c_ulong,
) -> io::Result<()> {
    // SAFETY: as in `hide_dir`.
    unsafe {
        let r = libc::mount(
            c"tmpfs".as_ptr(),
            path.as_ptr(),
            c"tmpfs".as_ptr(),
            fs_flags,
            TMPFS_OPTS.as_ptr().cast(),
        );
        if let Err(e) = check(r) {
            return if e.raw_os_error() == Some(libc::ENOENT) {
                Ok(())
            } else {
                Err(e)
            };
        }
        for (r, &fd) in reveal.iter().zip(fds) {
            if fd < 0 {
                continue;
            }
            for dir in &r.dirs {
                if libc::mkdir(dir.as_ptr(), 0o755) != 0
                    && io::Error::last_os_error().raw_os_error() != Some(libc::EEXIST)
                {
                    return Err(io::Error::last_os_error());
                }
            }
            let source = fd_path(fd);
            if let Some(target) = r.dirs.last() {
                check(libc::mount(
                    source.as_ptr().cast(),
                    target.as_ptr(),
                    std::ptr::null(),
                    libc::MS_BIND | libc::MS_REC,
                    std::ptr::null(),
                ))?;
            }
        }
        check(libc::mount(
            c"tmpfs".as_ptr(),
            path.as_ptr(),
            c"tmpfs".as_ptr(),
            libc::MS_REMOUNT | libc::MS_RDONLY | fs_flags,
            TMPFS_OPTS.as_ptr().cast(),
        ))
    }
}

/// `/proc/self/fd/N\0` in a stack buffer (no allocation after the fork).
pub(super) fn fd_path(fd: i32) -> [u8; 32] {
    let mut out = [0u8; 32];
    let prefix = b"/proc/self/fd/";
    out[..prefix.len()].copy_from_slice(prefix);
    let mut digits = [0u8; 10];
    let mut n = fd.max(0) as u32;
    let mut len = 0;
    loop {
        digits[len] = b'0' + (n % 10) as u8;
        len += 1;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for i in 0..len {
        out[prefix.len() + i] = digits[len - 1 - i];
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_descriptor_path_is_spelled_out() {
        let p = super::fd_path(1234);
        let end = p.iter().position(|&b| b == 0).unwrap();
        assert_eq!(&p[..end], b"/proc/self/fd/1234");
        let p = super::fd_path(0);
        assert!(p.starts_with(b"/proc/self/fd/0\0"));
    }
}
