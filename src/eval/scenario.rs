//! The scenarios of `pith eval compaction`: coding sessions with their probes, as JSON
//! (`assets/eval/compaction/README.md` describes the format). The shipped ones are embedded;
//! `--scenarios DIR` reads every `*.json` of a directory instead.

use std::path::Path;

use anyhow::{Context, bail};
use serde::Deserialize;
use serde_json::Value;

/// The scenarios shipped with pith, by file name.
const SHIPPED: [(&str, &str); 5] = [
    (
        "rate-limiter.json",
        include_str!("../../assets/eval/compaction/rate-limiter.json"),
    ),
    (
        "flaky-migration.json",
        include_str!("../../assets/eval/compaction/flaky-migration.json"),
    ),
    (
        "config-parser.json",
        include_str!("../../assets/eval/compaction/config-parser.json"),
    ),
    (
        "release-ci.json",
        include_str!("../../assets/eval/compaction/release-ci.json"),
    ),
    (
        "cache-eviction.json",
        include_str!("../../assets/eval/compaction/cache-eviction.json"),
    ),
];

/// The window a scenario is compacted at when it names none.
pub(super) const DEFAULT_WINDOW: u64 = 4_096;

/// One coding session with its ground truth. Fields pith does not know (notes, a ground-truth
/// summary for people) are ignored.
#[derive(Debug, Clone, Deserialize)]
pub(super) struct Scenario {
    pub(super) name: String,
    #[serde(default)]
    pub(super) description: String,
    /// The context window (tokens) pith compacts the session at.
    #[serde(default)]
    pub(super) window: Option<u64>,
    pub(super) messages: Vec<Turn>,
    pub(super) probes: Vec<Probe>,
}

/// A message of the session: the user's, or one step of the assistant's (its text and the tool
/// calls it made, each with its output).
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case", deny_unknown_fields)]
pub(super) enum Turn {
    User {
        text: String,
        /// A block the user pasted after the text (a log, a diff), recorded as pasted as the
        /// TUI records a bracketed paste and `pith run` piped input.
        #[serde(default)]
        paste: Option<String>,
    },
    Assistant {
        #[serde(default)]
        text: String,
        #[serde(default)]
        tools: Vec<ToolCall>,
    },
}

/// A tool call of an assistant step, with what it returned.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ToolCall {
    /// The tool's name as pith knows it (`read`, `edit`, `write`, `bash`, `grep`, `todowrite`).
    pub(super) tool: String,
    pub(super) input: Value,
    #[serde(default)]
    pub(super) output: String,
    /// The call failed: `output` is its error message.
    #[serde(default)]
    pub(super) error: bool,
    /// `bash`: the command's exit code (else read from a last line `exit status N` or
    /// `Exit code: N` of `output`).
    #[serde(default)]
    pub(super) exit: Option<i32>,
}

/// What a probe asks about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum Kind {
    /// A fact the user gave (a port, a name, a constraint).
    Recall,
    /// Which files changed and how.
    Artifact,
    /// What the next step is.
    Continuation,
    /// What was decided and why.
    Decision,
}

impl Kind {
    pub(super) const ALL: [Kind; 4] = [
        Kind::Recall,
        Kind::Artifact,
        Kind::Continuation,
        Kind::Decision,
    ];

    pub(super) fn name(self) -> &'static str {
        match self {
            Kind::Recall => "recall",
            Kind::Artifact => "artifact",
            Kind::Continuation => "continuation",
            Kind::Decision => "decision",
        }
    }
}

/// A question and the exact strings that grade it (case-insensitive): every `all_of`, and at
/// least one `any_of` when there are any.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Probe {
    pub(super) kind: Kind,
    pub(super) question: String,
    #[serde(default)]
    pub(super) all_of: Vec<String>,
    #[serde(default)]
    pub(super) any_of: Vec<String>,
}

impl Scenario {
    pub(super) fn window(&self) -> u64 {
        self.window.unwrap_or(DEFAULT_WINDOW)
    }

    /// Whether any user message carries a pasted block.
    #[cfg(test)]
    fn has_paste(&self) -> bool {
        self.messages
            .iter()
            .any(|t| matches!(t, Turn::User { paste: Some(_), .. }))
    }

    /// A scenario pith can run: messages starting with the user's, probes with anchors.
    fn check(&self, source: &str) -> anyhow::Result<()> {
        if !matches!(self.messages.first(), Some(Turn::User { .. })) {
            bail!("{source}: the first message must be the user's");
        }
        if self.probes.is_empty() {
            bail!("{source}: no probes");
        }
        for (i, p) in self.probes.iter().enumerate() {
            let anchors = p.all_of.iter().chain(&p.any_of);
            if p.all_of.is_empty() && p.any_of.is_empty()
                || anchors.clone().any(|a| a.trim().is_empty())
            {
                bail!("{source}: probe {} needs non-empty all_of or any_of", i + 1);
            }
        }
        Ok(())
    }
}

fn parse(source: &str, text: &str) -> anyhow::Result<Scenario> {
    let s: Scenario =
        serde_json::from_str(text).with_context(|| format!("{source}: not a scenario"))?;
    s.check(source)?;
    Ok(s)
}

/// The shipped scenarios.
pub(super) fn shipped() -> anyhow::Result<Vec<Scenario>> {
    SHIPPED
        .iter()
        .map(|(name, text)| parse(name, text))
        .collect()
}

/// Every `*.json` scenario of `dir`, by file name.
pub(super) fn from_dir(dir: &Path) -> anyhow::Result<Vec<Scenario>> {
    let entries =
        std::fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))?;
    let mut files: Vec<_> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    if files.is_empty() {
        bail!("no scenarios (*.json) in {}", dir.display());
    }
    files
        .iter()
        .map(|f| {
            let text = std::fs::read_to_string(f)
                .with_context(|| format!("cannot read {}", f.display()))?;
            parse(&f.display().to_string(), &text)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_scenario_parses_and_asks_every_kind() {
        let all = shipped().unwrap();
        assert!(all.len() >= 4);
        assert!(all.iter().any(Scenario::has_paste));
        for s in &all {
            for k in Kind::ALL {
                assert!(
                    s.probes.iter().any(|p| p.kind == k),
                    "{} has no {} probe",
                    s.name,
                    k.name()
                );
            }
        }
    }

    #[test]
    fn a_probe_without_anchors_is_refused() {
        let text = r#"{"name":"x","messages":[{"role":"user","text":"hi"}],
            "probes":[{"kind":"recall","question":"q","all_of":[" "]}]}"#;
        let err = parse("x.json", text).unwrap_err().to_string();
        assert!(err.contains("probe 1"), "{err}");
        let text = r#"{"name":"x","messages":[{"role":"assistant","text":"hi"}],
            "probes":[{"kind":"recall","question":"q","all_of":["a"]}]}"#;
        assert!(parse("x.json", text).is_err());
    }
}
