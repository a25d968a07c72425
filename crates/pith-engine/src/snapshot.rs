//! Snapshots of the workspace's files in pith's own store, for `/undo`, `/redo` and `/rewind`:
//! content-addressed copies under `<data_dir>/snapshots/` (a file's bytes stored once, however
//! many snapshots hold it), a tree per snapshot naming each file's content. Works whether or not
//! the project is a git repository, and never touches the user's git state.
//!
//! What is covered: the files `.gitignore` leaves (hidden files included, `.git` excluded), up
//! to `MAX_FILE_BYTES` each and `MAX_FILES` in all; a stat cache keeps a snapshot of an unchanged
//! tree to a walk of `stat` calls.

use std::collections::BTreeMap;
use std::io;
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Files larger than this are not snapshotted (and so not restored).
pub const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;
/// A workspace with more files than this is not snapshotted.
pub const MAX_FILES: usize = 50_000;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Entry {
    hash: String,
    #[serde(default)]
    exec: bool,
}

/// Relative path → content.
type Tree = BTreeMap<String, Entry>;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Stat {
    mtime_ns: i128,
    size: u64,
    hash: String,
}

/// The snapshot store of one workspace.
pub struct Snapshots {
    root: PathBuf,
    workspace: PathBuf,
}

fn sha256_hex(bytes: &[u8]) -> String {
    let d = ring::digest::digest(&ring::digest::SHA256, bytes);
    d.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

fn mtime_ns(meta: &std::fs::Metadata) -> i128 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as i128)
}

/// Writes `bytes` to `path` through a temporary file (a crash leaves the old file or the new).
fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}

impl Snapshots {
    pub fn new(data_dir: &Path, workspace: &Path) -> Snapshots {
        Snapshots {
            root: data_dir.join("snapshots"),
            workspace: workspace.to_path_buf(),
        }
    }

    fn object(&self, hash: &str) -> PathBuf {
        self.root.join("objects").join(&hash[..2]).join(hash)
    }

    fn tree_path(&self, id: &str) -> PathBuf {
        self.root.join("trees").join(format!("{id}.json"))
    }

    fn stat_cache_path(&self) -> PathBuf {
        let key = sha256_hex(self.workspace.to_string_lossy().as_bytes());
        self.root.join("stat").join(format!("{}.json", &key[..16]))
    }

