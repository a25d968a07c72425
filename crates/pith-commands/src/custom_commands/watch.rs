//! Commands added, changed or removed while pith runs: the directories' listing is stamped
//! (names, sizes, modification times) at load, and a front end asks [`Commands::reload_if_changed`]
//! when the slash popup opens or a command is sent; only a changed stamp reads the files again.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::Commands;

/// Where the commands were loaded from, and what the directories held then.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Origin {
    pub global: Option<PathBuf>,
    pub workspace: PathBuf,
    pub trusted: bool,
    /// Skills were read too (`[skills] enabled`).
    pub skills: bool,
    stamp: Vec<(PathBuf, u64, Option<SystemTime>)>,
}

impl Origin {
    pub fn new(global: Option<&Path>, workspace: &Path, trusted: bool, skills: bool) -> Origin {
        let mut o = Origin {
            global: global.map(Path::to_path_buf),
            workspace: workspace.to_path_buf(),
            trusted,
            skills,
            stamp: Vec::new(),
        };
        o.stamp = o.current();
        o
    }

    fn current(&self) -> Vec<(PathBuf, u64, Option<SystemTime>)> {
        let mut out = Vec::new();
        let project = self.workspace.join(".pith").join("commands");
        stamp_dir(&project, 0, &mut out);
        if let Some(g) = &self.global {
            stamp_dir(&g.join("commands"), 0, &mut out);
        }
        out.sort();
        out
    }
}

/// Names, sizes and times under `dir` (a few levels: commands may sit in namespaces).
fn stamp_dir(dir: &Path, depth: u32, out: &mut Vec<(PathBuf, u64, Option<SystemTime>)>) {
    let Ok(meta) = std::fs::metadata(dir) else {
        return;
    };
    out.push((dir.to_path_buf(), 0, meta.modified().ok()));
    if depth > 3 || !meta.is_dir() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten().take(1_000) {
        let path = e.path();
        match std::fs::metadata(&path) {
            Ok(m) if m.is_dir() => stamp_dir(&path, depth + 1, out),
            Ok(m) => out.push((path, m.len(), m.modified().ok())),
            Err(_) => out.push((path, 0, None)),
        }
    }
}

impl Commands {
    /// Reads the commands again when their directories changed since they were loaded; true
    /// when it did.
    pub fn reload_if_changed(&mut self) -> bool {
        let Some(origin) = &self.origin else {
            return false;
        };
        if origin.current() == origin.stamp {
            return false;
        }
        let (global, workspace, trusted, skills) = (
            origin.global.clone(),
            origin.workspace.clone(),
            origin.trusted,
            origin.skills,
        );
        *self = Commands::load_with(global.as_deref(), &workspace, trusted, skills);
        for w in &self.warnings {
            tracing::warn!("{w}");
        }
        true
    }
}
