use crate::ProviderKind;
use std::collections::HashMap;

use super::*;
use crate::{PermissionAction, PermissionSetting};

mod example;
mod hook_tables;
mod layers;
mod located_errors;
mod untrusted;
mod untrusted_plants;

/// A temp workspace with optional global / workspace / explicit files.
struct Fixture {
    dir: tempfile::TempDir,
    env: HashMap<String, String>,
    explicit: Option<PathBuf>,
    trust: Trust,
    /// pith's data dir, when the test needs trust records.
    data_dir: Option<PathBuf>,
    has_key: Option<fn(&str, &crate::ProviderConfig) -> bool>,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("ws")).unwrap();
        Fixture {
            dir,
            env: HashMap::new(),
            explicit: None,
            // Most tests are about merging: their workspace is trusted.
            trust: Trust::Trusted,
            data_dir: None,
            has_key: None,
        }
    }
    fn global_path(&self) -> PathBuf {
        self.dir.path().join("global.toml")
    }
    fn workspace_path(&self) -> PathBuf {
        self.dir.path().join("ws").join("pith.toml")
    }
    fn global(self, text: &str) -> Self {
        std::fs::write(self.global_path(), text).unwrap();
        self
    }
    fn workspace(self, text: &str) -> Self {
        std::fs::write(self.workspace_path(), text).unwrap();
        self
    }
    fn explicit(mut self, text: &str) -> Self {
        let path = self.dir.path().join("explicit.toml");
        std::fs::write(&path, text).unwrap();
        self.explicit = Some(path);
        self
    }
    fn env(mut self, k: &str, v: &str) -> Self {
        self.env.insert(k.into(), v.into());
        self
    }
    fn options(&self) -> LoadOptions {
        LoadOptions {
            workspace: self.dir.path().join("ws"),
            config_file: self.explicit.clone(),
            global_file: Some(self.global_path()),
            trust: self.trust,
            data_dir: self.data_dir.clone(),
            has_key: self.has_key,
        }
    }
    fn load(&self) -> Result<Loaded, ConfigError> {
        load_with_env(&self.options(), &|k| self.env.get(k).cloned())
    }
}

fn err_of(f: &Fixture) -> String {
    let e = f.load().expect_err("config should be rejected").to_string();
    assert!(!e.contains('\n'), "error must be one line: {e}");
    e
}
