//! Which agent a runner runs (the main one, or a sub-agent and how deep), the tools it gets,
//! and what it did, as its parent reads it (ARCHITECTURE.md §13).

use std::sync::Arc;

use pith_config::Config;
use pith_protocol::event::SubagentTotals;
use pith_protocol::message::Agent;
use pith_tools::permission::Permissions;
use pith_tools::registry::Registry;
use pith_tools::task;

const SUBAGENT_PROMPT: &str = include_str!("../../../prompts/subagent.md");

/// What a runner did, as its parent reads it when it runs as a sub-agent, and what its own
/// sub-agents used.
#[derive(Default)]
pub(crate) struct RunRecord {
    /// What this session's sub-agents used (`/context`, the status bar).
    subagents: SubagentTotals,
    /// Input and output tokens of every request this runner made (a sub-agent's report).
    spent_tokens: u64,
    /// The text of the last step's reply (a sub-agent's answer, whatever a compaction did to
    /// the view after it).
    last_answer: String,
    /// The last error reported to the front end (a failed sub-agent's result says it).
    last_error: std::sync::Mutex<Option<String>>,
}

impl RunRecord {
    /// What this session's sub-agents used.
    pub(crate) fn subagents(&self) -> SubagentTotals {
        self.subagents
    }

    /// A sub-agent finished: its run and the runs under it, with what they used.
    pub(crate) fn add_subagent_run(&mut self, totals: &SubagentTotals) {
        self.subagents.runs += 1 + totals.runs;
        self.subagents.tokens += totals.tokens;
        self.subagents.cost += totals.cost;
    }

    /// Tokens of every request this runner made.
    pub(crate) fn spent_tokens(&self) -> u64 {
        self.spent_tokens
    }

    /// A request of this runner used `tokens`.
    pub(crate) fn spend(&mut self, tokens: u64) {
        self.spent_tokens += tokens;
    }

    pub(crate) fn set_last_answer(&mut self, text: String) {
        self.last_answer = text;
    }

    /// The text of the last reply, once.
    pub(crate) fn take_last_answer(&mut self) -> String {
        std::mem::take(&mut self.last_answer)
    }

    /// Keeps `message` as the last error reported.
    pub(crate) fn note_error(&self, message: &str) {
        if let Ok(mut last) = self.last_error.lock() {
            *last = Some(message.to_string());
        }
    }

    /// The last error reported, once.
    pub(crate) fn take_last_error(&self) -> Option<String> {
        self.last_error.lock().ok().and_then(|mut e| e.take())
    }
}

/// Which agent a runner runs.
#[derive(Debug, Clone)]
pub(crate) struct AgentRole {
    /// `build` for the main agent.
    pub name: String,
    /// 0 for the main agent, 1 for its sub-agents, …
    pub depth: u32,
    /// The agent's own system prompt, instead of pith's.
    pub prompt: Option<String>,
}

impl AgentRole {
    pub(crate) fn main() -> AgentRole {
        AgentRole {
            name: "build".into(),
            depth: 0,
            prompt: None,
        }
    }

    /// What the messages of this agent record as their agent.
    pub(crate) fn agent(&self) -> Agent {
        if self.depth == 0 {
            Agent::Build
        } else {
            Agent::Other(self.name.clone())
        }
    }

    /// The agent prompt block of a sub-agent: its own prompt or pith's, then what a sub-agent
    /// must do (work alone, end with a report).
    pub(crate) fn shape_system(&self, system: &mut [String]) {
        let Some(first) = system.first_mut() else {
            return;
        };
        if let Some(p) = &self.prompt {
            *first = p.trim_end().to_string();
        }
        if self.depth > 0 {
            first.push_str("\n\n");
            first.push_str(SUBAGENT_PROMPT.trim_end());
        }
    }
}

