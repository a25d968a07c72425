//! MCP in the TUI: the servers' state (status bar, a notice when one changes, `/mcp`), their
//! prompts as slash commands (`/SERVER:PROMPT args`), resources attached with `/resource`.

use pith_commands::commands::Command;
use pith_protocol::event::{McpServerStatus, McpState};

use super::format;
use super::transcript::NoticeLevel;

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

/// The MCP servers as the engine last reported them.
#[derive(Debug, Default)]
pub(crate) struct McpServers {
    servers: Vec<McpServerStatus>,
}

impl McpServers {
    pub(crate) fn list(&self) -> &[McpServerStatus] {
        &self.servers
    }

    pub(crate) fn has(&self, name: &str) -> bool {
        self.servers.iter().any(|s| s.name == name)
    }

    /// Takes the engine's report; returns the transcript lines its changes call for: a server
    /// ready (or with other tools), failed or exited.
    pub(crate) fn update(&mut self, servers: Vec<McpServerStatus>) -> Vec<(NoticeLevel, String)> {
        let mut lines = Vec::new();
        for s in &servers {
            let before = self.servers.iter().find(|o| o.name == s.name);
            let changed_state = before.map(|b| &b.state) != Some(&s.state);
            let level = match &s.state {
                McpState::Ready if changed_state => NoticeLevel::Info,
                McpState::Ready if before.is_some_and(|b| b.tools != s.tools) => NoticeLevel::Info,
                McpState::Failed { .. } if changed_state => NoticeLevel::Error,
                McpState::Exited { .. } if changed_state => NoticeLevel::Warn,
                _ => continue,
            };
            lines.push((level, format!("mcp {}: {}", s.name, describe(s))));
        }
        self.servers = servers;
        lines
    }

    /// The MCP prompts whose `server:prompt` matches what is typed after `/`.
    pub(crate) fn prompt_items(&self, typed: &str) -> Vec<SlashItem> {
        let typed = typed.to_lowercase();
        let mut out = Vec::new();
        for s in self.servers.iter().filter(|s| s.state == McpState::Ready) {
            for p in &s.prompts {
                let name = format!("{}:{}", s.name, p.name).to_lowercase();
                if typed.is_empty() || name.starts_with(&typed) || name.contains(&typed) {
                    out.push(SlashItem::Prompt {
                        server: s.name.clone(),
                        prompt: p.name.clone(),
                        usage: pith_protocol::mcp_prompt::usage(&p.arguments),
                        about: p
                            .description
                            .clone()
                            .map(|d| pith_protocol::text::one_line(&d))
                            .unwrap_or_else(|| format!("MCP prompt of {}", s.name)),
                        required: p.arguments.iter().any(|a| a.required),
                    });
                }
            }
        }
        out
    }

    /// For `pith_commands::route`: whether the server `server` offers `prompt` (`None`: no such server).
    pub(crate) fn has_prompt(&self, server: &str, prompt: &str) -> Option<bool> {
        let s = self.servers.iter().find(|s| s.name == server)?;
        Some(s.prompts.iter().any(|p| p.name == prompt))
    }
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
pub(crate) fn describe(s: &McpServerStatus) -> String {
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
