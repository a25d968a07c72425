//! The session data model (ARCHITECTURE.md §3): a session is a list of messages, a message a list
//! of parts.

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub type SessionId = String;
pub type MessageId = String;
pub type PartId = String;

/// A new sortable id (ULID: time-ordered, lexicographically sortable). Monotonic within the
/// process: ids made in the same millisecond still sort in creation order (the store relies on it).
pub fn new_id() -> String {
    static GENERATOR: std::sync::Mutex<ulid::Generator> =
        std::sync::Mutex::new(ulid::Generator::new());
    let mut generator = GENERATOR.lock().unwrap_or_else(|e| e.into_inner());
    generator
        .generate()
        .unwrap_or_else(|_| ulid::Ulid::new())
        .to_string()
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
}

pub use crate::llm::{FinishReason, Usage};

/// Which agent wrote an assistant message. Stored as its snake_case name; a name this build does
/// not know is kept as written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Agent {
    /// The main agent: the user's turns.
    Build,
    /// The hidden agent that writes compaction summaries.
    Compaction,
    #[serde(untagged)]
    Other(String),
}

/// Why an assistant message ended without finishing. Stored as one string, as it always was:
/// `"interrupted"`, or the error's own words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MessageError {
    /// The user interrupted the step: not a failure.
    #[serde(alias = "aborted", alias = "cancelled")]
    Interrupted,
    /// The step failed; the provider's (or pith's) message.
    #[serde(untagged)]
    Failed(String),
}

impl From<&str> for Agent {
    fn from(name: &str) -> Self {
        crate::llm::from_name(name).unwrap_or_else(|| Agent::Other(name.to_string()))
    }
}

impl From<&str> for MessageError {
    /// The error as stored: `"interrupted"` (or an older synonym), else a failure's message.
    fn from(stored: &str) -> Self {
        crate::llm::from_name(stored).unwrap_or_else(|| MessageError::Failed(stored.to_string()))
    }
}

impl std::fmt::Display for MessageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MessageError::Interrupted => f.write_str("interrupted"),
            MessageError::Failed(message) => f.write_str(message),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Session {
    pub id: SessionId,
    pub title: String,
    pub directory: String,
    pub model: String,
    pub time_created: i64,
    pub time_updated: i64,
    /// Id of the user message holding the latest *completed* compaction, if any
    /// (ARCHITECTURE.md §4.1).
    #[serde(default)]
    pub compaction_point: Option<MessageId>,
    /// Cumulative cost in USD.
    #[serde(default)]
    pub cost: f64,
    /// The context figure when the session was last left (the one the status bar showed).
    #[serde(default)]
    pub tokens: u64,
    /// The session whose `task` call started this one (a sub-agent's session).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<SessionId>,
    /// The sub-agent this session runs (`explore`, `general`, a user's agent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub id: MessageId,
    pub session_id: SessionId,
    pub role: Role,
    pub time_created: i64,
    #[serde(default)]
    pub time_completed: Option<i64>,
    /// Assistant only: the user message this answers.
    #[serde(default)]
    pub parent_id: Option<MessageId>,
    #[serde(default)]
    pub model: Option<String>,
    /// Assistant only: which agent produced it.
    #[serde(default)]
    pub agent: Option<Agent>,
    /// This assistant message is a compaction summary.
    #[serde(default)]
    pub summary: bool,
    #[serde(default)]
    pub finish: Option<FinishReason>,
    #[serde(default)]
    pub error: Option<MessageError>,
    #[serde(default)]
    pub usage: Usage,
    #[serde(default)]
    pub cost: f64,
    #[serde(default)]
    pub parts: Vec<Part>,
    /// User only: the id the front end gave this prompt (`Op::UserTurn::id`), so it can pair
    /// what it sent with what the engine stored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub submission_id: Option<String>,
    /// User only: typed while the agent was working. What is stored is what the user typed; the
    /// request wraps it in a reminder to the model (`context::view::wrap_mid_turn`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub mid_turn: bool,
    /// User only: the custom command (`/name args`) whose expansion is this message's text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
}

impl Message {
    pub fn new(session_id: &str, role: Role) -> Self {
        Message {
            id: new_id(),
            session_id: session_id.to_string(),
            role,
            time_created: now_ms(),
            time_completed: None,
            parent_id: None,
            model: None,
            agent: None,
            summary: false,
            finish: None,
            error: None,
            usage: Usage::default(),
            cost: 0.0,
            parts: Vec::new(),
            submission_id: None,
            mid_turn: false,
            command: None,
        }
    }

