//! Every figure of context management that depends on the window, in one place.
//!
//! Fixed figures break at one end of the range: a 2,000-token verbatim tail is half of a 4k
//! window, a 40,000-token prune threshold never fires on a 32k one, and an 8,000-token summary
//! cap is more than a small model has room for. Each figure here is the fixed default on a large
//! window and a share of the usable window on a small one, so the same rules hold from 2k to 2M
//! tokens. Configured values (`compaction.preserve_recent_tokens`, `prune_protect`,
//! `prune_minimum`) always win.

use pith_config::CompactionConfig;

use super::overflow::{self, Limits};

/// Largest summary cap (tokens), on large windows.
pub const SUMMARY_CAP_MAX: u64 = 8_000;
/// Smallest summary cap: below this a summary cannot hold the template's sections.
pub const SUMMARY_CAP_MIN: u64 = 400;
/// Largest budget for the user's own messages carried after a summary (Codex keeps up to 20k
/// tokens of them).
pub const CARRY_USER_MAX: u64 = 20_000;
/// Largest budget for the ledger of files and commands pith appends to a summary.
pub const LEDGER_MAX: u64 = 1_000;
/// Largest budget for the anchor index (exact identifiers from what left the view).
pub const ANCHORS_MAX: u64 = 1_500;
/// Largest budget for the model's decisions and findings.
pub const DECISIONS_MAX: u64 = 2_000;
/// Largest budget for the execution frontier.
pub const FRONTIER_MAX: u64 = 800;
/// Largest budget for the list of what left the view (recall ids).
pub const LEFT_VIEW_MAX: u64 = 1_500;
/// Largest verbatim tail by default.
pub const TAIL_MAX: u64 = 8_000;
/// Prune defaults on large windows.
pub const PRUNE_PROTECT_MAX: u64 = 40_000;
pub const PRUNE_MINIMUM_MAX: u64 = 20_000;
/// Tool results in a summary request are cut to at most this many characters.
pub const TOOL_RESULT_CHARS_MAX: usize = 2_000;
/// The smallest chunk of history a summary request is planned with.
pub const MIN_CHUNK_FLOOR: u64 = 256;
/// The least a tool output may bring, however small the window.
pub const TOOL_OUTPUT_BYTES_MIN: usize = 2_048;
/// Budget used where the window is unknown (0).
pub const UNKNOWN_WINDOW_USABLE: u64 = 100_000;

/// The window-dependent figures for one model and configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// The model's window (0 = unknown).
    pub window: u64,
    /// Tokens usable before compaction (see [`overflow::usable`]); an assumed 100,000 when the
    /// window is unknown, so planning still has figures.
    pub usable: u64,
    /// The output cap of every request.
    pub max_output: u64,
    /// What a compacted context may occupy at most: half the usable window, so a compaction
    /// buys room for real work rather than one more step.
    pub target_after: u64,
    /// Output cap of a summary request, and so the most a summary can take.
    pub summary_cap: u64,
    /// The most the user's own messages carried after a summary may take (a quarter of `usable`):
    /// they get the room the summary and the tail leave free, up to this.
    pub carry_user: u64,
    /// The least they get, however full the rest is (an eighth of `usable`).
    pub carry_user_min: u64,
    /// Tokens of the ledger of files and commands.
    pub ledger: u64,
    /// Tokens of the anchor index.
    pub anchors: u64,
    /// Tokens of the model's decisions and findings.
    pub decisions: u64,
    /// Tokens of the execution frontier.
    pub frontier: u64,
    /// Tokens of the list of what left the view.
    pub left_view: u64,
    /// Largest verbatim tail.
    pub tail_max: u64,
    /// Tool outputs newer than this many tokens are never pruned.
    pub prune_protect: u64,
    /// A prune clears at least this many tokens (keeps prompt-cache breaks rare).
    pub prune_minimum: u64,
    /// Tool results in a summary request are cut to this many characters.
    pub tool_result_chars: usize,
    /// The smallest chunk of history a summary request is planned with.
    pub min_chunk: u64,
    /// The most bytes one tool output may bring into the context: about a quarter of the usable
    /// window (`tool_output.max_bytes` when that is less).
    pub tool_output_bytes: usize,
}

