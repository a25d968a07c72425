//! The overflow test (ARCHITECTURE.md §6.3) and the output cap every request carries.
//!
//! The reply's room is real: the figure `usable` reserves for the reply ([`max_output`]) is the
//! very cap sent with every request, so a model cannot write past the room kept for it. On a small
//! window the cap is at most a quarter of the window, so a 4,096-token model keeps 3,072 tokens
//! for its input rather than none.

use pith_config::{CompactionConfig, ModelConfig};

/// Hard cap on the output tokens reserved for a reply.
pub const OUTPUT_TOKEN_MAX: u64 = 32_000;
/// Default of `compaction.reserved` (before the `max_output` cap).
pub const RESERVED_DEFAULT: u64 = 20_000;

/// The limits of a model that the overflow test needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Limits {
    /// Context window (0 = unknown: automatic compaction off).
    pub context: u64,
    /// Maximum input tokens, where the provider limits it separately.
    pub input: Option<u64>,
    /// Maximum output tokens (0 = unknown).
    pub output: u64,
    /// The output cap the user configured (`[models."p/m"] max_tokens`), which wins.
    pub max_tokens: Option<u64>,
}

impl From<&ModelConfig> for Limits {
    fn from(m: &ModelConfig) -> Self {
        Limits {
            context: m.context,
            input: m.input,
            output: m.output,
            max_tokens: m.max_tokens.map(u64::from),
        }
    }
}

/// The output cap of every request, and the room the overflow test keeps for the reply: the
/// configured `max_tokens` when set; else `min(limit.output, 32_000)` (32,000 when the output
/// limit is unknown), at most a quarter of a known window.
pub fn max_output(limits: &Limits) -> u64 {
    if let Some(n) = limits.max_tokens.filter(|&n| n > 0) {
        return n;
    }
    let out = if limits.output == 0 {
        OUTPUT_TOKEN_MAX
    } else {
        limits.output.min(OUTPUT_TOKEN_MAX)
    };
    if limits.context > 0 {
        out.min((limits.context / 4).max(1))
    } else {
        out
    }
}

/// Tokens kept free for the reply: `compaction.reserved ?? min(20_000, max_output)`.
pub fn reserved(limits: &Limits, cfg: &CompactionConfig) -> u64 {
    cfg.reserved
        .unwrap_or_else(|| RESERVED_DEFAULT.min(max_output(limits)))
}

/// Tokens usable before an automatic compaction fires:
/// `limit.input − reserved` when the input limit is known, else `limit.context − max_output`
/// (both saturating), then `min(usable, threshold × context)` when a threshold is set.
/// Computable whatever `auto` says (the status bar shows it).
pub fn usable(limits: &Limits, cfg: &CompactionConfig) -> u64 {
    let base = match limits.input {
        Some(input) => input.saturating_sub(reserved(limits, cfg)),
        None => limits.context.saturating_sub(max_output(limits)),
    };
    match cfg.threshold {
        Some(t) if t.is_finite() && t > 0.0 => {
            let cap = (t * limits.context as f64).floor();
            let cap = if cap >= u64::MAX as f64 {
                u64::MAX
            } else {
                cap as u64
            };
            base.min(cap)
        }
        _ => base,
    }
}

