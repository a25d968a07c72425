//! `/undo`, `/redo`, `/rewind`.

use super::runner::Runner;
use crate::event::{ErrorKind, Event};

impl Runner {
    pub(super) async fn undo(&mut self) {
        self.emit(Event::Error {
            kind: ErrorKind::Undo,
            message: "undo is not available yet".into(),
        });
    }

    pub(super) async fn redo(&mut self) {
        self.undo().await
    }

    pub(super) async fn rewind(&mut self, _message_id: &str) {
        self.undo().await
    }
}
