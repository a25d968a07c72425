//! Store writes that fail (a full disk, a read-only data directory): the turn goes on streaming
//! to the front end, the first failure is kept, and the turn ends with it as an error the user
//! sees (a non-zero exit headless). What was saved stays consistent: every write is a
//! transaction, and the next start marks a step that was cut short as interrupted.

use std::sync::Mutex;

use super::runner::Runner;
use crate::error::EngineError;

/// The first store write that failed in the current turn.
#[derive(Default)]
pub(super) struct StoreFailure(Mutex<Option<String>>);

impl StoreFailure {
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<String>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Runner {
    /// Records a failed write (`what`: "save part X"). Only the first of a turn is logged: a
    /// full disk fails every write after it, and the log is on the same disk.
    pub(super) fn store_failed(&self, what: &str, e: &impl std::fmt::Display) {
        let mut slot = self.store_failure.lock();
        if slot.is_none() {
            tracing::error!("store: cannot {what}: {e:#}");
            *slot = Some(format!("{e:#}"));
        }
    }

    /// A write failed in this turn.
    pub(super) fn store_failing(&self) -> bool {
        self.store_failure.lock().is_some()
    }

    /// The error to report for a failed write, once; clears it for the next turn.
    pub(super) fn take_store_failure(&self) -> Option<EngineError> {
        let cause = self.store_failure.lock().take()?;
        let db = self
            .store
            .path()
            .map(|p| format!(" to {}", p.display()))
            .unwrap_or_default();
        Some(EngineError::Unsaved(format!(
            "could not save the session{db}: {cause}. What the model wrote this turn was shown but is not all saved. Free disk space (or make the data directory writable), then continue with `pith --session {}`",
            self.session.id
        )))
    }
}
