//! `pith mcp list`: starts the configured servers and reports each one's state, tools and the
//! tokens their definitions take, against the window of the model in use.

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::search::should_defer;
use super::{McpManager, McpTool};
use pith_config::Config;
use pith_protocol::event::McpState;
use pith_protocol::llm::ToolSpec;
use pith_tools::registry::spec;

/// The tokens a list of tool definitions takes in a request, as the caller counts them (pith's
/// estimator for the model in use).
pub type CountDefinitions<'a> = dyn FnMut(&[ToolSpec]) -> u64 + Send + 'a;

/// The report, as printed. `count` gives the tokens of tool definitions.
pub async fn list(
    config: &Config,
    workspace: &Path,
    model: Option<&str>,
    tools: bool,
    count: &mut CountDefinitions<'_>,
) -> String {
    let mut out = String::new();
    if config.mcp.is_empty() {
        out.push_str(
            "No MCP servers are configured. Add one as [mcp.NAME] (see config.example.toml).\n",
        );
        return out;
    }
    let manager = McpManager::new(config, workspace, Arc::new(|| {}));
    manager.start_all();
    manager.settle(&CancellationToken::new()).await;
    let mut rows = Vec::new();
    let mut total_tokens = 0;
    let mut total_tools = 0;
    for server in manager.servers() {
        let specs: Vec<(ToolSpec, u64)> = server
            .tools()
            .iter()
            .map(|t| {
                let spec = spec(&McpTool::new(manager.clone(), server.clone(), t));
                let tokens = count(std::slice::from_ref(&spec));
                (spec, tokens)
            })
            .collect();
        let tokens: u64 = specs.iter().map(|(_, t)| t).sum();
        total_tokens += tokens;
        total_tools += specs.len();
        rows.push((server.clone(), specs, tokens));
    }
    let name_w = rows
        .iter()
        .map(|(s, ..)| s.name.len())
        .max()
        .unwrap_or(6)
        .max(6);
    let _ = writeln!(
        out,
        "{:<name_w$}  {:<9}  {:<8}  {:>5}  {:>7}  DETAIL",
        "SERVER", "TRANSPORT", "STATE", "TOOLS", "TOKENS"
    );
    for (server, specs, tokens) in &rows {
        let (state, detail) = match server.state() {
            McpState::Ready => {
                let prompts: Vec<String> = server
                    .prompts()
                    .iter()
                    .map(|p| format!("/{}:{}", server.name, p.name))
                    .collect();
                let mut d = Vec::new();
                if !prompts.is_empty() {
                    d.push(format!("prompts {}", prompts.join(" ")));
                }
                if server.has_resources() {
                    d.push("resources".to_string());
                }
                ("ready", d.join("; "))
            }
            McpState::Disabled => ("disabled", String::new()),
            McpState::Starting => ("starting", String::new()),
            McpState::Failed { reason } => ("failed", reason),
            McpState::Exited { reason } => ("exited", reason),
        };
        let _ = writeln!(
            out,
            "{:<name_w$}  {:<9}  {:<8}  {:>5}  {:>7}  {}",
            server.name,
            server.config.transport(),
            state,
            specs.len(),
            tokens,
            detail
        );
        if tools {
            for (spec, t) in specs {
                let _ = writeln!(out, "    {:<50} {:>7}", spec.name, t);
            }
        }
    }
    let window = model
        .map(|m| pith_config::catalog::resolve(config, m).info.context)
        .unwrap_or(0);
    let _ = write!(
        out,
        "\n{total_tools} tools, {total_tokens} tokens of definitions"
    );
    if window > 0 {
        let share = total_tokens as f64 * 100.0 / window as f64;
        let deferred = should_defer(&config.tool_search, total_tokens, window);
        let _ = write!(
            out,
            " = {share:.1}% of the {window}-token window of {}: {}",
            model.unwrap_or_default(),
            if deferred {
                "deferred behind tool_search (the model loads what it needs)"
            } else {
                "sent whole with every request"
            }
        );
    }
    out.push('\n');
    manager.shutdown().await;
    out
}
