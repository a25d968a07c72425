//! The compaction task (ARCHITECTURE.md §6.4): the hidden compaction agent writes a summary of
//! the history before the verbatim tail; pith appends what it carries itself (the user's words,
//! the todo list, the ledger); a user message with a Compaction part and the summary message are
//! saved together, and the view restarts from them.
//!
//! Nothing is saved until the summary is accepted, so an interrupted, failed or killed
//! compaction leaves the session as it was.

use tokio_util::sync::CancellationToken;

use super::compactor::{Job, Planner, SummaryHost, Written, check_worth_compacting, write_summary};
use super::runner::{ModelSetup, Runner};
use super::turn::CONTINUE;
use pith_context::budget::Budget;
use pith_protocol::event::{EngineState, Event};
use pith_protocol::message::{Carried, Message};
use pith_provider::ProviderError;

/// What started a compaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Trigger {
    /// `/compact [focus]`.
    Manual { focus: Option<String> },
    /// The context reached the usable window (at a step's end or before a request).
    Auto,
    /// The provider rejected a request as too long; `prompt_tokens` is what it counted, when
    /// its error said.
    Overflow { prompt_tokens: Option<u64> },
}

impl Trigger {
    pub fn is_auto(&self) -> bool {
        !matches!(self, Trigger::Manual { .. })
    }

    fn focus(&self) -> Option<&str> {
        match self {
            Trigger::Manual { focus } => focus.as_deref(),
            _ => None,
        }
    }
}

/// What the turn does once the context is compacted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Then {
    /// The turn goes on: an automatic compaction adds the continue message.
    Continue,
    /// The turn is over (or this was `/compact`).
    Stop,
}

/// A written summary to install, and what it covers.
pub(super) struct Installed<'a> {
    pub written: Written,
    /// A separate compaction model that wrote it.
    pub setup: Option<&'a ModelSetup>,
    pub auto: bool,
    pub overflow: bool,
    pub focus: Option<String>,
    /// The verbatim tail: the view's messages from here on stay.
    pub tail: std::ops::Range<usize>,
    pub carried: Carried,
    /// Context tokens before, and of them what the summary replaces.
    pub before: u64,
    pub replaced: u64,
    pub then: Then,
    /// Written in the background, ahead of the threshold.
    pub background: bool,
}

/// A request to compact the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct CompactRequest {
    pub trigger: Trigger,
    pub then: Then,
}

/// Why a compaction did not happen or stopped the turn.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CompactionError {
    /// Nothing worth compacting (manual only): said to the user; nothing changed.
    #[error("{0}")]
    NothingToCompact(String),
    /// The breaker: compacting cannot make the conversation fit, or would loop.
    #[error("{0}")]
    Breaker(String),
    #[error("compaction interrupted")]
    Interrupted,
    #[error("compaction model {model}: {reason}")]
    Model { model: String, reason: String },
    #[error("compaction failed: {}", .0.message)]
    Provider(ProviderError),
    #[error("the compaction model returned an empty summary")]
    EmptySummary,
}

impl Runner {
    /// Compacts the session (see the module documentation), with the `pre_compact` hooks
    /// before and the `post_compact` hooks after a compaction that went through.
    pub(super) async fn compact(
        &mut self,
        req: CompactRequest,
        cancel: &CancellationToken,
    ) -> Result<(), CompactionError> {
        let manual = !req.trigger.is_auto();
        self.pre_compact_hooks(manual, req.trigger.focus(), cancel)
            .await;
        let result = self.compact_now(req, cancel).await;
        if result.is_ok() {
            self.post_compact_hooks(manual, cancel).await;
        }
        result
    }

    async fn compact_now(
        &mut self,
        req: CompactRequest,
        cancel: &CancellationToken,
    ) -> Result<(), CompactionError> {
        let auto = req.trigger.is_auto();
        self.compactor.check_breaker(auto)?;
        // A summary written in the background, when there is one, is swapped in at once.
        if req.trigger == Trigger::Auto && self.swap_in_background(req.then, cancel).await? {
            return Ok(());
        }
        // Tail, chunks and the breaker's figures are decided on exact counts.
        if !self.meter.is_exact() {
            self.meter.want_exact();
            self.reset_estimate();
        }
        let budget = self.budget();
        let overhead = self.overhead();
        let before = self.planner().tokens_before(&req.trigger, &budget);

        // What is summarised: everything after the previous summary, before the verbatim tail,
        // which shrinks (to nothing) until the compacted context fits half the usable window.
        let (cut, carried) = self.planner().plan_cut(&budget, overhead, auto);
        let new_tokens = self.planner().tokens_of(cut.summarise.clone());
        check_worth_compacting(&cut, auto, before, new_tokens, &budget)?;
        self.planner()
            .check_request_fits(&carried, overhead, &budget)?;

        let focus = self.announce_compaction(&req.trigger);
        let previous = cut.previous_summary.as_deref();
        // What the summary replaces: by estimate, the history and the previous summary; by the
        // count of record, whatever of the context is neither overhead nor the kept tail.
        let kept_tokens = self.planner().tokens_of(cut.tail.clone());
        let replaced = (new_tokens + previous.map_or(0, |p| self.meter.text(p)))
            .max(before.saturating_sub(overhead + kept_tokens));

        let setup = self.planner().compaction_setup()?;
        let overflow = matches!(req.trigger, Trigger::Overflow { .. });
        let job = Job {
            cut: &cut,
            carried: &carried,
            setup: setup.as_ref(),
            overflowed: overflow,
            focus: focus.as_deref(),
            budget: &budget,
        };
        let written = write_summary(self, job, cancel).await;
        let written = match written {
            Ok(w) => w,
            Err(e) => {
                self.state(EngineState::Thinking, None);
                return Err(e);
            }
        };
        self.install(Installed {
            written,
            setup: setup.as_ref(),
            auto,
            overflow,
            focus,
            tail: cut.tail.clone(),
            carried,
            before,
            replaced,
            then: req.then,
            background: false,
        })
    }

