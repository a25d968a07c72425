//! `!command`: a shell command the user runs.

use super::runner::Runner;
use crate::event::{ErrorKind, Event, TurnEnd};

impl Runner {
    pub(super) async fn shell(&mut self, _id: String, _command: String) {
        self.emit(Event::Error {
            kind: ErrorKind::Shell,
            message: "! is not available yet".into(),
        });
        self.emit(Event::TurnFinished {
            reason: TurnEnd::Error,
        });
    }
}
