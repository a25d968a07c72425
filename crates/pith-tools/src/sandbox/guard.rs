//! A check around each sandboxed command of the names git and pith take commands from
//! (`paths::PROTECTED_NAMES` in the workspace root).
//!
//! Read-only mounts protect what exists, but a mount needs something to cover: a `.git`,
//! `pith.toml` or `.pith` that did not exist can be created by the command. After the command
//! such a new one is renamed out of the way (`.git.pith-quarantined-<time>`, where neither git
//! nor pith looks) and the model is told. Without user namespaces there are no read-only mounts
//! at all; then the guard also remembers what the files that run code held (`.git/config`,
//! `.git/hooks/*`, `.git/commondir`, `pith.toml`, `.pith/**`, the instruction files) and puts
//! it back afterwards.

use std::collections::BTreeMap;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::paths::PROTECTED_NAMES;

/// Files above this size are not kept for repair (a new one is still moved away).
const MAX_SAVED: u64 = 1024 * 1024;
/// Files kept per protected folder.
const MAX_FILES: usize = 256;
/// What a name that should not be there gets appended.
const QUARANTINE: &str = ".pith-quarantined";

/// The state of the protected names before a command.
pub struct Guard {
    workspace: PathBuf,
    root: Option<(u64, u64)>,
    entries: Vec<Entry>,
}

struct Entry {
    name: &'static str,
    existed: bool,
    /// With `repair`: the sensitive files under it, by relative path ("" for the file itself).
    saved: Option<BTreeMap<PathBuf, Saved>>,
}

#[derive(PartialEq, Eq)]
enum Saved {
    File { bytes: Vec<u8>, mode: u32 },
    Link(PathBuf),
    TooBig,
}

impl Guard {
    /// Notes what is there now; with `repair` (no read-only mounts) also the contents of the
    /// files that run code, to put back.
    pub fn before(workspace: &Path, repair: bool) -> Guard {
        let entries = PROTECTED_NAMES
            .iter()
            .map(|&name| {
                let path = workspace.join(name);
                Entry {
                    name,
                    existed: std::fs::symlink_metadata(&path).is_ok(),
                    saved: repair.then(|| snapshot(&path, name)),
                }
            })
            .collect();
        Guard {
            workspace: workspace.to_path_buf(),
            root: stamp(workspace),
            entries,
        }
    }

    /// Moves away what the command created and puts back what it changed; says what it did,
    /// one line each, for the model.
    pub fn after(self) -> Vec<String> {
        let mut notes = Vec::new();
        if stamp(&self.workspace) != self.root {
            notes.push(format!(
                "The workspace folder {} was removed or replaced while the command ran.",
                self.workspace.display()
            ));
            return notes;
        }
        for entry in &self.entries {
            let path = self.workspace.join(entry.name);
            let exists = std::fs::symlink_metadata(&path).is_ok();
            if exists && !entry.existed {
                match quarantine(&path) {
                    Ok(to) => notes.push(format!(
                        "The command created {}, which commands may not create: git and pith run what it holds outside the sandbox. pith renamed it to {}. Create or change it with the write or edit tool, or run the command outside the sandbox with the user's approval.",
                        entry.name,
                        file_name(&to)
                    )),
                    Err(e) => notes.push(format!(
                        "The command created {}, which commands may not create, and pith could not move it away ({e}).",
                        entry.name
                    )),
                }
            } else if exists && let Some(saved) = &entry.saved {
                // (A removed one runs nothing: it stays removed.)
                repair(&path, entry.name, saved, &mut notes);
            }
        }
        for n in &notes {
            tracing::warn!(workspace = %self.workspace.display(), "sandbox guard: {n}");
        }
        notes
    }
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn stamp(path: &Path) -> Option<(u64, u64)> {
    std::fs::symlink_metadata(path)
        .ok()
        .map(|m| (m.dev(), m.ino()))
}

/// Renames `path` to `<name>.pith-quarantined-<seconds>` beside it.
fn quarantine(path: &Path) -> std::io::Result<PathBuf> {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let name = file_name(path);
    let parent = path.parent().unwrap_or(Path::new("."));
    for n in 0..100 {
        let suffix = if n == 0 {
            String::new()
        } else {
            format!("-{n}")
        };
        let to = parent.join(format!("{name}{QUARANTINE}-{secs}{suffix}"));
        if std::fs::symlink_metadata(&to).is_err() {
            std::fs::rename(path, &to)?;
            return Ok(to);
        }
    }
    Err(std::io::Error::other("no free name to move it to"))
}

/// The files under a protected name that make something run: the name itself when it is a
/// file; in a `.git` folder its config, common-dir pointer and hooks; all of `.pith`.
fn sensitive(path: &Path, name: &str) -> Vec<PathBuf> {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return Vec::new();
    };
    if !meta.is_dir() {
        return vec![PathBuf::new()];
    }
    let mut out = Vec::new();
    if name == ".git" {
        for f in ["config", "config.worktree", "commondir"] {
            if std::fs::symlink_metadata(path.join(f)).is_ok() {
                out.push(PathBuf::from(f));
            }
        }
        if let Ok(hooks) = std::fs::read_dir(path.join("hooks")) {
            for e in hooks.flatten().take(MAX_FILES) {
                out.push(Path::new("hooks").join(e.file_name()));
            }
        }
    } else {
        walk(path, Path::new(""), &mut out);
    }
    out
}

