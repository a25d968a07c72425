//! The project's prompt history on disk: every prompt sent from the composer (`!` commands and
//! slash commands too) is kept per workspace, so a new session in the same directory walks up
//! through the prompts of earlier ones. Secrets are scrubbed and a large paste is not kept whole.

use std::sync::Arc;

/// A prompt longer than this (pasted text expanded) is kept as typed, its chips folded.
pub const MAX_ENTRY_CHARS: usize = 8_000;

/// Prefixes of API keys and tokens that are never written to the history.
const KEY_PREFIXES: &[&str] = &[
    "sk-",
    "sk_",
    "pk_live_",
    "rk_live_",
    "ghp_",
    "gho_",
    "ghs_",
    "ghu_",
    "github_pat_",
    "glpat-",
    "xoxb-",
    "xoxp-",
    "AKIA",
    "AIza",
    "hf_",
];

/// Why the history could not be read or written (logged, never shown over the TUI).
pub type HistoryError = Box<dyn std::error::Error + Send + Sync>;

/// Where prompts are kept, per project directory: the binary gives pith's session store, so the
/// TUI needs no database of its own.
pub trait PromptHistory: Send + Sync {
    /// The project's prompts, oldest first.
    fn project_prompts(&self, directory: &str) -> Result<Vec<String>, HistoryError>;
    /// Records one prompt for the project.
    fn record_prompt(&self, directory: &str, text: &str) -> Result<(), HistoryError>;
}

/// Where the composer records prompts: the history and the project they belong to.
#[derive(Clone)]
pub struct PromptLog {
    store: Arc<dyn PromptHistory>,
    directory: String,
}

impl PromptLog {
    pub fn new(store: Arc<dyn PromptHistory>, directory: String) -> Self {
        PromptLog { store, directory }
    }

    /// The same store's history for another project.
    pub fn for_directory(&self, directory: &str) -> PromptLog {
        PromptLog::new(self.store.clone(), directory.to_string())
    }

    pub fn directory(&self) -> &str {
        &self.directory
    }

    /// The project's prompts, oldest first (empty if the store cannot be read).
    pub fn load(&self) -> Vec<String> {
        self.store
            .project_prompts(&self.directory)
            .unwrap_or_else(|e| {
                tracing::warn!("cannot read the prompt history: {e:#}");
                Vec::new()
            })
    }

    /// Records a prompt (as [`entry`] makes it); a failure is logged, never shown over the TUI.
    pub fn record(&self, text: &str) {
        if let Err(e) = self.store.record_prompt(&self.directory, text) {
            tracing::warn!("cannot record the prompt history: {e:#}");
        }
    }
}

/// What goes into the history for a prompt typed as `typed` and sent as `expanded` (pasted
/// chips put back): the expanded text when it is small enough, else the typed text with its chip
/// labels; known secrets and key-shaped tokens replaced by `[REDACTED]`.
pub fn entry(typed: &str, expanded: &str) -> String {
    let text = if expanded.chars().count() <= MAX_ENTRY_CHARS {
        expanded
    } else {
        typed
    };
    let text: String = text.chars().take(MAX_ENTRY_CHARS).collect();
    redact_keys(&pith_secrets::scrub(&text))
}

/// Replaces words that look like API keys: a known key prefix, or a long mix of upper- and
/// lowercase letters and digits (a git hash, all lowercase hex, is left alone).
fn redact_keys(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        if looks_like_key(word) {
            out.push_str(pith_secrets::REDACTED);
        } else {
            out.push_str(word);
        }
        word.clear();
    };
    for c in text.chars() {
        if c.is_alphanumeric() || matches!(c, '-' | '_') {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

fn looks_like_key(word: &str) -> bool {
    if word.len() < 20 {
        return false;
    }
    if KEY_PREFIXES.iter().any(|p| word.starts_with(p)) {
        return true;
    }
    word.len() >= 32
        && word.chars().any(|c| c.is_ascii_uppercase())
        && word.chars().any(|c| c.is_ascii_lowercase())
        && word.chars().any(|c| c.is_ascii_digit())
}

/// The history the composer starts with: the project's prompts, then the session's that are not
/// among them, each prompt once (where it last appeared), oldest first.
pub fn merge(project: Vec<String>, session: Vec<String>) -> Vec<String> {
    let mut all = project;
    all.extend(session);
    let mut seen = std::collections::HashSet::new();
    let mut out: Vec<String> = all
        .into_iter()
        .rev()
        .filter(|p| seen.insert(p.clone()))
        .collect();
    out.reverse();
    out
}

/// The tests keep their history in the real store, as the binary does.
#[cfg(test)]
impl PromptHistory for pith_store::Store {
    fn project_prompts(&self, directory: &str) -> Result<Vec<String>, HistoryError> {
        Ok(pith_store::Store::project_prompts(self, directory)?)
    }

    fn record_prompt(&self, directory: &str, text: &str) -> Result<(), HistoryError> {
        Ok(pith_store::Store::record_prompt(self, directory, text)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pasted_keys_are_not_kept() {
        let e = entry(
            "use key sk-ant-api03-abcdefghijklmnopqrstuvwxyz please",
            "use key sk-ant-api03-abcdefghijklmnopqrstuvwxyz please",
        );
        assert_eq!(e, "use key [REDACTED] please");
        let e = entry("x", "token=Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAB");
        assert_eq!(e, "token=[REDACTED]");
        // ordinary words, paths and git hashes stay
        let plain = "git show 3f2a9c1d4e5b6a7980f1e2d3c4b5a69788f9e0d1 in src/tui/app_tests.rs";
        assert_eq!(entry(plain, plain), plain);
    }

    #[test]
    fn registered_secrets_are_scrubbed() {
        pith_secrets::register("zz-registered-secret-value");
        let e = entry("x", "echo zz-registered-secret-value");
        assert!(!e.contains("registered-secret"), "{e}");
    }

    #[test]
    fn a_large_paste_is_kept_folded() {
        let big = "line\n".repeat(3_000);
        let e = entry("look at [pasted 3000 lines]", &format!("look at {big}"));
        assert_eq!(e, "look at [pasted 3000 lines]");
        let small = entry("look at [pasted 6 lines]", "look at a\nb\nc\nd\ne\nf");
        assert_eq!(small, "look at a\nb\nc\nd\ne\nf");
    }

    #[test]
    fn merge_keeps_each_prompt_once_where_it_last_appeared() {
        let m = merge(
            vec!["a".into(), "b".into(), "c".into()],
            vec!["b".into(), "d".into()],
        );
        assert_eq!(m, ["a", "c", "b", "d"]);
    }
}
