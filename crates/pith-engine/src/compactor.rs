//! The compactor (ARCHITECTURE.md §6.4, §6.6): what the runner keeps about compactions between
//! them — the breaker's count, the last compaction's cost, the summary being written in the
//! background — and the compactions themselves, over a narrow [`CompactionHost`]: the hooks
//! around one, planning it over narrow borrows of the session ([`Planner`]: the view, the
//! meter, the model, the configuration, the todo list: where the verbatim tail starts, what
//! pith carries, what the summary requests are given, the messages a written summary becomes),
//! writing the summary (`summarise`), saving and announcing it, the continue message, and
//! starting and swapping in the summary written ahead (`ahead`). The compactor knows no runner:
//! the runner is a host that lends the parts a compaction uses.

mod ahead;
mod compact;
mod planning;
mod summarise;
mod summary;

pub(super) use ahead::{Background, Planned, maybe_start_background};
pub(super) use compact::{Installed, compact};
pub(super) use summarise::{
    Ask, Job, SummaryHost, Written, inline_budget_of, summary_problem, write_summary,
};

use std::sync::Mutex;

use tokio_util::sync::CancellationToken;

use pith_context::budget::Budget;
use pith_context::compaction as plan;
use pith_protocol::event::{CompactionCost, Event};

use super::compaction::CompactionError;
use super::meter::Meter;
use super::runner::ModelSetup;
use super::session_log::SessionLog;

/// What the runner keeps about compactions between them.
#[derive(Default)]
pub(super) struct Compactor {
    /// Compactions in the current user turn (the breaker's count).
    this_turn: u32,
    /// What the last compaction cost (`/context`).
    last_cost: Option<CompactionCost>,
    /// A summary being written ahead of the threshold.
    background: Option<Background>,
}

impl Compactor {
    /// A user turn starts: the breaker counts from zero.
    pub fn start_turn(&mut self) {
        self.this_turn = 0;
    }

    /// A compaction starts in this turn.
    pub fn count(&mut self) {
        self.this_turn += 1;
    }

    /// Before an automatic compaction: past the second of a user turn, compacting would loop
    /// and the breaker trips.
    pub fn check_breaker(&self, auto: bool) -> Result<(), CompactionError> {
        if auto && self.this_turn >= 2 {
            return Err(CompactionError::Breaker(
                plan::breaker(u64::MAX, 0, 0, self.this_turn + 1).unwrap_or_default(),
            ));
        }
        Ok(())
    }

    /// After an automatic compaction from `before` to `after` tokens: the breaker trips when
    /// compacting did not make the conversation fit the `usable` window.
    pub fn check_fit(&self, before: u64, after: u64, usable: u64) -> Result<(), CompactionError> {
        match plan::breaker(before, after, usable, self.this_turn) {
            Some(message) => Err(CompactionError::Breaker(message)),
            None => Ok(()),
        }
    }

    /// Another session starts (`/new`, a resume): its `/context` has no compaction of its own yet.
    pub fn forget_last_cost(&mut self) {
        self.last_cost = None;
    }

    /// What the last compaction cost.
    pub fn last_cost(&self) -> Option<CompactionCost> {
        self.last_cost
    }

    /// A compaction finished with the summary `written`, whose message cost `cost`: what it
    /// cost, kept for `/context`.
    pub fn finished(&mut self, written: &Written, cost: f64, background: bool) -> CompactionCost {
        let usage = &written.usage;
        let cost = CompactionCost {
            input: usage.input + usage.cache_read + usage.cache_write,
            cache_read: usage.cache_read,
            cost,
            cache_friendly: written.inline,
            background,
        };
        self.last_cost = Some(cost);
        cost
    }

    /// A summary is being written ahead.
    pub fn has_background(&self) -> bool {
        self.background.is_some()
    }

    /// Starts writing the `planned` summary ahead with `model`.
    pub fn start_background(&mut self, planned: Planned, model: ModelSetup) {
        self.background = Some(Background::start(planned, model));
    }

