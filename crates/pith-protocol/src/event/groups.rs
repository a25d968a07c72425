//! What the engine reports, grouped as the front ends take it: a step's output, the context,
//! the turn, the session, the settings, and a sub-agent's events. Each group is an internally
//! tagged enum whose `type` names are the ones every earlier build printed; `Event` holds one
//! group (untagged), so an event serializes as the same flat object it always was.

use serde::{Deserialize, Serialize};

use super::{
    Breakdown, CompactionCost, CompactionNotice, ContextUsage, EngineState, ErrorKind, McpResource,
    McpServerStatus, PermissionMode, PermissionRequest, TurnEnd, WindowSource,
};
use crate::message::{FinishReason, Message, MessageId, Part, Session, Usage};

/// An event of the engine, by group. The op it answers, when it answers one, is on the
/// envelope ([`super::EventMsg`]), never in the event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Event {
    Output(OutputEvent),
    Context(ContextEvent),
    Turn(TurnEvent),
    Session(SessionEvent),
    Settings(SettingsEvent),
    Subagent(SubagentEvent),
}

/// What a step produces: messages and their parts, streamed text, tools.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum OutputEvent {
    /// A message was created or its header (usage, finish, error) changed. `parts` may be empty.
    Message { message: Message },
    /// A part was created or changed (tool state transitions, text finalised).
    PartUpdated { part: Part },
    /// A message was removed (a step that is tried again, a turn taken back).
    MessageRemoved { message_id: String },
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
    /// A tool call started running.
    ToolStarted {
        call_id: String,
        tool: String,
        input: serde_json::Value,
    },
    /// Output a running tool has produced so far arrived (bash streams its output): `output`
    /// is appended to what came before.
    ToolOutput { call_id: String, output: String },
    /// A tool call ended (`error`: how it failed).
    ToolFinished {
        call_id: String,
        tool: String,
        title: String,
        error: Option<String>,
        duration_ms: u64,
    },
    /// A model request ended: its usage, why it stopped, what it cost (USD).
    StepFinished {
        usage: Usage,
        finish: FinishReason,
        cost: f64,
    },
}

/// The context window: its use, compaction, pruning, its size, what fills it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContextEvent {
    /// Where the context stands: what the status bar shows.
    ContextUsage(ContextUsage),
    /// A compaction started (`auto`: at the threshold; `overflow`: after the model refused).
    CompactionStarted {
        auto: bool,
        overflow: bool,
        focus: Option<String>,
    },
    /// A compaction ended with a summary.
    CompactionFinished {
        summary_message_id: String,
        /// Context tokens before and after (after is an estimate until the next report).
        before: u64,
        after: u64,
        model_calls: u32,
        /// What the summary requests cost.
        #[serde(default)]
        cost: CompactionCost,
        /// What was kept for the model, in counts.
        #[serde(default)]
        kept: crate::carried::Kept,
        /// What left the view, in counts (the items: the compaction message's `left_view`).
        #[serde(default)]
        left: crate::carried::LeftCounts,
    },
    /// A compaction is coming and can still be steered (`Some`), or no longer (`None`: it
    /// happened, its summary was dropped, or the context shrank). Sent when it changes.
    CompactionAhead { notice: Option<CompactionNotice> },
    /// Old tool outputs were cleared from the context.
    Pruned { parts: usize, tokens: u64 },
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
    /// What fills the context (`Op::ContextBreakdown`).
    ContextBreakdown {
        #[serde(flatten)]
        breakdown: Breakdown,
        /// What the user pinned, oldest first, each with its cost (its row: `pinned`).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pins: Vec<super::Pin>,
        /// The instruction files in the system prompt, in order, each with its cost (counted in
        /// `system`).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        instructions: Vec<super::InstructionFile>,
    },
    /// A subfolder's instruction file was loaded because a tool touched a path under it: from
    /// the next request on it is in the system prompt (ARCHITECTURE.md §4.3).
    InstructionsLoaded { file: super::InstructionFile },
}

