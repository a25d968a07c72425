//! MCP servers as front ends see them: their state and transport, their prompts and resources.

use serde::{Deserialize, Serialize};

/// Where an MCP server stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum McpState {
    /// `enabled = false` in the config.
    Disabled,
    /// Starting (or restarting) and listing its tools.
    Starting,
    Ready,
    /// It could not be started; restarted on the next call of one of its tools.
    Failed {
        reason: String,
    },
    /// It stopped after starting; restarted on the next call of one of its tools.
    Exited {
        reason: String,
    },
}

/// One argument of an MCP prompt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpPromptArg {
    pub name: String,
    #[serde(default)]
    pub required: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// An MCP prompt: offered as the slash command `/SERVER:NAME`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpPrompt {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub arguments: Vec<McpPromptArg>,
}

/// How pith talks to an MCP server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum McpTransport {
    /// A child process, over its stdin and stdout.
    Stdio,
    /// Streamable HTTP (`url`).
    Http,
}

impl McpTransport {
    pub fn as_str(self) -> &'static str {
        match self {
            McpTransport::Stdio => "stdio",
            McpTransport::Http => "http",
        }
    }
}

impl std::fmt::Display for McpTransport {
    /// As written in the JSON; padded as asked (`{:<5}` lines listings up).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

/// One MCP server as front ends show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpServerStatus {
    pub name: String,
    pub transport: McpTransport,
    #[serde(flatten)]
    pub state: McpState,
    /// Tools offered to the model (after `enabled_tools` / `disabled_tools`).
    pub tools: usize,
    /// Estimated tokens of their definitions, as sent when not deferred.
    pub tokens: u64,
    /// Its definitions are behind `tool_search` (only loaded ones are sent).
    #[serde(default)]
    pub deferred: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prompts: Vec<McpPrompt>,
    /// It offers resources (`/resource`).
    #[serde(default)]
    pub resources: bool,
    /// Its OAuth sign-in (`pith mcp login`), as shown: `signed in, token expires in 50 min`,
    /// `sign-in expired — …`; `None` when it has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sign_in: Option<String>,
}

/// A resource an MCP server offers (`/resource`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpResource {
    pub server: String,
    pub uri: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Stored and printed as the strings earlier builds wrote; listings pad it.
    #[test]
    fn mcp_transports_keep_their_names() {
        for (t, text) in [(McpTransport::Stdio, "stdio"), (McpTransport::Http, "http")] {
            assert_eq!(serde_json::to_value(t).unwrap(), serde_json::json!(text));
            assert_eq!(
                serde_json::from_value::<McpTransport>(text.into()).unwrap(),
                t
            );
        }
        assert_eq!(format!("[{:<5}]", McpTransport::Http), "[http ]");
    }
}
