//! The questions asked before an engine starts (ARCHITECTURE.md §1): may this workspace's
//! `pith.toml` set what it sets ([`TrustQuestion`]), which provider's key is missing
//! ([`KeyNeed`]), and may a probed local server get the prompt ([`LocalServer`]: the first
//! model). The crate `pith-launch` decides which of them to ask, once, for every front end; each
//! front end only renders them in its medium (the TUI's modals, `pith run`'s flags and errors,
//! the editor's permission request).

use crate::text::escape_one_line;

/// The workspace's `pith.toml` holds settings only a trusted directory may use, and the user
/// never answered for this directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustQuestion {
    pub workspace: std::path::PathBuf,
    /// The settings used only once the folder is trusted.
    pub ignored: Vec<String>,
}

/// The longest a folder or a setting is shown (escaped, in characters).
pub const SHOWN_PATH: usize = 240;
pub const SHOWN_KEY: usize = 80;

impl TrustQuestion {
    /// The folder, escaped on one line: the path and the keys come from the repository.
    pub fn folder(&self) -> String {
        escape_one_line(&self.workspace.display().to_string(), SHOWN_PATH)
    }

    /// The settings, each escaped on one line and bounded.
    pub fn settings(&self) -> Vec<String> {
        self.ignored
            .iter()
            .map(|k| escape_one_line(k, SHOWN_KEY))
            .collect()
    }

    /// The first `n` settings on one line, then how many more there are.
    pub fn settings_line(&self, n: usize) -> String {
        let all = self.settings();
        let mut line = all.iter().take(n).cloned().collect::<Vec<_>>().join(", ");
        if all.len() > n {
            line.push_str(&format!(" and {} more", all.len() - n));
        }
        line
    }
}

/// A provider whose key is missing (its variable unset, none stored): the user may paste one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyNeed {
    pub provider: String,
    /// Its `api_key_env`.
    pub var: String,
    pub base_url: String,
}

/// A local model server pith found by probing (nothing configured, no key): whatever listens
/// there gets the prompt and the workspace's instructions, so the user names it first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalServer {
    /// Where it answered (`http://127.0.0.1:8080`).
    pub url: String,
    /// The model it named (`llamacpp/qwen…`): its text comes from the server.
    pub model: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_settings_line_names_the_first_few_then_counts_the_rest() {
        let q = TrustQuestion {
            workspace: "/w".into(),
            ignored: ["a", "b", "c", "d"].map(String::from).to_vec(),
        };
        assert_eq!(q.settings_line(2), "a, b and 2 more");
        assert_eq!(q.settings_line(4), "a, b, c, d");
    }
}
