//! The parts of what pith carries across a compaction that are records rather than text
//! (ARCHITECTURE.md §6.4): the anchor index, the execution frontier, what left the view and
//! what was kept. Stored on the compaction part inside [`crate::message::Carried`].

use serde::{Deserialize, Serialize};

/// An exact identifier taken, without a model, from what left the view: kept word for word
/// (a path with its line, a command and its exit status, an error's first line, a URL, …).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Anchor {
    pub kind: AnchorKind,
    /// The identifier exactly as it appeared (a command with its exit status: `cargo test → exit 101`).
    pub text: String,
    /// Where it came from: the recall id of the item that left the view.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recall: Option<String>,
}

/// What an [`Anchor`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AnchorKind {
    /// A file path, with `:line` when one was given.
    Path,
    /// A command run, with its exit status when known.
    Command,
    /// An error code or the first line of an error message.
    Error,
    Url,
    /// A commit hash or another long hex identifier.
    Hash,
    /// A ticket or issue id (`PROJ-123`, `#4521`).
    Ticket,
    Port,
    Version,
    /// A number the user typed.
    Number,
    /// A measurement a command printed, with its label (`Execution Time: 1843.771 ms`).
    Figure,
}

/// A sentence of the model's own replies that decides, concludes or gives a reason, carried
/// word for word (`pith_context::decisions`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decision {
    pub text: String,
    /// The recall id of the reply it came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recall: Option<String>,
}

/// Where the work stood when a compaction hit, built from the session's own events (never
/// from the summary): carried beside the todo list.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Frontier {
    /// What was done (completed todo items, files changed), oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub done: Vec<String>,
    /// The last run of each test or build command and its result.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub verified: Vec<Check>,
    /// What was in progress when the compaction hit (the todo in progress, the calls of the
    /// step in hand).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub in_progress: Vec<String>,
    /// The next step the model announced last, in its words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next: Option<String>,
}

impl Frontier {
    pub fn is_empty(&self) -> bool {
        self.done.is_empty()
            && self.verified.is_empty()
            && self.in_progress.is_empty()
            && self.next.is_none()
    }
}

/// The last run of one test or build command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Check {
    pub command: String,
    /// `passed`, `failed (exit 101)`, … in a few words.
    pub result: String,
    /// `Some(true)` when it passed, `Some(false)` when it failed, `None` when unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passed: Option<bool>,
    /// The recall id of its output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recall: Option<String>,
    /// The first run's result and recall id, when a later run reported otherwise: the failure
    /// a fix made pass, the figures a change moved (`failed (exit 1): 1 failed [call_2]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<String>,
}

/// One item that a compaction took out of the request: it stays in the store and `recall`
/// brings it back by `id`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeftItem {
    /// The recall id.
    pub id: String,
    pub kind: LeftKind,
    /// One line naming it (a tool call's title, a message's opening words).
    pub label: String,
    /// Its size in tokens (estimated).
    #[serde(default)]
    pub tokens: u64,
}

/// What kind of item left the view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LeftKind {
    /// A user message (or part of one) the carry budget cut.
    UserMessage,
    /// An assistant's text.
    Reply,
    /// A tool call and its output.
    ToolOutput,
    /// A block the user pasted.
    Paste,
}

/// What a compaction kept for the model, in counts (the divider's "kept:" figures).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Kept {
    /// The user's messages carried word for word (or in the verbatim tail).
    pub user_messages: usize,
    /// Todo items carried.
    pub todos: usize,
    pub anchors: usize,
    /// The execution frontier was carried.
    pub frontier: bool,
    /// Pinned items (always carried).
    #[serde(default)]
    pub pinned: usize,
    /// Messages of the verbatim tail.
    pub tail_messages: usize,
}

/// What left the view, in counts (the divider's "left:" figures and `/context`'s section).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LeftCounts {
    pub user_messages: usize,
    pub replies: usize,
    pub tool_outputs: usize,
    pub pastes: usize,
}

impl crate::message::Carried {
    /// What this record keeps for the model, in counts, with `tail_messages` kept word for word
    /// after it and `pinned` items the user pinned.
    pub fn kept(&self, tail_messages: usize, pinned: usize) -> Kept {
        Kept {
            user_messages: self.user_messages.len() + usize::from(self.current_request.is_some()),
            todos: self.todos.as_ref().map_or(0, Vec::len),
            anchors: self.anchors.len(),
            frontier: !self.frontier.is_empty(),
            pinned,
            tail_messages,
        }
    }
}
