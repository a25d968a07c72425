//! The user's answers about trusting workspaces, kept in `<data dir>/trusted-directories.json`
//! (`{"/abs/dir": "trusted" | "untrusted"}`), so each directory is asked about once; and when
//! pith first saw each `trusted_directories` entry (`<data dir>/trusted-listings.json`), so a
//! `pith.toml` planted below a listed directory later is not trusted with it ([`Listings`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::load::Trust;

const FILE: &str = "trusted-directories.json";
const LISTINGS: &str = "trusted-listings.json";

pub struct TrustStore {
    path: PathBuf,
}

impl TrustStore {
    pub fn new(data_dir: &Path) -> TrustStore {
        TrustStore {
            path: data_dir.join(FILE),
        }
    }

    fn read(&self) -> BTreeMap<String, String> {
        std::fs::read(&self.path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    }

    /// The recorded answer for `workspace`.
    pub fn get(&self, workspace: &Path) -> Trust {
        match self.read().get(&key(workspace)).map(String::as_str) {
            Some("trusted") => Trust::Trusted,
            Some("untrusted") => Trust::Untrusted,
            _ => Trust::Unknown,
        }
    }

    /// Records an answer (written to a temp file, then renamed into place).
    pub fn set(&self, workspace: &Path, trusted: bool) -> std::io::Result<()> {
        let mut all = self.read();
        let value = if trusted { "trusted" } else { "untrusted" };
        all.insert(key(workspace), value.to_string());
        write_json(&self.path, &all)
    }
}

/// What a `trusted_directories` entry trusts: the config files below it as they were when pith
/// first saw the entry. A file created or changed since (its status-change time, which no
/// command can set back, is later) is not covered and is asked about like any workspace's.
pub(crate) struct Listings {
    path: PathBuf,
}

impl Listings {
    pub(crate) fn new(data_dir: &Path) -> Listings {
        Listings {
            path: data_dir.join(LISTINGS),
        }
    }

    fn read(&self) -> BTreeMap<String, u64> {
        std::fs::read(&self.path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    }

    /// When `dir` (a listed directory) was first seen, in nanoseconds since the epoch; the
    /// first call records now. `None` when it cannot be recorded (then nothing is covered).
    pub(crate) fn since(&self, dir: &Path) -> Option<u64> {
        let mut all = self.read();
        let k = key(dir);
        if let Some(t) = all.get(&k) {
            return Some(*t);
        }
        let now = nanos(std::time::SystemTime::now())?;
        all.insert(k, now);
        write_json(&self.path, &all).ok()?;
        Some(now)
    }

    /// Whether `file` (below the listed `dir`) is covered by the listing: it has not changed
    /// since pith first saw `dir` listed. A file that does not exist is covered (it holds
    /// nothing).
    pub(crate) fn covers(&self, dir: &Path, file: &Path) -> bool {
        // Recorded the first time, whatever the file: what is planted later is newer.
        let since = self.since(dir);
        // The link itself and what it leads to: either may have been planted.
        let changed = match std::fs::symlink_metadata(file) {
            Ok(link) => match std::fs::metadata(file) {
                Ok(target) => changed_at(&link).max(changed_at(&target)),
                Err(_) => changed_at(&link),
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return true,
            Err(_) => None,
        };
        match (changed, since) {
            (Some(changed), Some(since)) => changed <= since,
            _ => false,
        }
    }
}

/// When a file's status last changed (content, mode, name, links), in nanoseconds.
#[cfg(unix)]
fn changed_at(meta: &std::fs::Metadata) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    let secs = u64::try_from(meta.ctime()).ok()?;
    let nsec = u64::try_from(meta.ctime_nsec()).ok()?;
    secs.checked_mul(1_000_000_000)?.checked_add(nsec)
}

#[cfg(not(unix))]
fn changed_at(meta: &std::fs::Metadata) -> Option<u64> {
    nanos(meta.modified().ok()?)
}

fn nanos(t: std::time::SystemTime) -> Option<u64> {
    let d = t.duration_since(std::time::UNIX_EPOCH).ok()?;
    u64::try_from(d.as_nanos()).ok()
}

/// Writes `value` to `path` through a temp file renamed into place.
fn write_json<T: serde::Serialize>(path: &Path, value: &T) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = path.with_extension(format!("json.{}", std::process::id()));
    std::fs::write(&tmp, serde_json::to_vec_pretty(value)?)?;
    std::fs::rename(&tmp, path)
}

fn key(workspace: &Path) -> String {
    workspace
        .canonicalize()
        .unwrap_or_else(|_| workspace.to_path_buf())
        .to_string_lossy()
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_remembered_per_directory() {
        let data = tempfile::tempdir().unwrap();
        let ws = tempfile::tempdir().unwrap();
        let other = tempfile::tempdir().unwrap();
        let store = TrustStore::new(data.path());
        assert_eq!(store.get(ws.path()), Trust::Unknown);
        store.set(ws.path(), true).unwrap();
        store.set(other.path(), false).unwrap();
        let again = TrustStore::new(data.path());
        assert_eq!(again.get(ws.path()), Trust::Trusted);
        assert_eq!(again.get(other.path()), Trust::Untrusted);
        again.set(ws.path(), false).unwrap();
        assert_eq!(store.get(ws.path()), Trust::Untrusted);
    }

    /// A listing covers the files that were there when pith first saw it, not one created or
    /// rewritten below it afterwards.
    #[test]
    fn a_listing_covers_only_files_older_than_it() {
        let data = tempfile::tempdir().unwrap();
        let code = tempfile::tempdir().unwrap();
        let old = code.path().join("old.toml");
        std::fs::write(&old, "model = \"a/b\"").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let listings = Listings::new(data.path());
        assert!(listings.covers(code.path(), &old));
        assert!(listings.covers(code.path(), &code.path().join("missing.toml")));
        std::thread::sleep(std::time::Duration::from_millis(20));
        let planted = code.path().join("planted.toml");
        std::fs::write(&planted, "x = 1").unwrap();
        assert!(!Listings::new(data.path()).covers(code.path(), &planted));
        std::fs::write(&old, "model = \"c/d\"").unwrap();
        assert!(!listings.covers(code.path(), &old), "changed since");
    }
}
