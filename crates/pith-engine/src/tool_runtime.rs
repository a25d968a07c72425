//! The tool runtime of a session: the tools the model may call and their definitions, the
//! permission rules and what was allowed this session, the doom-loop guard, the tools' session
//! state (the todo list, the files read), and the MCP servers' tools.

use std::sync::Arc;

use pith_protocol::llm::ToolSpec;
use pith_tools::SessionToolState;
use pith_tools::permission::{DoomLoop, Permissions};
use pith_tools::registry::Registry;

pub(super) struct ToolRuntime {
    pub registry: Registry,
    pub permissions: Permissions,
    pub doom: DoomLoop,
    pub state: Arc<SessionToolState>,
    /// The definitions the requests carry.
    pub specs: Vec<ToolSpec>,
    /// The MCP servers' tools, status and attachments (see `mcp.rs`).
    pub mcp: super::mcp::McpSession,
}

impl ToolRuntime {
    pub fn new(registry: Registry, permissions: Permissions) -> ToolRuntime {
        ToolRuntime {
            registry,
            permissions,
            doom: DoomLoop::default(),
            state: Arc::new(SessionToolState::default()),
            specs: Vec::new(),
            mcp: Default::default(),
        }
    }

    /// Another session starts: what this one allowed, repeated and kept goes.
    pub fn start_session(&mut self, config: &pith_config::Config) {
        self.state = Arc::new(SessionToolState::default());
        self.permissions = Permissions::new(&config.permission);
        self.doom = DoomLoop::default();
    }
}
