//! Planning a compaction over the session's view: what it replaces and keeps, where the
//! verbatim tail starts, what pith carries across it itself, and whether compacting can help at
//! all (ARCHITECTURE.md §6.4, §6.6).

use pith_context::budget::Budget;
use pith_context::carry;
use pith_context::compaction as plan;
use pith_context::left_view;
use pith_context::retain;
use pith_context::step;
use pith_context::view::is_turn_start;
use pith_protocol::message::{Carried, CarrySource, Message, PartKind, Role};

use super::Planner;
use super::Written;
use super::ahead::{DEFAULT_START, MOST_AFTER_SWAP};
use crate::compaction::{CompactionError, Trigger};
use crate::model::ModelSetup;
use crate::request_frame::request_frame;

/// How the user's sentences the summary left out, carried after all, are introduced.
const MISSED_HEADER: &str = "[From older messages of the user's that the summary does not cover:]";

impl Planner<'_> {
    /// Estimated tokens of the system prompt and tool definitions, corrected by the learned
    /// ratio like every other estimate (a fixed figure would leave the bulk of a small request
    /// uncorrected after a compaction, a prune or a resume).
    pub(crate) fn overhead(&mut self) -> u64 {
        let mode = self.config.permission_mode;
        let (system, tools) = request_frame(self.system, self.specs, mode, self.config.memory.tool);
        self.meter.request_overhead(&system, &tools)
    }

    /// An estimate of what the next request would occupy.
    pub(crate) fn estimate_request(&mut self) -> u64 {
        self.overhead() + self.estimate_content()
    }

    /// An estimate of the next request's messages (without system prompt and tools).
    pub(crate) fn estimate_content(&mut self) -> u64 {
        let mut total = 0;
        for m in self.log.view() {
            total += self.meter.message(m);
        }
        total
    }

    /// Recomputes the context figure as an estimate of the next request.
    pub(crate) fn reset_estimate(&mut self) {
        let estimate = self.estimate_request();
        self.meter.on_reset(estimate);
    }

    /// The window-dependent figures of context management for the session's model.
    pub(crate) fn budget(&self) -> Budget {
        Budget::new(&self.model.limits, &self.config.compaction)
    }

    /// The running figure has reached the usable window.
    pub(crate) fn overflowing(&self) -> bool {
        pith_context::overflow::is_overflow(
            self.meter.used(),
            &self.model.limits,
            &self.config.compaction,
        )
    }

    /// The context before compacting: what the provider counted of a request it rejected (at
    /// least the window without a count), else the session's figure.
    pub(crate) fn tokens_before(&self, trigger: &Trigger, budget: &Budget) -> u64 {
        match trigger {
            // What the provider counted is the real figure; without it, at least the window.
            Trigger::Overflow { prompt_tokens } => {
                prompt_tokens.unwrap_or_else(|| self.meter.used().max(budget.usable))
            }
            _ => self.meter.used(),
        }
    }

    /// The estimated tokens of the view's messages in `range`.
    pub(crate) fn tokens_of(&mut self, range: std::ops::Range<usize>) -> u64 {
        let estimator = self.meter.estimator_mut();
        self.log.view()[range]
            .iter()
            .map(|m| estimator.message(m))
            .sum()
    }

    /// The request being worked on travels whole: when it alone cannot fit, no summary helps.
    pub(crate) fn check_request_fits(
        &self,
        carried: &Carried,
        overhead: u64,
        budget: &Budget,
    ) -> Result<(), CompactionError> {
        if let Some(r) = &carried.current_request {
            let need = overhead + self.meter.text(r);
            if need >= budget.usable {
                return Err(CompactionError::Breaker(format!(
                    "Stopped: the current request with the system prompt (~{} tokens) does \
                     not fit the {} tokens this model can use, and it is never summarised away — \
                     shorten it, or use a model with a larger context window.",
                    pith_protocol::text::count(need),
                    pith_protocol::text::count(budget.usable)
                )));
            }
        }
        Ok(())
    }

    /// The separate `compaction.model`, when one is configured other than the session's.
    pub(crate) fn compaction_setup(&self) -> Result<Option<ModelSetup>, CompactionError> {
        match &self.config.compaction.model {
            Some(name) if name != &self.model.name => match ModelSetup::build(self.config, name) {
                Ok((s, _)) => Ok(Some(s)),
                Err(source) => Err(CompactionError::Model {
                    model: name.clone(),
                    source,
                }),
            },
            _ => Ok(None),
        }
    }

    /// Where the verbatim tail starts, and what pith carries: the largest tail (whole turns, at
    /// most `tail_max`) with which the compacted context — overhead, a summary at its cap, the
    /// carried record, the tail — fits half the usable window. Fewer turns in the tail means
    /// more user messages to carry, so the two are planned together.
    pub(crate) fn plan_cut(
        &mut self,
        budget: &Budget,
        overhead: u64,
        auto: bool,
    ) -> (plan::Cut, Carried) {
        self.plan_cut_to(budget, overhead, auto, budget.target_after)
    }

    /// [`Planner::plan_cut`] for a compacted context of at most `target` tokens. The user's
    /// words come before the tail: while they do not all fit, the tail gives way to them.
    pub(crate) fn plan_cut_to(
        &mut self,
        budget: &Budget,
        overhead: u64,
        auto: bool,
        target: u64,
    ) -> (plan::Cut, Carried) {
        let mut tail_budget = budget.tail_after(overhead, 0);
        for _ in 0..16 {
            let cut = plan::cut(self.log.view(), tail_budget, self.meter.estimator_mut());
            let tail_tokens: u64 = self.log.view()[cut.tail.clone()]
                .iter()
                .map(|m| self.meter.message(m))
                .sum();
            let taken = overhead + budget.summary_cap + tail_tokens;
            let carried = self.carried(&cut, budget, auto, (target, taken));
            // The left-the-view note has a budget of its own beside the half (`left_view`).
            let carried_tokens = self.meter.text(&carry::render(&without_note(&carried)));
            let planned = taken + carried_tokens;
            tracing::debug!(
                tail_budget,
                overhead,
                carried_tokens,
                tail_tokens,
                planned,
                target,
                uncarried = carried.uncarried.len(),
                "compaction: planning the tail"
            );
            if cut.tail.is_empty() {
                return self.with_spare(cut, carried, budget, target.saturating_sub(planned));
            }
            if planned > target {
                tail_budget = tail_tokens.saturating_sub(planned - target + 1);
            } else if !carried.uncarried.is_empty() {
                let need: u64 = carried
                    .uncarried
                    .iter()
                    .map(|w| self.meter.text(&w.text) + 8)
                    .sum();
                tail_budget = tail_tokens.saturating_sub(need.max(1));
            } else {
                return self.with_spare(cut, carried, budget, target.saturating_sub(planned));
            }
        }
        let cut = plan::cut(self.log.view(), 0, self.meter.estimator_mut());
        let carried = self.carried(&cut, budget, auto, (target, overhead + budget.summary_cap));
        (cut, carried)
    }

    /// The plan's `spare` tokens (what the compacted context may still take once everything is
    /// placed) go to the records that grow with the history, in equal shares: the anchor index,
    /// the model's decisions and the frontier are taken again with their budgets raised, so a
    /// small window fills its half rather than leaving it empty.
    fn with_spare(
        &mut self,
        cut: plan::Cut,
        mut c: Carried,
        budget: &Budget,
        spare: u64,
    ) -> (plan::Cut, Carried) {
        let prev = cut.previous_carried.clone();
        self.fill_spare(&mut c, cut.summarise.clone(), &prev, budget, spare);
        (cut, c)
    }

    /// See [`Planner::with_spare`]: `summarise` is the range of the view the summary stands
    /// for, `prev` what the compaction before it carried.
    pub(crate) fn fill_spare(
        &mut self,
        c: &mut Carried,
        summarise: std::ops::Range<usize>,
        prev: &Carried,
        budget: &Budget,
        spare: u64,
    ) {
        const WORTH_IT: u64 = 48;
        if spare < WORTH_IT {
            return;
        }
        let share = spare / 3;
        let summarised = &self.log.view()[summarise];
        let est = self.meter.estimator();
        c.decisions = pith_context::decisions::index_cached(
            summarised,
            &prev.decisions,
            budget.decisions + share,
            est,
            &mut self.cache.decisions,
        );
        c.frontier = pith_context::frontier::build(
            self.log.view(),
            c.todos.as_deref(),
            &prev.frontier,
            budget.frontier + share,
            est,
        );
        // anchors last: what the ledger and the frontier already say is not said twice
        let known = carry::render(&Carried {
            ledger: c.ledger.clone(),
            frontier: c.frontier.clone(),
            ..Carried::default()
        });
        c.anchors = pith_context::anchors::index_cached(
            summarised,
            &prev.anchors,
            budget.anchors + share,
            est,
            &known,
            &mut self.cache.anchors,
        );
    }

    /// The range of the view a summary installed before `tail_start` stands for, and what the
    /// compaction before it carried.
    pub(crate) fn summarised_before(&self, tail_start: usize) -> (std::ops::Range<usize>, Carried) {
        let view = self.log.view();
        let (start, prev) = plan::previous_compaction(view);
        (start..tail_start.max(start).min(view.len()), prev)
    }

    /// What pith carries across this compaction itself: the previous compaction's record merged
    /// with the user's messages, the todo list and the ledger of the history being summarised.
    /// `room` is what the compacted context may take and what the rest of it is planned to take
    /// (overhead, summary, tail): the user's messages get what that leaves
    /// ([`Budget::carry_room`]).
    fn carried(
        &mut self,
        cut: &plan::Cut,
        budget: &Budget,
        auto: bool,
        room: (u64, u64),
    ) -> Carried {
        let (target, taken) = room;
        let log = self.log;
        let summarised = &log.view()[cut.summarise.clone()];
        let prev = &cut.previous_carried;
        let (mut new, current) = carry::user_messages(summarised);
        // With no verbatim tail, the request being worked on is among the summarised messages:
        // during a turn it travels whole, outside the budget.
        let current_request = match current {
            Some(i) if auto && cut.tail.is_empty() => Some(new.remove(i).text),
            _ => None,
        };
        let sources = carry_sources(prev, new);
        let records = self.records(summarised, prev, budget);
        let est = self.meter.estimator();
        let left = left_view::items(summarised, est);
        // loaded skills: word for word within an eighth of `usable`, by name beyond (§4.7)
        let skills =
            pith_context::skills::carried(summarised, &prev.skills, budget.usable / 8, est);
        let mut c = Carried {
            skills,
            current_request,
            sources,
            previous_dropped: prev.dropped_user_messages,
            ..records
        };
        if cut.tail.is_empty() {
            let base = self.meter.text(&carry::render(&c));
            c.step = step::render(summarised, step_room(budget, target, taken + base), est);
        }
        let base = self.meter.text(&carry::render(&c));
        self.carry_users(&mut c, budget.carry_room(target, taken + base));
        let est = self.meter.estimator();
        c.left_view = left_view::merge(
            left,
            summarised.len(),
            prev.left_view.as_ref(),
            budget.left_view,
            est,
        );
        c
    }

    /// The records carried across a compaction of `summarised`: the file ledger, the todos, the
    /// decisions, the frontier and the anchors (merged with what the previous one carried).
    fn records(&mut self, summarised: &[Message], prev: &Carried, budget: &Budget) -> Carried {
        let ledger = carry::bound_ledger(
            carry::merge_ledgers(&prev.ledger, &carry::ledger_of(summarised)),
            budget.ledger,
            self.meter.estimator(),
        );
        let todos = self
            .todos
            .lock()
            .ok()
            .map(|t| t.clone())
            .filter(|t| !t.is_empty())
            .or_else(|| prev.todos.clone());
        let est = self.meter.estimator();
        let decisions = pith_context::decisions::index_cached(
            summarised,
            &prev.decisions,
            budget.decisions,
            est,
            &mut self.cache.decisions,
        );
        let frontier = pith_context::frontier::build(
            self.log.view(),
            todos.as_deref(),
            &prev.frontier,
            budget.frontier,
            est,
        );
        let known = carry::render(&Carried {
            ledger: ledger.clone(),
            frontier: frontier.clone(),
            ..Carried::default()
        });
        let anchors = pith_context::anchors::index_cached(
            summarised,
            &prev.anchors,
            budget.anchors,
            est,
            &known,
            &mut self.cache.anchors,
        );
        Carried {
            todos,
            ledger,
            decisions,
            anchors,
            frontier,
            jobs: self.running_jobs(),
            ..Carried::default()
        }
    }

    /// The background jobs still running, as the record carries them.
    fn running_jobs(&self) -> Vec<pith_protocol::event::Job> {
        self.jobs
            .iter()
            .filter(|j| j.state == pith_protocol::event::JobState::Running)
            .take(pith_context::carry::JOBS_MAX)
            .cloned()
            .collect()
    }

    /// Once the user's messages to carry are final: those the carry budget cut are listed in
    /// the left-the-view note as its newest items.
    pub(crate) fn note_cut_messages(&self, c: &mut Carried, budget: &Budget) {
        let est = self.meter.estimator();
        let cut = left_view::cut_messages(&c.uncarried, est);
        c.left_view = left_view::with_cut_messages(c.left_view.take(), cut, budget.left_view, est);
    }

    /// Chooses the user messages `c` carries from its sources, in `room` tokens.
    pub(crate) fn carry_users(&self, c: &mut Carried, room: u64) {
        let r = retain::retain(&c.sources, c.previous_dropped, room, self.meter.estimator());
        c.user_messages = r.messages;
        c.user_message_ids = r.ids;
        c.dropped_user_messages = r.dropped;
        c.uncarried = r.uncarried;
    }

    /// Once the summary is written: the user's messages are carried again into the room the
    /// summary left (its blocks get more lines when it is short), and each of the user's
    /// sentences that is neither carried nor covered by the summary is carried after all,
    /// within the room the summary left of its cap.
    pub(crate) fn carry_after_summary(
        &self,
        c: &mut Carried,
        summary: &str,
        taken: u64,
        budget: &Budget,
    ) {
        if c.sources.is_empty() {
            return;
        }
        let est = self.meter.estimator();
        let mut base = without_note(c);
        base.user_messages.clear();
        base.dropped_user_messages = 0;
        let room = budget.carry_room(budget.target_after, taken + est.text(&carry::render(&base)));
        self.carry_users(c, room);
        if c.uncarried.is_empty() {
            return;
        }
        let carried = c.user_messages.join("\n");
        let words: Vec<&str> = c.uncarried.iter().map(|w| w.text.as_str()).collect();
        let missing = retain::missing_sentences(&words, &carried, summary);
        let left = budget.summary_cap.saturating_sub(est.text(summary));
        let keep = retain::most_worth(&missing, left, est);
        if !keep.is_empty() {
            tracing::info!(
                "{} of the user's sentences were neither carried nor in the summary; carrying them",
                keep.len()
            );
            c.user_messages
                .insert(0, format!("{MISSED_HEADER}\n{}", keep.join("\n")));
            c.user_message_ids.insert(0, None);
        }
    }

    /// True when the view ends with a message the user typed (so the model will answer it).
    pub(crate) fn ends_with_user_request(&self) -> bool {
        self.log.view().last().is_some_and(|m| {
            m.role == Role::User
                && m.compaction().is_none()
                && m.parts.iter().any(|p| {
                    matches!(
                        p.kind,
                        PartKind::Text {
                            synthetic: false,
                            ..
                        }
                    )
                })
        })
    }

    /// Where background compaction starts, as a share of the usable window; `None`: never.
    pub(crate) fn background_start(&self) -> Option<f64> {
        let c = &self.config.compaction;
        if !c.auto || self.model.limits.context == 0 {
            return None;
        }
        // A separate compaction model writes with the dedicated request, in the foreground.
        if c.model.as_ref().is_some_and(|m| m != &self.model.name) {
            return None;
        }
        let start = match c.background {
            Some(s) => s,
            None if self.model.local => return None,
            None => DEFAULT_START,
        };
        (start > 0.0 && start < 1.0).then_some(start)
    }

    /// What pith carries across the swap, as planned with the summary and brought up to date:
    /// a request carried whole that is no longer the current one (the view's messages from
    /// `n` on start a turn) joins the user's messages; the todo list is the current one, and
    /// so is the execution frontier (the planned one merged with what ran since).
    pub(crate) fn carried_at_swap(&self, mut carried: Carried, n: usize) -> Carried {
        if self.log.view()[n..].iter().any(is_turn_start)
            && let Some(r) = carried.current_request.take()
        {
            carried.sources.push(pith_protocol::message::CarrySource {
                id: None,
                text: r.clone(),
                pasted: Vec::new(),
            });
            carried.user_messages.insert(0, r);
            if !carried.user_message_ids.is_empty() {
                carried.user_message_ids.insert(0, None);
            }
        }
        if let Ok(t) = self.todos.lock()
            && !t.is_empty()
        {
            carried.todos = Some(t.clone());
        }
        carried.jobs = self.running_jobs();
        carried.frontier = pith_context::frontier::build(
            self.log.view(),
            carried.todos.as_deref(),
            &carried.frontier,
            self.budget().frontier,
            self.meter.estimator(),
        );
        // The step in hand was answered by what came since: those messages stay whole.
        if n < self.log.view().len() {
            carried.step = None;
        }
        carried
    }

    /// Whether swapping in `written`, covering the view's first `n` messages and carrying
    /// `carried`, would leave more than [`MOST_AFTER_SWAP`] of the usable window.
    pub(crate) fn swap_leaves_too_much(
        &mut self,
        written: &Written,
        carried: &Carried,
        n: usize,
        budget: &Budget,
        overhead: u64,
    ) -> bool {
        let estimator = self.meter.estimator_mut();
        let kept: u64 = self.log.view()[n..]
            .iter()
            .map(|m| estimator.message(m))
            .sum();
        let summary = self.meter.text(&written.text).min(budget.summary_cap);
        let after = overhead + summary + self.meter.text(&carry::render(carried)) + kept;
        if after as f64 > MOST_AFTER_SWAP * budget.usable as f64 {
            tracing::info!(
                after,
                "background summary leaves too much; compacting in the foreground"
            );
            return true;
        }
        false
    }
}

