//! MCP in the TUI: the servers' state (status bar, a notice when one changes, `/mcp`), their
//! prompts as slash commands (`/SERVER:PROMPT args`), resources attached with `/resource`.

use crate::commands::Command;
use crate::event::{McpServerStatus, McpState};

use super::format;

/// One entry of the slash popup: a command, or an MCP prompt.
#[derive(Debug, Clone, PartialEq)]
pub enum SlashItem {
    Command(Command),
    Prompt {
        server: String,
        prompt: String,
        /// `<a> [b]`.
        usage: String,
        about: String,
        /// It has a required argument (Enter completes it instead of running it).
        required: bool,
    },
    /// A custom command (a Markdown file).
    Custom {
        name: String,
        hint: String,
        /// Its description and source.
        about: String,
        /// It takes arguments: Enter completes it instead of running it.
        wants_args: bool,
    },
}

impl SlashItem {
    pub fn name(&self) -> String {
        match self {
            SlashItem::Command(c) => c.name().to_string(),
            SlashItem::Prompt { server, prompt, .. } => format!("{server}:{prompt}"),
            SlashItem::Custom { name, .. } => name.clone(),
        }
    }

    pub fn args(&self) -> String {
        match self {
            SlashItem::Command(c) => c.args().to_string(),
            SlashItem::Prompt { usage, .. } => usage.clone(),
            SlashItem::Custom { hint, .. } => hint.clone(),
        }
    }

    pub fn about(&self) -> String {
        match self {
            SlashItem::Command(c) => c.about().to_string(),
            SlashItem::Prompt { about, .. } | SlashItem::Custom { about, .. } => about.clone(),
        }
    }
}

/// `ready · 12 tools · 3.4k tokens`, `failed: why`, …
pub fn describe(s: &McpServerStatus) -> String {
    match &s.state {
        McpState::Disabled => "disabled".into(),
        McpState::Starting => "starting…".into(),
        McpState::Ready => {
            let mut d = format!(
                "ready · {} tool{} · {} tokens",
                s.tools,
                if s.tools == 1 { "" } else { "s" },
                format::tokens(s.tokens)
            );
            if s.deferred {
                d.push_str(" (deferred: loaded on demand)");
            }
            d
        }
        McpState::Failed { reason } => format!("failed: {reason}"),
        McpState::Exited { reason } => {
            format!("exited: {reason} (restarted on the next call)")
        }
    }
}

#[cfg(test)]
#[path = "mcp_tests.rs"]
mod tests;
