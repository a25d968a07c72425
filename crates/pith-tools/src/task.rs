//! The `task` tool: hands a piece of work to a sub-agent with a context of its own and gets back
//! only its final answer. This file holds the agents and what the model is offered; the engine
//! runs the child session (`pith-engine/subagent.rs`), since a child is a whole runner.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolError, ToolOutput};
use pith_config::AgentConfig;

pub const NAME: &str = pith_protocol::tool::Builtin::Task.as_str();

const DESCRIPTION: &str = include_str!("../../../prompts/tools/task.md");
const EXPLORE_PROMPT: &str = include_str!("../../../prompts/agent-explore.md");

/// The tools of the built-in `explore` agent: it reads, it never changes anything.
pub(crate) const READ_ONLY: &[&str] = &["read", "grep", "glob", "list", "recall"];

/// A sub-agent the `task` tool can start.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentDef {
    pub name: String,
    pub description: String,
    /// "provider/model"; `None`: the parent's model.
    pub model: Option<String>,
    /// The tools it may use; `None`: all its parent has.
    pub tools: Option<Vec<String>>,
    /// Its system prompt; `None`: pith's own.
    pub prompt: Option<String>,
}

/// The agents of this configuration: `general` and `explore`, then `[agent.NAME]` and Markdown
/// agents (which may redefine or disable a built-in one), by name.
pub fn agents(config: &BTreeMap<String, AgentConfig>) -> Vec<AgentDef> {
    let mut out: BTreeMap<String, AgentDef> = BTreeMap::new();
    out.insert(
        "general".into(),
        AgentDef {
            name: "general".into(),
            description: "General-purpose agent for multi-step work: researching a question, searching for code, making a change and checking it. Has every tool you have.".into(),
            model: None,
            tools: None,
            prompt: None,
        },
    );
    out.insert(
        "explore".into(),
        AgentDef {
            name: "explore".into(),
            description: "Fast read-only agent for exploring a codebase: finds files by pattern, searches code for keywords, reads and answers questions about it. Say how thorough it should be.".into(),
            model: None,
            tools: Some(READ_ONLY.iter().map(|t| t.to_string()).collect()),
            prompt: Some(EXPLORE_PROMPT.trim().to_string()),
        },
    );
    for (name, c) in config {
        if c.disable {
            out.remove(name);
            continue;
        }
        let base = out.get(name);
        let def = AgentDef {
            name: name.clone(),
            description: if c.description.trim().is_empty() {
                base.map(|b| b.description.clone()).unwrap_or_default()
            } else {
                c.description.trim().to_string()
            },
            model: c
                .model
                .clone()
                .or_else(|| base.and_then(|b| b.model.clone())),
            tools: c
                .tools
                .clone()
                .or_else(|| base.and_then(|b| b.tools.clone())),
            prompt: c
                .prompt
                .clone()
                .or_else(|| base.and_then(|b| b.prompt.clone())),
        };
        out.insert(name.clone(), def);
    }
    out.into_values().collect()
}

/// What the model sends.
#[derive(Debug, Deserialize)]
pub struct TaskInput {
    /// A few words for the user.
    pub description: String,
    pub prompt: String,
    pub agent: String,
    /// A sub-agent session of this session to continue.
    #[serde(default)]
    pub task_id: Option<String>,
}

/// Parses a `task` call's input.
pub fn parse(input: Value) -> Result<TaskInput, ToolError> {
    let input: TaskInput = super::parse_input(NAME, input)?;
    if input.prompt.trim().is_empty() {
        return Err(ToolError::InvalidInput {
            tool: NAME.into(),
            detail: "`prompt` is empty; say what the agent should do and what to report".into(),
        });
    }
    Ok(input)
}

/// The tool as the model sees it; running it is the engine's work.
pub struct Task {
    agents: Vec<AgentDef>,
}

impl Task {
    pub fn new(agents: Vec<AgentDef>) -> Task {
        Task { agents }
    }
}

