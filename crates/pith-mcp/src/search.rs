//! Deferred MCP tool definitions. When the definitions would take more than a share of the
//! window (`[tool_search]`), the model gets a compact index of the MCP tools inside the
//! description of one tool, `tool_search`, and the definitions of the tools it loads with it
//! (or calls) join the request from the next step on. What is loaded is read back from the
//! history, so it survives a resume and shrinks again with a compaction.

use std::collections::BTreeSet;

use serde::Deserialize;
use serde_json::{Value, json};

use pith_config::{ToolSearchConfig, ToolSearchMode};
use pith_protocol::llm::ToolSpec;
use pith_protocol::message::{Message, PartKind};
use pith_protocol::tool::{Builtin, ToolName, ToolSearchMetadata};
use pith_tools::{Tool, ToolContext, ToolError, ToolMeta, ToolOutput};

/// The loader tool's name.
pub const TOOL_SEARCH: &str = pith_protocol::tool::Builtin::ToolSearch.as_str();
/// One index line's description is cut to this many characters.
const INDEX_DESCRIPTION: usize = 90;
/// A keyword search loads at most this many tools.
const SEARCH_RESULTS: usize = 5;
/// The index lists at most this many characters of tools; the rest are counted and found by
/// keyword (a server with thousands of tools must not turn the index into the problem).
const INDEX_MAX_CHARS: usize = 12_000;

/// Whether MCP definitions of `tokens` are deferred on a window of `window` tokens.
pub fn should_defer(cfg: &ToolSearchConfig, tokens: u64, window: u64) -> bool {
    if tokens == 0 {
        return false;
    }
    match cfg.mode {
        ToolSearchMode::Always => true,
        ToolSearchMode::Never => false,
        ToolSearchMode::Auto => window > 0 && tokens as f64 > cfg.threshold * window as f64,
    }
}

/// The MCP tools the history has loaded: named in a `tool_search` result, or called.
pub fn loaded(view: &[Message], is_mcp: &dyn Fn(&str) -> bool) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for m in view {
        for p in &m.parts {
            let PartKind::Tool { tool, state, .. } = &p.kind else {
                continue;
            };
            if tool == TOOL_SEARCH {
                let loader = ToolName::Builtin(Builtin::ToolSearch);
                if let Some(found) = state.outcome(&loader) {
                    out.extend(found.loaded().unwrap_or_default().iter().cloned());
                }
            } else if is_mcp(tool) {
                out.insert(tool.clone());
            }
        }
    }
    out
}

/// The first sentence (or line) of a description, cut to `max` characters.
fn summary(description: &str, max: usize) -> String {
    let first = description
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    let first = match first.find(". ") {
        Some(i) => &first[..=i],
        None => first,
    };
    pith_protocol::text::one_line_max(first.trim(), max)
}

