//! Moving away what should not be there, and (without read-only mounts) putting back the
//! files that run code as they were before the command.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Files above this size are not kept for repair (a new one is still moved away).
const MAX_SAVED: u64 = 1024 * 1024;
/// Files kept per protected folder.
const MAX_FILES: usize = 256;
/// What a name that should not be there gets appended.
const QUARANTINE: &str = ".pith-quarantined";

#[derive(PartialEq, Eq)]
pub(super) enum Saved {
    File { bytes: Vec<u8>, mode: u32 },
    Link(PathBuf),
    TooBig,
}

pub(super) fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Renames `path` to `<name>.pith-quarantined-<seconds>` beside it.
pub(super) fn quarantine(path: &Path) -> std::io::Result<PathBuf> {
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

pub(super) fn snapshot(path: &Path, name: &str) -> BTreeMap<PathBuf, Saved> {
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
pub(super) fn repair(
    path: &Path,
    name: &str,
    before: &BTreeMap<PathBuf, Saved>,
    notes: &mut Vec<String>,
) {
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

pub(super) fn restore(target: &Path, saved: &Saved) -> std::io::Result<()> {
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
