//! The context meter: the token estimator of the session's model and the running context figure
//! — the provider's last count plus the estimate of what was added since (ARCHITECTURE.md §6.3).

use pith_context::tokens::Estimator;
use pith_context::tracker::ContextTracker;
use pith_protocol::message::{Message, Part};

pub(super) struct Meter {
    pub estimator: Estimator,
    pub tracker: ContextTracker,
}

impl Meter {
    /// A meter for the model the provider knows as `model_id`, with no figure yet.
    pub fn new(model_id: &str) -> Meter {
        Meter {
            estimator: Estimator::lazy(model_id),
            tracker: ContextTracker::default(),
        }
    }

    /// The context figure, as the status bar shows it.
    pub fn used(&self) -> u64 {
        self.tracker.used()
    }

    /// Counts a message added to the context.
    pub fn add_message(&mut self, m: &Message) {
        let tokens = self.estimator.message(m);
        self.tracker.on_added(tokens);
    }

    /// Counts a part added to the context.
    pub fn add_part(&mut self, p: &Part) {
        let tokens = self.estimator.part(p);
        self.tracker.on_added(tokens);
    }
}