    /// Counts the compaction and tells the front end it started; returns its focus.
    fn announce_compaction(&mut self, trigger: &Trigger) -> Option<String> {
        self.compactor.count();
        let focus = trigger.focus().map(str::to_string);
        self.emit(Event::CompactionStarted {
            auto: trigger.is_auto(),
            overflow: matches!(trigger, Trigger::Overflow { .. }),
            focus: focus.clone(),
        });
        self.state(EngineState::Compacting, None);
        focus
    }

    /// Saves a written summary: the compaction and summary messages replace everything before
    /// `tail` in the view (nothing was saved before this point).
    pub(super) fn install(&mut self, i: Installed<'_>) -> Result<(), CompactionError> {
        let budget = self.budget();
        let overhead = self.overhead();
        let mut planner = self.planner();
        let kept_tokens = planner.tokens_of(i.tail.clone());
        let tail_start = planner.log.view().get(i.tail.start).map(|m| m.id.clone());
        let summary = planner.fit_summary(i.written.text.clone(), i.replaced, &budget);
        let mut carried = i.carried.clone();
        let taken = overhead + planner.meter.text(&summary) + kept_tokens;
        planner.carry_after_summary(&mut carried, &summary, taken, &budget);
        let (c, s) = planner.summary_messages(&i, summary, &carried, tail_start.clone());

        // A manual compaction that would not shrink the context changes nothing.
        let before = i.before;
        let after = overhead + self.meter.message(&c) + self.meter.message(&s) + kept_tokens;
        if !i.auto && after >= before {
            self.state(EngineState::Idle, None);
            return Err(CompactionError::NothingToCompact(format!(
                "compaction would not shrink the context ({before} → ~{after} tokens); it stays as it is"
            )));
        }
        self.restart_view(c, s.clone(), i.tail.clone(), tail_start);
        self.compaction_done(&i, &s, &budget)
    }

    /// Saves and announces the compaction and summary messages; the view restarts from them,
    /// followed by the kept `tail`.
    fn restart_view(
        &mut self,
        c: Message,
        s: Message,
        tail: std::ops::Range<usize>,
        tail_start: Option<String>,
    ) {
        self.log.save_message(&c);
        self.log.save_message(&s);
        self.log.emit(Event::Message { message: c.clone() });
        self.log.emit_message(&s);
        self.log.add_cost(s.cost);
        self.log.restart_view(vec![c, s], tail);
        let point = tail_start.unwrap_or_else(|| self.log.view()[0].id.clone());
        self.log.set_compaction_point(point);
        self.touch_session();
        self.reset_estimate();
    }

    /// After the view restarted: logs and reports what the compaction did and cost, adds the
    /// continue message an automatic compaction mid-turn needs, and trips the breaker when
    /// compacting did not make the conversation fit.
    fn compaction_done(
        &mut self,
        i: &Installed<'_>,
        s: &Message,
        budget: &Budget,
    ) -> Result<(), CompactionError> {
        let (before, written) = (i.before, &i.written);
        let after = self.meter.used();
        tracing::info!(
            "compacted: {before} -> {after} tokens in {} model calls (summary {} tokens, tail {} messages)",
            written.calls,
            self.meter.text(&s.text()),
            self.log.view().len() - 2
        );
        let cost = self.compactor.finished(written, s.cost, i.background);
        self.emit(Event::CompactionFinished {
            summary_message_id: s.id.clone(),
            before,
            after,
            model_calls: written.calls,
            cost,
        });
        self.emit_context();
        if i.then == Then::Continue && i.auto && !self.planner().ends_with_user_request() {
            self.push_user_text(CONTINUE, true);
            self.emit_context();
        }
        if i.auto {
            self.compactor.check_fit(before, after, budget.usable)?;
        }
        Ok(())
    }

    /// What the compactor reads of the session to plan (see [`Planner`]).
    pub(super) fn planner(&mut self) -> Planner<'_> {
        Planner {
            log: &self.log,
            meter: &mut self.meter,
            model: &self.model,
            config: &self.opts.config,
            todos: &self.tools.state().todos,
        }
    }
}

impl SummaryHost for Runner {
    fn planner(&mut self) -> Planner<'_> {
        Runner::planner(self)
    }

    fn session_request(&self) -> pith_protocol::llm::ChatRequest {
        self.build_request(false)
    }

    fn estimate_request(&mut self) -> u64 {
        Runner::estimate_request(self)
    }

    fn learn_window(&mut self, err: &ProviderError) {
        Runner::learn_window(self, err, None);
    }
}
