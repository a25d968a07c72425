//! The runner's context figures: the estimate of the next request, the tracker that corrects it
//! with the provider's reports, the window-dependent budget, and the `/context` breakdown.

use std::borrow::Cow;

use crate::turn_context::Turn;
use pith_context::budget::Budget;
use pith_context::exactness::{Counting, Exactness};
use pith_context::overflow;
use pith_protocol::event::{Breakdown, ContextEvent, ContextUsage, EventMsg, TurnEvent};
use pith_protocol::llm::ToolSpec;
use pith_protocol::message::{PartKind, Role, ToolState};

impl Turn<'_> {
    /// Estimated tokens of the system prompt and tool definitions, corrected by the learned
    /// ratio like every other estimate (a fixed figure would leave the bulk of a small request
    /// uncorrected after a compaction, a prune or a resume).
    pub(crate) fn overhead(&mut self) -> u64 {
        self.planner().overhead()
    }

    /// The system prompt and tools of a request (see [`request_frame`]).
    pub(crate) fn request_frame(&self) -> (Cow<'_, [String]>, Cow<'_, [ToolSpec]>) {
        crate::request_frame::request_frame(
            self.system,
            self.tools.specs(),
            self.opts.config.permission_mode,
            self.opts.config.memory.tool,
        )
    }

    /// On a resumed session the provider's last report is still the count of record: the
    /// figure is that report plus an estimate of what was added after it. A report from before
    /// the latest compaction no longer describes the context, so it is not used.
    pub(crate) fn resume_from_last_report(&mut self) {
        let after = match pith_context::view::compaction_point(self.log.view()) {
            Some(p) => self.log.view()[p.summary].id.clone(),
            None => String::new(),
        };
        let Some(i) = self.log.view().iter().rposition(|m| {
            m.role == Role::Assistant && !m.summary && m.id > after && m.usage.context_tokens() > 0
        }) else {
            return;
        };
        let usage = self.log.view()[i].usage;
        let mut added = 0;
        for m in &self.log.view()[i + 1..] {
            added += self.meter.message(m);
        }
        // The estimate of the request that report answered (everything before the reply).
        let mut estimated = self.overhead();
        for m in &self.log.view()[..i] {
            estimated += self.meter.message(m);
        }
        self.meter.on_report(&usage, estimated);
        self.meter.add_tokens(added);
    }

    /// The figure stored with the session when it was last left, if nothing changed since:
    /// a resumed session shows what the status bar showed then.
    fn stored_figure(&self) -> Option<u64> {
        let tokens = self.log.session().tokens;
        let left = self.log.session().time_updated;
        let unchanged = self
            .log
            .view()
            .iter()
            .all(|m| m.time_created <= left && m.time_completed.is_none_or(|t| t <= left));
        (tokens > 0 && unchanged).then_some(tokens)
    }

    /// The context figure of a freshly loaded view: the stored one when it still holds, else the
    /// provider's last report plus what was added since, else an estimate.
    pub(crate) fn load_figure(&mut self) {
        let stored = self.stored_figure();
        if stored.is_some_and(|t| self.counting(t) == Counting::Exact) {
            // counted as the session counted when it was left, so no switch moves the figure
            self.meter.want_exact();
        }
        self.reset_estimate();
        self.resume_from_last_report();
        if let Some(figure) = stored {
            self.meter.on_restore(figure);
        }
    }

    /// Recomputes the context figure as an estimate of the next request.
    pub(crate) fn reset_estimate(&mut self) {
        self.planner().reset_estimate();
    }

    /// An estimate of the next request's messages (without system prompt and tools).
    pub(crate) fn estimate_content(&mut self) -> u64 {
        self.planner().estimate_content()
    }

    /// The window-dependent figures of context management for the session's model.
    pub(crate) fn budget(&self) -> Budget {
        Budget::new(&self.model.limits, &self.opts.config.compaction)
    }

    /// The limits of one tool output: as configured, and never more than about a quarter of
    /// the usable window (a 50 KB output would fill a 4k window four times over).
    pub(crate) fn tool_output(&self) -> pith_config::ToolOutputConfig {
        let mut out = self.opts.config.tool_output.clone();
        out.max_bytes = out.max_bytes.min(self.budget().tool_output_bytes);
        out
    }

    pub(crate) fn usable(&self) -> u64 {
        overflow::usable(&self.model.limits, &self.opts.config.compaction)
    }

    /// The figure the front ends show; no auto-compact point when none fires.
    pub(crate) fn context_usage(&self) -> ContextUsage {
        let mut usage = self
            .meter
            .usage(&self.model.limits, &self.opts.config.compaction);
        if !self.opts.config.compaction.auto {
            usage.usable = 0;
        }
        usage
    }

    pub(crate) fn emit_context(&mut self) {
        self.tune_estimator();
        let usage = self.context_usage();
        self.emit(ContextEvent::ContextUsage(usage));
        self.warn_without_auto_compaction(usage.used);
        // a `/context` asked for during the turn is answered here, between steps and tools
        self.answer_breakdown();
    }

    pub(crate) fn answer_breakdown(&mut self) {
        let wanted = self
            .shared
            .breakdown_wanted
            .lock()
            .map(|mut w| std::mem::take(&mut *w))
            .unwrap_or_default();
        if wanted.is_empty() {
            return;
        }
        let breakdown = self.breakdown();
        let pins = self.pin_costs();
        let instructions = self.instruction_costs();
        for id in wanted {
            let answer = EventMsg::from(ContextEvent::ContextBreakdown {
                breakdown,
                pins: pins.clone(),
                instructions: instructions.clone(),
            });
            self.log.emit(answer.answering(&id));
        }
    }

    /// How a lazy estimator counts at the figure `used`: exactly where the heuristic's error
    /// bound reaches a threshold a decision depends on (the overflow point, the prune-protect
    /// window), and at the latest from `pith_context::exactness::EXACT_FROM` (see [`Exactness`]).
    fn counting(&mut self, used: u64) -> Counting {
        let overhead = self.overhead();
        Exactness::new(&self.budget(), self.usable()).counting(used, overhead)
    }

    /// A lazy estimator loads the BPE in the background halfway to where it must count exactly,
    /// and counts exactly from there on (the estimate is then recounted).
    fn tune_estimator(&mut self) {
        if self.meter.is_exact() {
            return;
        }
        let counting = self.counting(self.meter.used());
        if counting == Counting::Heuristic {
            return;
        }
        self.meter.prefetch();
        if counting == Counting::Exact {
            self.meter.want_exact();
            if self.meter.is_estimate() {
                self.reset_estimate();
            }
        }
    }

    /// What the context is made of, for `/context`: counted exactly (the user asked; a lazy
    /// estimator switches to the tokenizer now, as it would near the threshold).
    pub(crate) fn breakdown(&mut self) -> Breakdown {
        self.refresh_tools();
        if !self.meter.is_exact() {
            self.meter.want_exact();
            self.reset_estimate();
        }
        let mut b = Breakdown {
            window: self.model.limits.context,
            last_compaction: self.compactor.last_cost(),
            subagents: self.record.subagents(),
            ..Breakdown::default()
        };
        // counted, not the overhead learned from the provider's reports (which moves with them)
        let (system, tools) = {
            let (s, t) = self.request_frame();
            (s.into_owned(), t.into_owned())
        };
        b.system = system.iter().map(|s| self.meter.text(s)).sum();
        // the pins travel in the system prompt; they are a row of their own
        b.pinned = self
            .pin_block()
            .map_or(0, |p| self.meter.text(p))
            .min(b.system);
        b.system -= b.pinned;
        b.tools = self.meter.tool_definitions(&tools);
        self.count_view(&mut b);
        // The figure is the one the status bar shows. The fixed rows (system prompt, tool
        // definitions) are counted and kept, so that two views in one sitting show the same;
        // the rows that grow are scaled to what is left, so the rows add up to the figure.
        // Only a figure below the fixed rows' count scales them all.
        let used = self.context_usage().used;
        scale_rows(&mut b, used);
        let usable = self.usable();
        b.reserved = b.window.saturating_sub(usable);
        b.free = usable.saturating_sub(used);
        b.exact = self.meter.is_exact();
        b
    }

    /// Adds the view's messages to the rows of `b` (summary, messages, tool outputs, what
    /// pruning took) and takes what left the view from its compaction.
    fn count_view(&mut self, b: &mut Breakdown) {
        for m in self.log.view() {
            for p in &m.parts {
                let t = self.meter.part(p);
                // what left the view: the counts of the compaction in the view (merged over
                // the earlier ones)
                if let PartKind::Compaction(c) = &p.kind
                    && let Some(l) = &c.carried.left_view
                {
                    b.left = pith_protocol::compaction_note::left_counts(l);
                }
                match &p.kind {
                    PartKind::Tool {
                        state: ToolState::Completed { time, output, .. },
                        ..
                    } => {
                        if time.compacted.is_some() {
                            b.pruned += self.meter.text(output);
                            b.tool_outputs += t;
                        } else {
                            b.tool_outputs += t;
                        }
                    }
                    _ if m.summary => b.summary += t,
                    _ => b.messages += t,
                }
            }
        }
    }
}

