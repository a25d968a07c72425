//! Git directories without a `.git` name: the gitdir a `.git` file names (`--separate-git-dir`,
//! a worktree's common dir), a bare repository — or one being planted file by file by the
//! file tools (red-team round, findings 4c and 5). git takes commands from their `config` and
//! `hooks/`, so they are protected like `.git`.
//!
//! git accepts a folder as a repository only when it holds a valid `HEAD` (and `objects/` and
//! `refs/`, or a `commondir`). So a write is git's when the folder it lands in (at any depth) is
//! named like a part of a git dir, in a folder that holds — or with this write would hold — a
//! `HEAD` and another part. Whatever order a plant's files are written in, the one that
//! completes the repository asks. A few `stat`s, only for paths with such a name.

use std::path::{Component, Path};

/// The names git keeps in a git dir.
const PARTS: &[&str] = &[
    "HEAD",
    "config",
    "commondir",
    "gitdir",
    "hooks",
    "objects",
    "refs",
    "info",
    "packed-refs",
    "worktrees",
    "modules",
    "index",
    "logs",
    "branches",
    "description",
    "FETCH_HEAD",
    "ORIG_HEAD",
];

/// The parts that with a `HEAD` make a folder a git dir (or one in the making).
const WITH_HEAD: &[&str] = &["objects", "refs", "commondir", "config"];

/// Whether `path` (absolute) is in a git dir, or would complete one.
pub(super) fn inside_git_dir(path: &Path) -> bool {
    let mut names: Vec<&str> = Vec::new();
    for c in path.components() {
        if let Component::Normal(n) = c {
            names.push(n.to_str().unwrap_or(""));
        }
    }
    let mut folder = path.to_path_buf();
    // from the innermost folder out: `names[i]` is the part of `path` just below `folder`
    for i in (0..names.len()).rev() {
        folder.pop();
        let part = names[i];
        if PARTS.contains(&part) && is_git_dir(&folder, part) {
            return true;
        }
    }
    false
}

/// Whether `folder` holds (or with `part` written would hold) a `HEAD` and another git part.
fn is_git_dir(folder: &Path, part: &str) -> bool {
    let head = part == "HEAD" || folder.join("HEAD").is_file();
    head && (WITH_HEAD.contains(&part)
        || WITH_HEAD
            .iter()
            .any(|p| std::fs::symlink_metadata(folder.join(p)).is_ok()))
}