/// What a sub-agent inherits from the runner that starts it.
pub(crate) struct ChildSetup {
    /// The agent's tools (`None`: all).
    pub tools: Option<Vec<String>>,
    /// The parent's tools: a child never has one its parent lacks.
    pub parent_tools: Vec<String>,
    /// The parent's rules and the grants the user gave it.
    pub permissions: Permissions,
}

/// Everything a sub-agent's runner is built from: the parent's options and store, the child's
/// session, where its events go (tagged with the call), what it shares with the parent, its
/// role and what it inherits.
pub(crate) struct ChildSpec {
    pub opts: crate::EngineOptions,
    pub store: Arc<pith_store::Store>,
    pub session: pith_protocol::message::Session,
    pub events: crate::emitter::Emitter,
    pub shared: Arc<crate::shared::Shared>,
    pub role: AgentRole,
    pub setup: ChildSetup,
}

/// The tools and permission state of a runner: the configured tools plus `task` while the depth
/// allows, narrowed for a sub-agent to its agent's tools and its parent's.
pub(crate) fn tools_for(
    config: &Config,
    role: &AgentRole,
    child: Option<ChildSetup>,
) -> (Registry, Permissions) {
    let mut registry = Registry::configured(config);
    let agents = task::agents(&config.agent);
    if role.depth < config.task.max_depth && !agents.is_empty() {
        registry.register(Arc::new(task::Task::new(agents)));
    }
    let Some(child) = child else {
        return (registry, Permissions::new(&config.permission));
    };
    registry.retain(|tool| {
        let name = tool.name();
        child.parent_tools.iter().any(|t| t == name)
            && child
                .tools
                .as_ref()
                .is_none_or(|allowed| allowed.iter().any(|t| t == name))
    });
    (registry, child.permissions)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(r: &Registry) -> Vec<String> {
        r.names().iter().map(|n| n.to_string()).collect()
    }

    #[test]
    fn a_child_never_has_a_tool_its_parent_lacks() {
        let mut config = Config::default();
        config.task.max_depth = 2;
        let main = AgentRole::main();
        let (parent, _) = tools_for(&config, &main, None);
        assert!(names(&parent).iter().any(|n| n == "task"));
        let child_role = AgentRole {
            name: "scout".into(),
            depth: 1,
            prompt: None,
        };
        // the agent asks for bash and a tool that does not exist; its parent has no bash
        let setup = ChildSetup {
            tools: Some(vec![
                "read".into(),
                "bash".into(),
                "nuke".into(),
                "task".into(),
            ]),
            parent_tools: vec!["read".into(), "grep".into(), "task".into()],
            permissions: Permissions::new(&config.permission),
        };
        let (child, _) = tools_for(&config, &child_role, Some(setup));
        assert_eq!(names(&child), ["read", "task"]);
        // at the depth limit the task tool is not offered, whatever the agent asks for
        let deep = AgentRole {
            depth: 2,
            ..child_role
        };
        let setup = ChildSetup {
            tools: None,
            parent_tools: vec!["read".into(), "task".into()],
            permissions: Permissions::new(&config.permission),
        };
        let (grandchild, _) = tools_for(&config, &deep, Some(setup));
        assert_eq!(names(&grandchild), ["read"]);
        // max_depth 0: no task tool at all
        config.task.max_depth = 0;
        let (none, _) = tools_for(&config, &main, None);
        assert!(!names(&none).iter().any(|n| n == "task"));
    }

    #[test]
    fn a_sub_agent_prompt_replaces_pith_s_and_says_it_reports_back() {
        let mut system = vec!["pith prompt".to_string(), "<env>".to_string()];
        AgentRole::main().shape_system(&mut system);
        assert_eq!(system[0], "pith prompt");
        let role = AgentRole {
            name: "review".into(),
            depth: 1,
            prompt: Some("You review.".into()),
        };
        role.shape_system(&mut system);
        assert!(
            system[0].starts_with("You review.\n\nYou are a sub-agent"),
            "{}",
            system[0]
        );
        assert_eq!(system[1], "<env>");
    }
}
