//! The tool registry: what the model is offered and how a call is run.

use std::sync::Arc;

use serde_json::Value;

use super::truncate::truncate;
use super::{Tool, ToolContext, ToolError, ToolOutput};
use pith_protocol::llm::ToolSpec;

/// The tools a session offers, in a stable order.
#[derive(Clone, Default)]
pub struct Registry {
    tools: Vec<Arc<dyn Tool>>,
}

impl Registry {
    /// bash, read, write, edit, glob, grep, list, todowrite, recall, with the default command
    /// policy.
    pub fn builtin() -> Registry {
        Registry::configured(&pith_config::Config::default())
    }

    /// The built-in tools, `bash` running commands as `config` says (sandbox, environment).
    pub fn configured(config: &pith_config::Config) -> Registry {
        let policy = crate::sandbox::CommandPolicy::from_config(config);
        let tools: Vec<Arc<dyn Tool>> = vec![
            Arc::new(super::bash::Bash::new(policy).with_background(config.jobs.max > 0)),
            Arc::new(super::read::Read),
            Arc::new(super::write::Write),
            Arc::new(super::edit::Edit),
            Arc::new(super::glob::Glob),
            Arc::new(super::grep::Grep),
            Arc::new(super::list::List),
            Arc::new(super::todo::TodoWrite),
            Arc::new(super::recall::Recall),
        ];
        let mut registry = Registry { tools };
        if config.webfetch.enabled {
            registry.register(Arc::new(super::webfetch::Webfetch::new(
                config.webfetch.clone(),
                super::permission::Permissions::new(&config.permission),
            )));
        }
        if config.jobs.max > 0 {
            registry.register(Arc::new(super::jobs::tools::JobOutput));
            registry.register(Arc::new(super::jobs::tools::JobKill));
        }
        // off until the user names a backend (`[websearch]`)
        let key: super::websearch::KeyLookup = std::sync::Arc::new(pith_secrets::env_var);
        if let Some(search) = super::websearch::Websearch::new(config.websearch.clone(), key) {
            registry.register(Arc::new(search));
        }
        registry
    }

    /// A registry of exactly these tools.
    #[cfg(test)]
    pub fn with_tools(tools: Vec<Arc<dyn Tool>>) -> Registry {
        Registry { tools }
    }

    /// Adds a tool, replacing one of the same name.
    pub fn register(&mut self, tool: Arc<dyn Tool>) {
        match self.tools.iter().position(|t| t.name() == tool.name()) {
            Some(i) => self.tools[i] = tool,
            None => self.tools.push(tool),
        }
    }