impl Budget {
    pub fn new(limits: &Limits, cfg: &CompactionConfig) -> Budget {
        let usable = match overflow::usable(limits, cfg) {
            0 if limits.context == 0 => UNKNOWN_WINDOW_USABLE,
            u => u,
        };
        let max_output = overflow::max_output(limits);
        Budget {
            window: limits.context,
            usable,
            max_output,
            target_after: usable / 2,
            summary_cap: (usable / 6)
                .clamp(SUMMARY_CAP_MIN, SUMMARY_CAP_MAX)
                .min(max_output)
                .max(1),
            carry_user: (usable / 4).min(CARRY_USER_MAX),
            carry_user_min: (usable / 8).min(CARRY_USER_MAX),
            ledger: (usable / 16).min(LEDGER_MAX),
            anchors: (usable / 24).min(ANCHORS_MAX),
            decisions: (usable / 12).min(DECISIONS_MAX),
            frontier: (usable / 12).min(FRONTIER_MAX),
            left_view: (usable / 24).min(LEFT_VIEW_MAX),
            tail_max: cfg
                .preserve_recent_tokens
                .unwrap_or_else(|| (usable / 4).min(TAIL_MAX)),
            prune_protect: cfg
                .prune_protect
                .unwrap_or_else(|| (usable / 5).min(PRUNE_PROTECT_MAX)),
            prune_minimum: cfg
                .prune_minimum
                .unwrap_or_else(|| (usable / 10).min(PRUNE_MINIMUM_MAX)),
            tool_result_chars: usize::try_from(usable / 2)
                .unwrap_or(usize::MAX)
                .clamp(200, TOOL_RESULT_CHARS_MAX),
            min_chunk: (usable / 8).max(MIN_CHUNK_FLOOR),
            // ~4 bytes a token: a quarter of the usable window is `usable` bytes.
            tool_output_bytes: usize::try_from(usable)
                .unwrap_or(usize::MAX)
                .max(TOOL_OUTPUT_BYTES_MIN),
        }
    }

    /// The most the verbatim tail may take after a compaction that keeps `overhead` (system
    /// prompt and tools) and `carried` (what pith appends to the summary): what is left of
    /// [`Budget::target_after`] once the summary has room for its cap, never more than
    /// [`Budget::tail_max`]. It may be 0: the tail then holds nothing and the current request
    /// travels with the carried messages.
    pub fn tail_after(&self, overhead: u64, carried: u64) -> u64 {
        self.target_after
            .saturating_sub(overhead)
            .saturating_sub(self.summary_cap)
            .saturating_sub(carried)
            .min(self.tail_max)
    }

