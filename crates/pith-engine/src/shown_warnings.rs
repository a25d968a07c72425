//! Warnings said once per directory: the start-up ones (the config's, the custom commands', by
//! `pith run`) and the engine's about the model (an unknown model's guessed window). A run in a
//! directory does not repeat what the last one said. `<data dir>/warnings-shown.json` maps each
//! workspace (and `WORKSPACE/:model`) to digests of the warnings it has; a warning is shown again
//! when its text changes, or when it went away and came back.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const FILE: &str = "warnings-shown.json";
/// Past this many workspaces the record starts over (it only spares repetition).
const MAX_WORKSPACES: usize = 1000;

type Record = BTreeMap<String, Vec<String>>;

/// The warnings of `warnings` not yet shown in `workspace`; records them all as shown. When the
/// record cannot be read or written, every warning is shown.
pub fn not_yet_shown<'a>(data_dir: &Path, workspace: &Path, warnings: &[&'a str]) -> Vec<&'a str> {
    let path = data_dir.join(FILE);
    let mut record: Record = std::fs::read(&path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    let key = workspace.display().to_string();
    let digests: Vec<String> = warnings.iter().map(|w| digest(w)).collect();
    let shown = record.get(&key).cloned().unwrap_or_default();
    let fresh = warnings
        .iter()
        .zip(&digests)
        .filter(|(_, d)| !shown.contains(d))
        .map(|(w, _)| *w)
        .collect();
    if shown == digests {
        return fresh;
    }
    if record.len() >= MAX_WORKSPACES && !record.contains_key(&key) {
        record.clear();
    }
    if digests.is_empty() {
        record.remove(&key);
    } else {
        record.insert(key, digests);
    }
    if save(&path, &record).is_err() {
        return warnings.to_vec();
    }
    fresh
}

/// The first 16 hex digits of the text's SHA-256.
fn digest(text: &str) -> String {
    let d = ring::digest::digest(&ring::digest::SHA256, text.as_bytes());
    d.as_ref()[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// Written whole then renamed, so two runs at once never leave half a file.
fn save(path: &Path, record: &Record) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = PathBuf::from(format!("{}.{}.tmp", path.display(), std::process::id()));
    std::fs::write(&tmp, serde_json::to_vec(record).unwrap_or_default())?;
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_warning_once_per_workspace_until_it_changes() {
        let data = tempfile::tempdir().unwrap();
        let (a, b) = (Path::new("/ws/a"), Path::new("/ws/b"));
        let d = data.path();
        assert_eq!(not_yet_shown(d, a, &["one", "two"]), ["one", "two"]);
        assert!(not_yet_shown(d, a, &["one", "two"]).is_empty());
        assert_eq!(not_yet_shown(d, b, &["one"]), ["one"], "per directory");
        assert_eq!(
            not_yet_shown(d, a, &["one", "two!"]),
            ["two!"],
            "changed text"
        );
        assert!(not_yet_shown(d, a, &["one"]).is_empty());
        assert_eq!(not_yet_shown(d, a, &["one", "two!"]), ["two!"], "came back");
        assert!(not_yet_shown(d, a, &[]).is_empty());
        assert_eq!(not_yet_shown(d, a, &["one"]), ["one"]);
    }

    #[test]
    fn an_unreadable_record_shows_everything() {
        let data = tempfile::tempdir().unwrap();
        std::fs::write(data.path().join(FILE), "not json").unwrap();
        let ws = Path::new("/ws");
        assert_eq!(not_yet_shown(data.path(), ws, &["w"]), ["w"]);
        assert!(not_yet_shown(data.path(), ws, &["w"]).is_empty());
        // a data dir that cannot be written: shown every time
        let file = data.path().join("plain-file");
        std::fs::write(&file, "").unwrap();
        assert_eq!(not_yet_shown(&file, ws, &["w"]), ["w"]);
        assert_eq!(not_yet_shown(&file, ws, &["w"]), ["w"]);
    }
}
