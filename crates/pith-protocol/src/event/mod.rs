//! What front ends send to the engine (`Op`) and what the engine reports back (`Event`).

use serde::{Deserialize, Serialize};

use crate::message::{FinishReason, Message, Part, Usage};

mod context;
mod mcp;
mod op;
mod permission;
mod window;

pub use context::{Breakdown, CompactionCost, ContextUsage, SubagentTotals};
pub use mcp::{McpPrompt, McpPromptArg, McpResource, McpServerStatus, McpState, McpTransport};
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
    /// The turn failed; an `Event::Error` said why.
    Error,
    /// A `/compact` finished.
    Compacted,
    /// A `/compact` found nothing worth compacting and changed nothing (an `Event::Info` said why).
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

/// What an `Event::Error` is about, so a front end can react without reading the message.
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
    /// A `!` command could not be run (denied by the rules, or it failed to start).
    Shell,
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

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// A message was created or its header (usage, finish, error) changed. `parts` may be empty.
    Message {
        message: Message,
    },
    /// A part was created or changed (tool state transitions, text finalised).
    PartUpdated {
        part: Part,
    },
    /// A message was removed (a step that is tried again, a turn taken back).
    MessageRemoved {
        message_id: String,
    },
    /// Parts of a message were removed (a failed attempt's partial output before a retry).
    PartsRemoved {
        message_id: String,
        part_ids: Vec<String>,
    },
    /// Streamed text appended to a text part.
    TextDelta {
        message_id: String,
        part_id: String,
        delta: String,
    },
    /// Streamed reasoning appended to a reasoning part.
    ReasoningDelta {
        message_id: String,
        part_id: String,
        delta: String,
    },
    ToolStarted {
        call_id: String,
        tool: String,
        input: serde_json::Value,
    },
    /// Output a running tool has produced so far arrived (bash streams its output): `output`
    /// is appended to what came before.
    ToolOutput {
        call_id: String,
        output: String,
    },
    ToolFinished {
        call_id: String,
        tool: String,
        title: String,
        error: Option<String>,
        duration_ms: u64,
    },
    StepFinished {
        usage: Usage,
        finish: FinishReason,
        cost: f64,
    },
    ContextUsage(ContextUsage),
    CompactionStarted {
        auto: bool,
        overflow: bool,
        focus: Option<String>,
    },
    CompactionFinished {
        summary_message_id: String,
        /// Context tokens before and after (after is an estimate until the next report).
        before: u64,
        after: u64,
        model_calls: u32,
        /// What the summary requests cost.
        #[serde(default)]
        cost: CompactionCost,
    },
    Pruned {
        parts: usize,
        tokens: u64,
    },
    /// The model's real context window differs from the one pith was using: a server error
    /// stated it, or the local server was asked. Used (and remembered for the model) from now on.
    ContextWindow {
        model: String,
        window: u64,
        /// The window used before (0: unknown).
        previous: u64,
        /// Where the figure came from.
        source: WindowSource,
    },
    PermissionAsked(PermissionRequest),
    Retrying {
        attempt: u32,
        max: u32,
        delay_ms: u64,
        message: String,
    },
    State {
        state: EngineState,
        detail: Option<String>,
    },
    /// The engine switched to a session; `messages` is the newest page of its stored history
    /// (`more_history`: older messages remain, fetched with `Op::LoadHistory`).
    SessionLoaded {
        session: crate::message::Session,
        messages: Vec<Message>,
        #[serde(default)]
        more_history: bool,
        /// The op this answers, when it answers one (§2): a front end waiting for its answer
        /// matches on it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        submission: Option<SubmissionId>,
    },
    /// An older page of a session's history, oldest message first (`Op::LoadHistory`).
    History {
        session_id: String,
        messages: Vec<Message>,
        /// Older messages remain before these.
        more: bool,
        /// The op this answers, when it answers one (§2): a front end waiting for its answer
        /// matches on it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        submission: Option<SubmissionId>,
    },
    Sessions {
        sessions: Vec<crate::message::Session>,
        /// The op this answers, when it answers one (§2): a front end waiting for its answer
        /// matches on it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        submission: Option<SubmissionId>,
    },
    /// What fills the context (`Op::ContextBreakdown`).
    ContextBreakdown {
        #[serde(flatten)]
        breakdown: Breakdown,
        /// The op this answers, when it answers one (§2): a front end waiting for its answer
        /// matches on it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        submission: Option<SubmissionId>,
    },
    /// The MCP servers changed state or tools (every server, each time).
    McpStatus {
        servers: Vec<McpServerStatus>,
    },
    /// The resources of the ready MCP servers (`Op::ListMcpResources`).
    McpResources {
        resources: Vec<McpResource>,
        /// The op this answers, when it answers one (§2): a front end waiting for its answer
        /// matches on it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        submission: Option<SubmissionId>,
    },
    /// The session now talks to this model ("provider/model"), after `Op::SetModel`.
    ModelChanged {
        model: String,
        /// The op this answers, when it answers one (§2): a front end waiting for its answer
        /// matches on it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        submission: Option<SubmissionId>,
    },
    /// The reasoning effort requests now carry (`None`: none), after `Op::SetEffort`, a model
    /// change, or at start when one is set.
    EffortChanged {
        effort: Option<crate::llm::ReasoningEffort>,
        /// The op this answers, when it answers one (§2): a front end waiting for its answer
        /// matches on it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        submission: Option<SubmissionId>,
    },
    /// The permission mode calls are now judged in, after `Op::SetPermissionMode`, the user
    /// accepting a plan, or at start when it is not the default.
    PermissionModeChanged {
        mode: PermissionMode,
        /// The op this answers, when it answers one (§2): a front end waiting for its answer
        /// matches on it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        submission: Option<SubmissionId>,
    },
    /// A prompt pith refused before storing it: on its own (with the system prompt and tools)
    /// it does not fit what the model can use, so no compaction could make room for it. Nothing
    /// of it is in the session, nor in any later request. `id` is the `Op::UserTurn` id, `text`
    /// what was sent (for the front end to give back), `tokens` its estimate with the system
    /// prompt and tools, `usable` the line it crossed; `message` is for people. A prompt a
    /// `user_prompt_submit` hook refused comes the same way, with `tokens` and `usable` 0.
    PromptRefused {
        id: String,
        text: String,
        tokens: u64,
        usable: u64,
        message: String,
    },
    /// Messages from `message_id` on were taken back (`Op::Undo`, `Op::Rewind`): removed from
    /// the session and the context, kept for `Op::Redo`. `prompt` is the text of the first
    /// (the user message that started it), `files` the files put back as they were.
    Undone {
        message_id: String,
        prompt: String,
        files: Vec<String>,
        /// Turns `Op::Redo` can now put back.
        redo: usize,
        /// The op this answers, when it answers one (§2): a front end waiting for its answer
        /// matches on it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        submission: Option<SubmissionId>,
    },
    /// A turn taken back is back (`Op::Redo`): its messages, oldest first, and the files put back
    /// as the turn left them.
    Redone {
        messages: Vec<Message>,
        files: Vec<String>,
        redo: usize,
        /// The op this answers, when it answers one (§2): a front end waiting for its answer
        /// matches on it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        submission: Option<SubmissionId>,
    },
    /// A one-line notice for the user (export written, a warning, …).
    Info {
        message: String,
        /// The op this answers, when it answers one (§2): a front end waiting for its answer
        /// matches on it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        submission: Option<SubmissionId>,
    },
    Error {
        kind: ErrorKind,
        message: String,
        /// The submission this error answers (the id of the op that asked for what failed),
        /// when it answers one: a front end matches on it, never on the message.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        submission: Option<SubmissionId>,
        /// The assistant message whose step failed with this error (it records the error too),
        /// when one did.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        failed_message: Option<crate::message::MessageId>,
    },
    TurnFinished {
        reason: TurnEnd,
    },
    /// An event of a sub-agent's session, started by the `task` call `call_id` of session
    /// `parent_session_id` (ARCHITECTURE.md §13). Its permission questions come as plain
    /// `PermissionAsked` events naming the agent.
    Subagent {
        session_id: String,
        parent_session_id: String,
        agent: String,
        call_id: String,
        event: Box<Event>,
    },
}

