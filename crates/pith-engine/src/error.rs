//! The engine's errors, and the one way an error reaches the front end: [`EngineError::event`]
//! (an `Event::Error` of the error's kind, its text the message).

use pith_protocol::event::{ErrorKind, Event, SubmissionId};
use pith_store::lock::LockError;

use crate::compaction::CompactionError;
use crate::factory::ModelError;
use crate::mcp_error::McpOpError;

/// What went wrong in the engine: starting it, or an op or a turn it reports.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The session is open in another pith, or its lock cannot be taken.
    #[error(transparent)]
    Lock(#[from] LockError),
    /// The session's model cannot be used.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// The store could not read the session (the store's error with its causes).
    #[error("{0}")]
    Store(String),
    /// Store writes failed this turn: what was lost, and what to do.
    #[error("{0}")]
    Unsaved(String),
    #[error("cannot switch to {model}: {cause}")]
    SwitchModel { model: String, cause: String },
    #[error("cannot create a session: {0}")]
    CreateSession(String),
    #[error("no session {0}")]
    NoSession(String),
    #[error("cannot load session {id}: {cause}")]
    ReadSession { id: String, cause: String },
    /// The session switched to could not be loaded.
    #[error("cannot load session: {0}")]
    LoadSession(String),
    #[error("cannot list sessions: {0}")]
    ListSessions(String),
    #[error("cannot list sub-agent sessions: {0}")]
    ListSubagents(String),
    #[error("cannot load older messages: {0}")]
    OlderMessages(String),
    #[error("cannot export: {0}")]
    ReadExport(String),
    #[error("cannot create {dir}: {source}")]
    CreateExportDir { dir: String, source: std::io::Error },
    #[error("cannot write {path}: {source}")]
    WriteExport {
        path: String,
        source: std::io::Error,
    },
    /// A compaction that did not go through.
    #[error("{0}")]
    Compaction(CompactionError),
    /// The provider failed the step (its message, with what to check).
    #[error("{0}")]
    Provider(String),
    /// The conversation no longer fits the model's window (the provider's message).
    #[error(
        "the conversation no longer fits the model's context window ({0}); run /compact or start a new session"
    )]
    ContextOverflow(String),
    /// The turn was stopped for repeating itself (the reason).
    #[error("{0}")]
    Loop(String),
    #[error(transparent)]
    Mcp(#[from] McpOpError),
    /// `/undo`, `/redo` or a rewind cannot be done (why).
    #[error("{0}")]
    Undo(String),
    /// A custom command cannot run as written (why).
    #[error("{0}")]
    Command(String),
    #[error(
        "internal error: the engine stopped (a bug; details in the log). What was saved before is kept; restart pith to continue the session"
    )]
    Panicked,
}

impl EngineError {
    /// The kind a front end sees.
    pub fn kind(&self) -> ErrorKind {
        use EngineError as E;
        match self {
            E::Lock(_) => ErrorKind::Session,
            E::Model(_) | E::SwitchModel { .. } => ErrorKind::Model,
            E::Store(_) | E::Unsaved(_) => ErrorKind::Store,
            E::CreateSession(_)
            | E::NoSession(_)
            | E::ReadSession { .. }
            | E::LoadSession(_)
            | E::ListSessions(_)
            | E::ListSubagents(_)
            | E::OlderMessages(_) => ErrorKind::Session,
            E::ReadExport(_) | E::CreateExportDir { .. } | E::WriteExport { .. } => {
                ErrorKind::Export
            }
            E::Compaction(_) => ErrorKind::Compaction,
            E::Provider(_) => ErrorKind::Provider,
            E::ContextOverflow(_) => ErrorKind::ContextOverflow,
            E::Loop(_) => ErrorKind::Loop,
            E::Mcp(_) => ErrorKind::Mcp,
            E::Undo(_) => ErrorKind::Undo,
            E::Command(_) => ErrorKind::Command,
            E::Panicked => ErrorKind::Internal,
        }
    }

    /// The error as the front end gets it, tied to no submission.
    pub fn event(&self) -> Event {
        self.event_for(None)
    }

    /// The error as the front end gets it, naming the submission it answers.
    pub fn event_for(&self, submission: Option<SubmissionId>) -> Event {
        Event::Error {
            kind: self.kind(),
            message: self.to_string(),
            submission,
            failed_message: None,
        }
    }

    /// The error that failed the step of the assistant message `message_id` (which records it).
    pub fn event_of_step(&self, message_id: &str) -> Event {
        Event::Error {
            kind: self.kind(),
            message: self.to_string(),
            submission: None,
            failed_message: Some(message_id.to_string()),
        }
    }
}

/// An error and its causes, each after a colon: the text `{:#}` gives for an `anyhow` error.
pub(crate) fn with_causes(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}
