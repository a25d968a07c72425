//! The system calls under [`super`]: `openat2` with `RESOLVE_BENEATH` where the kernel has it,
//! and an fd-relative walk that opens every component with `O_NOFOLLOW` where it does not.
//! Every open here is relative to a directory fd the walk itself opened, so no path string is
//! resolved twice.

use std::ffi::{CString, OsStr};
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path};

/// Flags for a directory the walk passes through: never a symlink.
#[cfg(target_os = "linux")]
const DIR_FLAGS: libc::c_int =
    libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
#[cfg(not(target_os = "linux"))]
const DIR_FLAGS: libc::c_int =
    libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;

fn c_name(name: &OsStr) -> io::Result<CString> {
    CString::new(name.as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a path with a NUL byte"))
}

/// `openat(dir, name, flags | O_NOFOLLOW | O_CLOEXEC, mode)`: one component, never a symlink.
pub(super) fn open_at(
    dir: BorrowedFd<'_>,
    name: &OsStr,
    flags: libc::c_int,
    mode: libc::mode_t,
) -> io::Result<OwnedFd> {
    let c = c_name(name)?;
    let flags = flags | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    // SAFETY: a valid directory fd and a NUL-terminated name; the result is checked.
    let fd = unsafe { libc::openat(dir.as_raw_fd(), c.as_ptr(), flags, mode as libc::c_uint) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just opened and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Opens the directory at `path` (absolute, resolved by the caller) to walk from.
pub(super) fn open_root(path: &Path) -> io::Result<OwnedFd> {
    let c = c_name(path.as_os_str())?;
    // SAFETY: a NUL-terminated path; the result is checked.
    let fd = unsafe { libc::open(c.as_ptr(), DIR_FLAGS) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just opened and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The plain names of `rel`: `..`, a root or a prefix are refused (a checked path has none).
pub(super) fn names(rel: &Path) -> io::Result<Vec<&OsStr>> {
    let mut out = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(n) => out.push(n),
            Component::CurDir => {}
            _ => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "the path leaves the directory it is opened in",
                ));
            }
        }
    }
    Ok(out)
}

/// Walks `dirs` below `root`, each with `O_NOFOLLOW | O_DIRECTORY`; with `create`, a missing
/// directory is made first (`mkdirat`, which never follows a symlink either).
pub(super) fn walk_dirs(root: &OwnedFd, dirs: &[&OsStr], create: bool) -> io::Result<OwnedFd> {
    let mut cur = root.try_clone()?;
    for name in dirs {
        if create {
            let c = c_name(name)?;
            // SAFETY: a valid directory fd and a NUL-terminated name.
            let r = unsafe { libc::mkdirat(cur.as_raw_fd(), c.as_ptr(), 0o777) };
            if r < 0 {
                let e = io::Error::last_os_error();
                if e.raw_os_error() != Some(libc::EEXIST) {
                    return Err(e);
                }
            }
        }
        cur = open_at(cur_fd(&cur), name, DIR_FLAGS, 0)?;
    }
    Ok(cur)
}

fn cur_fd(fd: &OwnedFd) -> BorrowedFd<'_> {
    use std::os::fd::AsFd;
    fd.as_fd()
}

/// Opens `rel` below `root` without following any symlink and without leaving `root`:
/// `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)` where the kernel
/// has it, else the walk.
pub(super) fn open_beneath(root: &OwnedFd, rel: &Path, flags: libc::c_int) -> io::Result<OwnedFd> {
    #[cfg(target_os = "linux")]
    if !force_walk() {
        match openat2(root, rel, flags) {
            Err(e) if unsupported(&e) => {}
            other => return other,
        }
    }
    let parts = names(rel)?;
    match parts.split_last() {
        None => {
            // the root itself
            let dot = OsStr::new(".");
            open_at(cur_fd(root), dot, flags, 0)
        }
        Some((last, dirs)) => {
            let dir = walk_dirs(root, dirs, false)?;
            open_at(cur_fd(&dir), last, flags, 0)
        }
    }
}

#[cfg(target_os = "linux")]
fn openat2(root: &OwnedFd, rel: &Path, flags: libc::c_int) -> io::Result<OwnedFd> {
    let rel = if rel.as_os_str().is_empty() {
        Path::new(".")
    } else {
        rel
    };
    let c = c_name(rel.as_os_str())?;
    // SAFETY: `open_how` is plain data; zeroed is its documented default.
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = (flags | libc::O_CLOEXEC | libc::O_NOFOLLOW) as u64;
    how.resolve = libc::RESOLVE_BENEATH | libc::RESOLVE_NO_SYMLINKS | libc::RESOLVE_NO_MAGICLINKS;
    // SAFETY: a valid directory fd, a NUL-terminated path and an `open_how` of the size given.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            root.as_raw_fd(),
            c.as_ptr(),
            &how as *const libc::open_how,
            std::mem::size_of::<libc::open_how>(),
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just opened and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) })
}

/// `openat2` is missing (an old kernel) or filtered (a container's seccomp profile).
#[cfg(target_os = "linux")]
fn unsupported(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::ENOSYS) | Some(libc::EPERM) | Some(libc::E2BIG)
    )
}

/// Tests take the fallback walk on a kernel that has `openat2`.
#[cfg(target_os = "linux")]
fn force_walk() -> bool {
    #[cfg(test)]
    {
        FORCE_WALK.with(|f| f.get())
    }
    #[cfg(not(test))]
    false
}

#[cfg(all(test, target_os = "linux"))]
thread_local! {
    pub(super) static FORCE_WALK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}
