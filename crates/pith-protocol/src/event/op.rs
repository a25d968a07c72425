//! What front ends send to the engine: `Op`, submitted as a `Submission` under an id.

use serde::{Deserialize, Serialize};

use super::{PermissionMode, PermissionReply};

/// The id a front end gives what it submits (a prompt, a command, a `!` command); the events that
/// answer it name it.
pub type SubmissionId = String;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Op {
    /// A user message. While a turn runs it is queued and delivered mid-turn
    /// (ARCHITECTURE.md §4.4). `id` is the front end's: the stored message carries it back as
    /// `submission_id`.
    UserTurn {
        id: String,
        text: String,
        /// What of `text` the user pasted (a bracketed paste the TUI showed as a chip), as byte
        /// spans: compaction carries those as pasted blocks, whatever their shape.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pasted: Vec<crate::message::Span>,
    },
    /// `/compact [focus]`.
    Compact {
        focus: Option<String>,
    },
    /// `/pin TEXT`: carry `text` word for word into every later request of the session until
    /// `/unpin`; `None` (`/pin` alone): list the pins. Answered by `PinsChanged`, or an error
    /// of kind `command` saying in one line why the pin was refused.
    Pin {
        #[serde(default)]
        text: Option<String>,
    },
    /// `/unpin N` removes the `number`th pin (1: the oldest); `None` (`/unpin all`) every pin.
    /// Answered by `PinsChanged`.
    Unpin {
        #[serde(default)]
        number: Option<usize>,
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
    /// Switch the permission mode (`--permission-mode`, Shift+Tab in the TUI). Answered by
    /// `PermissionModeChanged`.
    SetPermissionMode {
        mode: PermissionMode,
    },
    /// Set the session's reasoning effort (`/effort`); `None`: back to the model's own
    /// (`reasoning_effort` in its config, else none). Answered by `EffortChanged`.
    SetEffort {
        effort: Option<crate::llm::ReasoningEffort>,
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
    /// Ask for the sub-agent sessions `session_id` started (`/agents`); answered by `Sessions`.
    ListSubagents {
        session_id: String,
    },
    /// Ask for the `/context` breakdown; answered by `ContextBreakdown`.
    ContextBreakdown,
    /// Bring back in full an item a compaction or a prune took out of the view, by its recall
    /// id (a tool call's id, `paste:…`, a message id); answered by `Recalled` at once, even
    /// while a turn runs.
    Recall {
        session_id: String,
        id: String,
    },
    /// Write the whole session to a file (`/export [path]`); answered by `Info`.
    Export {
        path: Option<String>,
    },
    /// Run the MCP prompt `/SERVER:NAME args`: its text becomes a user message (paired by `id`
    /// like `UserTurn`).
    McpPrompt {
        id: String,
        server: String,
        prompt: String,
        /// The text after the command; split over the prompt's arguments.
        #[serde(default)]
        args: String,
    },
    /// Ask for the resources of every ready MCP server; answered by `McpResources`.
    ListMcpResources,
    /// Read an MCP resource now and attach it to the next user message; answered by `Info` (or
    /// an `Error` of kind `mcp`).
    AttachMcpResource {
        server: String,
        uri: String,
    },
    /// Start an MCP server again (after it failed or exited, or to pick up its new tools).
    RestartMcpServer {
        name: String,
    },
    /// A command the user runs in the shell (`!cmd`), through the bash tool's rules; its
    /// output joins the context as the user's own. `id` is stored as the message's
    /// `submission_id`. Answered by the message, then `TurnFinished`.
    Shell {
        id: String,
        command: String,
    },
    /// Take back the last turn: its file changes and its messages (`/undo`). Answered by
    /// `Undone` (or an error of kind `undo`).
    Undo,
    /// Put back the turn the last `Undo` took back (`/redo`). Answered by `Redone`.
    Redo,
    /// Go back to just before the user message `message_id` (`/rewind`): every turn from it on
    /// is undone. Answered by `Undone`.
    Rewind {
        message_id: String,
    },
    /// A custom slash command the front end expanded: `text` becomes the user's message
    /// (labelled `label`, e.g. `/review src/a.rs`), run with `model` and as `agent` when set —
    /// for this turn only. Paired by `id` like `UserTurn`.
    RunCommand {
        id: String,
        label: String,
        text: String,
        #[serde(default)]
        model: Option<String>,
        #[serde(default)]
        agent: Option<String>,
    },
    /// Allow every call the rules would ask about (`--yes`, an editor's "yes" mode) or ask
    /// again; applies from the next call the runner checks. Leaving the sandbox and what
    /// `Permissions::yes_refusal` names stay refused.
    SetAutoYes {
        on: bool,
    },
    Shutdown,
    /// `/goal …` (ARCHITECTURE.md §5.2): show, set, pause, resume or clear the session's goal.
    /// Answered by `GoalChanged`; setting or resuming one then runs its turns as submission
    /// `id` (paired like `UserTurn`), until a check says it is met or its budget is spent.
    Goal {
        id: String,
        #[serde(flatten)]
        action: super::GoalAction,
    },
    /// Append `- text` to the memory file of `scope` (`/remember`, `#TEXT`): the user's own
    /// act, after the front end asked which file. Answered by `Info` naming the file (or an
    /// error of kind `command`); the next request's system prompt carries it.
    Remember {
        text: String,
        scope: super::MemoryScope,
    },
    /// Ask for the memory files (`/memory`); answered by `MemoryFiles`.
    ListMemory,
    /// Ask for the background jobs (`/ps`); answered by `Jobs`.
    ListJobs,
    /// Stop background job `id` and its whole process tree (`/ps`); answered by `Jobs`, or an
    /// `Info` when there is no such running job.
    KillJob {
        id: u32,
    },
    /// The user's answer to `ElicitationAsked` `id`: `content` only with `accept` (checked
    /// against the form again before it reaches the server).
    ElicitationReply {
        id: String,
        action: crate::elicitation::ElicitationAction,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content: Option<crate::elicitation::Answers>,
    },
    /// Sign in to the HTTP MCP server `name` with OAuth (`/mcp login NAME`, ARCHITECTURE.md
    /// §12.2): the URL to open (or the device code) arrives as `Info`, then `Info` when signed
    /// in (the server is restarted with the token) or an `Error` of kind `mcp`.
    McpLogin {
        name: String,
    },
}

/// An op as a front end submits it: `id` names it, and what answers it (an `Event::Error`, a
/// `PromptRefused`) names it back. An op that carries its own id (a prompt, a command, a `!`
/// command) is submitted under that id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Submission {
    pub id: SubmissionId,
    pub op: Op,
}

impl Submission {
    /// `op` submitted under its own id, else a fresh one.
    pub fn new(op: Op) -> Submission {
        let id = op
            .own_id()
            .map_or_else(crate::message::new_id, str::to_string);
        Submission { id, op }
    }
}

impl From<Op> for Submission {
    fn from(op: Op) -> Submission {
        Submission::new(op)
    }
}

impl Op {
    /// The id the op carries itself: the front end's id of a prompt, a command or a `!` command.
    pub fn own_id(&self) -> Option<&str> {
        match self {
            Op::UserTurn { id, .. }
            | Op::McpPrompt { id, .. }
            | Op::Shell { id, .. }
            | Op::RunCommand { id, .. }
            | Op::Goal { id, .. } => Some(id),
            Op::Compact { .. }
            | Op::Pin { .. }
            | Op::Unpin { .. }
            | Op::Interrupt
            | Op::PermissionReply { .. }
            | Op::SetModel { .. }
            | Op::SetPermissionMode { .. }
            | Op::SetEffort { .. }
            | Op::NewSession
            | Op::ResumeSession { .. }
            | Op::LoadHistory { .. }
            | Op::ListSessions
            | Op::ListSubagents { .. }
            | Op::ContextBreakdown
            | Op::Recall { .. }
            | Op::Export { .. }
            | Op::ListMcpResources
            | Op::AttachMcpResource { .. }
            | Op::RestartMcpServer { .. }
            | Op::Undo
            | Op::Redo
            | Op::Rewind { .. }
            | Op::SetAutoYes { .. }
            | Op::Shutdown
            | Op::Remember { .. }
            | Op::ListMemory
            | Op::ListJobs
            | Op::KillJob { .. }
            | Op::ElicitationReply { .. }
            | Op::McpLogin { .. } => None,
        }
    }

    /// A user message with a fresh id.
    pub fn user_turn(text: impl Into<String>) -> Op {
        Op::UserTurn {
            id: crate::message::new_id(),
            text: text.into(),
            pasted: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_submission_takes_the_id_its_op_carries() {
        let turn = Op::UserTurn {
            id: "P1".into(),
            text: "hi".into(),
            pasted: Vec::new(),
        };
        assert_eq!(Submission::new(turn.clone()).id, "P1");
        assert_eq!(Submission::from(turn.clone()).op, turn);
        let a = Submission::new(Op::Undo);
        let b = Submission::new(Op::Undo);
        assert!(!a.id.is_empty() && a.id != b.id);
    }
}