/// How the turn goes: questions, retries, the engine's state, notices, errors, its end.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum TurnEvent {
    /// A call waits for the user's answer (`Op::PermissionReply`).
    PermissionAsked(PermissionRequest),
    /// A model request failed and is tried again after `delay_ms`.
    Retrying {
        attempt: u32,
        max: u32,
        delay_ms: u64,
        message: String,
    },
    /// What the engine is doing.
    State {
        state: EngineState,
        detail: Option<String>,
    },
    /// A one-line notice for the user (export written, a warning, …).
    Info { message: String },
    /// Something failed; `kind` says what it is about, `message` is for people.
    Error {
        kind: ErrorKind,
        message: String,
        /// The assistant message whose step failed with this error (it records the error too),
        /// when one did.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        failed_message: Option<MessageId>,
    },
    /// The turn (or a `/compact`) ended.
    TurnFinished { reason: TurnEnd },
    /// A turn toward the session's goal ended and was checked (ARCHITECTURE.md §5.2): `met`,
    /// by what, and what the check said (its output's last lines, or the model's reason; one
    /// line each, bounded). `GoalChanged` follows with the goal's new figures.
    GoalChecked {
        met: bool,
        by: super::GoalCheckBy,
        detail: String,
    },
    /// An MCP server asks the user to fill in a form (MCP elicitation) while one of its calls
    /// runs; answered with `Op::ElicitationReply` (ARCHITECTURE.md §12).
    ElicitationAsked(crate::elicitation::ElicitationRequest),
}

/// The session: switched to, its history, the list of sessions, prompts refused, turns taken
/// back and put back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SessionEvent {
    /// The engine switched to a session; `messages` is the newest page of its stored history
    /// (`more_history`: older messages remain, fetched with `Op::LoadHistory`).
    SessionLoaded {
        session: Session,
        messages: Vec<Message>,
        #[serde(default)]
        more_history: bool,
    },
    /// An older page of a session's history, oldest message first (`Op::LoadHistory`).
    History {
        session_id: String,
        messages: Vec<Message>,
        /// Older messages remain before these.
        more: bool,
    },
    /// What the user pinned in this session, oldest first, each with its cost (`Op::Pin`,
    /// `Op::Unpin`, a session loaded, `/context`). `budget`: tokens all pins may take.
    PinsChanged { pins: Vec<super::Pin>, budget: u64 },
    /// The sessions of this workspace (`Op::ListSessions`).
    Sessions { sessions: Vec<Session> },
    /// What `Op::Recall` asked for, in full, as the store holds it: `kind` says what it is (a
    /// tool's name, `pasted`, `user`, `assistant`). `found` is false when the session holds
    /// nothing under `id` (then `kind` and `text` are empty).
    Recalled {
        id: String,
        found: bool,
        #[serde(default, skip_serializing_if = "String::is_empty")]
        kind: String,
        #[serde(default, skip_serializing_if = "String::is_empty")]
        text: String,
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
    },
    /// A turn taken back is back (`Op::Redo`): its messages, oldest first, and the files put back
    /// as the turn left them.
    Redone {
        messages: Vec<Message>,
        files: Vec<String>,
        redo: usize,
    },
    /// The session's goal as it now stands (`Op::Goal`, a session loaded, a turn toward it
    /// checked, met, its budget spent, paused by an interrupt); `None`: no goal.
    GoalChanged { goal: Option<super::Goal> },
    /// The memory files (`Op::ListMemory`): the user's and the project's, existing or not.
    MemoryFiles { files: Vec<super::MemoryFile> },
    /// The session's background jobs, oldest first (`Op::ListJobs`, `Op::KillJob`, and
    /// whenever one starts, ends or is stopped).
    Jobs { jobs: Vec<super::Job> },
}

