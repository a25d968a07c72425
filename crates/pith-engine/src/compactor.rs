//! The compactor (ARCHITECTURE.md §6.4, §6.6): what the runner keeps about compactions between
//! them — the breaker's count, the last compaction's cost, the summary being written in the
//! background — and the compactions themselves, over a narrow [`CompactionHost`]: planning one
//! over narrow borrows of the session ([`Planner`]: the view, the meter, the model, the
//! configuration, the todo list: where the verbatim tail starts, what pith carries, what the
//! summary requests are given, the messages a written summary becomes), writing the summary
//! (`summarise`), saving and announcing it (over the session log alone), the continue message,
//! and starting and swapping in the summary written ahead (`ahead`). The compactor knows no
//! runner and runs no hooks: a turn (`turn_context.rs`) is the host that lends the parts a
//! compaction uses and runs the hooks around it, and a test builds one from parts alone.

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

use pith_context::budget::Budget;
use pith_context::compaction as plan;
use pith_protocol::event::CompactionCost;

use super::compaction::CompactionError;
use super::meter::Meter;
use super::session_log::SessionLog;
use crate::model::ModelSetup;

/// What the runner keeps about compactions between them.
#[derive(Default)]
pub(super) struct Compactor {
    /// Compactions in the current user turn (the breaker's count).
    this_turn: u32,
    /// What the last compaction cost (`/context`).
    last_cost: Option<CompactionCost>,
    /// A summary being written ahead of the threshold.
    background: Option<Background>,
    /// The compaction notice the front end was last sent (`compaction_notice.rs`).
    notice: Option<pith_protocol::event::CompactionNotice>,
}

impl Compactor {
    /// A user turn starts: the breaker counts from zero.
    pub(crate) fn start_turn(&mut self) {
        self.this_turn = 0;
    }

    /// A compaction starts in this turn.
    pub(crate) fn count(&mut self) {
        self.this_turn += 1;
    }

    /// Before an automatic compaction: past the second of a user turn, compacting would loop
    /// and the breaker trips.
    pub(crate) fn check_breaker(&self, auto: bool) -> Result<(), CompactionError> {
        if auto && self.this_turn >= 2 {
            return Err(CompactionError::Breaker(
                plan::breaker(u64::MAX, 0, 0, self.this_turn + 1).unwrap_or_default(),
            ));
        }
        Ok(())
    }

    /// After an automatic compaction from `before` to `after` tokens: the breaker trips when
    /// compacting did not make the conversation fit the `usable` window.
    pub(crate) fn check_fit(
        &self,
        before: u64,
        after: u64,
        usable: u64,
    ) -> Result<(), CompactionError> {
        match plan::breaker(before, after, usable, self.this_turn) {
            Some(message) => Err(CompactionError::Breaker(message)),
            None => Ok(()),
        }
    }

    /// Another session starts (`/new`, a resume): its `/context` has no compaction of its own yet.
    pub(crate) fn forget_last_cost(&mut self) {
        self.last_cost = None;
    }

    /// What the last compaction cost.
    pub(crate) fn last_cost(&self) -> Option<CompactionCost> {
        self.last_cost
    }

