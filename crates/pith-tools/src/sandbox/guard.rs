//! A check around each sandboxed command of the names git and pith take commands from
//! (`paths::PROTECTED_NAMES` in the workspace root), and of the git repositories anywhere in
//! the writable roots (`nested_git`).
//!
//! Read-only mounts protect what exists, but a mount needs something to cover: a `.git`,
//! `pith.toml` or `.pith` that did not exist can be created by the command, and a name that is
//! a symlink can be renamed over. Each protected name is recorded by identity (device, inode,
//! type, and a symlink's target); after the command, anything whose identity changed (created,
//! replaced, renamed over, a symlink retargeted or swapped for a file) is renamed out of the
//! way (`.git.pith-quarantined-<time>`, where neither git nor pith looks), a symlink or a
//! saved file is put back, and the model is told.
//!
//! Calls that overlap (parallel sub-agents) share one record per workspace: the one taken
//! when the first of them began, which every call checks against when it ends and which is
//! let go when the last ends. So a plant made during one call is caught at the end of every
//! call that overlaps it, and no call takes a plant for what was there before.
//!
//! Without user namespaces there are no read-only mounts at all; then the guard also
//! remembers what the files that run code held (`.git/config`, `.git/hooks/*`,
//! `.git/commondir`, `pith.toml`, `.pith/**`, the instruction files) and puts it back
//! afterwards.

mod dir_cache;
mod git_config;
mod nested_git;
mod repair;

use std::collections::{BTreeMap, HashMap};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex};
use std::time::SystemTime;

use super::paths::PROTECTED_NAMES;
use repair::{Saved, file_name, quarantine, restore, snapshot};

/// The state of the protected names before the first of the overlapping commands.
struct Baseline {
    root: Option<(u64, u64)>,
    entries: Vec<Entry>,
    /// When the first of the overlapping calls began.
    since: SystemTime,
}

struct Entry {
    name: &'static str,
    identity: Option<Identity>,
    /// With `repair`: the sensitive files under it, by relative path ("" for the file itself).
    saved: Option<BTreeMap<PathBuf, Saved>>,
}

/// The file-type bits of `st_mode`, and a folder's (as numbers: libc's differ in type
/// between systems).
const S_IFMT: u32 = 0o170_000;
const S_IFDIR: u32 = 0o040_000;

/// What a name is: not its contents but which file it is.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Identity {
    dev: u64,
    ino: u64,
    /// `st_mode & S_IFMT`.
    kind: u32,
    /// A symlink's target.
    target: Option<PathBuf>,
}

fn identity(path: &Path) -> Option<Identity> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    let target = meta
        .file_type()
        .is_symlink()
        .then(|| std::fs::read_link(path).ok())
        .flatten();
    Some(Identity {
        dev: meta.dev(),
        ino: meta.ino(),
        kind: meta.mode() & S_IFMT,
        target,
    })
}

/// The shared records, by workspace, with how many calls hold each.
type Held = HashMap<PathBuf, (Arc<Baseline>, usize)>;
static BASELINES: LazyLock<Mutex<Held>> = LazyLock::new(|| Mutex::new(HashMap::new()));

fn baselines() -> std::sync::MutexGuard<'static, Held> {
    BASELINES.lock().unwrap_or_else(|e| e.into_inner())
}

/// One call's hold on its workspace's record; checks when the call ends (`after`, or when
/// dropped without it) and lets go.
pub struct Guard {
    workspace: PathBuf,
    baseline: Arc<Baseline>,
    /// The writable roots to look for git repositories in.
    roots: Vec<nested_git::Root>,
    checked: bool,
}

impl Guard {
    /// Notes what is there now, unless a call that is still running already did (then its
    /// record is used); with `repair` (no read-only mounts) also the contents of the files
    /// that run code, to put back.
    pub fn before(workspace: &Path, repair: bool) -> Guard {
        let mut all = baselines();
        let held = all
            .entry(workspace.to_path_buf())
            .and_modify(|(_, n)| *n += 1)
            .or_insert_with(|| (Arc::new(Baseline::now(workspace, repair)), 1));
        Guard {
            workspace: workspace.to_path_buf(),
            baseline: held.0.clone(),
            roots: vec![nested_git::Root {
                path: workspace.to_path_buf(),
                depth: None,
            }],
            checked: false,
        }
    }

    /// Also looks for git repositories in these writable roots (the workspace is always
    /// walked; the shared temporary folders only [`nested_git::TEMP_DEPTH`] deep).
    pub(crate) fn scanning(mut self, writable: &[PathBuf]) -> Guard {
        let temps = [PathBuf::from("/tmp"), std::env::temp_dir()];
        for w in writable {
            if self.roots.iter().any(|r| &r.path == w) {
                continue;
            }
            let depth = temps.contains(w).then_some(nested_git::TEMP_DEPTH);
            self.roots.push(nested_git::Root {
                path: w.clone(),
                depth,
            });
        }
        self
    }

