//! The running context figure between provider reports (ARCHITECTURE.md §6.3, §6.5).
//!
//! The count of record is the provider's last report (`usage.context_tokens()`). Between reports
//! the engine adds estimates of what it appended (a tool output, a user message); after a
//! compaction or prune the figure is reset to an estimate of the new request. A provider that
//! reports no usage simply never calls [`ContextTracker::on_report`]: the figure stays an
//! estimate and the overflow test runs on it.

use pith_config::CompactionConfig;
use pith_protocol::event::ContextUsage;
use pith_protocol::message::Usage;

use super::overflow::{self, Limits};

#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ContextTracker {
    /// The last reported count, or the estimate set by `on_reset`.
    base: u64,
    /// Estimated tokens added since `base` was set.
    added: u64,
    /// `base` came from an estimate rather than a report.
    base_estimated: bool,
    /// Whether anything was ever recorded (a fresh tracker shows 0 as an estimate).
    known: bool,
    /// Cache-read tokens of the last report.
    cached: u64,
    /// The request estimate that accompanied the last report (for diagnostics).
    last_estimate: u64,
}

impl ContextTracker {
    pub fn new() -> Self {
        Self::default()
    }

    /// A provider reported usage for the step just finished: it becomes the count of record
    /// (`input + output + cache_read + cache_write`) and the running estimate restarts from it.
    /// `estimated_request` is what the engine estimated for the request of that step (the engine
    /// feeds `Estimator::learn` with it and the prompt-side figure). A report of all zeros (a
    /// provider that reports nothing) is ignored.
    pub fn on_report(&mut self, usage: &Usage, estimated_request: u64) {
        let count = usage.context_tokens();
        if count == 0 {
            return;
        }
        self.base = count;
        self.added = 0;
        self.base_estimated = false;
        self.known = true;
        self.cached = usage.cache_read;
        self.last_estimate = estimated_request;
    }

    /// A part was added or grew since the last report (estimated tokens of the difference).
    pub fn on_added(&mut self, tokens: u64) {
        self.added = self.added.saturating_add(tokens);
        self.known = true;
    }

    /// The fixed part of the request (tool definitions) changed from `before` to `after`
    /// estimated tokens: the figure follows, so the overflow test counts the definitions the
    /// next request really carries.
    pub fn on_overhead_change(&mut self, before: u64, after: u64) {
        if after >= before {
            self.on_added(after - before);
            return;
        }
        let less = before - after;
        let from_added = less.min(self.added);
        self.added -= from_added;
        self.base = self.base.saturating_sub(less - from_added);
        if less > from_added {
            self.base_estimated = true;
        }
        self.known = true;
    }

    /// After a compaction or prune (or on load): the figure is an estimate of the new request.
    pub fn on_reset(&mut self, estimate: u64) {
        self.base = estimate;
        self.added = 0;
        self.base_estimated = true;
        self.known = true;
        self.cached = 0;
    }

    /// A resumed session's figure as it was stored when the session was last left (the view
    /// unchanged since): the same figure the status bar showed then. What is added from now on
    /// is estimated on top of it, as after a report.
    pub fn on_restore(&mut self, figure: u64) {
        let estimated = self.is_estimate();
        self.base = figure;
        self.added = 0;
        self.base_estimated = estimated;
        self.known = true;
    }

    /// Tokens the next request is expected to occupy: the context figure, the one every front
    /// end shows (status bar, `/context`, the session list, a resumed session).
    pub fn used(&self) -> u64 {
        self.base.saturating_add(self.added)
    }

    /// `used()` is (partly) an estimate: nothing reported since the last change.
    pub fn is_estimate(&self) -> bool {
        !self.known || self.base_estimated || self.added > 0
    }

    /// The last reported count, when the current figure is based on a report.
    pub fn reported(&self) -> Option<u64> {
        (self.known && !self.base_estimated).then_some(self.base)
    }

    /// The request estimate that accompanied the last report.
    pub fn last_estimate(&self) -> u64 {
        self.last_estimate
    }

    /// The overflow test on the running figure.
    pub fn is_overflow(&self, limits: &Limits, cfg: &CompactionConfig) -> bool {
        overflow::is_overflow(self.used(), limits, cfg)
    }

    /// The status-bar figure.
    pub fn usage(&self, limits: &Limits, cfg: &CompactionConfig) -> ContextUsage {
        let used = self.used();
        let window = limits.context;
        let percent = if window == 0 {
            0.0
        } else {
            used as f64 * 100.0 / window as f64
        };
        ContextUsage {
            used,
            usable: overflow::usable(limits, cfg),
            window,
            percent,
            estimated: self.is_estimate(),
            cached: if self.base_estimated {
                0
            } else {
                self.cached.min(used)
            },
        }
    }
}

