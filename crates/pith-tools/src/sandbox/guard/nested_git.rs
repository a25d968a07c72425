//! Git repositories a command created or changed anywhere in the writable roots: a nested
//! `.git` folder, a `.git` file or link pointing elsewhere, a bare repository (a folder with
//! `HEAD` and `objects` or `commondir`). What git would run from them later, outside the
//! sandbox, is moved away (`NAME.pith-quarantined-<time>` beside it):
//!
//! - a `config` / `config.worktree` that changed (or whose repository did) and holds more than
//!   what `git init` / `git clone` write (`git_config::plain`);
//! - a `commondir` pointer that changed (it makes git read another folder's config);
//! - a `hooks` folder that changed and holds more than `*.sample` files, or a `hooks` link;
//! - a `.git` file or link that changed (fail closed: it points where pith did not look).
//!
//! "Changed" is the inode's change time (which no process can set back) at or after the
//! first of the overlapping calls began, less a margin. The walk reads a folder only when it
//! changed since the last walk (`dir_cache`; else one `stat`), does not follow links, does
//! not go into a repository's objects, and is bounded ([`MAX_ENTRIES`], [`MAX_TIME`]); when it runs out, the
//! model and the log are told what was not checked, and the next calls check it (counting
//! changes from the unfinished walk's start). Temporary roots are walked
//! [`TEMP_DEPTH`] deep.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, Instant, SystemTime};

use super::repair::{file_name, quarantine};
use super::{dir_cache, git_config};

/// Directory entries read per call at most (all roots together).
pub(super) const MAX_ENTRIES: usize = 2_000_000;
/// Time spent walking per call at most.
pub(super) const MAX_TIME: Duration = Duration::from_secs(3);
/// How deep the shared temporary folders are walked: `/tmp` itself and its folders as
/// repositories (`git init /tmp`, `git init --bare /tmp/x`), not what other programs keep
/// deeper there (the private `/tmp` covers commands' own files deeper).
pub(super) const TEMP_DEPTH: usize = 1;
/// Change times this long before the call began count as changed by it (clock granularity).
const MARGIN: Duration = Duration::from_secs(2);

/// A folder to walk and how deep (None: all of it).
pub(super) struct Root {
    pub path: PathBuf,
    pub depth: Option<usize>,
}

/// Roots whose last walk ran out of budget, with the time from which that walk counted
/// changes: the next walks of the root count from there too, until one finishes, so what an
/// unfinished walk did not reach is still checked as changed.
static UNFINISHED: LazyLock<Mutex<HashMap<PathBuf, SystemTime>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// Walks `roots` (leaving out `skip`: the workspace's own `.git`, guarded by its mount) for
/// repositories changed since `since`, and moves away what git would run from them. One line
/// per repository, for the model.
pub(super) fn neutralise(roots: &[Root], skip: &[PathBuf], since: SystemTime) -> Vec<String> {
    neutralise_within(roots, skip, since, MAX_ENTRIES)
}

fn neutralise_within(
    roots: &[Root],
    skip: &[PathBuf],
    since: SystemTime,
    max_entries: usize,
) -> Vec<String> {
    let since = since.checked_sub(MARGIN).unwrap_or(SystemTime::UNIX_EPOCH);
    let mut scan = Scan {
        since,
        entries: 0,
        max_entries,
        deadline: Instant::now() + MAX_TIME,
        skip,
        roots,
        notes: Vec::new(),
    };
    let mut unfinished = UNFINISHED.lock().unwrap_or_else(|e| e.into_inner());
    let mut ran_out = false;
    for root in roots {
        let from = unfinished
            .get(&root.path)
            .map_or(since, |t| (*t).min(since));
        if ran_out {
            unfinished.insert(root.path.clone(), from);
            continue;
        }
        scan.since = from;
        if scan.walk(root) {
            unfinished.remove(&root.path);
            continue;
        }
        ran_out = true;
        unfinished.insert(root.path.clone(), from);
        scan.notes.push(format!(
            "pith stopped looking for git repositories the command created after {} entries / {} s (under {}); the rest is checked after the next commands. Until then git run there may run what a repository the command made holds.",
            scan.entries,
            MAX_TIME.as_secs(),
            root.path.display()
        ));
    }
    scan.notes
}

struct Scan<'a> {
    since: SystemTime,
    entries: usize,
    max_entries: usize,
    deadline: Instant,
    skip: &'a [PathBuf],
    roots: &'a [Root],
    notes: Vec<String>,
}