    /// Moves away what the command created or replaced and puts back what it changed; says
    /// what it did, one line each, for the model.
    pub fn after(mut self) -> Vec<String> {
        self.checked = true;
        self.check()
    }

    fn check(&self) -> Vec<String> {
        let mut notes = Vec::new();
        if stamp(&self.workspace) != self.baseline.root {
            notes.push(format!(
                "The workspace folder {} was removed or replaced while the command ran.",
                self.workspace.display()
            ));
        } else {
            for entry in &self.baseline.entries {
                check_name(&self.workspace, entry, self.baseline.since, &mut notes);
            }
            let skip = [self.workspace.join(".git")];
            notes.extend(nested_git::neutralise(
                &self.roots,
                &skip,
                self.baseline.since,
            ));
        }
        for n in &notes {
            tracing::warn!(workspace = %self.workspace.display(), "sandbox guard: {n}");
        }
        notes
    }
}

/// How long a dropped call's check waits for its command's tree to be gone.
const DROPPED_WAIT: std::time::Duration = std::time::Duration::from_millis(300);

impl Drop for Guard {
    fn drop(&mut self) {
        if !self.checked {
            // A call dropped before its end (its future was): its tree is being killed right
            // now; check once it is gone, off this thread, holding the record until then.
            let later = Guard {
                workspace: self.workspace.clone(),
                baseline: self.baseline.clone(),
                roots: std::mem::take(&mut self.roots),
                checked: false,
            };
            self.checked = true;
            let spawned = std::thread::Builder::new()
                .name("pith-guard".into())
                .spawn(move || {
                    std::thread::sleep(DROPPED_WAIT);
                    later.after();
                });
            match spawned {
                // The new one lets the record go when it is done; this one does not.
                Ok(_) => return,
                Err(e) => {
                    tracing::warn!("sandbox guard: no thread for a dropped call's check ({e})")
                }
            }
        }
        let mut all = baselines();
        if let Some((_, n)) = all.get_mut(&self.workspace) {
            *n -= 1;
            if *n == 0 {
                all.remove(&self.workspace);
            }
        }
    }
}

impl Baseline {
    fn now(workspace: &Path, repair: bool) -> Baseline {
        let entries = PROTECTED_NAMES
            .iter()
            .map(|&name| {
                let path = workspace.join(name);
                Entry {
                    name,
                    identity: identity(&path),
                    saved: repair.then(|| snapshot(&path, name)),
                }
            })
            .collect();
        Baseline {
            root: stamp(workspace),
            entries,
            since: SystemTime::now(),
        }
    }
}

/// One protected name: a new identity is moved away (and what was there put back when pith
/// can: a symlink, a saved file); the same one is repaired when pith saved its contents.
fn check_name(workspace: &Path, entry: &Entry, since: SystemTime, notes: &mut Vec<String>) {
    let path = workspace.join(entry.name);
    let Some(now) = identity(&path) else {
        return; // (A removed one runs nothing: it stays removed.)
    };
    if entry.identity.as_ref() == Some(&now) {
        if let Some(saved) = &entry.saved {
            repair::repair(&path, entry.name, saved, notes);
        }
        return;
    }
    let what = if entry.identity.is_none() {
        "created"
    } else {
        "replaced"
    };
    let to = match quarantine(&path) {
        Ok(to) => to,
        Err(e) => {
            notes.push(format!(
                "The command {what} {}, which commands may not, and pith could not move it away ({e}).",
                entry.name
            ));
            return;
        }
    };
    if now.kind == S_IFDIR && entry.name == ".git" {
        // Renamed, it is still a repository one could run git in: disarm it too.
        let _ = nested_git::check_gitdir(&to, since, true);
    }
    let back = put_back(&path, entry);
    notes.push(format!(
        "The command {what} {}, which commands may not: git and pith run what it holds outside the sandbox. pith renamed it to {}{back}. Create or change it with the write or edit tool, or run the command outside the sandbox with the user's approval.",
        entry.name,
        file_name(&to)
    ));
}

/// Puts back what a replaced name was, when pith knows it: a symlink, or a saved file.
fn put_back(path: &Path, entry: &Entry) -> String {
    let before = entry.identity.as_ref();
    let saved = if let Some(target) = before.and_then(|i| i.target.clone()) {
        Saved::Link(target)
    } else if let Some(Some(Saved::File { bytes, mode })) =
        entry.saved.as_ref().map(|s| s.get(Path::new("")))
    {
        Saved::File {
            bytes: bytes.clone(),
            mode: *mode,
        }
    } else {
        return String::new();
    };
    match restore(path, &saved) {
        Ok(()) => " and put back the one that was there".to_string(),
        Err(e) => format!(" (and could not put back the one that was there: {e})"),
    }
}

fn stamp(path: &Path) -> Option<(u64, u64)> {
    std::fs::symlink_metadata(path)
        .ok()
        .map(|m| (m.dev(), m.ino()))
}

#[cfg(test)]
mod tests;
