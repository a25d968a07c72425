//! What a command said (ARCHITECTURE.md §6.4): how it ended and the last lines it printed,
//! as the ledger, the anchor index and the frontier's checks all carry them.

use pith_protocol::message::ToolState;
use pith_protocol::tool::{ToolMetadata, ToolName};

/// How a command ended, in a few words (`None`: not known, or still running).
pub(crate) fn status(name: &ToolName, state: &ToolState) -> Option<String> {
    match state {
        ToolState::Completed { metadata, .. } => match ToolMetadata::read(name, metadata)? {
            ToolMetadata::Bash(b) if b.timed_out => Some("timed out".to_string()),
            ToolMetadata::Bash(b) if b.interrupted => Some("interrupted".to_string()),
            ToolMetadata::Bash(b) => match (b.exit_code, b.signal) {
                (Some(code), _) => Some(format!("exit {code}")),
                (None, Some(sig)) => Some(format!("killed by signal {sig}")),
                (None, None) => None,
            },
            _ => None,
        },
        ToolState::Error { .. } => Some("failed".to_string()),
        _ => None,
    }
}

/// The last line a command's output says something on (what it reported: `Plan: 1 to add…`,
/// `rows out: 48213`), cut short; `None` for no output. pith's own `Exit code: N` is not it.
pub(crate) fn last_said(state: &ToolState) -> Option<String> {
    let ToolState::Completed { output, .. } = state else {
        return None;
    };
    last_said_of(output)
}

/// [`last_said`] of a command's output.
pub(crate) fn last_said_of(output: &str) -> Option<String> {
    const SAID_CHARS: usize = 120;
    let said: Vec<&str> = output
        .lines()
        .map(str::trim)
        .rev()
        .filter(|l| {
            let lower = l.to_ascii_lowercase();
            !l.is_empty()
                // pith's own `Exit code: N`, a script's `exit status 0`
                && !lower.starts_with("exit code")
                && !lower.starts_with("exit status")
                // a diagnostic's location or source line, not what the command reported
                && !l.starts_with(['-', '|', '^', '='])
                && !l.starts_with("at ")
                && l.chars().any(char::is_alphanumeric)
        })
        .take(2)
        .collect();
    if said.is_empty() {
        return None;
    }
    // the last two lines, in their order: a figure is often one line above a final "OK"
    let line = said
        .iter()
        .rev()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join(" · ");
    let mut cut: String = line.chars().take(SAID_CHARS).collect();
    if line.chars().count() > SAID_CHARS {
        cut.push('…');
    }
    Some(cut)
}