/// The room for the step in hand, when the verbatim tail kept none of the current turn: what
/// the tail would have had — what `target` leaves after `taken` and the least the user's
/// messages get, at most [`Budget::tail_max`] — and never less than a quarter of that, so each
/// result at least shows its edges and its recall id.
fn step_room(budget: &Budget, target: u64, taken: u64) -> u64 {
    target
        .saturating_sub(taken + budget.carry_user_min)
        .clamp(budget.tail_max / 4, budget.tail_max.max(1))
}

/// `c` without its left-the-view note: the note has a budget of its own (`Budget::left_view`,
/// a twenty-fourth of the usable window) beside the half a compacted context is planned in, so
/// it takes room from neither the user's words nor the tail.
fn without_note(c: &Carried) -> Carried {
    Carried {
        left_view: None,
        ..c.clone()
    }
}

/// The user's messages to carry: what an earlier compaction carried (keeping the id of its
/// message, when it knew it, and its current request) followed by the newly summarised ones.
fn carry_sources(prev: &Carried, new: Vec<CarrySource>) -> Vec<CarrySource> {
    // what an earlier compaction carried keeps the id of its message, when it knew it
    let same_ids = prev.user_message_ids.len() == prev.user_messages.len();
    let mut sources: Vec<CarrySource> = prev
        .user_messages
        .iter()
        .enumerate()
        .map(|(i, t)| (t, prev.user_message_ids.get(i).filter(|_| same_ids)))
        .chain(prev.current_request.iter().map(|t| (t, None)))
        .map(|(t, id)| CarrySource {
            id: id.cloned().flatten(),
            text: t.clone(),
            pasted: Vec::new(),
        })
        .collect();
    sources.extend(new);
    sources
}

#[cfg(test)]
#[path = "planning_tests.rs"]
mod tests;