    /// Takes the summary being written ahead, to install it.
    pub fn take_background(&mut self) -> Option<Background> {
        self.background.take()
    }

    /// Drops the summary being written ahead (stale, or the history changed under it).
    pub fn drop_background(&mut self) {
        self.background = None;
    }

    /// Keeps the summary being written ahead, taken to be checked.
    pub fn keep_background(&mut self, background: Background) {
        self.background = Some(background);
    }
}

/// What the compactor reads of the session to plan a compaction: the view, the meter (whose
/// estimator caches what it counted), the model, the configuration and the todo list.
pub(super) struct Planner<'a> {
    pub log: &'a SessionLog,
    pub meter: &'a mut Meter,
    pub model: &'a ModelSetup,
    pub config: &'a pith_config::Config,
    pub todos: &'a Mutex<Vec<pith_protocol::tool::Todo>>,
}

/// What a compaction asks of the session it compacts, besides what writing its summary asks
/// ([`SummaryHost`]: a [`Planner`] over the session, its next request, what an overflow says
/// about the window, and hearing what reading a stream brings): the compactor's own state, the
/// session log to save and announce the compaction in, the context figures, the hooks around a
/// compaction and the continue message.
pub(crate) trait CompactionHost: SummaryHost {
    /// What is kept about compactions between them.
    fn compactor(&mut self) -> &mut Compactor;

    /// The session log: the compaction and summary messages are saved and announced there.
    fn log(&mut self) -> &mut SessionLog;

    /// The window-dependent figures of context management for the session's model.
    fn budget(&self) -> Budget;

    /// Estimated tokens of the system prompt and tool definitions.
    fn overhead(&mut self) -> u64;

    /// Recomputes the context figure as an estimate of the next request.
    fn reset_estimate(&mut self);

    /// The running figure has reached the usable window.
    fn overflowing(&self) -> bool;

    /// Sends an event, naming the submission being handled.
    fn emit(&self, event: Event);

    /// Stores the context figure with the session.
    fn touch_session(&mut self);

    /// Sends the context figure (and answers a `/context` asked meanwhile).
    fn emit_context(&mut self);

    /// Adds the synthetic message that tells the model to go on after an automatic compaction.
    fn push_continue(&mut self);

    /// Runs the `pre_compact` hooks (`manual`, or automatic; the `/compact` focus).
    async fn pre_compact_hooks(
        &mut self,
        manual: bool,
        focus: Option<&str>,
        cancel: &CancellationToken,
    );

    /// Runs the `post_compact` hooks; what they print joins the summary just written.
    async fn post_compact_hooks(&mut self, manual: bool, cancel: &CancellationToken);
}

/// Refuses a compaction that cannot help: nothing to summarise, or (manual) too little to be
/// worth it.
pub(super) fn check_worth_compacting(
    cut: &plan::Cut,
    auto: bool,
    before: u64,
    new_tokens: u64,
    budget: &Budget,
) -> Result<(), CompactionError> {
    if cut.summarise.is_empty() {
        return Err(if auto {
            CompactionError::Breaker(format!(
                "Stopped: nothing is left to compact — the summary and the current request \
                 (~{} tokens) alone exceed the {} tokens this model can use; shorten \
                 the request or use a model with a larger context window.",
                pith_protocol::text::count(before),
                pith_protocol::text::count(budget.usable)
            ))
        } else if cut.previous_summary.is_some() {
            CompactionError::NothingToCompact(
                "nothing to compact: nothing new since the last summary except the recent turns kept word for word".into(),
            )
        } else {
            CompactionError::NothingToCompact(
                "nothing to compact yet: the conversation is only the recent turns kept word for word".into(),
            )
        });
    }
    if !auto && new_tokens < budget.summary_cap / 4 {
        return Err(CompactionError::NothingToCompact(format!(
            "nothing worth compacting: the {} tokens of history before the recent \
             turns would hardly shrink in a summary; the context stays as it is",
            pith_protocol::text::count(new_tokens)
        )));
    }
    Ok(())
}
