//! What an engine asks its MCP servers: tool calls, prompts, resources — each starting the
//! server first when it is not running, bounded by the server's timeouts.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, GetPromptRequestParams, GetPromptResult, JsonObject,
    ReadResourceRequestParams, ReadResourceResult,
};
use rmcp::service::RoleClient;
use rmcp::{Peer, ServiceError};
use tokio_util::sync::CancellationToken;

use super::manager::{McpError, McpManager, Server, service_error};
use pith_protocol::event::{McpResource, McpState};

/// The most resources one server lists for `/resource`.
const RESOURCES_MAX: usize = 500;
/// Why a call did not return a result.
#[derive(Debug, Clone, PartialEq)]
pub enum CallError {
    /// The user interrupted.
    Cancelled,
    /// Anything else, as one line for the model and the user.
    Failed(String),
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::Cancelled => f.write_str("interrupted"),
            CallError::Failed(m) => f.write_str(m),
        }
    }
}

impl McpManager {
    /// Calls a tool, starting the server first when it is not running. Bounded by the server's
    /// tool timeout; `cancel` stops waiting (the server is told the call was cancelled).
    pub async fn call(
        self: &Arc<Self>,
        server: &Arc<Server>,
        tool: &str,
        arguments: Option<JsonObject>,
        cancel: &CancellationToken,
    ) -> Result<CallToolResult, CallError> {
        let peer = tokio::select! {
            p = self.ensure(server) => p.map_err(|reason| CallError::Failed(format!(
                "The MCP server {} is not running and could not be started: {reason}",
                server.name
            )))?,
            _ = cancel.cancelled() => return Err(CallError::Cancelled),
        };
        let mut params = CallToolRequestParams::new(tool.to_string());
        if let Some(a) = arguments {
            params = params.with_arguments(a);
        }
        let timeout = server.config.tool_timeout();
        // the clock stops while the server waits for the user's answer to its question
        let call = super::questions::bounded(peer.call_tool(params), timeout, &server.pace);
        let result = tokio::select! {
            r = call => r,
            _ = cancel.cancelled() => return Err(CallError::Cancelled),
        };
        match result.ok_or(()) {
            Ok(Ok(r)) => Ok(r),
            Err(()) => Err(CallError::Failed(format!(
                "The MCP server {} did not answer {tool} within {} s; the call was cancelled. The server may be stuck: try again, or work without it.",
                server.name,
                timeout.as_secs()
            ))),
            Ok(Err(e)) if crate::oauth::session::is_auth_required(&e) => {
                // A server that guards only its tools answers the call 401: no sign-in, or
                // the stored one was refused after the SDK's refresh.
                let url = server.config.url.as_deref().unwrap_or_default();
                let line = crate::oauth::session::sign_in_line(self.sign_ins(), &server.name, url);
                self.refused_sign_in(server, line.clone());
                Err(CallError::Failed(format!(
                    "The MCP server {} refused {tool}: {line}. The user must sign in before its tools work; do not retry until they have.",
                    server.name
                )))
            }
            Ok(Err(e)) if is_gone(&e, &peer) => {
                // Let the connection's watcher record why it ended.
                tokio::time::sleep(Duration::from_millis(100)).await;
                let why = match (self.expired_sign_in(server), server.state()) {
                    (Some(reason), _) => format!(" ({reason})"),
                    (None, McpState::Exited { reason } | McpState::Failed { reason }) => {
                        format!(" ({reason})")
                    }
                    _ => String::new(),
                };
                Err(CallError::Failed(format!(
                    "The MCP server {} stopped during the call{why}. It is restarted on the next call of one of its tools.",
                    server.name
                )))
            }
            Ok(Err(e)) => Err(CallError::Failed(format!(
                "The MCP server {} rejected the call: {}",
                server.name,
                service_error(&e)
            ))),
        }
    }

    /// Runs an MCP prompt with its arguments.
    pub async fn get_prompt(
        self: &Arc<Self>,
        server: &str,
        prompt: &str,
        arguments: JsonObject,
    ) -> Result<GetPromptResult, McpError> {
        let s = self.named(server)?;
        let peer = self.ensure(&s).await?;
        let mut params = GetPromptRequestParams::new(prompt);
        if !arguments.is_empty() {
            params = params.with_arguments(arguments);
        }
        tokio::time::timeout(s.config.tool_timeout(), peer.get_prompt(params))
            .await
            .map_err(|_| McpError::Timeout {
                server: server.to_string(),
                method: "prompts/get",
            })?
            .map_err(|e| McpError::Rejected {
                server: server.to_string(),
                why: service_error(&e),
            })
    }

    /// The resources of every ready server that offers them.
    pub async fn list_resources(&self) -> Vec<McpResource> {
        let mut out = Vec::new();
        for s in self.servers() {
            let Some(peer) = s.resource_peer() else {
                continue;
            };
            let listed =
                tokio::time::timeout(s.config.startup_timeout(), peer.list_all_resources()).await;
            match listed {
                Ok(Ok(resources)) => out.extend(resources.into_iter().take(RESOURCES_MAX).map(
                    |r| McpResource {
                        server: s.name.clone(),
                        uri: r.uri.clone(),
                        name: r.title.clone().unwrap_or_else(|| r.name.clone()),
                        description: r.description.clone(),
                        mime: r.mime_type,
                    },
                )),
                Ok(Err(e)) => {
                    tracing::warn!(server = %s.name, "resources/list failed: {}", service_error(&e))
                }
                Err(_) => tracing::warn!(server = %s.name, "resources/list timed out"),
            }
        }
        out
    }

    /// Reads one resource.
    pub async fn read_resource(
        self: &Arc<Self>,
        server: &str,
        uri: &str,
    ) -> Result<ReadResourceResult, McpError> {
        let s = self.named(server)?;
        let peer = self.ensure(&s).await?;
        tokio::time::timeout(
            s.config.tool_timeout(),
            peer.read_resource(ReadResourceRequestParams::new(uri)),
        )
        .await
        .map_err(|_| McpError::Timeout {
            server: server.to_string(),
            method: "resources/read",
        })?
        .map_err(|e| McpError::Rejected {
            server: server.to_string(),
            why: service_error(&e),
        })
    }
}

/// The connection is gone (the server exited or the transport broke).
fn is_gone(e: &ServiceError, peer: &Peer<RoleClient>) -> bool {
    matches!(
        e,
        ServiceError::TransportClosed | ServiceError::TransportSend(_)
    ) || peer.is_transport_closed()
}