/// The session's settings and servers: MCP, the model, the effort, the permission mode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SettingsEvent {
    /// The MCP servers changed state or tools (every server, each time).
    McpStatus { servers: Vec<McpServerStatus> },
    /// The resources of the ready MCP servers (`Op::ListMcpResources`).
    McpResources { resources: Vec<McpResource> },
    /// The session now talks to this model ("provider/model"), after `Op::SetModel`.
    ModelChanged { model: String },
    /// The reasoning effort requests now carry (`None`: none), after `Op::SetEffort`, a model
    /// change, or at start when one is set.
    EffortChanged {
        effort: Option<crate::llm::ReasoningEffort>,
    },
    /// The permission mode calls are now judged in, after `Op::SetPermissionMode`, the user
    /// accepting a plan, or at start when it is not the default.
    PermissionModeChanged { mode: PermissionMode },
}

/// An event of a sub-agent's session, started by the `task` call `call_id` of session
/// `parent_session_id` (ARCHITECTURE.md §13). Its permission questions come as plain
/// `PermissionAsked` events naming the agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "subagent")]
pub struct SubagentEvent {
    pub session_id: String,
    pub parent_session_id: String,
    pub agent: String,
    pub call_id: String,
    pub event: Box<Event>,
}

impl Event {
    /// A one-line notice.
    pub fn info(message: impl Into<String>) -> Event {
        Event::Turn(TurnEvent::Info {
            message: message.into(),
        })
    }

    /// Whether this event is what answers an op (and so names its submission when sent while
    /// one is handled). Every variant is listed: a new one is classified or fails to compile.
    pub fn answers_op(&self) -> bool {
        match self {
            Event::Output(e) => match e {
                OutputEvent::Message { .. }
                | OutputEvent::PartUpdated { .. }
                | OutputEvent::MessageRemoved { .. }
                | OutputEvent::PartsRemoved { .. }
                | OutputEvent::TextDelta { .. }
                | OutputEvent::ReasoningDelta { .. }
                | OutputEvent::ToolStarted { .. }
                | OutputEvent::ToolOutput { .. }
                | OutputEvent::ToolFinished { .. }
                | OutputEvent::StepFinished { .. } => false,
            },
            Event::Context(e) => match e {
                ContextEvent::ContextBreakdown { .. } => true,
                ContextEvent::ContextUsage(_)
                | ContextEvent::CompactionStarted { .. }
                | ContextEvent::CompactionFinished { .. }
                | ContextEvent::CompactionAhead { .. }
                | ContextEvent::Pruned { .. }
                | ContextEvent::ContextWindow { .. }
                | ContextEvent::InstructionsLoaded { .. } => false,
            },
            Event::Turn(e) => match e {
                TurnEvent::Info { .. } | TurnEvent::Error { .. } => true,
                TurnEvent::PermissionAsked(_)
                | TurnEvent::Retrying { .. }
                | TurnEvent::State { .. }
                | TurnEvent::TurnFinished { .. }
                | TurnEvent::GoalChecked { .. }
                | TurnEvent::ElicitationAsked(_) => false,
            },
            Event::Session(e) => match e {
                SessionEvent::SessionLoaded { .. }
                | SessionEvent::History { .. }
                | SessionEvent::Sessions { .. }
                | SessionEvent::PinsChanged { .. }
                | SessionEvent::Recalled { .. }
                | SessionEvent::Undone { .. }
                | SessionEvent::Redone { .. }
                | SessionEvent::GoalChanged { .. } => true,
                SessionEvent::MemoryFiles { .. } => true,
                SessionEvent::Jobs { .. } => true,
                SessionEvent::PromptRefused { .. } => false,
            },
            Event::Settings(e) => match e {
                SettingsEvent::McpResources { .. }
                | SettingsEvent::ModelChanged { .. }
                | SettingsEvent::EffortChanged { .. }
                | SettingsEvent::PermissionModeChanged { .. } => true,
                SettingsEvent::McpStatus { .. } => false,
            },
            Event::Subagent(_) => false,
        }
    }
}

macro_rules! group_into_event {
    ($($group:ident => $variant:ident),* $(,)?) => {
        $(
            impl From<$group> for Event {
                fn from(event: $group) -> Event {
                    Event::$variant(event)
                }
            }
        )*
    };
}

group_into_event!(
    OutputEvent => Output,
    ContextEvent => Context,
    TurnEvent => Turn,
    SessionEvent => Session,
    SettingsEvent => Settings,
    SubagentEvent => Subagent,
);
