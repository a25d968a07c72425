//! The compaction task (ARCHITECTURE.md §6.4): the hidden compaction agent writes a summary of
//! the history before the verbatim tail; pith appends what it carries itself (the user's words,
//! the todo list, the ledger); a user message with a Compaction part and the summary message are
//! saved together, and the view restarts from them.
//!
//! Nothing is saved until the summary is accepted, so an interrupted, failed or killed
//! compaction leaves the session as it was.

use tokio_util::sync::CancellationToken;

use super::runner::{ModelSetup, Runner};
use super::turn::CONTINUE;
use pith_context::budget::Budget;
use pith_context::carry;
use pith_context::compaction as plan;
use pith_context::retain;
use pith_protocol::event::{CompactionCost, EngineState, Event};
use pith_protocol::llm::FinishReason;
use pith_protocol::message::{
    Agent, Carried, CarrySource, CompactionPart, Message, PartKind, Role, now_ms,
};
use pith_provider::ProviderError;

/// How the user's sentences the summary left out, carried after all, are introduced.
const MISSED_HEADER: &str = "[From older messages of the user's that the summary does not cover:]";

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
    fn is_auto(&self) -> bool {
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
    pub written: super::summarise::Written,
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

/// What the runner keeps about compactions between them.
#[derive(Default)]
pub(super) struct Compactions {
    /// Compactions in the current user turn (the breaker's count).
    this_turn: u32,
    /// What the last compaction cost (`/context`).
    last_cost: Option<CompactionCost>,
    /// A summary being written ahead of the threshold.
    background: Option<super::background::Background>,
}

impl Compactions {
    /// A user turn starts: the breaker counts from zero.
    pub fn start_turn(&mut self) {
        self.this_turn = 0;
    }

    /// Compactions in the current user turn.
    pub fn this_turn(&self) -> u32 {
        self.this_turn
    }

    /// A compaction was installed in this turn.
    pub fn count(&mut self) {
        self.this_turn += 1;
    }

    /// What the last compaction cost.
    pub fn last_cost(&self) -> Option<CompactionCost> {
        self.last_cost
    }

    pub fn set_last_cost(&mut self, cost: CompactionCost) {
        self.last_cost = Some(cost);
    }

    /// The summary being written ahead, if any.
    pub fn background(&self) -> Option<&super::background::Background> {
        self.background.as_ref()
    }

    pub fn set_background(&mut self, b: super::background::Background) {
        self.background = Some(b);
    }

    /// Takes the summary being written ahead, to install it.
    pub fn take_background(&mut self) -> Option<super::background::Background> {
        self.background.take()
    }

    /// Drops the summary being written ahead (stale, or the history changed under it).
    pub fn drop_background(&mut self) {
        self.background = None;
    }
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
        if auto && self.compactions.this_turn() >= 2 {
            return Err(CompactionError::Breaker(
                plan::breaker(u64::MAX, 0, 0, self.compactions.this_turn() + 1).unwrap_or_default(),
            ));
        }
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
        let before = self.tokens_before(&req.trigger, &budget);

        // What is summarised: everything after the previous summary, before the verbatim tail,
        // which shrinks (to nothing) until the compacted context fits half the usable window.
        let (cut, carried) = self.plan_cut(&budget, overhead, auto);
        let new_tokens = self.tokens_of(cut.summarise.clone());
        check_worth_compacting(&cut, auto, before, new_tokens, &budget)?;
        self.check_request_fits(&carried, overhead, &budget)?;

        let focus = self.announce_compaction(&req.trigger);
        let previous = cut.previous_summary.as_deref();
        // What the summary replaces: by estimate, the history and the previous summary; by the
        // count of record, whatever of the context is neither overhead nor the kept tail.
        let kept_tokens = self.tokens_of(cut.tail.clone());
        let replaced = (new_tokens + previous.map_or(0, |p| self.meter.text(p)))
            .max(before.saturating_sub(overhead + kept_tokens));

        let setup = self.compaction_setup()?;
        let overflow = matches!(req.trigger, Trigger::Overflow { .. });
        let written = self
            .write_summary(
                &cut,
                &carried,
                setup.as_ref(),
                overflow,
                focus.as_deref(),
                &budget,
                cancel,
            )
            .await;
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

    /// The context before compacting: what the provider counted of a request it rejected (at
    /// least the window without a count), else the session's figure.
    fn tokens_before(&self, trigger: &Trigger, budget: &Budget) -> u64 {
        match trigger {
            // What the provider counted is the real figure; without it, at least the window.
            Trigger::Overflow { prompt_tokens } => {
                prompt_tokens.unwrap_or_else(|| self.meter.used().max(budget.usable))
            }
            _ => self.meter.used(),
        }
    }

    /// The estimated tokens of the view's messages in `range`.
    fn tokens_of(&mut self, range: std::ops::Range<usize>) -> u64 {
        let estimator = self.meter.estimator_mut();
        self.log.view()[range]
            .iter()
            .map(|m| estimator.message(m))
            .sum()
    }

    /// The request being worked on travels whole: when it alone cannot fit, no summary helps.
    fn check_request_fits(
        &self,
        carried: &Carried,
        overhead: u64,
        budget: &Budget,
    ) -> Result<(), CompactionError> {
        if let Some(r) = &carried.current_request {
            let need = overhead + self.meter.text(r);
            if need >= budget.usable {
                return Err(CompactionError::Breaker(format!(
                    "Stopped: the current request with the system prompt (~{need} tokens) does \
                     not fit the {} tokens this model can use, and it is never summarised away — \
                     shorten it, or use a model with a larger context window.",
                    budget.usable
                )));
            }
        }
        Ok(())
    }

    /// Counts the compaction and tells the front end it started; returns its focus.
    fn announce_compaction(&mut self, trigger: &Trigger) -> Option<String> {
        self.compactions.count();
        let focus = trigger.focus().map(str::to_string);
        self.emit(Event::CompactionStarted {
            auto: trigger.is_auto(),
            overflow: matches!(trigger, Trigger::Overflow { .. }),
            focus: focus.clone(),
        });
        self.state(EngineState::Compacting, None);
        focus
    }

    /// The separate `compaction.model`, when one is configured other than the session's.
    fn compaction_setup(&self) -> Result<Option<ModelSetup>, CompactionError> {
        match &self.opts.config.compaction.model {
            Some(name) if name != &self.model.name => {
                match ModelSetup::build(&self.opts.config, name) {
                    Ok((s, _)) => Ok(Some(s)),
                    Err(e) => Err(CompactionError::Model {
                        model: name.clone(),
                        reason: crate::error::with_causes(&e),
                    }),
                }
            }
            _ => Ok(None),
        }
    }

    /// Saves a written summary: the compaction and summary messages replace everything before
    /// `tail` in the view (nothing was saved before this point).
    pub(super) fn install(&mut self, i: Installed<'_>) -> Result<(), CompactionError> {
        let budget = self.budget();
        let overhead = self.overhead();
        let kept_tokens = self.tokens_of(i.tail.clone());
        let tail_start = self.log.view().get(i.tail.start).map(|m| m.id.clone());
        let summary = self.fit_summary(i.written.text.clone(), i.replaced, &budget);
        let mut carried = i.carried.clone();
        let taken = overhead + self.meter.text(&summary) + kept_tokens;
        self.carry_after_summary(&mut carried, &summary, taken, &budget);
        let (c, s) = self.summary_messages(&i, summary, &carried, tail_start.clone());

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

    /// The summary as it is installed: a summary longer than its cap (a server that ignores the
    /// cap) or than what it replaces is never taken as it is.
    fn fit_summary(&self, summary: String, replaced: u64, budget: &Budget) -> String {
        let most = replaced.min(budget.summary_cap);
        if self.meter.text(&summary) > most {
            tracing::warn!("summary over {most} tokens (its cap, or what it replaces); cutting it");
            return plan::fit_text(&summary, most, self.meter.estimator());
        }
        summary
    }

    /// The compaction message (user, with the Compaction part) and the summary message after it
    /// (the summary, then what pith carries).
    fn summary_messages(
        &self,
        i: &Installed<'_>,
        summary: String,
        carried: &Carried,
        tail_start: Option<String>,
    ) -> (Message, Message) {
        let mut c = Message::new(self.log.session_id(), Role::User);
        c.push(PartKind::Compaction(CompactionPart {
            auto: i.auto,
            overflow: i.overflow,
            focus: i.focus.clone(),
            tail_start,
            carried: carried.clone(),
        }));
        let mut s = Message::new(self.log.session_id(), Role::Assistant);
        s.parent_id = Some(c.id.clone());
        s.summary = true;
        s.agent = Some(Agent::Compaction);
        let setup = i.setup.unwrap_or(&self.model);
        s.model = Some(setup.name.clone());
        s.usage = i.written.usage;
        s.cost = pith_provider::cost::cost(&i.written.usage, &setup.info);
        s.finish = Some(FinishReason::Stop);
        s.time_completed = Some(now_ms());
        s.push(PartKind::Text {
            text: summary,
            synthetic: false,
        });
        let appendix = carry::render(carried);
        if !appendix.is_empty() {
            s.push(PartKind::Text {
                text: appendix,
                synthetic: true,
            });
        }
        (c, s)
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
        let cost = CompactionCost {
            input: written.usage.input + written.usage.cache_read + written.usage.cache_write,
            cache_read: written.usage.cache_read,
            cost: s.cost,
            cache_friendly: written.inline,
            background: i.background,
        };
        self.compactions.set_last_cost(cost);
        self.emit(Event::CompactionFinished {
            summary_message_id: s.id.clone(),
            before,
            after,
            model_calls: written.calls,
            cost,
        });
        self.emit_context();
        if i.then == Then::Continue && i.auto && !self.ends_with_user_request() {
            self.push_user_text(CONTINUE, true);
            self.emit_context();
        }
        if i.auto
            && let Some(message) =
                plan::breaker(before, after, budget.usable, self.compactions.this_turn())
        {
            return Err(CompactionError::Breaker(message));
        }
        Ok(())
    }

    /// Where the verbatim tail starts, and what pith carries: the largest tail (whole turns, at
    /// most `tail_max`) with which the compacted context — overhead, a summary at its cap, the
    /// carried record, the tail — fits half the usable window. Fewer turns in the tail means
    /// more user messages to carry, so the two are planned together.
    fn plan_cut(&mut self, budget: &Budget, overhead: u64, auto: bool) -> (plan::Cut, Carried) {
        self.plan_cut_to(budget, overhead, auto, budget.target_after)
    }

    /// [`Runner::plan_cut`] for a compacted context of at most `target` tokens. The user's
    /// words come before the tail: while they do not all fit, the tail gives way to them.
    pub(super) fn plan_cut_to(
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
            let carried_tokens = self.meter.text(&carry::render(&carried));
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
                return (cut, carried);
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
                return (cut, carried);
            }
        }
        let cut = plan::cut(self.log.view(), 0, self.meter.estimator_mut());
        let carried = self.carried(&cut, budget, auto, (target, overhead + budget.summary_cap));
        (cut, carried)
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
        let summarised = &self.log.view()[cut.summarise.clone()];
        let prev = &cut.previous_carried;
        let (mut new, current) = carry::user_messages(summarised);
        // With no verbatim tail, the request being worked on is among the summarised messages:
        // during a turn it travels whole, outside the budget.
        let current_request = match current {
            Some(i) if auto && cut.tail.is_empty() => Some(new.remove(i).text),
            _ => None,
        };
        let mut sources: Vec<CarrySource> = prev
            .user_messages
            .iter()
            .chain(&prev.current_request)
            .map(|t| CarrySource {
                id: None,
                text: t.clone(),
                pasted: Vec::new(),
            })
            .collect();
        sources.extend(new);
        let ledger = carry::bound_ledger(
            carry::merge_ledgers(&prev.ledger, &carry::ledger_of(summarised)),
            budget.ledger,
            self.meter.estimator(),
        );
        let todos = self
            .tools
            .state()
            .todos
            .lock()
            .ok()
            .map(|t| t.clone())
            .filter(|t| t.as_array().is_some_and(|a| !a.is_empty()))
            .or_else(|| prev.todos.clone());
        let mut c = Carried {
            current_request,
            todos,
            ledger,
            left_view: carry::left_view(summarised),
            sources,
            previous_dropped: prev.dropped_user_messages,
            ..Carried::default()
        };
        let base = self.meter.text(&carry::render(&c));
        self.carry_users(&mut c, budget.carry_room(target, taken + base));
        c
    }

    /// Chooses the user messages `c` carries from its sources, in `room` tokens.
    pub(super) fn carry_users(&self, c: &mut Carried, room: u64) {
        let r = retain::retain(&c.sources, c.previous_dropped, room, self.meter.estimator());
        c.user_messages = r.messages;
        c.dropped_user_messages = r.dropped;
        c.uncarried = r.uncarried;
    }

    /// Once the summary is written: the user's messages are carried again into the room the
    /// summary left (its blocks get more lines when it is short), and each of the user's
    /// sentences that is neither carried nor covered by the summary is carried after all,
    /// within the room the summary left of its cap.
    fn carry_after_summary(&self, c: &mut Carried, summary: &str, taken: u64, budget: &Budget) {
        if c.sources.is_empty() {
            return;
        }
        let est = self.meter.estimator();
        let mut base = c.clone();
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
        }
    }

    /// True when the view ends with a message the user typed (so the model will answer it).
    fn ends_with_user_request(&self) -> bool {
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
}

/// Refuses a compaction that cannot help: nothing to summarise, or (manual) too little to be
/// worth it.
fn check_worth_compacting(
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
                 (~{before} tokens) alone exceed the {} tokens this model can use; shorten \
                 the request or use a model with a larger context window.",
                budget.usable
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
            "nothing worth compacting: the {new_tokens} tokens of history before the recent \
             turns would hardly shrink in a summary; the context stays as it is"
        )));
    }
    Ok(())
}