    /// Takes a snapshot of the workspace; returns its id.
    pub fn take(&self) -> io::Result<String> {
        let cache_path = self.stat_cache_path();
        let old: BTreeMap<String, Stat> = std::fs::read(&cache_path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        let mut cache = BTreeMap::new();
        let mut tree = Tree::new();
        let walk = ignore::WalkBuilder::new(&self.workspace)
            .hidden(false)
            .require_git(false)
            .filter_entry(|e| e.file_name() != ".git")
            .build();
        for entry in walk.flatten() {
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            let Ok(rel) = entry.path().strip_prefix(&self.workspace) else {
                continue;
            };
            let rel = rel.to_string_lossy().into_owned();
            let Ok(meta) = entry.metadata() else { continue };
            if meta.len() > MAX_FILE_BYTES {
                continue;
            }
            if tree.len() >= MAX_FILES {
                return Err(io::Error::other(format!(
                    "the workspace has more than {MAX_FILES} files"
                )));
            }
            let stat = Stat {
                mtime_ns: mtime_ns(&meta),
                size: meta.len(),
                hash: String::new(),
            };
            let hash = match old.get(&rel) {
                Some(o) if o.mtime_ns == stat.mtime_ns && o.size == stat.size => o.hash.clone(),
                _ => {
                    let Ok(bytes) = std::fs::read(entry.path()) else {
                        continue;
                    };
                    let hash = sha256_hex(&bytes);
                    let obj = self.object(&hash);
                    if !obj.exists() {
                        write_atomic(&obj, &bytes)?;
                    }
                    hash
                }
            };
            let exec = std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o111 != 0;
            cache.insert(
                rel.clone(),
                Stat {
                    hash: hash.clone(),
                    ..stat
                },
            );
            tree.insert(rel, Entry { hash, exec });
        }
        let json = serde_json::to_vec(&tree)?;
        let id = sha256_hex(&json)[..32].to_string();
        let path = self.tree_path(&id);
        if !path.exists() {
            write_atomic(&path, &json)?;
        }
        write_atomic(&cache_path, &serde_json::to_vec(&cache)?)?;
        Ok(id)
    }

    fn tree(&self, id: &str) -> io::Result<Tree> {
        let bytes = std::fs::read(self.tree_path(id))?;
        serde_json::from_slice(&bytes).map_err(io::Error::other)
    }

    /// The files that differ between two snapshots (added, removed or changed), sorted.
    pub fn changed(&self, a: &str, b: &str) -> io::Result<Vec<String>> {
        let (ta, tb) = (self.tree(a)?, self.tree(b)?);
        let mut out: Vec<String> = ta
            .iter()
            .filter(|(p, e)| tb.get(*p) != Some(e))
            .map(|(p, _)| p.clone())
            .collect();
        out.extend(tb.keys().filter(|p| !ta.contains_key(*p)).cloned());
        out.sort();
        out.dedup();
        Ok(out)
    }

    /// Puts `paths` back as snapshot `id` has them: written, or removed when it has none.
    pub fn restore(&self, id: &str, paths: &[String]) -> io::Result<()> {
        let tree = self.tree(id)?;
        for rel in paths {
            let target = self.safe_target(rel)?;
            match tree.get(rel) {
                Some(e) => {
                    let bytes = std::fs::read(self.object(&e.hash))?;
                    write_atomic(&target, &bytes)?;
                    let mode = if e.exec { 0o755 } else { 0o644 };
                    std::fs::set_permissions(
                        &target,
                        std::os::unix::fs::PermissionsExt::from_mode(mode),
                    )?;
                }
                None => match std::fs::symlink_metadata(&target) {
                    Ok(m) if m.is_dir() => {}
                    Ok(_) => std::fs::remove_file(&target)?,
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                    Err(e) => return Err(e),
                },
            }
        }
        Ok(())
    }

    /// Where `rel` lives in the workspace, made safe to write: no `..`, and no symlink (or
    /// file) on the way where the snapshot had a directory — one the agent put there must not
    /// lead a restore out of the workspace.
    fn safe_target(&self, rel: &str) -> io::Result<PathBuf> {
        let rel_path = Path::new(rel);
        if rel_path
            .components()
            .any(|c| !matches!(c, Component::Normal(_)))
        {
            return Err(io::Error::other(format!("refusing to restore {rel}")));
        }
        let mut at = self.workspace.clone();
        let parts: Vec<_> = rel_path.components().collect();
        for (i, c) in parts.iter().enumerate() {
            at.push(c.as_os_str());
            let last = i + 1 == parts.len();
            match std::fs::symlink_metadata(&at) {
                Ok(m) if m.file_type().is_symlink() => std::fs::remove_file(&at)?,
                Ok(m) if !last && !m.is_dir() => std::fs::remove_file(&at)?,
                _ => {}
            }
        }
        Ok(at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fixture {
        _dir: tempfile::TempDir,
        ws: PathBuf,
        snaps: Snapshots,
    }

    fn fixture() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(ws.join("src")).unwrap();
        let snaps = Snapshots::new(&dir.path().join("data"), &ws);
        Fixture {
            _dir: dir,
            ws,
            snaps,
        }
    }

    #[test]
    fn restores_changed_added_and_removed_files() {
        let f = fixture();
        std::fs::write(f.ws.join("src/a.rs"), "old a").unwrap();
        std::fs::write(f.ws.join("gone.txt"), "keep me").unwrap();
        std::fs::write(f.ws.join(".gitignore"), "target/\n").unwrap();
        std::fs::create_dir_all(f.ws.join("target")).unwrap();
        std::fs::write(f.ws.join("target/big"), "build output").unwrap();
        let before = f.snaps.take().unwrap();
        std::fs::write(f.ws.join("src/a.rs"), "new a").unwrap();
        std::fs::remove_file(f.ws.join("gone.txt")).unwrap();
        std::fs::write(f.ws.join("src/new.rs"), "added").unwrap();
        std::fs::write(f.ws.join("target/big"), "rebuilt").unwrap();
        let after = f.snaps.take().unwrap();
        let changed = f.snaps.changed(&before, &after).unwrap();
        assert_eq!(
            changed,
            ["gone.txt", "src/a.rs", "src/new.rs"],
            "ignored files are not covered"
        );
        f.snaps.restore(&before, &changed).unwrap();
        assert_eq!(
            std::fs::read_to_string(f.ws.join("src/a.rs")).unwrap(),
            "old a"
        );
        assert_eq!(
            std::fs::read_to_string(f.ws.join("gone.txt")).unwrap(),
            "keep me"
        );
        assert!(!f.ws.join("src/new.rs").exists());
        // and forward again
        f.snaps.restore(&after, &changed).unwrap();
        assert_eq!(
            std::fs::read_to_string(f.ws.join("src/a.rs")).unwrap(),
            "new a"
        );
        assert!(f.ws.join("src/new.rs").exists() && !f.ws.join("gone.txt").exists());
        // an unchanged tree is the same snapshot
        assert_eq!(f.snaps.take().unwrap(), after);
    }

    /// The agent replaced a directory with a symlink out of the workspace: restoring the files
    /// that were in it writes inside the workspace, never through the link.
    #[test]
    fn a_restore_never_follows_a_symlink_out_of_the_workspace() {
        let f = fixture();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(f.ws.join("src/lib.rs"), "mine").unwrap();
        let before = f.snaps.take().unwrap();
        std::fs::remove_dir_all(f.ws.join("src")).unwrap();
        std::os::unix::fs::symlink(outside.path(), f.ws.join("src")).unwrap();
        f.snaps
            .restore(&before, &["src/lib.rs".to_string()])
            .unwrap();
        assert!(
            !outside.path().join("lib.rs").exists(),
            "wrote through the link"
        );
        assert!(
            !std::fs::symlink_metadata(f.ws.join("src"))
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(
            std::fs::read_to_string(f.ws.join("src/lib.rs")).unwrap(),
            "mine"
        );
        assert!(f.snaps.restore(&before, &["../x".to_string()]).is_err());
    }
}