#[async_trait::async_trait]
impl Tool for Task {
    fn name(&self) -> &'static str {
        NAME
    }

    fn description(&self) -> &'static str {
        DESCRIPTION
    }

    fn describe(&self) -> String {
        let mut list = String::new();
        for a in &self.agents {
            list.push_str(&format!("- {}: {}\n", a.name, a.description));
        }
        DESCRIPTION.trim().replace("{agents}", list.trim_end())
    }

    fn parameters(&self) -> Value {
        let names: Vec<&str> = self.agents.iter().map(|a| a.name.as_str()).collect();
        json!({
            "type": "object",
            "properties": {
                "description": {"type": "string", "description": "A short (3-5 words) description of the task, shown to the user"},
                "prompt": {"type": "string", "description": "The task for the agent: everything it needs to know, and what it should report back"},
                "agent": {"type": "string", "enum": names, "description": "The agent to run"},
                "task_id": {"type": "string", "description": "Continue an earlier task: the task_id its result gave. Omit to start a new one"}
            },
            "required": ["description", "prompt", "agent"]
        })
    }

    /// A child session can run for long; it is bounded by its own steps and limits.
    fn time_limit(&self) -> Option<std::time::Duration> {
        None
    }

    fn precheck(&self, input: &Value, _ctx: &ToolContext) -> Result<(), ToolError> {
        let input = parse(input.clone())?;
        if self.agents.iter().all(|a| a.name != input.agent) {
            let names: Vec<&str> = self.agents.iter().map(|a| a.name.as_str()).collect();
            return Err(ToolError::Refused(format!(
                "Unknown agent `{}`. Available agents: {}.",
                input.agent,
                names.join(", ")
            )));
        }
        Ok(())
    }

    async fn run(&self, _input: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        Err(ToolError::Failed("the task tool runs in the engine".into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_ins_config_and_disabling() {
        let names = |a: &[AgentDef]| a.iter().map(|a| a.name.clone()).collect::<Vec<_>>();
        assert_eq!(names(&agents(&BTreeMap::new())), ["explore", "general"]);
        let mut config = BTreeMap::new();
        config.insert(
            "review".to_string(),
            AgentConfig {
                description: "reviews".into(),
                tools: Some(vec!["read".into()]),
                ..AgentConfig::default()
            },
        );
        config.insert(
            "explore".to_string(),
            AgentConfig {
                model: Some("mock/small".into()),
                ..AgentConfig::default()
            },
        );
        config.insert(
            "general".to_string(),
            AgentConfig {
                disable: true,
                ..AgentConfig::default()
            },
        );
        let a = agents(&config);
        assert_eq!(names(&a), ["explore", "review"]);
        // a partial redefinition keeps what it does not say
        assert_eq!(a[0].model.as_deref(), Some("mock/small"));
        assert_eq!(a[0].tools.as_ref().unwrap().len(), READ_ONLY.len());
        let tool = Task::new(a);
        let d = tool.describe();
        assert!(
            d.contains("- review: reviews") && d.contains("- explore: Fast"),
            "{d}"
        );
        assert!(!d.contains("{agents}"));
        assert_eq!(
            tool.parameters()["properties"]["agent"]["enum"],
            json!(["explore", "review"])
        );
    }

    #[test]
    fn unknown_agents_and_empty_prompts_fail_before_asking() {
        let ws = super::super::testutil::Ws::new();
        let tool = Task::new(agents(&BTreeMap::new()));
        let e = tool
            .precheck(
                &json!({"description": "d", "prompt": "p", "agent": "nope"}),
                &ws.ctx,
            )
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("Unknown agent `nope`") && e.contains("explore, general"),
            "{e}"
        );
        let e = tool
            .precheck(
                &json!({"description": "d", "prompt": " ", "agent": "explore"}),
                &ws.ctx,
            )
            .unwrap_err()
            .to_string();
        assert!(e.contains("empty"), "{e}");
    }
}