    /// Adds a part and returns a reference to it.
    pub fn push(&mut self, kind: PartKind) -> &mut Part {
        let part = Part {
            id: new_id(),
            message_id: self.id.clone(),
            kind,
        };
        self.parts.push(part);
        self.parts.last_mut().expect("just pushed")
    }

    /// The concatenated non-synthetic text of the message.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for p in &self.parts {
            if let PartKind::Text { text, .. } = &p.kind {
                if !out.is_empty() && !text.is_empty() {
                    out.push('\n');
                }
                out.push_str(text);
            }
        }
        out
    }

    /// The compaction part of a user message, if it holds one.
    pub fn compaction(&self) -> Option<&CompactionPart> {
        self.parts.iter().find_map(|p| match &p.kind {
            PartKind::Compaction(c) => Some(c),
            _ => None,
        })
    }

    /// A user message that exists only to hold a Compaction part.
    pub fn is_compaction_message(&self) -> bool {
        self.role == Role::User && self.compaction().is_some()
    }

    /// A summary that counts: finished, not errored.
    pub fn is_completed_summary(&self) -> bool {
        self.role == Role::Assistant
            && self.summary
            && self.finish.is_some()
            && self.error.is_none()
    }

    pub fn part_mut(&mut self, id: &str) -> Option<&mut Part> {
        self.parts.iter_mut().find(|p| p.id == id)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Part {
    pub id: PartId,
    pub message_id: MessageId,
    #[serde(flatten)]
    pub kind: PartKind,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CompactionPart {
    pub auto: bool,
    pub overflow: bool,
    #[serde(default)]
    pub focus: Option<String>,
    /// First message of the verbatim tail kept after the summary (it precedes this message in
    /// storage order; the view puts it after the summary).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tail_start: Option<MessageId>,
    /// What pith carried across this compaction itself rather than leaving it to the
    /// summariser: the user's own words, the todo list, the ledger of files and commands.
    /// (Boxed: a part is in many events and most parts are not compactions.)
    #[serde(default, skip_serializing_if = "Carried::is_empty")]
    pub carried: Box<Carried>,
}

/// What pith carries across a compaction itself (appended to the summary it writes).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Carried {
    /// The user's messages from the compacted history, verbatim, oldest first. The oldest may be
    /// cut (with a marker) or left out to stay within the budget.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub user_messages: Vec<String>,
    /// The stored message each of `user_messages` came from, by position (`None`: not known,
    /// e.g. carried by a version before this field, or pith's own note). A later compaction
    /// that cuts one lists it with this id for `recall`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub user_message_ids: Vec<Option<String>>,
    /// Older user messages left out for the budget.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub dropped_user_messages: usize,
    /// The user's request being worked on when it did not stay in the verbatim tail: always
    /// kept whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_request: Option<String>,
    /// The todo list as `todowrite` last set it.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::tool::lenient_todos"
    )]
    pub todos: Option<Vec<crate::tool::Todo>>,
    #[serde(default, skip_serializing_if = "Ledger::is_empty")]
    pub ledger: Ledger,
    /// Exact identifiers taken from what left the view, newest first (`pith_context::anchors`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub anchors: Vec<crate::carried::Anchor>,
    /// The model's decisions and findings in its own words, newest first
    /// (`pith_context::decisions`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub decisions: Vec<crate::carried::Decision>,
    /// Where the work stood (`pith_context::frontier`).
    #[serde(default, skip_serializing_if = "crate::carried::Frontier::is_empty")]
    pub frontier: crate::carried::Frontier,
    /// What this compaction took out of the model's view, and how to bring tool outputs back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left_view: Option<LeftView>,
    /// The step in hand when the compaction hit mid-turn (`pith_context::step`): the results of
    /// the model's last tool calls, rendered (word for word within the tail budget, larger ones
    /// as a preview with their recall id). Never carried into a later compaction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<String>,
    /// The skills the `skill` tool loaded in the compacted history, newest first
    /// (`pith_context::skills`): their instructions word for word, or only their name when
    /// they did not fit (the model loads it again).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skills: Vec<CarriedSkill>,
    /// The background jobs still running when the compaction was written (`bash` with
    /// `background: true`), so the next agent knows what it started and can read or stop it.
    /// Taken fresh at each compaction (a job that ended is not carried).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub jobs: Vec<crate::event::Job>,
    /// While a compaction is planned (never stored): the user messages `user_messages` was
    /// chosen from, whole, oldest first, so they can be carried again into the room the written
    /// summary leaves.
    #[serde(skip)]
    pub sources: Vec<CarrySource>,
    /// While a compaction is planned (never stored): the user's words that did not fit, oldest
    /// first (with the id of their message when it is in the history being summarised); the
    /// summary request is asked to carry them.
    #[serde(skip)]
    pub uncarried: Vec<CarrySource>,
    /// While a compaction is planned (never stored): the user messages earlier compactions left
    /// out.
    #[serde(skip)]
    pub previous_dropped: usize,
}