fn walk(root: &Path, rel: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(root.join(rel)) else {
        return;
    };
    for e in entries.flatten() {
        if out.len() >= MAX_FILES {
            return;
        }
        let r = rel.join(e.file_name());
        match e.file_type() {
            Ok(t) if t.is_dir() => walk(root, &r, out),
            Ok(_) => out.push(r),
            Err(_) => {}
        }
    }
}

fn read_saved(path: &Path) -> Option<Saved> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if meta.file_type().is_symlink() {
        return std::fs::read_link(path).ok().map(Saved::Link);
    }
    if !meta.is_file() {
        return None;
    }
    if meta.len() > MAX_SAVED {
        return Some(Saved::TooBig);
    }
    let bytes = std::fs::read(path).ok()?;
    Some(Saved::File {
        bytes,
        mode: meta.permissions().mode() & 0o7777,
    })
}

fn snapshot(path: &Path, name: &str) -> BTreeMap<PathBuf, Saved> {
    sensitive(path, name)
        .into_iter()
        .filter_map(|rel| {
            let saved = read_saved(&join(path, &rel))?;
            Some((rel, saved))
        })
        .collect()
}

fn join(path: &Path, rel: &Path) -> PathBuf {
    if rel.as_os_str().is_empty() {
        path.to_path_buf()
    } else {
        path.join(rel)
    }
}

/// Puts back each sensitive file that changed or went, and moves away each new one.
fn repair(path: &Path, name: &str, before: &BTreeMap<PathBuf, Saved>, notes: &mut Vec<String>) {
    let now = snapshot(path, name);
    let mut touched = Vec::new();
    for (rel, saved) in before {
        if now.get(rel) == Some(saved) || *saved == Saved::TooBig {
            continue;
        }
        let target = join(path, rel);
        match restore(&target, saved) {
            Ok(()) => touched.push(format!("restored {}", show(name, rel))),
            Err(e) => touched.push(format!("could not restore {} ({e})", show(name, rel))),
        }
    }
    for rel in now.keys().filter(|k| !before.contains_key(*k)) {
        let target = join(path, rel);
        match quarantine(&target) {
            Ok(to) => touched.push(format!(
                "moved the new {} to {}",
                show(name, rel),
                file_name(&to)
            )),
            Err(e) => touched.push(format!(
                "could not move the new {} away ({e})",
                show(name, rel)
            )),
        }
    }
    if !touched.is_empty() {
        notes.push(format!(
            "The command changed files that git or pith run or read instructions from, which commands may not change: pith {}. Change them with the write or edit tool.",
            touched.join(", ")
        ));
    }
}

