//! Why an MCP prompt, resource or server op cannot be done. A leaf: the engine's error wraps it.

/// Why an MCP prompt, resource or server op cannot be done.
#[derive(Debug, thiserror::Error)]
pub enum McpOpError {
    /// An MCP prompt command with no MCP servers configured.
    #[error("no MCP servers are configured")]
    NoServers,
    /// A resource or restart op with no MCP servers configured.
    #[error("no MCP servers are configured ([mcp.NAME] in the config)")]
    NotConfigured,
    #[error("no MCP server named {0}")]
    NoServer(String),
    #[error("{server} has no prompt named {prompt}")]
    NoPrompt { server: String, prompt: String },
    /// The text after `/server:prompt` does not fit the prompt's arguments.
    #[error("{command}: {cause}")]
    Arguments {
        command: String,
        cause: pith_mcp::prompt::ArgumentsError,
    },
    /// The server's answer to the prompt request (its error).
    #[error("{0}")]
    Server(pith_mcp::manager::McpError),
    #[error("{command} returned no text")]
    NoText { command: String },
    #[error("cannot read {label}: {cause}")]
    Read {
        label: String,
        cause: pith_mcp::manager::McpError,
    },
    /// `/mcp login NAME` failed (the sign-in's own line).
    #[error("cannot sign in to {name}: {cause}")]
    Login {
        name: String,
        cause: pith_mcp::oauth::LoginError,
    },
}
