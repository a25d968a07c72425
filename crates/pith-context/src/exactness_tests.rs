use pith_config::CompactionConfig;
use pith_protocol::llm::ToolSpec;
use pith_protocol::message::Message;
use serde_json::json;

use super::*;
use crate::overflow::{self, Limits};
use crate::prune::{self, PruneRules};
use crate::testutil::*;
use crate::tokens::Estimator;

/// The model of `bench/vs_curl.sh`: a 16k window, 4,096 tokens of output.
fn window(context: u64) -> Limits {
    Limits {
        context,
        input: None,
        output: 4_096,
        max_tokens: None,
    }
}

/// A fixed prompt of about 1,900 tokens: 12% of a 16k window, as pith's own.
fn fixed_prompt() -> (Vec<String>, Vec<ToolSpec>) {
    let system = "You are pith, a coding agent in the user's terminal. Read the code before you \
                  change it, keep changes small, run the tests you touched. "
        .repeat(40);
    let tools = (0..8)
        .map(|i| ToolSpec {
            name: format!("tool_{i}"),
            description: "Reads a file of the workspace and returns its numbered lines. ".repeat(3),
            parameters: json!({"type": "object", "properties": {
                "path": {"type": "string", "description": "The file, relative to the workspace."},
                "offset": {"type": "integer", "description": "The first line to read."}
            }, "required": ["path"]}),
        })
        .collect();
    (vec![system], tools)
}

/// The figure a meter would show for `view` under `est` (no report yet), and its fixed part.
fn figure(est: &mut Estimator, view: &[Message]) -> (u64, u64) {
    let (system, tools) = fixed_prompt();
    let overhead = est.request_overhead(&system, &tools);
    (overhead + est.messages(view), overhead)
}

/// Five completed outputs of `out` over four user turns (three of them prunable).
fn session(out: &str) -> Vec<Message> {
    vec![
        user("u1", "one"),
        tool_msg("a1", "u1", "read", out),
        tool_msg("a2", "u1", "read", out),
        user("u2", "two"),
        tool_msg("a3", "u2", "read", out),
        user("u3", "three"),
        tool_msg("a4", "u3", "read", out),
        user("u4", "four"),
        tool_msg("a5", "u4", "read", out),
    ]
}

#[test]
fn a_small_prompt_at_a_16k_window_never_needs_the_tables() {
    let cfg = CompactionConfig::default();
    let limits = window(16_000);
    let budget = Budget::new(&limits, &cfg);
    let exactness = Exactness::new(&budget, overflow::usable(&limits, &cfg));
    let mut est = Estimator::lazy("mock/test-model");
    let mut reply = assistant("a1", "u1");
    add(&mut reply, text("Hello! What shall we work on?"));
    let view = vec![user("u1", "hello"), reply];
    let (used, overhead) = figure(&mut est, &view);
    assert!(
        (1_600..2_400).contains(&overhead),
        "the fixed prompt is {overhead} tokens"
    );
    // the rule this replaces counted exactly from half the prune-protect window, below the
    // fixed prompt alone: every turn at 16k built the tables
    assert!(overhead >= budget.prune_protect / 2);
    assert_eq!(exactness.counting(overhead, overhead), Counting::Heuristic);
    assert_eq!(exactness.counting(used, overhead), Counting::Heuristic);
    assert!(
        !Exactness::could_reach(used, budget.usable),
        "admitted unchecked"
    );
    assert!(!est.is_exact());
    // the same turn at 128k, and a window so small that the fixed prompt nears its overflow point
    let big = window(128_000);
    let exactness = Exactness::new(&Budget::new(&big, &cfg), overflow::usable(&big, &cfg));
    assert_eq!(exactness.counting(used, overhead), Counting::Heuristic);
    let tiny = window(12_000);
    let exactness = Exactness::new(&Budget::new(&tiny, &cfg), overflow::usable(&tiny, &cfg));
    assert_eq!(exactness.counting(used, overhead), Counting::Exact);
}