    /// A compaction finished with the summary `written`, whose message cost `cost`: what it
    /// cost, kept for `/context`.
    pub(crate) fn finished(
        &mut self,
        written: &Written,
        cost: f64,
        background: bool,
    ) -> CompactionCost {
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
    pub(crate) fn has_background(&self) -> bool {
        self.background.is_some()
    }

    /// The summary being written ahead: `Some(true)` once it is written, `Some(false)` while
    /// it is being written; `None` without one (or when it failed).
    pub(crate) fn background_written(&self) -> Option<bool> {
        let b = self.background.as_ref()?;
        if b.written() {
            Some(true)
        } else {
            b.is_writing().then_some(false)
        }
    }

    /// A receiver that changes when the summary being written ahead ends; `None` without one
    /// still being written.
    pub(crate) fn background_ending(&self) -> Option<tokio::sync::watch::Receiver<Option<bool>>> {
        self.background
            .as_ref()
            .filter(|b| b.is_writing())
            .map(Background::ended)
    }

    /// Starts writing the `planned` summary ahead with `model`.
    pub(crate) fn start_background(&mut self, planned: Planned, model: ModelSetup) {
        self.background = Some(Background::start(planned, model));
    }

    /// Takes the summary being written ahead, to install it.
    pub(crate) fn take_background(&mut self) -> Option<Background> {
        self.background.take()
    }

    /// Drops the summary being written ahead (stale, or the history changed under it).
    pub(crate) fn drop_background(&mut self) {
        self.background = None;
    }

    /// Records the compaction notice the front end is to show; whether it changed.
    pub(crate) fn set_notice(
        &mut self,
        notice: Option<pith_protocol::event::CompactionNotice>,
    ) -> bool {
        std::mem::replace(&mut self.notice, notice) != notice
    }

    /// Keeps the summary being written ahead, taken to be checked.
    pub(crate) fn keep_background(&mut self, background: Background) {
        self.background = Some(background);
    }
}

/// What the compactor reads of the session to plan a compaction: the view, the system prompt
/// and tools, the meter (whose estimator caches what it counted), the model, the configuration
/// and the todo list.
pub(super) struct Planner<'a> {
    pub log: &'a SessionLog,
    /// The system prompt and tools of the session's requests (their overhead is estimated).
    pub system: &'a [String],
    pub specs: &'a [pith_protocol::llm::ToolSpec],
    pub meter: &'a mut Meter,
    pub model: &'a ModelSetup,
    pub config: &'a pith_config::Config,
    pub todos: &'a Mutex<Vec<pith_protocol::tool::Todo>>,
    /// The background jobs running as the plan is made (carried so the next agent knows them).
    pub jobs: Vec<pith_protocol::event::Job>,
    /// What each message yields for the records, read once per plan (each tail tried measures
    /// the records again over mostly the same messages).
    pub cache: RecordsCache,
}

/// See [`Planner::cache`].
#[derive(Default)]
pub(crate) struct RecordsCache {
    pub anchors: pith_context::anchors::Cache,
    pub decisions: pith_context::decisions::Cache,
}

/// What a compaction asks of the session it compacts, besides what writing its summary asks
/// ([`SummaryHost`]: a [`Planner`] over the session, its next request, what an overflow says
/// about the window, and hearing what reading a stream brings): the compactor's own state, the
/// session log to save and announce the compaction in (and add the continue message to), and
/// the context figure sent (with a `/context` asked meanwhile answered).
pub(crate) trait CompactionHost: SummaryHost {
    /// What is kept about compactions between them.
    fn compactor(&mut self) -> &mut Compactor;

    /// The session log: the compaction and summary messages are saved and announced there, and
    /// the compaction's events sent (they answer no op, so they go as they are).
    fn log(&mut self) -> &mut SessionLog;

    /// Sends the context figure (and answers a `/context` asked meanwhile).
    fn emit_context(&mut self);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_parts::{Parts, Scripted};
    use pith_protocol::event::{ContextEvent, Event, TurnEnd, TurnEvent};

    #[test]
    fn the_breaker_trips_past_the_second_automatic_compaction_of_a_turn() {
        let mut c = Compactor::default();
        c.count();
        c.count();
        assert!(matches!(
            c.check_breaker(true),
            Err(CompactionError::Breaker(m)) if m.contains("3 times in this turn")
        ));
        // the user's `/compact` is never refused by the count
        assert!(c.check_breaker(false).is_ok());
        c.start_turn();
        assert!(c.check_breaker(true).is_ok());
    }

    #[test]
    fn a_compaction_that_does_not_fit_or_shrink_trips_the_breaker() {
        let c = Compactor::default();
        assert!(c.check_fit(20_000, 4_000, 10_000).is_ok());
        let too_big = c.check_fit(20_000, 12_000, 10_000);
        assert!(matches!(too_big, Err(CompactionError::Breaker(m)) if m.contains("does not fit")));
        let no_shrink = c.check_fit(9_000, 8_500, 10_000);
        assert!(
            matches!(no_shrink, Err(CompactionError::Breaker(m)) if m.contains("did not shrink"))
        );
    }