fn show(name: &str, rel: &Path) -> String {
    if rel.as_os_str().is_empty() {
        name.to_string()
    } else {
        format!("{name}/{}", rel.display())
    }
}

fn restore(target: &Path, saved: &Saved) -> std::io::Result<()> {
    if let Some(parent) = target.parent() {
        std::fs::create_dir_all(parent)?;
    }
    if let Ok(meta) = std::fs::symlink_metadata(target) {
        if meta.is_dir() {
            quarantine(target)?;
        } else {
            std::fs::remove_file(target)?;
        }
    }
    match saved {
        Saved::File { bytes, mode } => {
            std::fs::write(target, bytes)?;
            std::fs::set_permissions(target, std::fs::Permissions::from_mode(*mode))
        }
        Saved::Link(to) => std::os::unix::fs::symlink(to, target),
        Saved::TooBig => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_git_folder_is_moved_away() {
        let t = tempfile::tempdir().unwrap();
        let ws = t.path();
        std::fs::write(ws.join("AGENTS.md"), "rules").unwrap();
        let guard = Guard::before(ws, false);
        std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
        std::fs::write(ws.join(".git/hooks/post-commit"), "#!/bin/sh\ntouch PWNED").unwrap();
        std::fs::write(ws.join("AGENTS.md"), "changed under a mount cannot happen").unwrap();
        let notes = guard.after();
        assert!(!ws.join(".git").exists());
        let moved: Vec<String> = std::fs::read_dir(ws)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(".git.pith-quarantined-"))
            .collect();
        assert_eq!(moved.len(), 1, "{moved:?}");
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].contains(".git") && notes[0].contains(&moved[0]),
            "{notes:?}"
        );
    }

    #[test]
    fn without_mounts_changed_hooks_and_config_are_put_back() {
        let t = tempfile::tempdir().unwrap();
        let ws = t.path();
        std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
        std::fs::write(ws.join(".git/config"), "[core]\n").unwrap();
        std::fs::write(ws.join(".git/hooks/pre-commit.sample"), "sample").unwrap();
        std::fs::write(ws.join("pith.toml"), "model = \"a/b\"\n").unwrap();
        let guard = Guard::before(ws, true);
        std::fs::write(ws.join(".git/config"), "[core]\nfsmonitor = touch PWNED\n").unwrap();
        std::fs::write(ws.join(".git/hooks/post-commit"), "touch PWNED").unwrap();
        std::fs::write(ws.join(".git/commondir"), "/tmp/evil").unwrap();
        std::fs::write(ws.join("pith.toml"), "sandbox = \"off\"\n").unwrap();
        std::fs::create_dir(ws.join(".pith")).unwrap();
        std::fs::write(ws.join(".pith/x.md"), "new").unwrap();
        let notes = guard.after();
        assert_eq!(
            std::fs::read_to_string(ws.join(".git/config")).unwrap(),
            "[core]\n"
        );
        assert_eq!(
            std::fs::read_to_string(ws.join("pith.toml")).unwrap(),
            "model = \"a/b\"\n"
        );
        assert!(!ws.join(".git/hooks/post-commit").exists());
        assert!(!ws.join(".git/commondir").exists());
        assert!(ws.join(".git/hooks/pre-commit.sample").exists());
        assert!(
            !ws.join(".pith").exists(),
            "a new .pith is moved away whole"
        );
        let all = notes.join("\n");
        for what in [
            ".git/config",
            "pith.toml",
            ".git/hooks/post-commit",
            ".git/commondir",
            ".pith",
        ] {
            assert!(all.contains(what), "{what} not in {all}");
        }
    }

    #[test]
    fn nothing_changed_means_no_note() {
        let t = tempfile::tempdir().unwrap();
        let ws = t.path();
        std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
        std::fs::write(ws.join(".git/config"), "[core]\n").unwrap();
        for repair in [false, true] {
            let guard = Guard::before(ws, repair);
            std::fs::write(ws.join("main.rs"), "fn main() {}").unwrap();
            assert!(guard.after().is_empty());
        }
    }
}