impl Scan<'_> {
    /// False when the budget ran out.
    fn walk(&mut self, root: &Root) -> bool {
        let mut kept = dir_cache::lock();
        let mut stack = vec![(root.path.clone(), 0usize)];
        while let Some((dir, depth)) = stack.pop() {
            let Ok(meta) = std::fs::symlink_metadata(&dir) else {
                continue;
            };
            if !meta.is_dir() {
                continue;
            }
            let Some((listing, read)) = dir_cache::listing(&mut kept, &dir, &meta) else {
                continue;
            };
            self.entries += 1 + read;
            if self.entries > self.max_entries || Instant::now() > self.deadline {
                return false;
            }
            if listing.gitdir {
                self.notes.extend(check_gitdir(&dir, self.since, false));
            }
            if listing.gitlink {
                self.notes
                    .extend(check_gitlink(&dir.join(".git"), self.since));
            }
            if root.depth.is_some_and(|d| depth >= d) {
                continue;
            }
            for name in &listing.dirs {
                // Inside a repository only its submodules' and worktrees' folders hold more.
                let wanted =
                    !listing.gitdir || depth == 0 || name == "modules" || name == "worktrees";
                let path = dir.join(name);
                if wanted && !self.skipped(&path, root) {
                    stack.push((path, depth + 1));
                }
            }
        }
        true
    }

    fn skipped(&self, path: &Path, root: &Root) -> bool {
        self.skip.iter().any(|s| s == path)
            || self
                .roots
                .iter()
                .any(|r| r.path == path && r.path != root.path)
    }
}

fn changed(path: &Path, since: SystemTime) -> bool {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return false;
    };
    let ctime = SystemTime::UNIX_EPOCH
        + Duration::new(
            meta.ctime().max(0) as u64,
            meta.ctime_nsec().clamp(0, 999_999_999) as u32,
        );
    ctime >= since
}

/// A `.git` file or link that changed: moved away.
fn check_gitlink(path: &Path, since: SystemTime) -> Option<String> {
    if !changed(path, since) {
        return None;
    }
    Some(match quarantine(path) {
        Ok(to) => format!(
            "The command created {} (a `.git` file or link: git would take its repository, and what it runs, from where it points). pith renamed it to {}.",
            path.display(),
            file_name(&to)
        ),
        Err(e) => format!(
            "The command created {} (a `.git` file or link) and pith could not move it away ({e}).",
            path.display()
        ),
    })
}

/// A repository's folder (`.git` or bare): moves away what git would run that changed;
/// `force` treats everything as changed.
pub(super) fn check_gitdir(dir: &Path, since: SystemTime, force: bool) -> Option<String> {
    let fresh = force || changed(dir, since);
    let mut moved = Vec::new();
    for name in ["config", "config.worktree"] {
        let path = dir.join(name);
        if (fresh || changed(&path, since)) && !plain_file(&path) {
            moved.push(move_away(&path));
        }
    }
    let commondir = dir.join("commondir");
    if commondir.symlink_metadata().is_ok() && (fresh || changed(&commondir, since)) {
        moved.push(move_away(&commondir));
    }
    let hooks = dir.join("hooks");
    if hooks_run_something(&hooks, fresh, since) {
        moved.push(move_away(&hooks));
    }
    if moved.is_empty() {
        return None;
    }
    Some(format!(
        "The command created or changed the git repository {}, whose settings or hooks git would run outside the sandbox: pith {}. Change git settings with the write or edit tool, or run the command outside the sandbox with the user's approval.",
        dir.display(),
        moved.join(", ")
    ))
}

/// Whether `path` is absent or a small regular file of plain settings.
fn plain_file(path: &Path) -> bool {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return true;
    };
    meta.is_file()
        && meta.len() <= git_config::MAX_CONFIG
        && std::fs::read_to_string(path).is_ok_and(|t| git_config::plain(&t))
}

/// A hooks folder that changed and holds a hook (anything but `*.sample`), or a hooks link.
fn hooks_run_something(hooks: &Path, fresh: bool, since: SystemTime) -> bool {
    let Ok(meta) = std::fs::symlink_metadata(hooks) else {
        return false;
    };
    if !meta.is_dir() {
        return fresh || changed(hooks, since);
    }
    let Ok(read) = std::fs::read_dir(hooks) else {
        return false;
    };
    let mut any_changed = fresh || changed(hooks, since);
    let mut a_hook = false;
    for e in read.flatten() {
        let path = e.path();
        any_changed = any_changed || changed(&path, since);
        a_hook = a_hook || !e.file_name().to_string_lossy().ends_with(".sample");
    }
    any_changed && a_hook
}

fn move_away(path: &Path) -> String {
    match quarantine(path) {
        Ok(to) => format!("renamed {} to {}", file_name(path), file_name(&to)),
        Err(e) => format!("could not move {} away ({e})", file_name(path)),
    }
}

#[cfg(test)]
#[path = "nested_git_tests.rs"]
mod tests;