/// Scales `rows` (estimates of the parts of the context) so that they add up to `total` (the
/// context figure), each in proportion, the rounding left over given to the largest remainders.
/// Rows of 0 stay 0; with every row 0 nothing can be apportioned and the rows are left alone.
pub fn apportion(rows: &mut [u64], total: u64) {
    let sum: u128 = rows.iter().map(|&r| u128::from(r)).sum();
    if sum == 0 {
        return;
    }
    let total = u128::from(total);
    let mut rests: Vec<(u128, usize)> = Vec::with_capacity(rows.len());
    let mut given: u128 = 0;
    for (i, r) in rows.iter_mut().enumerate() {
        let exact = u128::from(*r) * total;
        let share = exact / sum;
        rests.push((exact % sum, i));
        given += share;
        *r = u64::try_from(share).unwrap_or(u64::MAX);
    }
    rests.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    for (_, i) in rests
        .into_iter()
        .take(usize::try_from(total - given).unwrap_or(0))
    {
        rows[i] += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apportioned_rows_add_up_to_the_figure() {
        let mut rows = [2_500, 1_200, 0, 30_001, 7_777];
        apportion(&mut rows, 40_000);
        assert_eq!(rows.iter().sum::<u64>(), 40_000);
        assert_eq!(rows[2], 0, "an empty row stays empty");
        assert!(rows[3] > rows[4] && rows[4] > rows[0] && rows[0] > rows[1]);
        let mut rows = [3, 3, 3];
        apportion(&mut rows, 10);
        assert_eq!(rows.iter().sum::<u64>(), 10);
        let mut none = [0, 0];
        apportion(&mut none, 5);
        assert_eq!(none, [0, 0]);
    }

    #[test]
    fn a_restored_figure_is_the_figure() {
        let mut t = ContextTracker::new();
        t.on_reset(9_000);
        t.on_restore(41_234);
        assert_eq!(t.used(), 41_234);
        t.on_added(100);
        assert_eq!(t.used(), 41_334);
    }

    fn limits() -> Limits {
        Limits {
            context: 100_000,
            input: None,
            output: 10_000,
            max_tokens: None,
        }
    }

    #[test]
    fn tool_definitions_that_come_and_go_move_the_figure() {
        let mut t = ContextTracker::new();
        t.on_report(
            &Usage {
                input: 10_000,
                ..Usage::default()
            },
            9_000,
        );
        t.on_overhead_change(2_000, 5_000);
        assert_eq!(t.used(), 13_000);
        t.on_added(100);
        t.on_overhead_change(5_000, 1_000);
        assert_eq!(t.used(), 9_100);
        assert!(t.is_estimate());
        t.on_overhead_change(1_000, 1_000);
        assert_eq!(t.used(), 9_100);
    }

    #[test]
    fn fresh_tracker_is_an_estimate_of_zero() {
        let t = ContextTracker::new();
        assert_eq!(t.used(), 0);
        assert!(t.is_estimate());
        assert_eq!(t.reported(), None);
    }

    #[test]
    fn report_is_the_count_of_record() {
        let mut t = ContextTracker::new();
        t.on_added(500);
        let u = Usage {
            input: 1_000,
            output: 200,
            reasoning: 50,
            cache_read: 3_000,
            cache_write: 100,
        };
        t.on_report(&u, 4_000);
        assert_eq!(t.used(), 4_300);
        assert!(!t.is_estimate());
        assert_eq!(t.reported(), Some(4_300));
        let cu = t.usage(&limits(), &CompactionConfig::default());
        assert_eq!(cu.cached, 3_000);
        assert!(!cu.estimated);
        assert_eq!(cu.window, 100_000);
        assert_eq!(cu.usable, 90_000);
        assert!((cu.percent - 4.3).abs() < 1e-9);
    }

    #[test]
    fn additions_accumulate_until_the_next_report() {
        let mut t = ContextTracker::new();
        t.on_report(
            &Usage {
                input: 10_000,
                ..Usage::default()
            },
            9_000,
        );
        t.on_added(2_000);
        t.on_added(3_000);
        assert_eq!(t.used(), 15_000);
        assert!(t.is_estimate());
        assert_eq!(t.reported(), Some(10_000));
        t.on_report(
            &Usage {
                input: 14_000,
                output: 100,
                ..Usage::default()
            },
            15_000,
        );
        assert_eq!(t.used(), 14_100);
        assert!(!t.is_estimate());
    }

    #[test]
    fn reset_replaces_the_figure_with_an_estimate() {
        let mut t = ContextTracker::new();
        t.on_report(
            &Usage {
                input: 80_000,
                cache_read: 5_000,
                ..Usage::default()
            },
            80_000,
        );
        t.on_added(9_000);
        t.on_reset(12_000);
        assert_eq!(t.used(), 12_000);
        assert!(t.is_estimate());
        let cu = t.usage(&limits(), &CompactionConfig::default());
        assert_eq!(cu.cached, 0);
        assert!(cu.estimated);
    }

    #[test]
    fn zero_report_is_ignored_and_estimates_still_overflow() {
        // A provider without usage: only estimates, and the overflow test still fires.
        let mut t = ContextTracker::new();
        let cfg = CompactionConfig::default();
        t.on_reset(50_000);
        t.on_report(&Usage::default(), 50_000);
        assert_eq!(t.used(), 50_000);
        assert!(!t.is_overflow(&limits(), &cfg));
        t.on_added(39_999);
        assert!(!t.is_overflow(&limits(), &cfg));
        t.on_added(1);
        assert!(t.is_overflow(&limits(), &cfg));
        assert!(t.is_estimate());
    }

    #[test]
    fn unknown_window_shows_zero_percent() {
        let mut t = ContextTracker::new();
        t.on_added(1_000);
        let l = Limits {
            context: 0,
            input: None,
            output: 0,
            max_tokens: None,
        };
        let cu = t.usage(&l, &CompactionConfig::default());
        assert_eq!(cu.percent, 0.0);
        assert_eq!(cu.used, 1_000);
        assert!(!t.is_overflow(&l, &CompactionConfig::default()));
    }
}
