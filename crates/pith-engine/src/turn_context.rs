//! What one turn (or one op) works with: the session's parts (`session_parts.rs`), lent for its
//! length — the session log, the meter, the model, the tools, the hooks, the compactor, the
//! window probe, the options, the agent's role and record, the submission being answered. The
//! turn's code (`turn.rs`, `step.rs`, `admit.rs`, the tools, the hooks, the compaction's host,
//! the ops) is `impl Turn`; a `Turn` is lent by `SessionParts::turn`, which the runner holds
//! and, in a test, the test's parts alone.

use std::sync::Arc;

use crate::EngineOptions;
use crate::agent::{AgentRole, ChildSpec, RunRecord};
use crate::compactor::Compactor;
use crate::error::EngineError;
use crate::hook_state::HookState;
use crate::meter::Meter;
use crate::model::ModelSetup;
use crate::session_log::SessionLog;
use crate::shared::Shared;
use crate::tool_runtime::ToolRuntime;
use crate::window_probe::WindowProbe;
use pith_protocol::event::{
    EngineState, Event, EventMsg, Op, SessionEvent, SettingsEvent, Submission, SubmissionId,
    TurnEvent,
};
use pith_protocol::message::{Message, PartKind, Role};

/// The parts one turn or op borrows (see the module documentation).
pub(crate) struct Turn<'a> {
    pub opts: &'a mut EngineOptions,
    /// The session, its store, its view and where its events go.
    pub log: &'a mut SessionLog,
    pub shared: &'a Arc<Shared>,
    /// The main agent, or a sub-agent and how deep it is (ARCHITECTURE.md §13).
    pub role: &'a mut AgentRole,
    /// What this runner did (a sub-agent's report) and what its sub-agents used.
    pub record: &'a mut RunRecord,
    pub model: &'a mut ModelSetup,
    /// The context figure and the estimator behind it.
    pub meter: &'a mut Meter,
    /// The tools, their permissions and the MCP servers' tools.
    pub tools: &'a mut ToolRuntime,
    pub system: &'a mut Vec<String>,
    /// The breaker's count, the last compaction's cost, the summary written ahead.
    pub compactor: &'a mut Compactor,
    /// A local server being asked for the window (see `window.rs`).
    pub window: &'a mut WindowProbe,
    /// The user's hooks and what they gave the model (see `hooks.rs`).
    pub hooks: &'a mut HookState,
    /// The submission being handled: the errors reported meanwhile answer it.
    pub answering: &'a mut Option<SubmissionId>,
    /// Builds the runner of a sub-agent (a `task` call, `subagent.rs`).
    pub spawn: SpawnChild,
}

/// A sub-agent's runner as the `task` tool drives it: its parts, lent to one turn at a time.
pub(crate) trait ChildAgent: Send {
    fn turn(&mut self) -> Turn<'_>;
}

/// Builds a sub-agent's runner from its spec; the runner passes its own builder, so the code
/// that runs sub-agents does not know the runner's type.
pub(crate) type SpawnChild = fn(ChildSpec) -> Result<Box<dyn ChildAgent>, EngineError>;

impl Turn<'_> {
    /// Sends an event; one that answers an op names the submission being handled.
    pub(crate) fn emit(&self, event: impl Into<Event>) {
        let event = event.into();
        if let Event::Turn(TurnEvent::Error { message, .. })
        | Event::Session(SessionEvent::PromptRefused { message, .. }) = &event
        {
            self.record.note_error(message);
        }
        let msg = EventMsg::from(event);
        self.log.emit(match &self.answering {
            Some(id) => msg.answering(id),
            None => msg,
        });
    }

    /// Reports an error to the front end, naming the submission being handled.
    pub(crate) fn report(&self, e: EngineError) {
        self.emit(e.event());
    }

    pub(crate) fn state(&self, state: EngineState, detail: Option<String>) {
        self.emit(TurnEvent::State { state, detail });
    }

    /// Applies the `--yes` and permission-mode changes the pump set aside, in order.
    pub(crate) fn apply_settings(&mut self) {
        for Submission { id, op } in self.shared.take_settings() {
            let answering = self.answering.replace(id);
            match op {
                Op::SetAutoYes { on } => self.opts.auto_yes = on,
                Op::SetPermissionMode { mode } => self.set_permission_mode(mode),
                _ => {}
            }
            *self.answering = answering;
        }
        // a sub-agent follows the mode its tree's user chose last, even mid-run
        if self.shared.parent_cancel.is_some()
            && let Some(mode) = self.shared.mode.lock().ok().and_then(|m| *m)
        {
            self.opts.config.permission_mode = mode;
        }
    }

    pub(crate) fn set_permission_mode(&mut self, mode: pith_protocol::event::PermissionMode) {
        if let Ok(mut m) = self.shared.mode.lock() {
            *m = Some(mode);
        }
        if mode != self.opts.config.permission_mode {
            self.opts.config.permission_mode = mode;
            self.emit(SettingsEvent::PermissionModeChanged { mode });
        }
    }

    pub(crate) fn touch_session(&mut self) {
        // the one context figure, as the status bar shows it (ARCHITECTURE.md §6.3)
        self.log.touch(self.meter.used());
    }

    /// Appends a message to the view, persists it and announces it.
    pub(crate) fn push_message(&mut self, m: Message) -> usize {
        self.meter.add_message(&m);
        self.log.push(m)
    }

    /// Adds a user message with `text`; `synthetic` marks text pith wrote, not the user.
    pub(crate) fn push_user_text(&mut self, text: &str, synthetic: bool) -> usize {
        let mut m = Message::new(self.log.session_id(), Role::User);
        m.push(PartKind::Text {
            text: text.to_string(),
            synthetic,
        });
        if !synthetic {
            self.log
                .title_if_untitled(|| crate::session_log::title_from(text));
        }
        self.push_message(m)
    }
}
