//! `pith run "/goal …"` and `pith run --goal TEXT` (ARCHITECTURE.md §5.2): setting or resuming a
//! goal runs its turns until a check says it is met or its budget is spent (the run's exit code
//! is 1 when it is not met); `/goal` alone, `pause` and `clear` print the session's goal.

use std::io::Write;

use crate::cli::Format;
use pith_engine::EngineHandle;
use pith_protocol::event::{Event, GoalAction, GoalStatus, Op, SessionEvent, TurnEvent};

/// What a run's op does with a goal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Run {
    /// Not a goal's op.
    None,
    /// `/goal TEXT`, `/goal resume`: the goal's turns run.
    Turns,
    /// `/goal`, `/goal pause`, `/goal clear`: answered with the goal.
    Answer,
}

impl Run {
    pub(super) fn of(op: &Op) -> Run {
        match op {
            Op::Goal {
                action: GoalAction::Set { .. } | GoalAction::Resume,
                ..
            } => Run::Turns,
            Op::Goal { .. } => Run::Answer,
            _ => Run::None,
        }
    }

    /// Only a new goal starts in a new session; the rest is about the session's own.
    pub(super) fn needs_session(self, op: &Op) -> bool {
        match op {
            Op::Goal {
                action: GoalAction::Set { .. },
                ..
            } => false,
            _ => self != Run::None,
        }
    }
}

/// How a goal's run ended, from its events.
#[derive(Debug, Default)]
pub(super) struct Outcome {
    status: Option<GoalStatus>,
}

impl Outcome {
    pub(super) fn see(&mut self, event: &Event) {
        if let Event::Session(SessionEvent::GoalChanged { goal }) = event {
            self.status = goal.as_ref().map(|g| g.status);
        }
    }

    pub(super) fn met(&self) -> bool {
        self.status == Some(GoalStatus::Met)
    }
}

/// Waits for the engine's answer to `/goal`, `pause` or `clear` (submission `id`) and prints
/// the goal (`--format json`: the event); an error is a line and exit code 1.
pub(super) async fn answer(handle: &mut EngineHandle, id: &str, format: Format) -> i32 {
    while let Some(event) = handle.events.recv().await {
        if event.submission().map(String::as_str) != Some(id) {
            continue;
        }
        match &event.event {
            Event::Session(SessionEvent::GoalChanged { goal }) => {
                match format {
                    Format::Json => {
                        let mut out = crate::output::stdout();
                        super::print::print_json(&mut out, &event);
                        let _ = out.flush();
                    }
                    Format::Text => {
                        crate::outln!("{}", pith_acp::commands::goal_text(goal.as_ref()))
                    }
                }
                return 0;
            }
            Event::Turn(TurnEvent::Error { message, .. }) => {
                crate::output::error(message);
                return 1;
            }
            _ => {}
        }
    }
    crate::output::error("the engine stopped before it answered");
    1
}
