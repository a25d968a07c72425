//! `pith mcp list`: starts the configured servers and reports each one's state, tools and the
//! tokens their definitions take, against the window of the model in use.

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::search::should_defer;
use super::{McpManager, McpTool, Server};
use pith_config::Config;
use pith_protocol::event::McpState;
use pith_protocol::llm::ToolSpec;
use pith_tools::registry::spec;

/// The tokens a list of tool definitions takes in a request, as the caller counts them (pith's
/// estimator for the model in use).
pub(crate) type CountDefinitions<'a> = dyn FnMut(&[ToolSpec]) -> u64 + Send + 'a;

/// One server's row: the server, its tools' definitions with their tokens, and their sum.
type Row = (Arc<Server>, Vec<(ToolSpec, u64)>, u64);

/// The report, as printed. `count` gives the tokens of tool definitions.
pub async fn list(
    config: &Config,
    workspace: &Path,
    model: Option<&str>,
    tools: bool,
    sign_ins: Option<&Path>,
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
    if let Some(dir) = sign_ins {
        manager.use_sign_ins(dir);
    }
    manager.start_all();
    manager.settle(&CancellationToken::new()).await;
    let rows = rows(&manager, count);
    write_table(&mut out, &manager, &rows, tools);
    let total_tokens = rows.iter().map(|(.., tokens)| tokens).sum();
    let total_tools = rows.iter().map(|(_, specs, _)| specs.len()).sum();
    write_totals(&mut out, config, model, total_tools, total_tokens);
    manager.shutdown().await;
    out
}

/// Each server's row, counting its tools' definitions with `count`.
fn rows(manager: &Arc<McpManager>, count: &mut CountDefinitions<'_>) -> Vec<Row> {
    let mut rows = Vec::new();
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
        rows.push((server.clone(), specs, tokens));
    }
    rows
}

/// The table: a line per server (and with `tools`, a line per tool under it).
fn write_table(out: &mut String, manager: &McpManager, rows: &[Row], tools: bool) {
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
    for (server, specs, tokens) in rows {
        let (state, mut detail) = state_and_detail(server);
        if let (McpState::Ready, Some(sign_in)) = (server.state(), manager.sign_in(server)) {
            detail = [detail, sign_in]
                .into_iter()
                .filter(|d| !d.is_empty())
                .collect::<Vec<_>>()
                .join("; ");
        }
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
}

/// A server's state as a word, and what goes in the DETAIL column: a ready server's prompts
/// and whether it has resources, a failed or exited one's reason.
fn state_and_detail(server: &Server) -> (&'static str, String) {
    match server.state() {
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
    }
}

/// The totals, and against the model's window whether the definitions are deferred.
fn write_totals(
    out: &mut String,
    config: &Config,
    model: Option<&str>,
    total_tools: usize,
    total_tokens: u64,
) {
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
}