#[test]
fn the_figures_switch_at_the_bound_and_prefetch_halfway() {
    let e = Exactness {
        figure_from: 3_000,
        content_from: 900,
    };
    assert_eq!(e.counting(2_000, 2_000), Counting::Heuristic);
    assert_eq!(e.counting(2_449, 2_000), Counting::Heuristic);
    assert_eq!(e.counting(2_500, 2_000), Counting::Prefetch);
    assert_eq!(e.counting(3_000, 2_000), Counting::Exact);
    // the conversation alone: prefetched from half its threshold, exact from it
    assert_eq!(e.counting(449, 0), Counting::Heuristic);
    assert_eq!(e.counting(450, 0), Counting::Prefetch);
    assert_eq!(e.counting(900, 0), Counting::Exact);
    // a fixed part past the figure's threshold is exact at once
    assert_eq!(e.counting(3_100, 3_100), Counting::Exact);
    // no window: only the content and EXACT_FROM decide
    let cfg = CompactionConfig::default();
    let unknown = window(0);
    let e = Exactness::new(&Budget::new(&unknown, &cfg), 0);
    assert_eq!(e.figure_from, EXACT_FROM);
    assert_eq!(e.counting(EXACT_FROM, EXACT_FROM), Counting::Exact);
}

/// Tool outputs grow turn by turn at a 16k window. Wherever the lazy estimator is allowed to go on
/// with the heuristic, the overflow test and the prune plan decide as exact counts decide; and
/// before the first size at which either fires, the estimator has been told to count exactly.
#[test]
fn near_a_threshold_it_counts_exactly_and_decides_as_before() {
    let cfg = CompactionConfig::default();
    let limits = window(16_000);
    let budget = Budget::new(&limits, &cfg);
    let usable = overflow::usable(&limits, &cfg);
    let exactness = Exactness::new(&budget, usable);
    let rules = PruneRules::new(&budget, &cfg);
    let (mut lazy, mut exact) = (
        Estimator::lazy("mock/test-model"),
        Estimator::for_model("mock/test-model"),
    );
    let (mut exact_seen, mut prune_seen, mut overflow_seen) = (false, false, false);
    for size in (0..=2_000).step_by(20) {
        // "w12 " is two or three BPE tokens against the heuristic's one: a hard case for it
        let view = session(&words(size));
        let (used_h, overhead_h) = figure(&mut lazy, &view);
        let (used_e, _) = figure(&mut exact, &view);
        let counting = exactness.counting(used_h, overhead_h);
        let overflow = overflow::is_overflow(used_e, &limits, &cfg);
        let prune = prune::plan(&view, &mut exact, &rules);
        exact_seen |= counting == Counting::Exact;
        if overflow || !prune.is_empty() {
            assert!(
                exact_seen,
                "size {size}: a decision fired on heuristic counts"
            );
        }
        prune_seen |= !prune.is_empty();
        overflow_seen |= overflow;
        if counting != Counting::Exact {
            assert_eq!(overflow::is_overflow(used_h, &limits, &cfg), overflow);
            assert_eq!(prune::plan(&view, &mut lazy, &rules), prune, "size {size}");
        }
    }
    assert!(
        exact_seen && prune_seen && overflow_seen,
        "the sweep crossed both thresholds: {exact_seen} {prune_seen} {overflow_seen}"
    );
}

/// A prompt whose exact count reaches the usable window is always checked with the BPE: its
/// heuristic count is within the bound of it, for prose, code-like filler and CJK.
#[test]
fn a_prompt_that_could_be_refused_is_counted_exactly() {
    let cfg = CompactionConfig::default();
    let limits = window(16_000);
    let usable = overflow::usable(&limits, &cfg);
    let (mut lazy, mut exact) = (
        Estimator::lazy("mock/test-model"),
        Estimator::for_model("mock/test-model"),
    );
    let texts = [
        |n: usize| words(n),
        |n: usize| "上下文管理是编码代理的核心能力。".repeat(n / 8 + 1),
        |n: usize| "{\"k\":[1,2,3]} ".repeat(n / 4 + 1),
    ];
    let mut refused = 0;
    for make in texts {
        for n in (0..12_000).step_by(250) {
            let view = [user("u1", &make(n))];
            let (h, _) = figure(&mut lazy, &view);
            let (e, _) = figure(&mut exact, &view);
            if e >= usable {
                refused += 1;
                assert!(
                    Exactness::could_reach(h, usable),
                    "{e} exact, {h} heuristic"
                );
            }
        }
    }
    assert!(refused > 0);
}
