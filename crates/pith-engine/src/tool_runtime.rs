//! The tool runtime of a session: the tools the model may call and their definitions, the
//! permission rules and what was allowed this session, the doom-loop guard, the tools' session
//! state (the todo list, the files read), and the MCP servers' tools.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

use pith_protocol::event::{PermissionReply, PermissionRequest};
use pith_protocol::llm::ToolSpec;
use pith_tools::permission::{Decision, DoomLoop, LoopStop, Permissions};
use pith_tools::registry::Registry;
use pith_tools::{SessionToolState, Tool, ToolContext};

pub(super) struct ToolRuntime {
    registry: Registry,
    permissions: Permissions,
    doom: DoomLoop,
    state: Arc<SessionToolState>,
    /// The definitions the requests carry.
    specs: Vec<ToolSpec>,
    /// The MCP servers' tools, status and attachments (see `mcp.rs`).
    mcp: super::mcp_session::McpSession,
}

impl ToolRuntime {
    /// The tools' state is over `jobs`, the engine's table of background jobs.
    pub(crate) fn new(
        registry: Registry,
        permissions: Permissions,
        jobs: Arc<pith_tools::jobs::Jobs>,
    ) -> ToolRuntime {
        ToolRuntime {
            registry,
            permissions,
            doom: DoomLoop::default(),
            state: Arc::new(SessionToolState::with_jobs(jobs)),
            specs: Vec::new(),
            mcp: Default::default(),
        }
    }

    /// Another session starts: what this one allowed, repeated and kept goes, and its
    /// background jobs end.
    pub(crate) fn start_session(&mut self, config: &pith_config::Config) {
        let jobs = self.state.jobs.clone();
        let ended = jobs.stop_all();
        if !ended.is_empty() {
            tracing::debug!(?ended, "the session changed: its background jobs end");
        }
        self.state = Arc::new(SessionToolState::with_jobs(jobs));
        self.permissions = Permissions::new(&config.permission);
        self.doom = DoomLoop::default();
    }

    /// The tools the model may call.
    pub(crate) fn registry(&self) -> &Registry {
        &self.registry
    }

    pub(crate) fn set_registry(&mut self, registry: Registry) {
        self.registry = registry;
    }

    /// Keeps only the tools `keep` keeps.
    pub(crate) fn retain(&mut self, keep: impl Fn(&dyn Tool) -> bool) {
        self.registry.retain(keep);
    }

    pub(crate) fn register(&mut self, tool: Arc<dyn Tool>) {
        self.registry.register(tool);
    }

    /// The definitions the requests carry.
    pub(crate) fn specs(&self) -> &[ToolSpec] {
        &self.specs
    }

    pub(crate) fn set_specs(&mut self, specs: Vec<ToolSpec>) {
        self.specs = specs;
    }

    /// The tools' state in this session (the todo list, the files read).
    pub(crate) fn state(&self) -> &Arc<SessionToolState> {
        &self.state
    }

    /// The permission rules and what was allowed this session.
    pub(crate) fn permissions(&self) -> &Permissions {
        &self.permissions
    }

    /// What the rules say of calling `tool` with `input`.
    pub(crate) fn check(&mut self, tool: &str, input: &Value, ctx: &ToolContext) -> Decision {
        self.permissions.check(tool, input, ctx)
    }

    /// The user answered `request`.
    pub(crate) fn reply(&mut self, request: &PermissionRequest, reply: PermissionReply) {
        self.permissions.reply(request, reply);
    }

    /// The MCP tools and the server and remote name of each, for the rules.
    pub(crate) fn set_mcp_tools(&mut self, owners: HashMap<String, (String, String)>) {
        self.permissions.set_mcp_tools(owners);
    }

    /// A new prompt from the user: the calls before it are no loop of this turn's (the same
    /// call asked for in three prompts is the user's wish, not the model repeating itself).
    pub(crate) fn start_user_turn(&mut self) {
        self.doom = DoomLoop::default();
    }

    /// A call about to run, for the doom loop; true when it repeats the last ones.
    pub(crate) fn record_call(&mut self, tool: &str, input: &Value) -> bool {
        self.doom.record(tool, input)
    }

    /// A call that cannot run, for the doom loop; why to stop when it keeps coming.
    pub(crate) fn record_broken_call(&mut self, tool: &str, input: &Value) -> Option<LoopStop> {
        self.doom.record_broken(tool, input)
    }

    /// How many times in a row the same call came.
    pub(crate) fn repeats(&self) -> usize {
        self.doom.count()
    }

    /// The MCP servers' tools, status and attachments.
    pub(crate) fn mcp(&self) -> &super::mcp_session::McpSession {
        &self.mcp
    }

    pub(crate) fn mcp_mut(&mut self) -> &mut super::mcp_session::McpSession {
        &mut self.mcp
    }
}
