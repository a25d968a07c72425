//! Race-free opens for the file tools: what the permission check resolved is what is read or
//! written.
//!
//! The check resolves the path a call names (symlinks and `..` included) and judges the result;
//! [`remember`] keeps that resolution, with the identity (device, inode, type) of what was
//! there, under the call's id. The tool then acts on it ([`checked`]) without resolving the
//! path string again:
//!
//! - inside the workspace, the resolved path is opened below a directory fd of the workspace
//!   with `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)`, or, where the
//!   kernel lacks it, by a walk that opens every component with `O_NOFOLLOW` relative to the
//!   one before. A symlink swapped in anywhere after the check makes the open fail;
//! - outside it (the user was asked about that exact path), the same walk from `/`;
//! - what was opened is compared with what the check saw (fstat: device, inode, type): a file
//!   replaced in between is refused;
//! - a write opens the existing file without `O_TRUNC`, checks its identity, and only then
//!   truncates; a new file is created with `O_EXCL` in the directory fd the walk opened (missing
//!   parents are made with `mkdirat` on the way), never by a path string.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::ToolContext;
use crate::path::{Resolved, resolve};

mod sys;
#[cfg(test)]
mod tests;

/// What a path named when it was looked at: device, inode and type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Identity {
    dev: u64,
    ino: u64,
    /// `S_IFMT` bits.
    kind: u32,
}

impl Identity {
    pub fn of(meta: &std::fs::Metadata) -> Identity {
        Identity {
            dev: meta.dev(),
            ino: meta.ino(),
            // (`S_IFMT` is a `u16` on macOS, a `u32` on Linux: the same bits.)
            kind: meta.mode() & 0o170_000,
        }
    }

    /// What `path` names now, without following a last symlink.
    pub fn at(path: &Path) -> Option<Identity> {
        std::fs::symlink_metadata(path)
            .ok()
            .map(|m| Identity::of(&m))
    }
}

/// A path as the permission check resolved and judged it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    /// The path as the call named it.
    pub raw: String,
    pub resolved: Resolved,
    /// What was there when it was checked (`None`: nothing).
    pub seen: Option<Identity>,
}

impl Checked {
    /// `raw` resolved now (a call nobody checked: a test, a front end's own read).
    pub fn now(workspace: &Path, raw: &str) -> Checked {
        let resolved = resolve(workspace, raw);
        let seen = Identity::at(&resolved.path);
        Checked {
            raw: raw.to_string(),
            resolved,
            seen,
        }
    }

    /// The path as shown to the model.
    pub fn shown(&self, workspace: &Path) -> String {
        self.resolved.display(workspace)
    }

    pub fn path(&self) -> &Path {
        &self.resolved.path
    }
}

/// Whether `raw` reached its resolved path through a symlink (the path as written, with `..`
/// applied, is not where it leads).
pub(crate) fn through_link(workspace: &Path, c: &Checked) -> bool {
    let raw = c.raw.trim();
    let expanded = match (raw.strip_prefix('~'), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) if rest.is_empty() || rest.starts_with('/') => {
            PathBuf::from(home).join(rest.trim_start_matches('/'))
        }
        _ => PathBuf::from(raw),
    };
    let ws = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
    crate::path::lexical_normalize(&ws.join(expanded)) != c.resolved.path
}

/// Whether a path inside the workspace, reached through a symlink, lands in a path the
/// sandbox hides from commands (pith's data and config dirs, `~/.ssh` and the other secrets,
/// `sandbox_deny_read`): a workspace that holds them (pith started in `$HOME`) must not make
/// them readable by a link's name.
pub fn leads_into_hidden(ctx: &ToolContext, c: &Checked) -> bool {
    if !c.resolved.inside || !through_link(&ctx.workspace, c) {
        return false;
    }
    let state = crate::sandbox::paths::StatePaths::from_env(Vec::new());
    let outputs = crate::truncate::output_dir(&ctx.data_dir);
    let mut hidden = crate::sandbox::paths::hidden(&state, &ctx.data_dir, &outputs, &ctx.workspace);
    // (the tool-output folder stays readable)
    hidden.retain(|h| !h.reveal.iter().any(|r| c.resolved.path.starts_with(r)));
    hidden.iter().any(|h| c.resolved.path.starts_with(&h.path))
}

/// Resolutions kept at once: past this, the oldest (checks of calls that never ran: denied,
/// refused) make room. A call acts within moments of its check or of the user's answer, so
/// only a flood of newer checks could push its own out; it would then resolve afresh.
const KEPT: usize = 4096;

/// The resolutions the permission check made, by call id, oldest first out.
#[derive(Debug, Default)]
pub struct Kept {
    next: u64,
    by_call: std::collections::HashMap<String, (u64, Checked)>,
}

impl Kept {
    pub fn is_empty(&self) -> bool {
        self.by_call.is_empty()
    }

    fn insert(&mut self, call_id: String, c: Checked) {
        if self.by_call.len() >= KEPT
            && let Some(oldest) = self
                .by_call
                .iter()
                .min_by_key(|(_, (n, _))| *n)
                .map(|(id, _)| id.clone())
        {
            self.by_call.remove(&oldest);
        }
        self.next += 1;
        self.by_call.insert(call_id, (self.next, c));
    }
}

/// Keeps what the permission check resolved for this call's `raw` path.
pub fn remember(ctx: &ToolContext, raw: &str, resolved: &Resolved) {
    let seen = Identity::at(&resolved.path);
    if let Ok(mut kept) = ctx.state.checked.lock() {
        kept.insert(
            ctx.call_id.clone(),
            Checked {
                raw: raw.to_string(),
                resolved: resolved.clone(),
                seen,
            },
        );
    }
}

