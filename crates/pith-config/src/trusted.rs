//! The user's answers about trusting workspaces, kept in `<data dir>/trusted-directories.json`
//! (`{"/abs/dir": "trusted" | "untrusted"}`), so each directory is asked about once.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::load::Trust;

const FILE: &str = "trusted-directories.json";

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
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let tmp = self
            .path
            .with_extension(format!("json.{}", std::process::id()));
        std::fs::write(&tmp, serde_json::to_vec_pretty(&all)?)?;
        std::fs::rename(&tmp, &self.path)
    }
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
}