/// Matches the events that answer an op (their `submission` field bound to `$s`): `$found`
/// for those, `None` for the others. The one list of them.
macro_rules! answer_field {
    ($event:expr, $s:ident => $found:expr) => {
        match $event {
            Event::SessionLoaded { submission: $s, .. }
            | Event::History { submission: $s, .. }
            | Event::Sessions { submission: $s, .. }
            | Event::ContextBreakdown { submission: $s, .. }
            | Event::McpResources { submission: $s, .. }
            | Event::ModelChanged { submission: $s, .. }
            | Event::EffortChanged { submission: $s, .. }
            | Event::PermissionModeChanged { submission: $s, .. }
            | Event::Undone { submission: $s, .. }
            | Event::Redone { submission: $s, .. }
            | Event::Info { submission: $s, .. }
            | Event::Error { submission: $s, .. } => $found,
            _ => None,
        }
    };
}

impl Event {
    /// This event as the answer to submission `id`: the events that answer an op (and errors)
    /// name it, unless they name one already; the others are unchanged.
    pub fn answering(mut self, id: &SubmissionId) -> Event {
        if let Some(slot) = self.submission_mut()
            && slot.is_none()
        {
            *slot = Some(id.clone());
        }
        self
    }

    /// The op this event answers, for the events that answer one.
    pub fn submission(&self) -> Option<&SubmissionId> {
        answer_field!(self, submission => submission.as_ref())
    }

    fn submission_mut(&mut self) -> Option<&mut Option<SubmissionId>> {
        answer_field!(self, submission => Some(submission))
    }

    /// A one-line notice that answers no op.
    pub fn info(message: impl Into<String>) -> Event {
        Event::Info {
            message: message.into(),
            submission: None,
        }
    }
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
            let event = Event::TurnFinished {
                reason: end.clone(),
            };
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
        let event = Event::Error {
            kind: ErrorKind::ContextOverflow,
            message: "too big".into(),
            submission: None,
            failed_message: None,
        };
        assert_eq!(
            serde_json::to_value(&event).unwrap(),
            serde_json::json!({"type": "error", "kind": "context_overflow", "message": "too big"})
        );
    }
}