/// What the check resolved for this call's `raw` path (taken: a call acts once), or, for a
/// call that was not checked, `raw` resolved now.
pub fn checked(ctx: &ToolContext, raw: &str) -> Checked {
    let kept = ctx
        .state
        .checked
        .lock()
        .ok()
        .and_then(|mut k| k.by_call.remove(&ctx.call_id))
        .map(|(_, c)| c)
        .filter(|c| c.raw == raw);
    kept.unwrap_or_else(|| Checked::now(&ctx.workspace, raw))
}

/// What the check resolved for this call, left in place (for a look before the call acts).
pub fn peek(ctx: &ToolContext, raw: &str) -> Checked {
    let kept = ctx
        .state
        .checked
        .lock()
        .ok()
        .and_then(|k| k.by_call.get(&ctx.call_id).map(|(_, c)| c.clone()))
        .filter(|c| c.raw == raw);
    kept.unwrap_or_else(|| Checked::now(&ctx.workspace, raw))
}

/// Where to start the walk, and the path below it.
fn place(workspace: &Path, c: &Checked) -> io::Result<(std::os::fd::OwnedFd, PathBuf)> {
    let ws = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
    let path = &c.resolved.path;
    if c.resolved.inside
        && let Ok(rel) = path.strip_prefix(&ws)
    {
        return Ok((sys::open_root(&ws)?, rel.to_path_buf()));
    }
    let rel = path
        .strip_prefix("/")
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "not an absolute path"))?;
    Ok((sys::open_root(Path::new("/"))?, rel.to_path_buf()))
}

/// Opens the checked path for reading (a file or a directory; a FIFO does not block, a
/// terminal does not become the controlling one).
pub fn read(workspace: &Path, c: &Checked) -> io::Result<File> {
    let (root, rel) = place(workspace, c)?;
    let flags = libc::O_RDONLY | libc::O_NONBLOCK | libc::O_NOCTTY;
    let fd = sys::open_beneath(&root, &rel, flags).map_err(explain)?;
    let file = File::from(fd);
    same_as_seen(&file, c)?;
    Ok(file)
}

/// Opens `path` (absolute, resolved earlier) for reading with no symlink anywhere on the way:
/// a file that was resolved once and is read again later (an attached image).
pub fn read_exact(path: &Path) -> io::Result<File> {
    let c = Checked {
        raw: path.to_string_lossy().into_owned(),
        resolved: Resolved {
            path: path.to_path_buf(),
            inside: false,
        },
        seen: None,
    };
    read(Path::new("/"), &c)
}

/// Opens the checked path for writing, emptied: the file the check saw (compared by identity
/// before it is truncated), or a new one when the check saw none. With `parents`, missing
/// directories on the way are made.
pub fn write(workspace: &Path, c: &Checked, parents: bool) -> io::Result<File> {
    let (root, rel) = place(workspace, c)?;
    let parts = sys::names(&rel)?;
    let Some((last, dirs)) = parts.split_last() else {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "a directory"));
    };
    let dir = sys::walk_dirs(&root, dirs, parents).map_err(explain)?;
    let file = match c.seen {
        Some(_) => {
            let fd = sys::open_at(dir.as_fd(), last, libc::O_WRONLY | libc::O_NONBLOCK, 0)
                .map_err(explain)?;
            let file = File::from(fd);
            same_as_seen(&file, c)?;
            file.set_len(0)?;
            file
        }
        None => {
            let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL;
            File::from(sys::open_at(dir.as_fd(), last, flags, 0o666).map_err(|e| {
                if e.raw_os_error() == Some(libc::EEXIST) {
                    changed()
                } else {
                    explain(e)
                }
            })?)
        }
    };
    // the descriptor is a plain blocking one from here on
    clear_nonblock(&file);
    Ok(file)
}

/// Makes the missing directories above the checked path, each below the one before and none
/// through a symlink.
pub(crate) fn make_parents(workspace: &Path, c: &Checked) -> io::Result<()> {
    let (root, rel) = place(workspace, c)?;
    let parts = sys::names(&rel)?;
    if let Some((_, dirs)) = parts.split_last() {
        sys::walk_dirs(&root, dirs, true).map_err(explain)?;
    }
    Ok(())
}

fn clear_nonblock(file: &File) {
    let fd = file.as_raw_fd();
    // SAFETY: fcntl on an fd this function borrows.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags >= 0 {
            libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK);
        }
    }
}

/// Refuses what was opened when it is not what the check saw.
fn same_as_seen(file: &File, c: &Checked) -> io::Result<()> {
    let Some(seen) = c.seen else {
        return Ok(());
    };
    let now = Identity::of(&file.metadata()?);
    if now == seen { Ok(()) } else { Err(changed()) }
}

fn changed() -> io::Error {
    io::Error::other(
        "it changed after the permission check (replaced, or a link swapped in); nothing was read or written. Check it and call again",
    )
}

/// The error of an open that met a symlink it may not follow, in words.
fn explain(e: io::Error) -> io::Error {
    match e.raw_os_error() {
        Some(libc::ELOOP) | Some(libc::EXDEV) => io::Error::other(
            "a symbolic link is in the way that the permission check did not see (swapped in after it); nothing was read or written",
        ),
        _ => e,
    }
}

/// A path the process can list the opened directory by (its `/proc/self/fd` entry), or `None`
/// where `/proc` is not mounted.
pub(crate) fn fd_path(file: &File) -> Option<PathBuf> {
    let p = PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()));
    std::fs::metadata(&p).ok().map(|_| p)
}
#[cfg(test)]
mod questions;
#[cfg(test)]
mod races;
