//! The runner owns one session's parts (`session_parts.rs`: its view, the model, the tools, the
//! context figures). It builds them, runs the loop that takes ops and queued prompts, and ends;
//! each turn or op borrows the parts as a [`Turn`] (`turn_context.rs`), whose code is the rest
//! of the engine.

use std::sync::Arc;

use tokio::sync::mpsc;

use super::EngineOptions;
use super::shared::{Control, Shared};
use crate::agent::ChildSpec;
use crate::error::EngineError;
use crate::model::ModelSetup;
use crate::session_parts::SessionParts;
use crate::turn_context::{ChildAgent, Turn};
use pith_protocol::event::{EventMsg, Op, Submission};
use pith_protocol::message::Session;
use pith_store::Store;
use pith_store::lock::SessionLock;

/// One session's engine: its parts, the loop over ops and queued prompts, and its end.
pub struct Runner {
    parts: SessionParts,
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
        let log = super::session_log::SessionLog::new(store, session, lock, events);
        let spawn = Runner::spawn_child;
        let parts = SessionParts::new(opts, log, shared, role, model, child, spawn);
        let mut runner = Runner { parts };
        let mut turn = runner.turn();
        turn.start_window(warning);
        turn.fit_prompt();
        turn.load_view()?;
        Ok(runner)
    }

    /// The parts, lent to one turn or op.
    pub(crate) fn turn(&mut self) -> Turn<'_> {
        self.parts.turn()
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
            // Idle: a summary written ahead that ends meanwhile changes the notice.
            let control = match turn.compactor.background_ending() {
                Some(mut ending) => tokio::select! {
                    c = ctl.recv() => c,
                    _ = ending.wait_for(Option::is_some) => {
                        turn.update_compaction_notice();
                        continue;
                    }
                },
                None => ctl.recv().await,
            };
            let Some(control) = control else {
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
        if let Some(m) = self.parts.tools.mcp().manager() {
            m.shutdown().await;
        }
    }

    /// The session this runner is on, as it ends. Left without a message, it is removed first
    /// when the front end asked for that (`remove_empty_sessions`), while this runner still
    /// holds its lock: a lock just let go can still look held for a moment, to a child process
    /// forked meanwhile that has not yet exec'd.
    pub(super) fn end(&self) -> super::Ended {
        let id = self.parts.log.session_id();
        let count = self.parts.log.store().message_count(id);
        if self.parts.opts.remove_empty_sessions
            && count.as_ref().is_ok_and(|n| *n == 0)
            && let Err(e) = self.parts.log.store().delete_session(id)
        {
            tracing::warn!("cannot remove the empty session {id}: {e}");
        }
        super::Ended {
            session_id: id.to_string(),
            has_messages: count.is_ok_and(|n| n > 0),
            jobs_ended: Vec::new(),
        }
    }
}

impl ChildAgent for Runner {
    fn turn(&mut self) -> Turn<'_> {
        Runner::turn(self)
    }
}
