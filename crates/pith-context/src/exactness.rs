//! When a lazy estimator has to count with the BPE (ARCHITECTURE.md §6.5).
//!
//! A lazy [`Estimator`](crate::tokens::Estimator) counts with a heuristic whose error is bounded:
//! a BPE token is at least one byte, and the heuristic counts a token for every 4 ASCII bytes and
//! for every other character (at most 4 bytes), so an exact count is at most
//! [`ERROR_BOUND`] times the heuristic's. A decision can only come out differently with exact
//! counts when the heuristic figure times that bound reaches its threshold; below that, building
//! the tables (~17 MiB, tens of ms) buys nothing.
//!
//! Two decisions read the figure between provider reports: the overflow test (the whole request
//! against `usable`) and the prune plan (old tool outputs against `prune_protect`). The first
//! depends on everything sent, the second only on the conversation: the fixed part of every
//! request — system prompt and tool definitions, about 12% of a 16k window — is never pruned, so
//! it does not bring the prune threshold closer. `/context`, a refused prompt and a compaction
//! count exactly on their own (they ask the estimator when they decide).

use super::budget::Budget;

/// An exact count is at most this many times the heuristic count of the same text.
pub const ERROR_BOUND: u64 = 4;
/// Counts are exact once the figure reaches this many tokens at the latest, whatever the window.
pub const EXACT_FROM: u64 = 16_000;

/// How a lazy estimator should count now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counting {
    /// The heuristic: no decision can depend on the difference.
    Heuristic,
    /// Still the heuristic, but the tables are loaded in the background: the figure is halfway
    /// from where a session starts to where counts must be exact.
    Prefetch,
    /// Exact counts: a threshold is within the heuristic's error bound.
    Exact,
}

/// The figures from which a lazy estimator counts exactly, for one model and configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exactness {
    /// The whole figure from which it counts exactly (the overflow point over the error bound,
    /// at most [`EXACT_FROM`]).
    figure_from: u64,
    /// The figure less the fixed part of a request from which it counts exactly: a prune clears
    /// outputs only once they pass `prune_protect` by more than `prune_minimum`, and the prune
    /// plan counts tool outputs only.
    content_from: u64,
}

impl Exactness {
    /// `usable` is [`crate::overflow::usable`]: 0 when the window is unknown (no overflow test).
    pub fn new(budget: &Budget, usable: u64) -> Exactness {
        let mut figure_from = EXACT_FROM;
        if usable > 0 {
            figure_from = figure_from.min(usable / ERROR_BOUND);
        }
        Exactness {
            figure_from,
            content_from: budget.prune_protect.saturating_add(budget.prune_minimum) / ERROR_BOUND,
        }
    }

    /// How to count at the figure `used`, of which `overhead` is the fixed part of every
    /// request (system prompt and tool definitions).
    pub fn counting(&self, used: u64, overhead: u64) -> Counting {
        let content = used.saturating_sub(overhead);
        if used >= self.figure_from || content >= self.content_from {
            return Counting::Exact;
        }
        // halfway from the fixed part (where a session starts) to the switch, on either figure
        let figure_half = overhead + self.figure_from.saturating_sub(overhead) / 2;
        if used >= figure_half || content >= self.content_from / 2 {
            Counting::Prefetch
        } else {
            Counting::Heuristic
        }
    }

    /// Whether a request of `tokens` heuristic tokens could reach `threshold` when counted
    /// exactly (so that the decision must be taken on exact counts).
    pub fn could_reach(tokens: u64, threshold: u64) -> bool {
        tokens.saturating_mul(ERROR_BOUND) >= threshold
    }
}

#[cfg(test)]
#[path = "exactness_tests.rs"]
mod tests;
