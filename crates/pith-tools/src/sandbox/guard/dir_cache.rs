//! What the walk for git repositories learnt of each folder, kept between calls, so that a
//! folder that did not change is not read again: one `stat` instead of a `readdir`.
//!
//! A folder's change time moves whenever an entry is added, removed or renamed in it, and no
//! process can set it back; so a folder whose inode and change time are what they were when it
//! was read holds the same entries. A folder is kept only when its change time is older than
//! [`SETTLED`] at the time it is read (a change in the same clock tick would not show).

use std::collections::HashMap;
use std::ffi::OsString;
use std::fs::Metadata;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{LazyLock, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

/// How old a change must be for the folder to be kept.
const SETTLED: Duration = Duration::from_secs(2);
/// Folders kept at most (all workspaces together); past it, nothing more is kept.
const MAX_KEPT: usize = 1_000_000;

/// One folder's entries, as far as the walk needs them.
#[derive(Clone, Default)]
pub(super) struct Listing {
    /// Its sub-folders (not links).
    pub dirs: Vec<OsString>,
    /// It is a repository's folder (`HEAD` and `objects` or `commondir`).
    pub gitdir: bool,
    /// It holds a `.git` that is not a folder (a gitfile or a link).
    pub(crate) gitlink: bool,
}

pub(super) struct Kept {
    ino: u64,
    ctime: (i64, i64),
    listing: Listing,
}

static KEPT: LazyLock<Mutex<HashMap<PathBuf, Kept>>> = LazyLock::new(|| Mutex::new(HashMap::new()));

/// The kept folders; held for a whole walk (overlapping calls walk one after the other).
pub(super) fn lock() -> MutexGuard<'static, HashMap<PathBuf, Kept>> {
    KEPT.lock().unwrap_or_else(|e| e.into_inner())
}

fn stamp(meta: &Metadata) -> (u64, (i64, i64)) {
    (meta.ino(), (meta.ctime(), meta.ctime_nsec()))
}

/// The listing of `dir` (whose metadata is `meta`): kept, or read (and kept when settled).
/// The second value is how many entries were read (0 when kept).
pub(super) fn listing(
    kept: &mut HashMap<PathBuf, Kept>,
    dir: &Path,
    meta: &Metadata,
) -> Option<(Listing, usize)> {
    let (ino, ctime) = stamp(meta);
    if let Some(k) = kept.get(dir)
        && k.ino == ino
        && k.ctime == ctime
    {
        return Some((k.listing.clone(), 0));
    }
    let mut names = Vec::new();
    let mut listing = Listing::default();
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        let Ok(t) = e.file_type() else { continue };
        let name = e.file_name();
        if t.is_dir() {
            listing.dirs.push(name.clone());
        } else if name == ".git" {
            listing.gitlink = true;
        }
        names.push(name);
    }
    let has = |n: &str| names.iter().any(|name| name == n);
    listing.gitdir = has("HEAD") && (has("objects") || has("commondir"));
    let settled = SystemTime::UNIX_EPOCH
        + Duration::new(ctime.0.max(0) as u64, ctime.1.clamp(0, 999_999_999) as u32)
        + SETTLED
        < SystemTime::now();
    if settled && (kept.len() < MAX_KEPT || kept.contains_key(dir)) {
        kept.insert(
            dir.to_path_buf(),
            Kept {
                ino,
                ctime,
                listing: listing.clone(),
            },
        );
    } else {
        kept.remove(dir);
    }
    Some((listing, names.len()))
}
