//! The engine's errors, and the one way an error reaches the front end: [`EngineError::event`]
//! (an `TurnEvent::Error` of the error's kind, its text the message).

use pith_protocol::event::{ErrorKind, Event, EventMsg, SubmissionId, TurnEvent};
use pith_store::StoreError;
use pith_store::lock::LockError;

pub(crate) use crate::causes::with_causes;
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
    #[error("{0:#}")]
    Store(#[source] StoreError),
    /// Store writes failed this turn: the first failure, what was lost, and what to do.
    #[error(
        "could not save the session{db}: {source:#}. What the model wrote this turn was shown but is not all saved. Free disk space (or make the data directory writable), then continue with `pith --session {session_id}`"
    )]
    Unsaved {
        /// ` to <database path>`, or nothing.
        db: String,
        session_id: String,
        #[source]
        source: Box<StoreError>,
    },
    #[error("cannot switch to {model}: {}", with_causes(.source))]
    SwitchModel {
        model: String,
        #[source]
        source: ModelError,
    },
    #[error("cannot create a session: {0:#}")]
    CreateSession(#[source] StoreError),
    #[error("no session {0}")]
    NoSession(String),
    #[error("cannot load session {id}: {source:#}")]
    ReadSession {
        id: String,
        #[source]
        source: StoreError,
    },
    /// The session switched to could not be loaded.
    #[error("cannot load session: {}", .0.text())]
    LoadSession(#[source] Box<EngineError>),
    #[error("cannot list sessions: {0:#}")]
    ListSessions(#[source] StoreError),
    #[error("cannot list sub-agent sessions: {0:#}")]
    ListSubagents(#[source] StoreError),
    #[error("cannot load older messages: {0:#}")]
    OlderMessages(#[source] StoreError),
    #[error("cannot export: {0:#}")]
    ReadExport(#[source] StoreError),
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
            E::Store(_) | E::Unsaved { .. } => ErrorKind::Store,
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

    /// The error's text with its causes, each once: a lock's or a model's error (shown as the
    /// library writes it) is followed by its causes; the engine's own errors carry theirs in
    /// their text already.
    pub fn text(&self) -> String {
        match self {
            EngineError::Lock(_) | EngineError::Model(_) => with_causes(self),
            _ => self.to_string(),
        }
    }

    /// The error as the front end gets it, tied to no submission.
    pub fn event(&self) -> Event {
        Event::Turn(TurnEvent::Error {
            kind: self.kind(),
            message: self.to_string(),
            failed_message: None,
        })
    }

    /// The error as the front end gets it, naming the submission it answers.
    pub fn event_for(&self, submission: Option<SubmissionId>) -> EventMsg {
        EventMsg {
            submission,
            event: self.event(),
        }
    }

    /// The error that failed the step of the assistant message `message_id` (which records it).
    pub fn event_of_step(&self, message_id: &str) -> Event {
        Event::Turn(TurnEvent::Error {
            kind: self.kind(),
            message: self.to_string(),
            failed_message: Some(message_id.to_string()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    #[test]
    fn a_store_error_stays_the_cause_and_the_text_is_unchanged() {
        let e = EngineError::CreateSession(StoreError::NoSession("S1".into()));
        assert_eq!(
            e.to_string(),
            "cannot create a session: no session with id S1"
        );
        let cause = e.source().and_then(|c| c.downcast_ref::<StoreError>());
        assert!(matches!(cause, Some(StoreError::NoSession(id)) if id == "S1"));
        // a session that cannot be loaded after a switch says the store's words once
        let load = EngineError::LoadSession(Box::new(EngineError::Store(StoreError::NoSession(
            "S2".into(),
        ))));
        assert_eq!(
            load.to_string(),
            "cannot load session: no session with id S2"
        );
        let cause = load.source().map(|c| c.to_string());
        assert_eq!(cause.as_deref(), Some("no session with id S2"));
    }

    #[test]
    fn a_model_that_cannot_be_used_keeps_its_error_as_the_cause() {
        let e = EngineError::SwitchModel {
            model: "gpt".into(),
            source: ModelError::NotProviderModel { name: "gpt".into() },
        };
        assert_eq!(
            e.to_string(),
            "cannot switch to gpt: model \"gpt\" must be written provider/model, e.g. openai/gpt-4.1"
        );
        assert!(e.source().is_some_and(|c| c.is::<ModelError>()));
        assert_eq!(e.kind(), ErrorKind::Model);
    }
}