/// Overflow when `count >= usable`; never when `compaction.auto` is off or the window is unknown.
pub fn is_overflow(count: u64, limits: &Limits, cfg: &CompactionConfig) -> bool {
    if !cfg.auto || limits.context == 0 {
        return false;
    }
    count >= usable(limits, cfg)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lim(context: u64, input: Option<u64>, output: u64) -> Limits {
        Limits {
            context,
            input,
            output,
            max_tokens: None,
        }
    }

    fn cfg(reserved: Option<u64>, threshold: Option<f64>, auto: bool) -> CompactionConfig {
        CompactionConfig {
            auto,
            reserved,
            threshold,
            ..CompactionConfig::default()
        }
    }

    #[test]
    fn max_output_caps_and_defaults() {
        assert_eq!(max_output(&lim(200_000, None, 64_000)), 32_000);
        assert_eq!(max_output(&lim(200_000, None, 8_192)), 8_192);
        assert_eq!(max_output(&lim(200_000, None, 0)), 32_000);
        // Unknown window: no window share to apply.
        assert_eq!(max_output(&lim(0, None, 8_192)), 8_192);
    }

    #[test]
    fn max_output_is_at_most_a_quarter_of_a_small_window() {
        // A 4k local model whose output limit defaulted to 4,096 keeps 3,072 for input.
        assert_eq!(max_output(&lim(4_096, None, 4_096)), 1_024);
        assert_eq!(
            usable(&lim(4_096, None, 4_096), &cfg(None, None, true)),
            3_072
        );
        assert_eq!(max_output(&lim(4_096, None, 512)), 512);
        assert_eq!(max_output(&lim(8_192, None, 0)), 2_048);
        assert_eq!(max_output(&lim(2_048, None, 0)), 512);
        assert_eq!(max_output(&lim(128_000, None, 16_384)), 16_384);
    }

    #[test]
    fn configured_max_tokens_is_the_cap_and_the_reserve() {
        let l = Limits {
            max_tokens: Some(3_000),
            ..lim(4_096, None, 4_096)
        };
        assert_eq!(max_output(&l), 3_000);
        assert_eq!(usable(&l, &cfg(None, None, true)), 1_096);
        let l = Limits {
            max_tokens: Some(100_000),
            ..lim(200_000, None, 64_000)
        };
        assert_eq!(max_output(&l), 100_000);
    }

    #[test]
    fn reserved_default_and_override() {
        assert_eq!(
            reserved(&lim(200_000, None, 64_000), &cfg(None, None, true)),
            20_000
        );
        assert_eq!(
            reserved(&lim(200_000, None, 4_096), &cfg(None, None, true)),
            4_096
        );
        assert_eq!(
            reserved(&lim(200_000, None, 0), &cfg(None, None, true)),
            20_000
        );
        assert_eq!(
            reserved(&lim(200_000, None, 4_096), &cfg(Some(50_000), None, true)),
            50_000
        );
        assert_eq!(
            reserved(&lim(200_000, None, 4_096), &cfg(Some(0), None, true)),
            0
        );
    }

    #[test]
    fn usable_from_context_ignores_reserved() {
        // No input limit: context − max_output; `reserved` only applies to the input limit.
        let l = lim(200_000, None, 64_000);
        assert_eq!(usable(&l, &cfg(None, None, true)), 168_000);
        assert_eq!(usable(&l, &cfg(Some(1), None, true)), 168_000);
        let l = lim(128_000, None, 16_384);
        assert_eq!(usable(&l, &cfg(None, None, true)), 111_616);
        let l = lim(128_000, None, 0);
        assert_eq!(usable(&l, &cfg(None, None, true)), 96_000);
    }

    #[test]
    fn usable_from_input_limit_minus_reserved() {
        let l = lim(400_000, Some(272_000), 128_000);
        assert_eq!(usable(&l, &cfg(None, None, true)), 252_000);
        assert_eq!(usable(&l, &cfg(Some(30_000), None, true)), 242_000);
        let l = lim(400_000, Some(272_000), 8_000);
        assert_eq!(usable(&l, &cfg(None, None, true)), 264_000);
    }

    #[test]
    fn threshold_lowers_but_never_raises() {
        let l = lim(200_000, None, 64_000);
        assert_eq!(usable(&l, &cfg(None, Some(0.5), true)), 100_000);
        assert_eq!(usable(&l, &cfg(None, Some(0.95), true)), 168_000);
        assert_eq!(usable(&l, &cfg(None, Some(2.0), true)), 168_000);
        let l = lim(400_000, Some(272_000), 128_000);
        assert_eq!(usable(&l, &cfg(None, Some(0.5), true)), 200_000);
        // Nonsense thresholds are ignored rather than making every count an overflow.
        assert_eq!(
            usable(&lim(200_000, None, 64_000), &cfg(None, Some(0.0), true)),
            168_000
        );
        assert_eq!(
            usable(&lim(200_000, None, 64_000), &cfg(None, Some(-1.0), true)),
            168_000
        );
        assert_eq!(
            usable(
                &lim(200_000, None, 64_000),
                &cfg(None, Some(f64::NAN), true)
            ),
            168_000
        );
    }

    #[test]
    fn saturation_on_tiny_windows() {
        // An output limit above the window no longer leaves nothing: the cap is a quarter.
        assert_eq!(
            usable(&lim(8_000, None, 16_000), &cfg(None, None, true)),
            6_000
        );
        // Reserved: min(20,000, max_output 2,000).
        assert_eq!(
            usable(&lim(8_000, Some(5_000), 4_000), &cfg(None, None, true)),
            3_000
        );
        assert_eq!(
            usable(
                &lim(8_000, Some(5_000), 4_000),
                &cfg(Some(9_000), None, true)
            ),
            0
        );
        assert_eq!(
            usable(&lim(u64::MAX, None, 0), &cfg(None, Some(1.0), true)),
            u64::MAX - 32_000
        );
        // Usable 0 means every count overflows (compaction is the only way out).
        assert!(is_overflow(
            0,
            &lim(8_000, Some(5_000), 4_000),
            &cfg(Some(9_000), None, true)
        ));
    }

    #[test]
    fn overflow_boundary_is_inclusive() {
        let l = lim(200_000, None, 64_000);
        let c = cfg(None, None, true);
        assert!(!is_overflow(167_999, &l, &c));
        assert!(is_overflow(168_000, &l, &c));
        assert!(is_overflow(500_000, &l, &c));
    }

    #[test]
    fn auto_off_or_unknown_window_never_overflows_but_usable_is_shown() {
        let l = lim(200_000, None, 64_000);
        let off = cfg(None, None, false);
        assert!(!is_overflow(10_000_000, &l, &off));
        assert_eq!(usable(&l, &off), 168_000);
        let unknown = lim(0, None, 64_000);
        assert!(!is_overflow(10_000_000, &unknown, &cfg(None, None, true)));
        // A zero window with an input limit is still "unknown window": off.
        let unknown = lim(0, Some(100_000), 4_000);
        assert!(!is_overflow(10_000_000, &unknown, &cfg(None, None, true)));
        assert_eq!(usable(&unknown, &cfg(None, None, true)), 96_000);
    }

    /// The overflow test over windows, limits, reserves and thresholds: each row is
    /// (context, input, output, reserved, threshold, auto, count, expected).
    mod matrix {
        use super::*;

        type Row = (
            u64,
            Option<u64>,
            u64,
            Option<u64>,
            Option<f64>,
            bool,
            u64,
            bool,
        );

        fn check(rows: &[Row]) {
            for (i, &(context, input, output, reserved, threshold, auto, count, want)) in
                rows.iter().enumerate()
            {
                let got = is_overflow(
                    count,
                    &lim(context, input, output),
                    &cfg(reserved, threshold, auto),
                );
                assert_eq!(got, want, "row {i}");
            }
        }

        /// The window less the output cap (a reserve given without an input limit changes nothing).
        #[test]
        fn window_and_output_limit() {
            check(&[
                (200_000, None, 64_000, None, None, true, 168_000, true),
                (200_000, None, 64_000, None, None, true, 167_999, false),
                (
                    200_000,
                    None,
                    64_000,
                    Some(100_000),
                    None,
                    true,
                    167_999,
                    false,
                ),
            ]);
        }

        /// An input limit, less the default reserve or a given one.
        #[test]
        fn input_limit() {
            check(&[
                (
                    200_000,
                    Some(180_000),
                    64_000,
                    None,
                    None,
                    true,
                    160_000,
                    true,
                ),
                (
                    200_000,
                    Some(180_000),
                    64_000,
                    None,
                    None,
                    true,
                    159_999,
                    false,
                ),
                (
                    200_000,
                    Some(180_000),
                    64_000,
                    Some(10_000),
                    None,
                    true,
                    169_999,
                    false,
                ),
                (
                    200_000,
                    Some(180_000),
                    64_000,
                    Some(10_000),
                    None,
                    true,
                    170_000,
                    true,
                ),
            ]);
        }

        /// A threshold that lowers the line below the input limit less the reserve.
        #[test]
        fn threshold() {
            check(&[
                (
                    200_000,
                    Some(180_000),
                    64_000,
                    Some(10_000),
                    Some(0.8),
                    true,
                    160_000,
                    true,
                ),
                (
                    200_000,
                    Some(180_000),
                    64_000,
                    Some(10_000),
                    Some(0.8),
                    true,
                    159_999,
                    false,
                ),
            ]);
        }

        /// Auto compaction off, or a window not known: never.
        #[test]
        fn auto_off_or_unknown_window() {
            check(&[
                (
                    200_000,
                    None,
                    64_000,
                    None,
                    Some(0.8),
                    false,
                    190_000,
                    false,
                ),
                (0, None, 64_000, None, Some(0.8), true, 190_000, false),
            ]);
        }

        /// Small windows, with and without a known output limit.
        #[test]
        fn small_windows() {
            check(&[
                // Unknown output limit on a 32k window: the cap is a quarter, usable 24,000.
                (32_000, None, 0, None, None, true, 23_999, false),
                (32_000, None, 0, None, None, true, 24_000, true),
                (32_768, None, 4_096, None, None, true, 28_671, false),
                (32_768, None, 4_096, None, None, true, 28_672, true),
            ]);
        }
    }

    #[test]
    fn limits_from_model_config() {
        let m = ModelConfig {
            context: 128_000,
            input: Some(100_000),
            output: 4_096,
            ..ModelConfig::default()
        };
        assert_eq!(Limits::from(&m), lim(128_000, Some(100_000), 4_096));
        let m = ModelConfig {
            max_tokens: Some(2_000),
            ..m
        };
        assert_eq!(Limits::from(&m).max_tokens, Some(2_000));
    }
}
