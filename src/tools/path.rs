//! Path resolution shared by the file tools and the permission check.
//!
//! A path the model gives is resolved against the workspace; `..` and symlinks are resolved by
//! canonicalising the longest existing ancestor, so a check on the result cannot be fooled by
//! `../../etc` or a symlink pointing out of the workspace.

use std::path::{Component, Path, PathBuf};

/// A path the model named, resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// Absolute, with symlinks and `..` resolved as far as the path exists.
    pub path: PathBuf,
    /// Whether `path` lies inside the workspace.
    pub inside: bool,
}

impl Resolved {
    /// The path as shown to the model and matched by permission patterns: relative to the
    /// workspace when inside it, absolute otherwise.
    pub fn display(&self, workspace: &Path) -> String {
        display_path(&self.path, workspace)
    }
}

/// `path` relative to `workspace` when inside it (`.` for the root itself), else absolute.
pub fn display_path(path: &Path, workspace: &Path) -> String {
    let ws = canonical_or_self(workspace);
    match path.strip_prefix(&ws) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
        Ok(rel) => rel.to_string_lossy().into_owned(),
        Err(_) => path.to_string_lossy().into_owned(),
    }
}

/// Resolves `raw` (absolute, `~/…`, or relative to the workspace).
pub fn resolve(workspace: &Path, raw: &str) -> Resolved {
    let ws = canonical_or_self(workspace);
    let raw = raw.trim();
    let expanded: PathBuf = if raw == "~" || raw.starts_with("~/") {
        match std::env::var_os("HOME") {
            Some(home) => {
                PathBuf::from(home).join(raw.trim_start_matches('~').trim_start_matches('/'))
            }
            None => PathBuf::from(raw),
        }
    } else {
        PathBuf::from(raw)
    };
    let joined = if expanded.is_absolute() {
        expanded
    } else {
        ws.join(expanded)
    };
    let path = canonicalize_lenient(&joined);
    let inside = path.starts_with(&ws);
    Resolved { path, inside }
}

/// Whether `path` (already resolved) lies under `dir` (resolved here).
pub fn is_under(path: &Path, dir: &Path) -> bool {
    path.starts_with(canonical_or_self(dir))
}

fn canonical_or_self(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| lexical_normalize(p))
}

/// Canonicalises the longest existing ancestor of `path` and appends the rest, normalised
/// lexically (the rest does not exist, so it holds no symlinks).
pub fn canonicalize_lenient(path: &Path) -> PathBuf {
    let normalized = lexical_normalize(path);
    if let Ok(c) = std::fs::canonicalize(path) {
        return c;
    }
    // Walk up the *unnormalised* path so that `link/..` is resolved through the link first.
    let comps: Vec<Component> = path.components().collect();
    for split in (1..comps.len()).rev() {
        let head: PathBuf = comps[..split].iter().collect();
        if let Ok(base) = std::fs::canonicalize(&head) {
            let mut out = base;
            for c in &comps[split..] {
                match c {
                    Component::ParentDir => {
                        out.pop();
                    }
                    Component::CurDir => {}
                    Component::Normal(n) => out.push(n),
                    Component::RootDir | Component::Prefix(_) => {}
                }
            }
            return out;
        }
    }
    normalized
}

/// Removes `.` and resolves `..` without touching the file system.
pub fn lexical_normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// File modification time in milliseconds since the epoch.
pub fn mtime_ms(meta: &std::fs::Metadata) -> i64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_and_dotdot() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap().join("ws");
        std::fs::create_dir_all(ws.join("src")).unwrap();
        let r = resolve(&ws, "src/../src/main.rs");
        assert_eq!(r.path, ws.join("src/main.rs"));
        assert!(r.inside);
        let r = resolve(&ws, "../outside.txt");
        assert_eq!(r.path, ws.parent().unwrap().join("outside.txt"));
        assert!(!r.inside);
        let r = resolve(&ws, "missing/dir/../../../x");
        assert!(!r.inside, "{:?}", r.path);
        assert_eq!(
            r.display(&ws),
            ws.parent().unwrap().join("x").to_string_lossy()
        );
        assert_eq!(resolve(&ws, ".").display(&ws), ".");
    }

    #[test]
    fn symlink_escape_is_outside() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let ws = root.join("ws");
        let secret = root.join("secret");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::create_dir_all(&secret).unwrap();
        std::fs::write(secret.join("key"), "x").unwrap();
        std::os::unix::fs::symlink(&secret, ws.join("link")).unwrap();
        let r = resolve(&ws, "link/key");
        assert_eq!(r.path, secret.join("key"));
        assert!(!r.inside);
        // A file that does not exist yet below the link is still outside.
        let r = resolve(&ws, "link/new/file.txt");
        assert_eq!(r.path, secret.join("new/file.txt"));
        assert!(!r.inside);
    }
}