    /// Name, description and input schema of every tool, in registration order.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.tools.iter().map(|t| spec(t.as_ref())).collect()
    }

    /// Keeps only the tools for which `keep` is true.
    pub fn retain(&mut self, keep: impl Fn(&dyn Tool) -> bool) {
        self.tools.retain(|t| keep(t.as_ref()));
    }

    /// The specs in short, for small windows: each description's first paragraph, and the
    /// schemas without their property descriptions (names, types and what is required stay).
    pub fn compact_specs(&self) -> Vec<ToolSpec> {
        self.specs()
            .into_iter()
            .map(|mut s| {
                let first = s.description.split("\n\n").next().unwrap_or_default();
                s.description = first.trim().to_string();
                strip_descriptions(&mut s.parameters);
                s
            })
            .collect()
    }

    pub fn names(&self) -> Vec<&str> {
        self.tools.iter().map(|t| t.name()).collect()
    }

    pub fn get(&self, name: &str) -> Option<Arc<dyn Tool>> {
        self.tools.iter().find(|t| t.name() == name).cloned()
    }

    /// Runs one call. A successful output over the limits in `ctx.output` is cut to a preview and
    /// saved in full under `<data_dir>/tool-output/` (ARCHITECTURE.md §6.1), recorded in
    /// `meta.full_output`, unless the tool marked its output `meta.bounded` (it paged it itself,
    /// like read). Known secrets are scrubbed from the result first.
    /// Permissions are not checked here (see `Permissions`).
    pub async fn execute(
        &self,
        name: &str,
        input: Value,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let Some(tool) = self.get(name) else {
            return Err(ToolError::UnknownTool {
                name: name.to_string(),
                available: self.names().into_iter().map(String::from).collect(),
            });
        };
        let span = tracing::debug_span!("tool", tool = name, call_id = %ctx.call_id);
        let result = match tool.time_limit() {
            None => tracing::Instrument::instrument(tool.run(input, ctx), span).await,
            Some(limit) => {
                // The tool sees its own token: cancelled by an interrupt or by the time limit.
                let bounded = ToolContext {
                    cancel: ctx.cancel.child_token(),
                    ..ctx.clone()
                };
                let run = tracing::Instrument::instrument(tool.run(input, &bounded), span);
                match tokio::time::timeout(limit, run).await {
                    Ok(r) => r,
                    Err(_) => {
                        bounded.cancel.cancel();
                        tracing::warn!(tool = name, "tool call over its time limit");
                        Err(ToolError::TimedOut {
                            tool: name.to_string(),
                            secs: limit.as_secs(),
                        })
                    }
                }
            }
        };
        self.finish(name, result, ctx)
    }

    /// A tool's result as the model gets it: known secrets scrubbed, an output over the limits
    /// cut to a preview and saved in full (see [`Registry::execute`]). The engine passes the
    /// results of tools it runs itself (`task`) through this too.
    pub fn finish(
        &self,
        name: &str,
        result: Result<ToolOutput, ToolError>,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        // A secret pith knows that a tool printed goes no further: not to the model, the store,
        // the screen or a saved full output.
        let result = result.map(|mut out| {
            out.output = pith_secrets::scrub(&out.output).into_owned();
            out.title = pith_secrets::scrub(&out.title).into_owned();
            pith_secrets::scrub_json(&mut out.metadata);
            out
        });
        match result {
            Ok(mut out) => {
                if !out.meta.bounded && super::truncate::needs_truncation(&out.output, &ctx.output)
                {
                    let id = output_id(&ctx.call_id);
                    out.output = truncate(&out.output, &ctx.output, &ctx.data_dir, &id);
                    let path = super::truncate::output_dir(&ctx.data_dir).join(&id);
                    tracing::debug!(tool = name, path = %path.display(), "tool output truncated");
                    out.meta.full_output = Some(path);
                }
                Ok(out)
            }
            Err(e) => {
                // The message is scrubbed and bounded like an output; an error it changes is
                // passed on as the text the model is to see.
                let msg = e.to_string();
                let mut shown = pith_secrets::scrub(&msg).into_owned();
                if super::truncate::needs_truncation(&shown, &ctx.output) {
                    let id = output_id(&ctx.call_id);
                    shown = truncate(&shown, &ctx.output, &ctx.data_dir, &id);
                }
                Err(if shown == msg {
                    e
                } else {
                    ToolError::Failed(shown)
                })
            }
        }
    }
}

/// What the model is offered of one tool: its name, description and input schema.
pub fn spec(tool: &dyn Tool) -> ToolSpec {
    ToolSpec {
        name: tool.name().to_string(),
        description: tool.describe(),
        parameters: tool.parameters(),
    }
}

/// Removes the `description` of every property of a JSON schema, at any depth.
fn strip_descriptions(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            if let Some(Value::Object(props)) = map.get_mut("properties") {
                for p in props.values_mut() {
                    if let Value::Object(p) = p {
                        p.remove("description");
                    }
                    strip_descriptions(p);
                }
            }
            if let Some(items) = map.get_mut("items") {
                if let Value::Object(i) = items {
                    i.remove("description");
                }
                strip_descriptions(items);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(strip_descriptions),
        _ => {}
    }
}

/// A unique, file-name-safe id for a saved output.
fn output_id(call_id: &str) -> String {
    let safe: String = call_id
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .take(64)
        .collect();
    if safe.is_empty() {
        format!("tool_{}", ulid::Ulid::new())
    } else {
        format!("tool_{}_{safe}", ulid::Ulid::new())
    }
}

#[cfg(test)]
#[path = "registry_tests.rs"]
mod tests;
