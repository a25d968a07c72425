//! What front ends send to the engine (`Op`) and what the engine reports back (`EventMsg`: an
//! `Event` of one group, and the op it answers).

use serde::{Deserialize, Serialize};

use crate::message::FinishReason;

mod context;
mod envelope;
mod goal;
#[cfg(test)]
mod goal_wire_tests;
mod groups;
mod jobs;
mod mcp;
mod memory;
mod op;
mod permission;
mod window;
#[cfg(test)]
mod wire_tests;

pub use context::{Breakdown, CompactionCost, CompactionNotice, ContextUsage, Pin, SubagentTotals};
pub use envelope::EventMsg;
pub use goal::{BudgetUnit, Goal, GoalAction, GoalBudget, GoalCheckBy, GoalStatus, MAX_GOAL_CHARS};
pub use groups::{
    ContextEvent, Event, OutputEvent, SessionEvent, SettingsEvent, SubagentEvent, TurnEvent,
};
pub use jobs::{Job, JobState, age};
pub use mcp::{McpPrompt, McpPromptArg, McpResource, McpServerStatus, McpState, McpTransport};
pub use memory::{InstructionFile, InstructionOrigin, MemoryFile, MemoryScope};
pub use op::{Op, Submission, SubmissionId};
pub use permission::{PermissionMode, PermissionReply, PermissionRequest};
pub use window::WindowSource;

/// Why a turn (or a `/compact`) ended. Serialized as a snake_case string.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnEnd {
    /// The model answered and stopped.
    Stop,
    /// The model's answer hit the output limit.
    Length,
    /// The provider withheld the answer.
    ContentFilter,
    /// The step limit was reached while the model still called tools.
    MaxSteps,
    /// The user interrupted the turn.
    Interrupted,
    /// The turn failed; a `TurnEvent::Error` said why.
    Error,
    /// A `/compact` finished.
    Compacted,
    /// A `/compact` found nothing worth compacting and changed nothing (a `TurnEvent::Info` said why).
    NothingToCompact,
    /// The model stopped for a reason pith has no name for (as the provider reported it).
    #[serde(untagged)]
    Other(String),
}

impl From<FinishReason> for TurnEnd {
    /// The end of a turn whose last step finished this way.
    fn from(finish: FinishReason) -> TurnEnd {
        match finish {
            FinishReason::Stop => TurnEnd::Stop,
            FinishReason::Length => TurnEnd::Length,
            FinishReason::ContentFilter => TurnEnd::ContentFilter,
            FinishReason::Interrupted => TurnEnd::Interrupted,
            FinishReason::ToolCalls => TurnEnd::MaxSteps,
            FinishReason::Other(reason) => TurnEnd::Other(reason),
        }
    }
}

/// What a `TurnEvent::Error` is about, so a front end can react without reading the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The model request failed (after the retries).
    Provider,
    /// The conversation does not fit the model's context window, even after compacting.
    ContextOverflow,
    /// A compaction failed or was stopped.
    Compaction,
    /// The model asked for (`Op::SetModel`) cannot be used; the previous one stays.
    Model,
    /// A session could not be created, found, listed or read.
    Session,
    /// `/export` could not write the session.
    Export,
    /// No model is configured.
    NoModel,
    /// The session store could not be written (a full disk, a read-only data directory): what
    /// streamed was shown but is not all saved.
    Store,
    /// The model kept making calls that cannot run (or are refused): the turn was stopped.
    Loop,
    /// A bug stopped the engine.
    Internal,
    /// `/undo`, `/redo` or `/rewind` could not be done (nothing to undo, a compaction in the
    /// way, a file that cannot be restored).
    Undo,
    /// An MCP prompt or resource could not be fetched.
    Mcp,
    /// A custom command names a model or agent that cannot be used; nothing was sent.
    Command,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EngineState {
    Idle,
    Thinking,
    Running,
    Compacting,
    Retrying,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--format json` prints these: the reasons are the strings earlier builds printed.
    #[test]
    fn turn_ends_print_as_before() {
        for (end, text) in [
            (TurnEnd::Stop, "stop"),
            (TurnEnd::Length, "length"),
            (TurnEnd::ContentFilter, "content_filter"),
            (TurnEnd::MaxSteps, "max_steps"),
            (TurnEnd::Interrupted, "interrupted"),
            (TurnEnd::Error, "error"),
            (TurnEnd::Compacted, "compacted"),
            (TurnEnd::Other("pause_turn".into()), "pause_turn"),
        ] {
            let event = Event::Turn(TurnEvent::TurnFinished {
                reason: end.clone(),
            });
            let json = serde_json::to_value(&event).unwrap();
            assert_eq!(
                json,
                serde_json::json!({"type": "turn_finished", "reason": text})
            );
            assert_eq!(serde_json::from_value::<Event>(json).unwrap(), event);
        }
        assert_eq!(TurnEnd::from(FinishReason::Length), TurnEnd::Length);
        assert_eq!(
            TurnEnd::from(FinishReason::Other("x".into())),
            TurnEnd::Other("x".into())
        );
    }
    #[test]
    fn errors_say_what_they_are_about() {
        let event = Event::Turn(TurnEvent::Error {
            kind: ErrorKind::ContextOverflow,
            message: "too big".into(),
            failed_message: None,
        });
        assert_eq!(
            serde_json::to_value(&event).unwrap(),
            serde_json::json!({"type": "error", "kind": "context_overflow", "message": "too big"})
        );
    }
}