    /// The room for the user's messages carried after a compaction: what is left of `target`
    /// (what the compacted context may take, [`Budget::target_after`] in the foreground) once
    /// `taken` (overhead, the summary, the tail and the rest of what pith carries) is placed,
    /// between [`Budget::carry_user_min`] and [`Budget::carry_user`].
    pub fn carry_room(&self, target: u64, taken: u64) -> u64 {
        target.saturating_sub(taken).clamp(
            self.carry_user_min,
            self.carry_user.max(self.carry_user_min),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budget(context: u64, output: u64) -> Budget {
        Budget::new(
            &Limits {
                context,
                input: None,
                output,
                max_tokens: None,
            },
            &CompactionConfig::default(),
        )
    }

    #[test]
    fn a_4k_window_gets_small_figures_that_add_up() {
        let b = budget(4_096, 4_096);
        assert_eq!(b.max_output, 1_024);
        assert_eq!(b.usable, 3_072);
        assert_eq!(b.target_after, 1_536);
        assert_eq!(b.summary_cap, 512);
        assert_eq!(b.carry_user, 768);
        assert_eq!(b.carry_user_min, 384);
        assert_eq!(b.ledger, 192);
        assert_eq!(b.tail_max, 768);
        assert_eq!(b.prune_protect, 614);
        assert_eq!(b.prune_minimum, 307);
        assert_eq!(b.tool_result_chars, 1_536);
        assert_eq!(b.tool_output_bytes, 3_072);
        // With a 400-token system prompt and 300 tokens carried the tail has 324 tokens; with a
        // big system prompt none, and the current request travels with the carried messages.
        assert_eq!(b.tail_after(400, 300), 324);
        assert_eq!(b.tail_after(2_000, 0), 0);
        // The user's messages get what the rest leaves, between an eighth and a quarter.
        assert_eq!(b.carry_room(b.target_after, 400 + 512), 624);
        assert_eq!(b.carry_room(b.target_after, 2_000), 384);
        assert_eq!(b.carry_room(b.target_after, 0), 768);
        // Everything a compacted context holds fits in half the usable window.
        assert!(
            400 + b.summary_cap
                + b.carry_user_min
                + b.ledger
                + b.tail_after(400, b.carry_user_min + b.ledger)
                <= b.target_after
        );
    }

    #[test]
    fn large_windows_keep_the_fixed_defaults() {
        let b = budget(200_000, 64_000);
        assert_eq!(b.usable, 168_000);
        assert_eq!(b.summary_cap, SUMMARY_CAP_MAX);
        assert_eq!(b.carry_user, CARRY_USER_MAX);
        assert_eq!(b.ledger, LEDGER_MAX);
        assert_eq!(b.tail_max, TAIL_MAX);
        assert_eq!(b.prune_protect, 33_600);
        assert_eq!(b.prune_minimum, 16_800);
        assert_eq!(b.tool_result_chars, TOOL_RESULT_CHARS_MAX);
        assert!(
            b.tool_output_bytes > 51_200,
            "the configured 50 KB default is what binds"
        );
        let b = budget(2_000_000, 128_000);
        assert_eq!(b.prune_protect, PRUNE_PROTECT_MAX);
        assert_eq!(b.prune_minimum, PRUNE_MINIMUM_MAX);
        assert_eq!(b.tail_after(5_000, 3_000), TAIL_MAX);
    }

    #[test]
    fn every_window_from_2k_to_2m_has_consistent_figures() {
        let mut w = 2_048u64;
        while w <= 2_000_000 {
            for output in [0, 512, 4_096, 32_000, 128_000] {
                let b = budget(w, output);
                assert!(b.usable > 0 && b.usable < w, "{w}/{output}");
                assert!(b.max_output <= w / 4, "{w}/{output}");
                assert!(b.summary_cap <= b.max_output, "{w}/{output}");
                assert!(
                    b.summary_cap >= SUMMARY_CAP_MIN.min(b.max_output),
                    "{w}/{output}"
                );
                assert!(b.prune_minimum <= b.prune_protect, "{w}/{output}");
                assert!(
                    b.summary_cap + b.carry_user + b.ledger + b.tail_max <= b.usable,
                    "{w}/{output}: {b:?}"
                );
            }
            w = w * 3 / 2;
        }
    }

    #[test]
    fn configured_values_win() {
        let cfg = CompactionConfig {
            preserve_recent_tokens: Some(3_000),
            prune_protect: Some(100),
            prune_minimum: Some(10),
            ..CompactionConfig::default()
        };
        let l = Limits {
            context: 4_096,
            input: None,
            output: 512,
            max_tokens: None,
        };
        let b = Budget::new(&l, &cfg);
        assert_eq!(b.tail_max, 3_000);
        assert_eq!(b.prune_protect, 100);
        assert_eq!(b.prune_minimum, 10);
    }

    #[test]
    fn unknown_window_plans_with_an_assumed_one() {
        let b = budget(0, 0);
        assert_eq!(b.usable, UNKNOWN_WINDOW_USABLE);
        assert!(b.summary_cap > 0);
    }
}
