//! What front ends send to the engine (`Op`) and what the engine reports back (`Event`).

use serde::{Deserialize, Serialize};

use crate::message::{Message, Part, Usage};

/// Where the context stands: what the status bar shows.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
pub struct ContextUsage {
    /// Tokens the next request is expected to occupy.
    pub used: u64,
    /// Tokens usable before an automatic compaction fires.
    pub usable: u64,
    /// The model's context window.
    pub window: u64,
    /// `used / window` in percent.
    pub percent: f64,
    /// `used` is an estimate (no provider report since the last change).
    pub estimated: bool,
    /// Of `used`, tokens read from the provider's prompt cache at the last report.
    #[serde(default)]
    pub cached: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PermissionReply {
    Once,
    Always,
    Deny,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PermissionRequest {
    pub id: String,
    pub tool: String,
    pub call_id: String,
    /// Short human description: the command, the path, …
    pub title: String,
    /// The pattern an "always" reply would allow for the rest of the session.
    pub patterns: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Op {
    /// A user message. While a turn runs it is queued and delivered mid-turn (DESIGN.md §3.4).
    UserTurn {
        text: String,
    },
    /// `/compact [focus]`.
    Compact {
        focus: Option<String>,
    },
    /// Stop the running stream and tools; history stays valid.
    Interrupt,
    PermissionReply {
        id: String,
        reply: PermissionReply,
        #[serde(default)]
        message: Option<String>,
    },
    /// Switch the session's model ("provider/model").
    SetModel {
        model: String,
    },
    /// Start a fresh session in the same workspace (`/new`).
    NewSession,
    /// Switch to a stored session (`/sessions` picker); answered by `SessionLoaded`.
    ResumeSession {
        id: String,
    },
    /// The page of `session_id`'s history before message `before` (the TUI scrolled up to the
    /// oldest message it holds); answered by `History`.
    LoadHistory {
        session_id: String,
        before: String,
    },
    /// Ask for the stored sessions; answered by `Sessions`.
    ListSessions,
    /// Ask for the `/context` breakdown; answered by `ContextBreakdown`.
    ContextBreakdown,
    /// Write the whole session to a file (`/export [path]`); answered by `Info`.
    Export {
        path: Option<String>,
    },
    Shutdown,
}

/// What the context is made of (`/context`), in tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
pub struct Breakdown {
    pub system: u64,
    pub tools: u64,
    pub summary: u64,
    pub messages: u64,
    pub tool_outputs: u64,
    /// Tool outputs cleared by pruning (shown to the user, not sent to the model).
    pub pruned: u64,
    pub free: u64,
    pub reserved: u64,
    pub window: u64,
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
    ToolFinished {
        call_id: String,
        tool: String,
        title: String,
        error: Option<String>,
        duration_ms: u64,
    },
    StepFinished {
        usage: Usage,
        finish: String,
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
        /// Where the figure came from: "server error", "server", "estimate".
        source: String,
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
    },
    /// An older page of a session's history, oldest message first (`Op::LoadHistory`).
    History {
        session_id: String,
        messages: Vec<Message>,
        /// Older messages remain before these.
        more: bool,
    },
    Sessions {
        sessions: Vec<crate::message::Session>,
    },
    ContextBreakdown(Breakdown),
    /// A one-line notice for the user (export written, model switched, …).
    Info {
        message: String,
    },
    Error {
        message: String,
    },
    TurnFinished {
        reason: String,
    },
}
