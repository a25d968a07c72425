//! The context meter: the token estimator of the session's model and the running context figure
//! — the provider's last count plus the estimate of what was added since (ARCHITECTURE.md §6.3).

use pith_config::CompactionConfig;
use pith_context::overflow::Limits;
use pith_context::tokens::Estimator;
use pith_context::tracker::ContextTracker;
use pith_protocol::event::ContextUsage;
use pith_protocol::llm::{ToolSpec, Usage};
use pith_protocol::message::{Message, Part};

pub(super) struct Meter {
    estimator: Estimator,
    tracker: ContextTracker,
    /// With `compaction.auto = false`: 1 once the user was told the context passed where it
    /// would have been compacted, 2 once told it is near the window.
    pub window_warned: u8,
}

impl Meter {
    /// A meter for the model the provider knows as `model_id`, with no figure yet.
    pub(crate) fn new(model_id: &str) -> Meter {
        Meter {
            estimator: Estimator::lazy(model_id),
            tracker: ContextTracker::default(),
            window_warned: 0,
        }
    }

    /// The estimator, lent to the planning that counts with it.
    pub(crate) fn estimator(&self) -> &Estimator {
        &self.estimator
    }

    /// The estimator, lent to the planning that counts with it and caches what it counted.
    pub(crate) fn estimator_mut(&mut self) -> &mut Estimator {
        &mut self.estimator
    }

    /// Counts for the model `model_id` from now on, with a fresh correction ratio; returns the
    /// estimator it used, to go back to with [`Meter::restore_estimator`].
    pub(crate) fn use_model(&mut self, model_id: &str) -> Estimator {
        std::mem::replace(&mut self.estimator, Estimator::lazy(model_id))
    }

    /// Counts with `estimator` again (see [`Meter::use_model`]).
    pub(crate) fn restore_estimator(&mut self, estimator: Estimator) {
        self.estimator = estimator;
    }

    /// Forgets the context figure: another session's history is to be counted.
    pub(crate) fn forget_figure(&mut self) {
        self.tracker = ContextTracker::default();
        self.window_warned = 0;
    }

    /// The context figure, as the status bar shows it.
    pub(crate) fn used(&self) -> u64 {
        self.tracker.used()
    }

    /// The figure against the window, as the front ends show it.
    pub(crate) fn usage(&self, limits: &Limits, cfg: &CompactionConfig) -> ContextUsage {
        self.tracker.usage(limits, cfg)
    }

    /// The figure holds no provider count since the last reset.
    pub(crate) fn is_estimate(&self) -> bool {
        self.tracker.is_estimate()
    }

    /// Counts a message added to the context.
    pub(crate) fn add_message(&mut self, m: &Message) {
        let tokens = self.estimator.message(m);
        self.tracker.on_added(tokens);
    }

    /// Counts a part added to the context.
    pub(crate) fn add_part(&mut self, p: &Part) {
        let tokens = self.estimator.part(p);
        self.tracker.on_added(tokens);
    }

    /// Counts `tokens` added to the context.
    pub(crate) fn add_tokens(&mut self, tokens: u64) {
        self.tracker.on_added(tokens);
    }

    /// The provider counted `usage` for a request estimated at `estimated_request`.
    pub(crate) fn on_report(&mut self, usage: &Usage, estimated_request: u64) {
        self.tracker.on_report(usage, estimated_request);
    }

    /// A step's report: the estimator learns its ratio from the prompt side the provider
    /// counted for `content` estimated tokens, and the figure takes the count.
    pub(crate) fn on_step_report(&mut self, usage: &Usage, content: u64, estimated_request: u64) {
        let prompt_side = usage.input + usage.cache_read + usage.cache_write;
        self.estimator.learn(content, prompt_side);
        self.tracker.on_report(usage, estimated_request);
    }

    /// The fixed part of every request (system prompt, tool definitions) went from `before`
    /// to `after` tokens.
    pub(crate) fn on_overhead_change(&mut self, before: u64, after: u64) {
        self.tracker.on_overhead_change(before, after);
    }

    /// The figure is an estimate of `estimate` tokens (the history changed under it).
    pub(crate) fn on_reset(&mut self, estimate: u64) {
        self.tracker.on_reset(estimate);
    }

    /// The figure is `figure`, as the session left it.
    pub(crate) fn on_restore(&mut self, figure: u64) {
        self.tracker.on_restore(figure);
    }

    pub(crate) fn text(&self, s: &str) -> u64 {
        self.estimator.text(s)
    }

    pub(crate) fn message(&mut self, m: &Message) -> u64 {
        self.estimator.message(m)
    }

    pub(crate) fn part(&mut self, p: &Part) -> u64 {
        self.estimator.part(p)
    }

    pub(crate) fn tool_definitions(&mut self, tools: &[ToolSpec]) -> u64 {
        self.estimator.tool_definitions(tools)
    }

    pub(crate) fn request_overhead(&mut self, system: &[String], tools: &[ToolSpec]) -> u64 {
        self.estimator.request_overhead(system, tools)
    }

    /// The counts are exact (the model's tokenizer is loaded).
    pub(crate) fn is_exact(&self) -> bool {
        self.estimator.is_exact()
    }

    /// Counts exactly from now on (loads the tokenizer).
    pub(crate) fn want_exact(&mut self) {
        self.estimator.want_exact();
    }

    /// Loads the tokenizer in the background.
    pub(crate) fn prefetch(&self) {
        self.estimator.prefetch();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(input: u64, output: u64) -> Usage {
        Usage {
            input,
            output,
            ..Usage::default()
        }
    }

    #[test]
    fn a_report_replaces_the_estimate_and_what_follows_is_estimated_on_top() {
        let mut m = Meter::new("test-model");
        m.on_reset(900);
        assert_eq!(m.used(), 900);
        assert!(m.is_estimate());
        m.on_step_report(&usage(1_200, 80), 700, 900);
        assert_eq!(m.used(), 1_280, "the provider's count, output included");
        assert!(!m.is_estimate());
        m.add_tokens(20);
        assert_eq!(m.used(), 1_300);
        assert!(m.is_estimate());
        // a report without a count changes nothing
        m.on_report(&Usage::default(), 1_000);
        assert_eq!(m.used(), 1_300);
    }

    #[test]
    fn another_session_starts_with_no_figure_and_no_warning() {
        let mut m = Meter::new("test-model");
        m.on_restore(5_000);
        m.window_warned = 2;
        m.add_tokens(100);
        assert_eq!(m.used(), 5_100);
        m.forget_figure();
        assert_eq!(m.used(), 0);
        assert_eq!(m.window_warned, 0);
    }

    #[test]
    fn the_figure_follows_the_fixed_part_of_the_request() {
        let mut m = Meter::new("test-model");
        m.on_reset(1_000);
        m.on_overhead_change(300, 350);
        assert_eq!(m.used(), 1_050);
        m.on_overhead_change(350, 300);
        assert_eq!(m.used(), 1_000);
    }
}
