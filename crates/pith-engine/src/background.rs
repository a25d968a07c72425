//! Background compaction (ARCHITECTURE.md §6.6): from an earlier point of the usable window
//! (`compaction.background`), the summary of everything before the verbatim tail is written
//! while the session goes on. The request is the session's own next request with the summary
//! instruction appended (the cache-friendly form), sent from a task of its own. When the
//! threshold is reached the finished summary is swapped in at once — the messages it covers
//! have not changed — and what came since stays word for word. A summary that is not ready is
//! waited for (it is already under way); one that is stale (the covered messages changed: an
//! undo, a manual compaction, another session or model), failed, or leaves too much is
//! discarded and the compaction happens in the foreground as before. One at a time; never when
//! `auto` is off.

use tokio_util::sync::CancellationToken;

use super::compaction::{CompactionError, Installed, Then};
use super::compactor::{Planned, inline_budget_of};
use super::runner::Runner;
use pith_context::budget::Budget;
use pith_protocol::event::EngineState;
use pith_protocol::llm::{ChatMessage, UserContent};

impl Runner {
    /// At a step's end: starts the background summary when the context has passed the start
    /// and none is under way (a stale one is dropped first).
    pub(super) fn maybe_start_background(&mut self) {
        let Some(start) = self.planner().background_start() else {
            self.compactor.drop_background();
            return;
        };
        self.compactor
            .drop_stale_background(self.log.view(), &self.model);
        let budget = self.budget();
        let used = self.meter.used();
        if self.compactor.has_background() || (used as f64) < start * budget.usable as f64 {
            return;
        }
        if self.overflowing() {
            return;
        }
        if let Some(planned) = self.plan_background(&budget, used) {
            self.start_background(planned, &budget, used);
        }
    }

    /// Plans the background summary at `used` tokens: the summary will be swapped in when the
    /// threshold is reached, so the tail planned now leaves room for everything that comes
    /// until then. `None` when there is nothing to summarise or no room for the request.
    fn plan_background(&mut self, budget: &Budget, used: u64) -> Option<Planned> {
        let overhead = self.overhead();
        let room = budget.usable.saturating_sub(used);
        let target = budget
            .target_after
            .saturating_sub(room)
            .max(overhead + budget.summary_cap);
        let (cut, carried) = self.planner().plan_cut_to(budget, overhead, true, target);
        if cut.summarise.is_empty() {
            return None;
        }
        let mut instruction = self.planner().inline_instruction(&cut, None);
        if let Some(w) = pith_context::compaction::words_note(
            &carried.uncarried,
            budget.summary_cap,
            self.meter.estimator(),
        ) {
            instruction = format!("{instruction}\n\n{w}");
        }
        let inline = inline_budget_of(self, budget, &instruction)?;
        let mut request = self.build_request(false);
        request.messages.push(ChatMessage::User {
            content: vec![UserContent::Text { text: instruction }],
        });
        request.max_tokens = Some(inline.summary_cap.min(u64::from(u32::MAX)) as u32);
        let covered: Vec<String> = self.log.view()[..cut.tail.start]
            .iter()
            .map(|m| m.id.clone())
            .collect();
        Some(Planned {
            covered,
            carried,
            request,
            cap: inline.summary_cap,
        })
    }

    /// Starts writing the planned summary in a task of its own; the compactor keeps it.
    fn start_background(&mut self, planned: Planned, budget: &Budget, used: u64) {
        let covered = planned.covered.len();
        self.compactor.start_background(planned, &self.model);
        tracing::info!(
            used,
            covered,
            "background summary started at {:.0}% of the usable window",
            100.0 * used as f64 / budget.usable.max(1) as f64
        );
    }

    /// At the threshold: swaps in the background summary when there is one that still covers
    /// the start of the view (waiting for it if it is still being written). `Ok(true)`: the
    /// context is compacted; `Ok(false)`: compact in the foreground.
    pub(super) async fn swap_in_background(
        &mut self,
        then: Then,
        cancel: &CancellationToken,
    ) -> Result<bool, CompactionError> {
        let Some(mut b) = self.compactor.take_background() else {
            return Ok(false);
        };
        if !b.covers(self.log.view(), &self.model) {
            tracing::info!("background summary is stale; compacting in the foreground");
            return Ok(false);
        }
        if b.is_writing() {
            self.state(EngineState::Compacting, None);
        }
        let Some(written) = b.finished(cancel).await? else {
            return Ok(false);
        };
        let n = b.covered();
        let carried = self.planner().carried_at_swap(b.take_carried(), n);
        let (budget, overhead) = (self.budget(), self.overhead());
        if self
            .planner()
            .swap_leaves_too_much(&written, &carried, n, &budget, overhead)
        {
            // the summary is discarded, its cost counted
            self.log
                .add_cost(pith_provider::cost::cost(&written.usage, &self.model.info));
            return Ok(false);
        }
        let before = self.meter.used();
        let replaced = self.planner().tokens_of(0..n);
        self.compactor.count();
        self.emit(pith_protocol::event::Event::CompactionStarted {
            auto: true,
            overflow: false,
            focus: None,
        });
        let tail = n..self.log.view().len();
        self.install(Installed {
            written,
            setup: None,
            auto: true,
            overflow: false,
            focus: None,
            tail,
            carried,
            before,
            replaced,
            then,
            background: true,
        })?;
        Ok(true)
    }
}