/// The names of a tool's parameters, required ones marked `*`.
fn params(spec: &ToolSpec) -> String {
    let required: Vec<&str> = spec.parameters["required"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    spec.parameters["properties"]
        .as_object()
        .map(|p| {
            p.keys()
                .map(|k| {
                    if required.contains(&k.as_str()) {
                        format!("{k}*")
                    } else {
                        k.clone()
                    }
                })
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default()
}

/// The loader: its description is the index of the deferred tools.
pub struct ToolSearch {
    description: String,
    /// Every deferred tool (loaded or not).
    catalog: Vec<ToolSpec>,
}

impl ToolSearch {
    /// A loader over `catalog`; `loaded` are already in the request and left out of the index.
    pub fn new(catalog: Vec<ToolSpec>, loaded: &BTreeSet<String>) -> ToolSearch {
        let mut description = String::from(
            "Load the definitions of MCP tools so you can call them. The tools below are available but their parameters are not shown until you load them: call tool_search with their exact names (or with keywords when you are unsure), then call them.\n\nNot loaded yet:",
        );
        let mut any = false;
        let mut left_out = 0;
        for spec in catalog.iter().filter(|s| !loaded.contains(&s.name)) {
            any = true;
            let line = format!(
                "\n- {}: {}",
                spec.name,
                summary(&spec.description, INDEX_DESCRIPTION)
            );
            if description.len() + line.len() > INDEX_MAX_CHARS {
                left_out += 1;
            } else {
                description.push_str(&line);
            }
        }
        if left_out > 0 {
            description.push_str(&format!("\n… and {left_out} more: find them with `query`."));
        }
        if !any {
            description.push_str(" (none: every MCP tool is loaded)");
        }
        ToolSearch {
            description,
            catalog,
        }
    }

    fn find(&self, query: &str) -> Vec<&ToolSpec> {
        let words: Vec<String> = query
            .split(|c: char| !c.is_alphanumeric() && c != '_' && c != '-')
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect();
        let mut scored: Vec<(usize, &ToolSpec)> = self
            .catalog
            .iter()
            .map(|s| {
                let name = s.name.to_lowercase();
                let description = s.description.to_lowercase();
                let score = words
                    .iter()
                    .map(|w| {
                        if name == *w {
                            10
                        } else if name.contains(w.as_str()) {
                            3
                        } else if description.contains(w.as_str()) {
                            1
                        } else {
                            0
                        }
                    })
                    .sum();
                (score, s)
            })
            .filter(|(score, _)| *score > 0)
            .collect();
        scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.name.cmp(&b.1.name)));
        scored
            .into_iter()
            .take(SEARCH_RESULTS)
            .map(|(_, s)| s)
            .collect()
    }
}

#[derive(Deserialize)]
struct Input {
    #[serde(default)]
    names: Vec<String>,
    #[serde(default)]
    query: Option<String>,
}

#[async_trait::async_trait]
impl Tool for ToolSearch {
    fn name(&self) -> &str {
        TOOL_SEARCH
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "names": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "Exact names of tools from the list to load"
                },
                "query": {
                    "type": "string",
                    "description": "Keywords to find tools by name or description, when you do not know the name"
                }
            }
        })
    }

    async fn run(&self, input: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let input: Input = pith_tools::parse_input(TOOL_SEARCH, input)?;
        let mut found: Vec<&ToolSpec> = Vec::new();
        let mut unknown = Vec::new();
        for name in &input.names {
            match self.catalog.iter().find(|s| s.name == name.trim()) {
                Some(s) => found.push(s),
                None => unknown.push(name.clone()),
            }
        }
        if let Some(q) = input.query.as_deref().filter(|q| !q.trim().is_empty()) {
            for s in self.find(q) {
                if !found.iter().any(|f| f.name == s.name) {
                    found.push(s);
                }
            }
        }
        if found.is_empty() {
            let mut msg = String::from("No MCP tool matched");
            if !unknown.is_empty() {
                msg.push_str(&format!(" (unknown: {})", unknown.join(", ")));
            }
            msg.push_str(". Use the exact names listed in the tool_search description.");
            return Err(ToolError::Failed(msg));
        }
        let mut out = format!(
            "Loaded {} tool{}; call {} now:",
            found.len(),
            if found.len() == 1 { "" } else { "s" },
            if found.len() == 1 { "it" } else { "them" },
        );
        for s in &found {
            out.push_str(&format!(
                "\n- {}({}): {}",
                s.name,
                params(s),
                summary(&s.description, 200)
            ));
        }
        if !unknown.is_empty() {
            out.push_str(&format!("\nNot found: {}", unknown.join(", ")));
        }
        let names: Vec<String> = found.iter().map(|s| s.name.clone()).collect();
        Ok(ToolOutput {
            title: names.join(", "),
            output: out,
            metadata: ToolSearchMetadata { loaded: names }.into(),
            meta: ToolMeta::default(),
        })
    }
}

#[cfg(test)]
#[path = "search_tests.rs"]
mod tests;
