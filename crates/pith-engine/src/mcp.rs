//! The runner's side of MCP: the servers' tools in the registry and in the request (whole, or
//! deferred behind `tool_search`), the context figure kept exact as definitions come and go,
//! the servers' status for the front ends, prompts as user messages, resources as attachments.

use std::collections::HashMap;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::mcp_error::McpOpError;
use crate::turn_context::Turn;
use pith_mcp::search::{self, TOOL_SEARCH, ToolSearch};
use pith_mcp::{McpManager, McpTool};
use pith_protocol::event::{EngineState, McpServerStatus, McpState, SettingsEvent};
use pith_protocol::llm::ToolSpec;
use pith_protocol::message::PartKind;
use pith_tools::registry::spec;
use pith_tools::{Registry, Tool};

impl Turn<'_> {
    /// Starts using `manager`'s servers (already starting in the background).
    pub(crate) fn attach_mcp(&mut self, manager: Arc<McpManager>) {
        if manager.is_empty() {
            return;
        }
        let builtin = (self.tools.registry().clone(), self.tools.specs().to_vec());
        let mcp = self.tools.mcp_mut();
        mcp.builtin = Some(builtin);
        mcp.manager = Some(manager);
        self.refresh_tools();
    }

    /// Forgets what the tools were built from (a new session has new permissions and history).
    pub(crate) fn reset_mcp(&mut self) {
        self.tools.mcp_mut().generation = None;
        self.refresh_tools();
    }

    /// Brings the registry and the request's tools up to date with the servers and the history:
    /// every MCP tool is in the registry; the request carries all their definitions, or — when
    /// they would take more than `tool_search.threshold` of the window — `tool_search` with an
    /// index and the definitions the history loaded. The context figure follows the change of
    /// definitions; the front ends get the servers' status when it changed.
    pub(crate) fn refresh_tools(&mut self) {
        let Some(manager) = self.tools.mcp().manager.clone() else {
            return;
        };
        let Some((builtin_registry, builtin_specs)) = self.tools.mcp().builtin.clone() else {
            return;
        };
        let generation = manager.generation();
        if self.tools.mcp().generation != Some(generation) {
            self.tools.mcp_mut().generation = Some(generation);
            self.rebuild_mcp_tools(&manager, builtin_registry);
        }
        let mcp_specs: Vec<ToolSpec> = self
            .tools
            .mcp()
            .tools
            .iter()
            .map(|t| spec(t.as_ref()))
            .collect();
        let total = self.meter.tool_definitions(&mcp_specs);
        let deferred = search::should_defer(
            &self.opts.config.tool_search,
            total,
            self.model.limits.context,
        );
        let mut specs = builtin_specs;
        if deferred {
            let names: Vec<&str> = self.tools.mcp().tools.iter().map(|t| t.name()).collect();
            let loaded = search::loaded(self.log.view(), &|n| names.contains(&n));
            let loader = ToolSearch::new(mcp_specs.clone(), &loaded);
            specs.push(spec(&loader));
            self.tools.register(Arc::new(loader));
            specs.extend(mcp_specs.into_iter().filter(|s| loaded.contains(&s.name)));
        } else {
            self.tools.retain(|t| t.name() != TOOL_SEARCH);
            specs.extend(mcp_specs);
        }
        if specs != self.tools.specs() {
            let before = self.overhead();
            self.tools.set_specs(specs);
            let after = self.overhead();
            self.meter.on_overhead_change(before, after);
        }
        self.emit_mcp_status(&manager, deferred);
    }

    fn rebuild_mcp_tools(&mut self, manager: &Arc<McpManager>, mut registry: Registry) {
        let mut tools: Vec<Arc<McpTool>> = Vec::new();
        let mut owners = HashMap::new();
        for server in manager.servers() {
            if !matches!(server.state(), McpState::Ready | McpState::Exited { .. }) {
                continue;
            }
            for t in server.tools() {
                let tool = Arc::new(McpTool::new(manager.clone(), server.clone(), &t));
                if registry.get(tool.name()).is_some() {
                    tracing::warn!(
                        tool = tool.name(),
                        "two MCP tools share a name; the second is left out"
                    );
                    continue;
                }
                owners.insert(
                    tool.name().to_string(),
                    (tool.server().to_string(), tool.remote().to_string()),
                );
                registry.register(tool.clone());
                tools.push(tool);
            }
        }
        self.tools.set_mcp_tools(owners);
        self.tools.set_registry(registry);
        self.tools.mcp_mut().tools = tools;
    }

    fn emit_mcp_status(&mut self, manager: &Arc<McpManager>, deferred: bool) {
        let mut status = Vec::new();
        for server in manager.servers() {
            let specs: Vec<ToolSpec> = self
                .tools
                .mcp()
                .tools
                .iter()
                .filter(|t| t.server() == server.name)
                .map(|t| spec(t.as_ref()))
                .collect();
            status.push(McpServerStatus {
                name: server.name.clone(),
                transport: server.config.transport(),
                state: server.state(),
                tools: specs.len(),
                tokens: self.meter.tool_definitions(&specs),
                deferred: deferred && !specs.is_empty(),
                prompts: server.prompts(),
                resources: server.has_resources(),
                sign_in: manager.sign_in(server),
            });
        }
        if status != self.tools.mcp().status {
            self.tools.mcp_mut().status = status.clone();
            self.emit(SettingsEvent::McpStatus { servers: status });
        }
    }

    /// Before a step: waits for servers still starting (each within its startup timeout) and
    /// for lists a server said changed, so the request has their tools.
    pub(crate) async fn settle_mcp(&mut self, cancel: &CancellationToken) {
        let Some(manager) = self.tools.mcp().manager.clone() else {
            return;
        };
        let starting = manager.starting();
        if !starting.is_empty() {
            self.state(
                EngineState::Running,
                Some(format!("starting MCP servers: {}", starting.join(", "))),
            );
        }
        if !starting.is_empty() || manager.refreshing() {
            manager.settle(cancel).await;
        }
        self.refresh_tools();
    }

    /// The user message an MCP prompt command becomes.
    pub(crate) async fn mcp_prompt_text(
        &mut self,
        server: &str,
        prompt: &str,
        args: &str,
    ) -> Result<String, McpOpError> {
        let manager = self
            .tools
            .mcp()
            .manager
            .clone()
            .ok_or(McpOpError::NoServers)?;
        let spec = manager
            .server(server)
            .ok_or_else(|| McpOpError::NoServer(server.to_string()))?
            .prompts()
            .into_iter()
            .find(|p| p.name == prompt)
            .ok_or_else(|| McpOpError::NoPrompt {
                server: server.to_string(),
                prompt: prompt.to_string(),
            })?;
        let arguments = pith_mcp::prompt::arguments(&spec.arguments, args).map_err(|cause| {
            McpOpError::Arguments {
                command: format!("/{server}:{prompt}"),
                cause,
            }
        })?;
        let result = manager
            .get_prompt(server, prompt, arguments)
            .await
            .map_err(McpOpError::Server)?;
        let text = pith_mcp::prompt::prompt_text(&result);
        if text.trim().is_empty() {
            return Err(McpOpError::NoText {
                command: format!("/{server}:{prompt}"),
            });
        }
        Ok(text)
    }

    /// Attachments read for the next message (waiting for reads still running).
    pub(crate) async fn collect_attachments(&mut self) {
        let pending = self.shared.take_attachments();
        for read in pending {
            if let Ok(Some(a)) = read.await {
                self.tools.mcp_mut().attachments.push(a);
            }
        }
    }

    /// The parts the pending attachments add to a user message: a File part naming each and a
    /// synthetic text part holding its contents (cut like a tool output).
    pub(crate) fn attachment_parts(&mut self) -> Vec<PartKind> {
        let limits = self.tool_output();
        let mut parts = Vec::new();
        for a in std::mem::take(&mut self.tools.mcp_mut().attachments) {
            let mut text = a.text;
            if pith_tools::truncate::needs_truncation(&text, &limits) {
                let id = format!("resource_{}", ulid::Ulid::new());
                text = pith_tools::truncate::truncate(&text, &limits, &self.opts.data_dir, &id);
            }
            parts.push(PartKind::File {
                path: a.label.clone(),
                mime: a.mime.clone(),
            });
            parts.push(PartKind::Text {
                text: format!("Attached MCP resource {}:\n{text}", a.label),
                synthetic: true,
            });
        }
        parts
    }
}