/// Scales the rows of `b` so that they add up to `used`: the rows that grow share what the
/// fixed ones leave; a figure below the fixed rows' count scales them all.
fn scale_rows(b: &mut Breakdown, used: u64) {
    let fixed = b.system + b.pinned + b.tools;
    let mut grows = [b.summary, b.messages, b.tool_outputs];
    if used >= fixed && grows.iter().any(|&r| r > 0) {
        pith_context::tracker::apportion(&mut grows, used - fixed);
        [b.summary, b.messages, b.tool_outputs] = grows;
    } else if used >= fixed {
        b.messages = used - fixed;
    } else {
        let mut rows = [
            b.system,
            b.pinned,
            b.tools,
            b.summary,
            b.messages,
            b.tool_outputs,
        ];
        pith_context::tracker::apportion(&mut rows, used);
        [
            b.system,
            b.pinned,
            b.tools,
            b.summary,
            b.messages,
            b.tool_outputs,
        ] = rows;
    }
}

/// Share of the window from which a context that is never compacted automatically is "near
/// the window", in percent.
const NEAR_WINDOW_PERCENT: u64 = 95;

impl Turn<'_> {
    /// With `compaction.auto = false`, says once when the context passes where it would have
    /// been compacted, and once more near the window; again after it fell back below.
    fn warn_without_auto_compaction(&mut self, used: u64) {
        let window = self.model.limits.context;
        if self.opts.config.compaction.auto || window == 0 {
            return;
        }
        let usable = self.usable();
        let near = (window / 100 * NEAR_WINDOW_PERCENT).max(usable);
        let level = if used >= near {
            2
        } else if used >= usable {
            1
        } else {
            0
        };
        let was = self.meter.window_warned;
        self.meter.window_warned = level;
        if level <= was {
            return;
        }
        let (used, usable, window) = (grouped(used), grouped(usable), grouped(window));
        let message = if level == 2 {
            format!(
                "context at ~{used} of the {window}-token window and compaction.auto = false: /compact now, or the next request may not fit"
            )
        } else {
            format!(
                "context at ~{used} tokens: pith would compact here (at {usable}) but compaction.auto = false; /compact when you are ready (the window is {window})"
            )
        };
        self.emit(TurnEvent::Info { message });
    }
}

/// `88015` as `88,015`.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
