//! What the runner keeps about MCP: the servers, their tools, the status last sent, the
//! resources read for the next message (the runner's side of MCP is `mcp.rs`).

use std::sync::Arc;

use crate::mcp_ops::Attachment;
use pith_mcp::{McpManager, McpTool};
use pith_protocol::event::McpServerStatus;
use pith_protocol::llm::ToolSpec;
use pith_tools::Registry;

/// What the runner keeps about MCP.
#[derive(Default)]
pub(crate) struct McpSession {
    pub(crate) manager: Option<Arc<McpManager>>,
    /// The manager's generation the tools were built from.
    pub(crate) generation: Option<u64>,
    /// Every MCP tool, offered or deferred.
    pub(crate) tools: Vec<Arc<McpTool>>,
    /// The built-in registry and specs, before any MCP tool.
    pub(crate) builtin: Option<(Registry, Vec<ToolSpec>)>,
    /// Last status sent to the front ends.
    pub(crate) status: Vec<McpServerStatus>,
    /// Resources read for the next user message.
    pub(crate) attachments: Vec<Attachment>,
}

impl McpSession {
    /// The servers, when the session has any.
    pub(crate) fn manager(&self) -> Option<&Arc<McpManager>> {
        self.manager.as_ref()
    }
}
