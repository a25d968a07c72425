//! How calls are let through: the permission mode, a question the engine asks and the reply to it.

use serde::{Deserialize, Serialize};

/// How tool calls are let through, on top of the permission rules (deny rules and the sandbox
/// hold in every mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PermissionMode {
    /// The rules decide; what they ask about is asked.
    #[default]
    Default,
    /// Look, don't touch: only tools that read run; the model ends with a plan to accept.
    Plan,
    /// Edits and writes inside the workspace need no question.
    AcceptEdits,
    /// Nothing is asked (as `--yes`): what the rules ask about runs.
    Bypass,
}

impl PermissionMode {
    pub const ALL: [PermissionMode; 4] = [
        PermissionMode::Default,
        PermissionMode::Plan,
        PermissionMode::AcceptEdits,
        PermissionMode::Bypass,
    ];

    /// The name on the command line and in the status bar.
    pub fn name(self) -> &'static str {
        match self {
            PermissionMode::Default => "default",
            PermissionMode::Plan => "plan",
            PermissionMode::AcceptEdits => "accept-edits",
            PermissionMode::Bypass => "bypass",
        }
    }

    pub fn parse(s: &str) -> Option<PermissionMode> {
        Self::ALL.into_iter().find(|m| m.name() == s.trim())
    }

    /// The next mode Shift+Tab gives: default → accept-edits → plan → default (bypass is only
    /// ever chosen on purpose, and Shift+Tab leaves it for default).
    pub fn next(self) -> PermissionMode {
        match self {
            PermissionMode::Default => PermissionMode::AcceptEdits,
            PermissionMode::AcceptEdits => PermissionMode::Plan,
            PermissionMode::Plan | PermissionMode::Bypass => PermissionMode::Default,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PermissionReply {
    Once,
    /// For the session: each command's prefix (`cargo build*`), a destructive command only as
    /// written (`rm -rf x`), a path as it is.
    Always,
    /// For the session, every command of the call only exactly as written: no prefix.
    AlwaysExact,
    Deny,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PermissionRequest {
    pub id: String,
    pub tool: String,
    pub call_id: String,
    /// Short human description: the command, the path, …
    pub title: String,
    /// The pattern an "always" reply would allow for the rest of the session.
    pub patterns: Vec<String>,
    /// The sub-agent that asks (`None`: the main agent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
}

impl PermissionRequest {
    /// Whether "always" would grant a command by prefix (a pattern ending in an unescaped
    /// `*`): only then is "always allow this exact command" a different choice.
    pub fn grants_a_prefix(&self) -> bool {
        self.patterns.iter().any(|p| {
            p.strip_suffix('*')
                .is_some_and(|stem| stem.chars().rev().take_while(|c| *c == '\\').count() % 2 == 0)
        })
    }
}

#[cfg(test)]
mod prefix_tests {
    use super::PermissionRequest;

    fn req(patterns: &[&str]) -> PermissionRequest {
        PermissionRequest {
            id: "p".into(),
            tool: "bash".into(),
            call_id: "c".into(),
            title: "t".into(),
            patterns: patterns.iter().map(|p| p.to_string()).collect(),
            agent: None,
        }
    }

    /// "Always allow this exact command" is offered only where "always" would grant more than
    /// the command as written (the walkthrough found both choices the same for a lone `rm`).
    #[test]
    fn only_an_unescaped_trailing_star_grants_a_prefix() {
        assert!(req(&["cargo build*", "rm -rf x"]).grants_a_prefix());
        assert!(!req(&["rm -rf x"]).grants_a_prefix());
        assert!(!req(&["echo \\*"]).grants_a_prefix());
        assert!(req(&["echo \\\\*"]).grants_a_prefix());
        assert!(!req(&[]).grants_a_prefix());
    }
}
