//! The runner owns one session: its view, the model, the tools, the context figures. It builds
//! them, runs the loop that takes ops and queued prompts, and ends; each turn or op borrows the
//! parts as a [`Turn`] (`turn_context.rs`), whose code is the rest of the engine.

use std::sync::Arc;

use tokio::sync::mpsc;

use super::EngineOptions;
use super::shared::{Control, Shared};
use crate::agent::ChildSpec;
use crate::error::EngineError;
use crate::model::ModelSetup;
use crate::turn_context::{ChildAgent, Turn};
use pith_protocol::event::{EventMsg, Op, Submission, SubmissionId};
use pith_protocol::message::Session;
use pith_store::Store;
use pith_store::lock::SessionLock;

pub struct Runner {
    pub(super) opts: EngineOptions,
    /// The session, its store, its view and where its events go.
    pub(super) log: super::session_log::SessionLog,
    pub(super) shared: Arc<Shared>,
    /// The main agent, or a sub-agent and how deep it is (ARCHITECTURE.md §13).
    pub(super) role: super::agent::AgentRole,
    /// What this runner did (a sub-agent's report) and what its sub-agents used.
    pub(super) record: super::agent::RunRecord,
    pub(super) model: ModelSetup,
    /// The context figure and the estimator behind it.
    pub(super) meter: super::meter::Meter,
    /// The tools, their permissions and the MCP servers' tools.
    pub(super) tools: super::tool_runtime::ToolRuntime,
    pub(super) system: Vec<String>,
    /// The breaker's count, the last compaction's cost, the summary written ahead.
    pub(super) compactor: super::compactor::Compactor,
    /// A local server being asked for the window (see `window.rs`).
    pub(super) window: super::window_probe::WindowProbe,
    /// The user's hooks and what they gave the model (see `hooks.rs`).
    pub(super) hooks: super::hook_state::HookState,
    /// The submission being handled: the errors reported meanwhile answer it.
    pub(super) answering: Option<SubmissionId>,
}

impl Runner {
    pub fn new(
        opts: EngineOptions,
        store: Arc<Store>,
        session: Session,
        events: mpsc::UnboundedSender<EventMsg>,
        shared: Arc<Shared>,
    ) -> Result<Self, EngineError> {
        let events = super::emitter::Emitter::direct(events);
        let role = super::agent::AgentRole::main();
        Self::build(opts, store, session, events, shared, role, None)
    }

    /// Opens the session for the front end, whose events go to `events` from now on. A local
    /// server asked for its window answers first (within the probe's 2 s); then the front end
    /// gets the session with the newest page of its history and the context figure (with the
    /// window), and only then what starting said (`said`: a crash repaired, a model warning,
    /// the window learned).
    pub(crate) async fn open(
        &mut self,
        events: mpsc::UnboundedSender<EventMsg>,
        mut said: mpsc::UnboundedReceiver<EventMsg>,
    ) {
        let mut turn = self.turn();
        turn.settle_window().await;
        turn.log.send_to(super::emitter::Emitter::direct(events));
        turn.announce_session();
        while let Ok(event) = said.try_recv() {
            turn.log.emit(event);
        }
    }

    /// A runner for the main agent (`child: None`) or a sub-agent.
    pub(super) fn build(
        opts: EngineOptions,
        store: Arc<Store>,
        session: Session,
        events: super::emitter::Emitter,
        shared: Arc<Shared>,
        role: super::agent::AgentRole,
        child: Option<super::agent::ChildSetup>,
    ) -> Result<Self, EngineError> {
        let lock = SessionLock::acquire(&opts.data_dir, &session.id)?;
        let (model, warning) = ModelSetup::build(&opts.config, &session.model)?;
        let (registry, permissions) = super::agent::tools_for(&opts.config, &role, child);
        let meter = super::meter::Meter::new(&model.model_id);
        let hooks = Arc::new(crate::hook_commands::Hooks::new(
            &opts.config,
            &opts.workspace,
            &opts.data_dir,
        ));
        let mut runner = Runner {
            hooks: super::hook_state::HookState::new(hooks),
            role,
            record: Default::default(),
            tools: super::tool_runtime::ToolRuntime::new(registry, permissions),
            system: Vec::new(),
            meter,
            log: super::session_log::SessionLog::new(store, session, lock, events),
            model,
            opts,
            shared,
            compactor: Default::default(),
            answering: None,
            window: Default::default(),
        };
        let mut turn = runner.turn();
        turn.start_window(warning);
        turn.fit_prompt();
        turn.load_view()?;
        Ok(runner)
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
            spawn: Runner::spawn_child,
        }
    }

    /// The runner of a sub-agent (see [`crate::turn_context::SpawnChild`]).
    fn spawn_child(spec: ChildSpec) -> Result<Box<dyn ChildAgent>, EngineError> {
        let child = Runner::build(
            spec.opts,
            spec.store,
            spec.session,
            spec.events,
            spec.shared,
            spec.role,
            Some(spec.setup),
        )?;
        Ok(Box::new(child))
    }

    /// The main loop: runs until shutdown.
    pub async fn run(&mut self, mut ctl: mpsc::UnboundedReceiver<Control>) {
        self.turn().start().await;
        loop {
            let mut turn = self.turn();
            turn.apply_settings();
            // Queued user messages start a turn.
            let queued = turn.shared.take_queue();
            if !queued.is_empty() {
                turn.user_turn(queued).await;
                continue;
            }
            let Some(control) = ctl.recv().await else {
                break;
            };
            match control {
                Control::Wake => {}
                Control::McpChanged => {
                    turn.refresh_tools();
                    turn.emit_context();
                }
                Control::Op(Submission {
                    op: Op::Shutdown, ..
                }) => break,
                Control::Op(submission) => {
                    *turn.answering = Some(submission.id);
                    turn.handle_op(submission.op).await;
                    *turn.answering = None;
                }
            }
        }
        self.turn().touch_session();
        if let Some(m) = self.tools.mcp().manager() {
            m.shutdown().await;
        }
    }

    /// The session this runner is on, as it ends. Left without a message, it is removed first
    /// when the front end asked for that (`remove_empty_sessions`), while this runner still
    /// holds its lock: a lock just let go can still look held for a moment, to a child process
    /// forked meanwhile that has not yet exec'd.
    pub(super) fn end(&self) -> super::Ended {
        let id = self.log.session_id();
        let count = self.log.store().message_count(id);
        if self.opts.remove_empty_sessions
            && count.as_ref().is_ok_and(|n| *n == 0)
            && let Err(e) = self.log.store().delete_session(id)
        {
            tracing::warn!("cannot remove the empty session {id}: {e}");
        }
        super::Ended {
            session_id: id.to_string(),
            has_messages: count.is_ok_and(|n| n > 0),
        }
    }
}

impl ChildAgent for Runner {
    fn turn(&mut self) -> Turn<'_> {
        Runner::turn(self)
    }
}
