//! What one session's engine owns: the session log, the meter, the model, the tools, the
//! hooks, the compactor, the window probe, the options, the agent's role and record, the system
//! prompt, the submission being answered and how a sub-agent is built. The runner holds them
//! (`runner.rs`), and so do the engine's unit tests (`test_parts.rs`); either lends them to one
//! turn or op as a [`Turn`] (`turn_context.rs`), whose code is the rest of the engine.

use std::sync::Arc;

use crate::EngineOptions;
use crate::agent::{AgentRole, ChildSetup, RunRecord};
use crate::compactor::Compactor;
use crate::hook_state::HookState;
use crate::meter::Meter;
use crate::model::ModelSetup;
use crate::session_log::SessionLog;
use crate::shared::Shared;
use crate::tool_runtime::ToolRuntime;
use crate::turn_context::{SpawnChild, Turn};
use crate::window_probe::WindowProbe;
use pith_protocol::event::SubmissionId;

/// The parts of one session's engine (see the module documentation).
pub(crate) struct SessionParts {
    pub opts: EngineOptions,
    /// The session, its store, its view and where its events go.
    pub log: SessionLog,
    pub shared: Arc<Shared>,
    /// The main agent, or a sub-agent and how deep it is (ARCHITECTURE.md §13).
    pub role: AgentRole,
    /// What this runner did (a sub-agent's report) and what its sub-agents used.
    pub record: RunRecord,
    pub model: ModelSetup,
    /// The context figure and the estimator behind it.
    pub meter: Meter,
    /// The tools, their permissions and the MCP servers' tools.
    pub tools: ToolRuntime,
    pub system: Vec<String>,
    /// The breaker's count, the last compaction's cost, the summary written ahead.
    pub compactor: Compactor,
    /// A local server being asked for the window (see `window.rs`).
    pub window: WindowProbe,
    /// The user's hooks and what they gave the model (see `hooks.rs`).
    pub hooks: HookState,
    /// The submission being handled: the errors reported meanwhile answer it.
    pub answering: Option<SubmissionId>,
    /// Builds the runner of a sub-agent (a `task` call, `subagent.rs`).
    pub spawn: SpawnChild,
}

impl SessionParts {
    /// The parts of a session opened on `log` with `model`, for the agent `role` (a sub-agent
    /// gets its parent's tools as `child` says). The tools, the permissions and the hooks come
    /// from `opts`; the figures start empty and no system prompt is written yet.
    pub(crate) fn new(
        opts: EngineOptions,
        log: SessionLog,
        shared: Arc<Shared>,
        role: AgentRole,
        model: ModelSetup,
        child: Option<ChildSetup>,
        spawn: SpawnChild,
    ) -> SessionParts {
        let (registry, permissions) = crate::agent::tools_for(&opts.config, &role, child);
        let hooks = crate::hook_commands::Hooks::new(&opts.config, &opts.workspace, &opts.data_dir);
        SessionParts {
            meter: Meter::new(&model.model_id),
            hooks: HookState::new(Arc::new(hooks)),
            tools: ToolRuntime::new(registry, permissions, shared.jobs.clone()),
            role,
            record: RunRecord::default(),
            system: Vec::new(),
            log,
            model,
            opts,
            shared,
            compactor: Compactor::default(),
            answering: None,
            window: WindowProbe::default(),
            spawn,
        }
    }

    /// The parts, lent to one turn or op.
    pub(crate) fn turn(&mut self) -> Turn<'_> {
        Turn {
            opts: &mut self.opts,
            log: &mut self.log,
            shared: &self.shared,
            role: &mut self.role,
            record: &mut self.record,
            model: &mut self.model,
            meter: &mut self.meter,
            tools: &mut self.tools,
            system: &mut self.system,
            compactor: &mut self.compactor,
            window: &mut self.window,
            hooks: &mut self.hooks,
            answering: &mut self.answering,
            spawn: self.spawn,
        }
    }
}

#[cfg(test)]
mod tests {
    use tokio::sync::mpsc;

    use super::*;
    use crate::agent::ChildSetup;
    use crate::emitter::Emitter;
    use crate::test_parts::{Parts, Scripted, model};
    use pith_protocol::event::PermissionMode;
    use pith_store::lock::SessionLock;
    use pith_tools::permission::Permissions;

    fn names(parts: &SessionParts) -> Vec<String> {
        let mut names: Vec<String> = parts
            .tools
            .registry()
            .names()
            .iter()
            .map(|n| n.to_string())
            .collect();
        names.sort();
        names
    }

    /// A turn borrows the parts: what it changes is there for the next turn.
    #[test]
    fn what_a_turn_changes_stays_on_the_parts() {
        let mut parts = Parts::new(Scripted::new(Vec::new()));
        let before = parts.meter.used();
        {
            let mut turn = parts.turn();
            turn.push_user_text("keep this", false);
            turn.set_permission_mode(PermissionMode::Plan);
        }
        assert_eq!(parts.log.view().len(), 1);
        assert!(parts.meter.used() > before, "the figure counts the message");
        assert_eq!(parts.opts.config.permission_mode, PermissionMode::Plan);
        let turn = parts.turn();
        assert_eq!(turn.log.view()[0].text(), "keep this");
        assert_eq!(turn.opts.config.permission_mode, PermissionMode::Plan);
    }

    /// A sub-agent's parts get the tools its setup allows out of its parent's, not the
    /// configured set the main agent gets.
    #[test]
    fn a_sub_agents_parts_have_only_tools_its_parent_lent() {
        let parts = Parts::new(Scripted::new(Vec::new()));
        assert!(names(&parts).iter().any(|n| n == "bash"));
        let workspace = parts.opts.workspace.to_string_lossy().into_owned();
        let session = parts
            .store
            .create_session(&workspace, "mock/test-model")
            .unwrap();
        let lock = SessionLock::acquire(&parts.opts.data_dir, &session.id).unwrap();
        let (tx, _events) = mpsc::unbounded_channel();
        let log = SessionLog::new(parts.store.clone(), session, lock, Emitter::direct(tx));
        let role = AgentRole {
            name: "scout".into(),
            depth: 1,
            prompt: None,
        };
        let setup = ChildSetup {
            tools: None,
            parent_tools: vec!["read".into(), "grep".into()],
            permissions: Permissions::new(&parts.opts.config.permission),
        };
        let child = SessionParts::new(
            parts.opts.clone(),
            log,
            parts.shared.clone(),
            role,
            model(Scripted::new(Vec::new())),
            Some(setup),
            parts.spawn,
        );
        assert_eq!(names(&child), ["grep", "read"]);
        assert_eq!(child.role.depth, 1);
    }
}