/// The "left the view" note of a compaction: how many messages and tool outputs the summary
/// now stands for, and the newest of those outputs by call id (for `recall`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LeftView {
    pub messages: usize,
    pub tool_outputs: usize,
    /// Written by older versions (read for their stored sessions, never written now): the newest
    /// summarised tool calls, oldest first: (call id, tool, title). `items` replaces it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub recallable: Vec<(String, String, String)>,
    /// Every item that left, by kind (this compaction's and, merged, the earlier ones').
    #[serde(default)]
    pub counts: crate::carried::LeftCounts,
    /// Every item that left (this compaction's and, merged, the earlier ones'), newest first,
    /// up to `pith_context::left_view::ITEMS_MAX`; each brought back by `recall`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub items: Vec<crate::carried::LeftItem>,
    /// How many of `items` the note lists within its budget, in the order of
    /// `pith_context::left_view::listing_order` (the newest of each kind, then the newest).
    #[serde(default)]
    pub listed: usize,
}

/// A user message a compaction may carry: its text and, for a message of the history (not one
/// an earlier compaction carried), its id, which names its pasted blocks for `recall`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CarrySource {
    pub id: Option<String>,
    pub text: String,
    /// The spans of `text` the user pasted, when the front end knew (`PartKind::Pasted`).
    pub pasted: Vec<Span>,
}

impl Carried {
    pub fn is_empty(&self) -> bool {
        self.user_messages.is_empty()
            && self.current_request.is_none()
            && self.todos.is_none()
            && self.ledger.is_empty()
            && self.anchors.is_empty()
            && self.decisions.is_empty()
            && self.frontier.is_empty()
            && self.left_view.is_none()
            && self.step.is_none()
            && self.skills.is_empty()
            && self.jobs.is_empty()
    }
}

/// A skill carried across a compaction: its name and what the `skill` tool returned (empty
/// when it did not fit: only the name is carried).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CarriedSkill {
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub text: String,
}

/// Names (never contents) of the files the agent touched and the commands it ran, oldest first.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Ledger {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub edited: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub written: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<String>,
    /// Entries left out (oldest first) to stay within the budget.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub dropped: usize,
}

impl Ledger {
    pub fn is_empty(&self) -> bool {
        self.read.is_empty()
            && self.edited.is_empty()
            && self.written.is_empty()
            && self.commands.is_empty()
    }
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum PartKind {
    Text {
        text: String,
        #[serde(default)]
        synthetic: bool,
    },
    Reasoning {
        text: String,
        /// Anthropic thinking-block signature, sent back on later steps.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
        /// Anthropic redacted thinking data.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        redacted: Option<String>,
    },
    Tool {
        call_id: String,
        tool: String,
        input: Value,
        state: ToolState,
    },
    Compaction(CompactionPart),
    StepStart,
    StepFinish {
        usage: Usage,
        finish: FinishReason,
        #[serde(default)]
        cost: f64,
    },
    File {
        path: String,
        mime: String,
    },
    Patch {
        files: Vec<String>,
    },
    /// On a user message: which byte spans of its typed text (the first text part) the user
    /// pasted, as the front end knew it (a bracketed paste). Not sent to the model.
    Pasted {
        spans: Vec<Span>,
    },
}

/// A byte range `[start, end)` of a text.
pub type Span = (usize, usize);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolTime {
    pub start: i64,
    pub end: i64,
    /// Set when pruning cleared this output from the model's view (never deleted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compacted: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum ToolState {
    Pending,
    Running {
        start: i64,
        #[serde(default)]
        title: Option<String>,
    },
    Completed {
        output: String,
        title: String,
        #[serde(default)]
        metadata: Value,
        time: ToolTime,
    },
    Error {
        message: String,
        #[serde(default)]
        start: Option<i64>,
        #[serde(default)]
        end: Option<i64>,
    },
}

impl ToolState {
    pub fn is_done(&self) -> bool {
        matches!(self, ToolState::Completed { .. } | ToolState::Error { .. })
    }
}