    #[test]
    fn nothing_to_summarise_is_said_for_compact_and_trips_the_breaker_when_automatic() {
        let cut = plan::Cut {
            previous_summary: None,
            previous_carried: Default::default(),
            summarise: 0..0,
            tail: 0..2,
            tail_start: None,
        };
        let info = pith_config::ModelConfig {
            context: 32_000,
            output: 4_000,
            ..Default::default()
        };
        let limits = pith_context::overflow::Limits::from(&info);
        let budget = Budget::new(&limits, &Default::default());
        let small = budget.summary_cap / 4 - 1;
        let manual = check_worth_compacting(&cut, false, 5_000, 0, &budget);
        assert!(
            matches!(manual, Err(CompactionError::NothingToCompact(m)) if m.starts_with("nothing to compact yet"))
        );
        let auto = check_worth_compacting(&cut, true, budget.usable, 0, &budget);
        assert!(
            matches!(auto, Err(CompactionError::Breaker(m)) if m.contains("nothing is left to compact"))
        );
        // history worth a summary passes; too little of it is refused for `/compact` only
        let worth = plan::Cut {
            summarise: 0..2,
            ..cut
        };
        let enough = budget.summary_cap / 4;
        assert!(check_worth_compacting(&worth, false, 5_000, enough, &budget).is_ok());
        assert!(check_worth_compacting(&worth, false, 5_000, small, &budget).is_err());
        assert!(check_worth_compacting(&worth, true, 5_000, small, &budget).is_ok());
    }

    /// `/compact` on a session of one short prompt, through a turn built from parts: the model
    /// is not asked, nothing changes, and the turn ends saying so.
    #[tokio::test]
    async fn compact_with_too_little_history_asks_no_model_and_changes_nothing() {
        let provider = Scripted::new(Vec::new());
        let mut parts = Parts::new(provider.clone());
        let mut turn = parts.turn();
        turn.push_user_text("hello", false);
        turn.manual_compact(None).await;
        assert!(provider.requests().is_empty());
        assert_eq!(parts.log.view().len(), 1);
        let events = parts.events();
        assert!(events.iter().any(|e| matches!(
            e,
            Event::Turn(TurnEvent::Info { message, .. }) if message.starts_with("nothing worth compacting")
        )));
        assert!(events.iter().any(|e| matches!(
            e,
            Event::Turn(TurnEvent::TurnFinished {
                reason: TurnEnd::NothingToCompact
            })
        )));
    }

    /// `/compact` on a long session, through a turn built from parts: the model writes the
    /// summary (one request), the view restarts from the compaction and the summary followed by
    /// the recent turns, both stored, and the turn ends compacted.
    #[tokio::test]
    async fn compact_replaces_the_history_with_the_summary_the_model_wrote() {
        let summary: String = plan::SECTIONS
            .iter()
            .map(|s| format!("## {s}\nall well\n"))
            .collect();
        let provider = Scripted::new(vec![crate::test_parts::Answer::text(&summary)]);
        let mut parts = Parts::new(provider.clone());
        let mut turn = parts.turn();
        for i in 0..8 {
            // the user's words all fit the carry room, so the last turn stays as the tail
            turn.push_user_text(&format!("question {i}: {}", "words ".repeat(300)), false);
            let mut a = pith_protocol::message::Message::new(
                turn.log.session_id(),
                pith_protocol::message::Role::Assistant,
            );
            a.push(pith_protocol::message::PartKind::Text {
                text: format!("answer {i}: {}", "more ".repeat(700)),
                synthetic: false,
            });
            a.finish = Some(pith_protocol::llm::FinishReason::Stop);
            turn.push_message(a);
        }
        let before = turn.log.view().len();
        turn.manual_compact(None).await;

        assert_eq!(provider.requests().len(), 1);
        let view = parts.log.view();
        assert!(view.len() < before, "{} messages of {before}", view.len());
        assert!(view[1].text().contains("all well"), "{}", view[1].text());
        assert!(view.last().unwrap().text().starts_with("answer 7"));
        let stored = parts.store.load_all(parts.log.session_id()).unwrap();
        assert_eq!(stored.len(), before + 2, "the history is kept in the store");
        let events = parts.events();
        assert!(events.iter().any(|e| matches!(
            e,
            Event::Context(ContextEvent::CompactionStarted { auto: false, .. })
        )));
        assert!(events.iter().any(|e| matches!(
            e,
            Event::Turn(TurnEvent::TurnFinished {
                reason: TurnEnd::Compacted
            })
        )));
    }
}
