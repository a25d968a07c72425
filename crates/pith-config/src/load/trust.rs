//! What an untrusted workspace's `pith.toml` may set.
//!
//! A repository can carry a `pith.toml`; until the user trusts the directory it is used only for
//! harmless keys: the model, model limits, compaction, tool output, step limit, instruction
//! files inside the workspace, rules that deny, and a sandbox at least as strict as the one in
//! force, and when MCP definitions are deferred. Everything else (MCP servers and hooks, which
//! run programs; providers, so `base_url`, headers and key variables; looser rules; a weaker
//! sandbox or network; extra writable directories; `env_allow`; `trusted_directories`) is
//! dropped and named in one warning.

use std::path::Path;

use super::{collect_leaves, join_key};
use crate::SandboxMode;

/// Keys an untrusted file may set freely.
const HARMLESS: &[&str] = &[
    "model",
    "models",
    "compaction",
    "tool_output",
    "max_steps",
    "tool_search",
];

/// Removes from `layer` (an untrusted workspace file) what it may not set, given `trusted` (the
/// configuration merged so far). Returns the dotted names of what was removed.
pub(super) fn restrict(
    layer: &mut toml::Table,
    trusted: &toml::Table,
    workspace: &Path,
) -> Vec<String> {
    let mut ignored = Vec::new();
    let keys: Vec<String> = layer.keys().cloned().collect();
    // Standing summary instructions are words put to the model: only from a trusted file.
    if let Some(toml::Value::Table(c)) = layer.get_mut("compaction")
        && c.remove("instructions").is_some()
    {
        ignored.push("compaction.instructions".to_string());
    }
    for key in keys {
        if HARMLESS.contains(&key.as_str()) {
            continue;
        }
        let keep = match key.as_str() {
            "permission" => {
                if let Some(toml::Value::Table(rules)) = layer.get_mut("permission") {
                    deny_rules_only(rules, &mut ignored);
                    !rules.is_empty()
                } else {
                    false
                }
            }
            "instructions" => {
                if let Some(toml::Value::Array(files)) = layer.get_mut("instructions") {
                    let before = files.len();
                    files.retain(|f| f.as_str().is_some_and(|f| inside(workspace, f)));
                    if files.len() < before {
                        ignored.push("instructions (files outside the workspace)".to_string());
                    }
                }
                continue;
            }
            "sandbox" => {
                let wanted = layer
                    .get("sandbox")
                    .and_then(|v| v.as_str())
                    .and_then(parse_mode);
                let current = trusted
                    .get("sandbox")
                    .and_then(|v| v.as_str())
                    .and_then(parse_mode)
                    .unwrap_or_default();
                wanted.is_some_and(|w| w.strictness() >= current.strictness())
            }
            "sandbox_network" => {
                let current = trusted
                    .get("sandbox_network")
                    .and_then(toml::Value::as_bool)
                    .unwrap_or(false);
                layer.get("sandbox_network").and_then(toml::Value::as_bool) == Some(false)
                    || current
            }
            "sandbox_writable" | "env_allow" => layer
                .get(&key)
                .and_then(toml::Value::as_array)
                .is_some_and(|a| a.is_empty()),
            // Commands pith would run outside the sandbox: never from an untrusted file. Named
            // per event (`hooks.pre_tool_use`) in the warning.
            "hooks" => false,
            _ => false,
        };
        if !keep && let Some(value) = layer.remove(&key) {
            match value {
                toml::Value::Table(t) if key != "permission" => {
                    collect_leaves(&t, &key, &mut ignored)
                }
                _ if key == "permission" => {}
                _ => ignored.push(key),
            }
        }
    }
    ignored
}

/// Keeps only `deny` rules: anything else could loosen the user's own.
fn deny_rules_only(rules: &mut toml::Table, ignored: &mut Vec<String>) {
    let tools: Vec<String> = rules.keys().cloned().collect();
    for tool in tools {
        let prefix = join_key("permission", &tool);
        match rules.get_mut(&tool) {
            Some(toml::Value::String(action)) if action == "deny" => {}
            Some(toml::Value::Table(patterns)) => {
                let names: Vec<String> = patterns.keys().cloned().collect();
                for pattern in names {
                    if patterns.get(&pattern).and_then(|v| v.as_str()) != Some("deny") {
                        patterns.remove(&pattern);
                        ignored.push(join_key(&prefix, &pattern));
                    }
                }
                if patterns.is_empty() {
                    rules.remove(&tool);
                }
            }
            _ => {
                rules.remove(&tool);
                ignored.push(prefix);
            }
        }
    }
}

fn parse_mode(s: &str) -> Option<SandboxMode> {
    toml::Value::String(s.to_string()).try_into().ok()
}

/// Whether the instruction file `raw` (relative to the workspace, or absolute) stays inside it:
/// an existing file with its symlinks followed, a missing one (nothing to read) as written.
fn inside(workspace: &Path, raw: &str) -> bool {
    let ws = workspace
        .canonicalize()
        .unwrap_or_else(|_| workspace.to_path_buf());
    let path = Path::new(raw);
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        ws.join(path)
    };
    match joined.canonicalize() {
        Ok(real) => real.starts_with(&ws),
        Err(_) => {
            joined.starts_with(&ws)
                && !joined
                    .components()
                    .any(|c| matches!(c, std::path::Component::ParentDir))
        }
    }
}
