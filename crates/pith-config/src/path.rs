//! Path resolution shared by the file tools, the permission check and the TUI's `@` mentions.
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

/// Symlinks followed while resolving one path before giving up (the kernel's limit is 40).
const MAX_LINKS: usize = 40;

/// Resolves `path` as the kernel would when creating it: every symlink on the way is followed,
/// a dangling one included (writing through it would create its target), and `..` applies to
/// the resolved parent. The part that does not exist is appended as written.
pub fn canonicalize_lenient(path: &Path) -> PathBuf {
    let mut links = 0;
    resolve_links(path, &mut links)
}

fn resolve_links(path: &Path, links: &mut usize) -> PathBuf {
    if let Ok(c) = std::fs::canonicalize(path) {
        return c;
    }
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::Prefix(_) | Component::RootDir => out.push(c.as_os_str()),
            Component::CurDir => {}
            // `out` holds no symlinks, so its parent is the real parent.
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(name) => {
                let next = out.join(name);
                let is_link =
                    std::fs::symlink_metadata(&next).is_ok_and(|m| m.file_type().is_symlink());
                match std::fs::read_link(&next) {
                    Ok(target) if is_link && *links < MAX_LINKS => {
                        *links += 1;
                        let target = if target.is_absolute() {
                            target
                        } else {
                            out.join(target)
                        };
                        out = resolve_links(&target, links);
                    }
                    _ => out = next,
                }
            }
        }
    }
    if out.as_os_str().is_empty() {
        lexical_normalize(path)
    } else {
        out
    }
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

/// The `@` mention of `path` as a front end writes it into a prompt: `@path`, or `@"path"` when
/// it holds a space (the engine reads a quoted mention, on one line, as one word).
pub fn mention(path: &str) -> String {
    if path.contains(char::is_whitespace) {
        format!("@\"{path}\"")
    } else {
        format!("@{path}")
    }
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

    #[test]
    fn dangling_and_chained_links_are_followed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let ws = root.join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        let target = root.join("outside/planted.txt");
        std::os::unix::fs::symlink(&target, ws.join("notes.txt")).unwrap();
        let r = resolve(&ws, "notes.txt");
        assert_eq!(r.path, target);
        assert!(!r.inside);
        // Relative, chained, and with `..` after the link.
        std::os::unix::fs::symlink("../outside/x", ws.join("rel")).unwrap();
        std::os::unix::fs::symlink("rel", ws.join("chain")).unwrap();
        assert_eq!(resolve(&ws, "chain").path, root.join("outside/x"));
        assert_eq!(resolve(&ws, "chain/../y").path, root.join("outside/y"));
        // A loop ends without hanging.
        std::os::unix::fs::symlink("loop2", ws.join("loop1")).unwrap();
        std::os::unix::fs::symlink("loop1", ws.join("loop2")).unwrap();
        let _ = resolve(&ws, "loop1/x");
        // Inside stays inside.
        std::os::unix::fs::symlink("sub", ws.join("alias")).unwrap();
        let r = resolve(&ws, "alias/new.txt");
        assert_eq!(r.path, ws.join("sub/new.txt"));
        assert!(r.inside);
    }
}
