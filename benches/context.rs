//! The per-step context work (view + estimate + overflow test + prune plan) on synthetic sessions
//! of 100 to 100,000 stored parts, the estimator's throughput, and its part-cache hit rate over
//! a long session.
//!
//! A step is modelled as the engine does it (src/engine/turn.rs): append one step's parts (an
//! assistant message with a text, a completed tool call and its step markers, fresh ids), then
//! refresh the view pointer and convert the view to the request, estimate the request (every
//! message of the view through the part cache, as `estimate_request` does, plus what is new),
//! test for overflow and plan a prune — with the caches warmed by the steps before. The step is
//! removed again afterwards (and its parts forgotten by the estimator) so every iteration sees the
//! same session length. Its cost must grow with what is new, not with the session's length: the
//! view starts at a pointer, each part is counted once, and the prune walk stops at the first
//! output it already pruned. The whole session stays in memory (the engine keeps only the view),
//! so any scan of the whole history would show.
// test and bench code is no API: `pub` there only shares helpers between its modules
#![allow(unreachable_pub)]
#![allow(clippy::unwrap_used)] // a test may panic on what it did not expect

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use serde_json::json;

use pith_config::CompactionConfig;
use pith_context::budget::Budget;
use pith_context::overflow::{self, Limits};
use pith_context::prune::PruneRules;
use pith_context::tokens::Estimator;
use pith_context::tracker::ContextTracker;
use pith_context::{prune, view};
use pith_protocol::message::{CompactionPart, Message, PartKind, Role, ToolState, ToolTime};

mod common;

const SESSION: &str = "bench";
/// Turns kept after the latest compaction (the view), whatever the session length.
const VIEW_TURNS: usize = 15;
/// A compaction every this many turns.
const COMPACT_EVERY: usize = 20;
/// Turns whose tool outputs are still unpruned at the end.
const UNPRUNED_TURNS: usize = 6;

fn prose(n: usize, seed: usize) -> String {
    const W: [&str; 16] = [
        "the",
        "parser",
        "returns",
        "an",
        "error",
        "when",
        "src/lib.rs",
        "config",
        "value",
        "is",
        "missing",
        "so",
        "we",
        "check",
        "fn",
        "Option<u64>",
    ];
    (0..n)
        .map(|i| W[(i * 7 + seed) % W.len()])
        .collect::<Vec<_>>()
        .join(" ")
}

/// One step: StepStart, Text, Tool (completed), StepFinish — four parts.
fn step_msg(parent: &str, seed: usize, compacted: bool) -> Message {
    let mut m = Message::new(SESSION, Role::Assistant);
    m.parent_id = Some(parent.to_string());
    m.finish = Some("tool_calls".into());
    m.push(PartKind::StepStart);
    m.push(PartKind::Text {
        text: prose(40, seed),
        synthetic: false,
    });
    m.push(PartKind::Tool {
        call_id: format!("call_{seed}"),
        tool: "read".into(),
        input: json!({"path": format!("src/module_{seed}.rs")}),
        state: ToolState::Completed {
            output: common::code(12),
            title: "read".into(),
            metadata: json!({}),
            time: ToolTime {
                start: 0,
                end: 1,
                compacted: compacted.then_some(1),
            },
        },
    });
    m.push(PartKind::StepFinish {
        usage: Default::default(),
        finish: "tool_calls".into(),
        cost: 0.0,
    });
    m
}

/// A session of about `parts` stored parts: turns of one user message and three steps, a
/// completed compaction every `COMPACT_EVERY` turns placed so that the last one is
/// `VIEW_TURNS` turns before the end, old outputs already pruned.
fn session(parts: usize) -> Vec<Message> {
    let turns = (parts / 13).max(1);
    let mut out = Vec::new();
    for t in 0..turns {
        let left = turns - t;
        if t > 0 && left >= VIEW_TURNS && (left - VIEW_TURNS).is_multiple_of(COMPACT_EVERY) {
            let mut c = Message::new(SESSION, Role::User);
            c.push(PartKind::Compaction(CompactionPart {
                auto: true,
                overflow: false,
                focus: None,
                tail_start: None,
                ..Default::default()
            }));
            let mut s = Message::new(SESSION, Role::Assistant);
            s.parent_id = Some(c.id.clone());
            s.summary = true;
            s.finish = Some("stop".into());
            s.push(PartKind::Text {
                text: prose(400, t),
                synthetic: false,
            });
            out.push(c);
            out.push(s);
        }
        let u = common::user_msg(SESSION, prose(30, t));
        let uid = u.id.clone();
        out.push(u);
        for k in 0..3 {
            out.push(step_msg(&uid, t * 3 + k, left > UNPRUNED_TURNS));
        }
    }
    out
}

/// The prune rules of a 200k-window model with the default config.
fn rules() -> PruneRules {
    let cfg = CompactionConfig::default();
    let limits = Limits {
        context: 200_000,
        input: None,
        output: 64_000,
        max_tokens: None,
    };
    PruneRules::new(&Budget::new(&limits, &cfg), &cfg)
}

struct Engine {
    messages: Vec<Message>,
    pointer: view::ViewPointer,
    est: Estimator,
    tracker: ContextTracker,
    limits: Limits,
    cfg: CompactionConfig,
    rules: PruneRules,
    seed: usize,
}

impl Engine {
    fn new(parts: usize) -> Self {
        let mut e = Engine {
            messages: session(parts),
            pointer: view::ViewPointer::new(),
            est: Estimator::for_model("anthropic/claude-sonnet-4-5"),
            tracker: ContextTracker::new(),
            limits: Limits {
                context: 200_000,
                input: None,
                output: 64_000,
                max_tokens: None,
            },
            cfg: CompactionConfig::default(),
            rules: rules(),
            seed: 1_000_000,
        };
        // Warm: the pointer, the part cache and the running figure, as after earlier steps.
        e.pointer.refresh(&e.messages);
        let estimate = e.est.messages(e.pointer.view(&e.messages));
        e.tracker.on_reset(estimate);
        black_box(prune::plan(&e.messages, &mut e.est, &e.rules));
        e
    }

    /// Appends one step and does the per-step context work; then removes the step again so
    /// every iteration sees the same session length.
    fn step(&mut self) -> usize {
        self.seed += 1;
        let parent = self
            .messages
            .iter()
            .rev()
            .find(|m| m.role == Role::User)
            .map(|m| m.id.clone())
            .unwrap_or_default();
        self.messages.push(step_msg(&parent, self.seed, false));
        // 1. view from the pointer, converted to the request
        self.pointer.refresh(&self.messages);
        let view = self.pointer.view(&self.messages);
        let chat = view::convert(&view, &mut |_, _| None);
        // 2. estimate: what is new joins the running figure; the request estimate walks the
        //    view through the part cache (the engine's `estimate_request`)
        let last = self.messages.len() - 1;
        let added = self.est.message(&self.messages[last]);
        self.tracker.on_added(added);
        let request = self.est.messages(view.iter().copied());
        // 3. overflow test
        let over = overflow::is_overflow(self.tracker.used(), &self.limits, &self.cfg);
        // 4. prune plan
        let plan = prune::plan(&self.messages, &mut self.est, &self.rules);
        let out = chat.len() + usize::from(over) + plan.targets.len() + request as usize;
        if let Some(m) = self.messages.pop() {
            self.est.forget(&m.parts);
        }
        out
    }
}

fn per_step(c: &mut Criterion) {
    let mut group = c.benchmark_group("per_step");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    for parts in [100usize, 1_000, 10_000, 100_000] {
        let mut engine = Engine::new(parts);
        group.bench_with_input(BenchmarkId::from_parameter(parts), &parts, |b, _| {
            b.iter(|| black_box(engine.step()))
        });
    }
    group.finish();
}

fn cjk(chars: usize) -> String {
    const T: &str =
        "上下文窗口管理是这个代理的核心功能，旧的工具输出会被清除，摘要会保留重要的事实。";
    T.chars().cycle().take(chars).collect()
}

/// Raw BPE counting (no cache) on about 64 KiB of each kind of text.
fn estimator_throughput(c: &mut Criterion) {
    let est = Estimator::for_model("gpt-4o");
    let inputs = [
        ("code", common::code(800)),
        ("prose", prose(12_000, 3)),
        ("cjk", cjk(22_000)),
    ];
    let mut group = c.benchmark_group("estimator");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    for (name, text) in &inputs {
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_function(*name, |b| b.iter(|| black_box(est.text(text))));
    }
    group.finish();
}

/// The part cache over a long session, driven as the engine drives it: 2,000 turns of a user
/// message and three steps; at every step the request estimate walks the view, the step's
/// message is counted when it finishes, a prune plan runs (and is applied, which changes the
/// pruned parts' fingerprints); every `COMPACT_EVERY` turns a compaction replaces the view and
/// the estimator forgets what left it. Prints hits, misses and the hit rate (not a timing).
fn cache_hit_rate(_c: &mut Criterion) {
    let mut est = Estimator::for_model("anthropic/claude-sonnet-4-5");
    let rules = rules();
    let mut view_msgs: Vec<Message> = Vec::new();
    let mut seed = 0usize;
    let turns = 2_000;
    let start = std::time::Instant::now();
    for t in 0..turns {
        if t > 0 && t % COMPACT_EVERY == 0 {
            // the compaction: the view becomes compaction message + summary
            let gone = std::mem::take(&mut view_msgs);
            est.forget(gone.iter().flat_map(|m| m.parts.iter()));
            let mut cm = Message::new(SESSION, Role::User);
            cm.push(PartKind::Compaction(CompactionPart {
                auto: true,
                overflow: false,
                focus: None,
                tail_start: None,
                ..Default::default()
            }));
            let mut s = Message::new(SESSION, Role::Assistant);
            s.parent_id = Some(cm.id.clone());
            s.summary = true;
            s.finish = Some("stop".into());
            s.push(PartKind::Text {
                text: prose(400, t),
                synthetic: false,
            });
            view_msgs.push(cm);
            view_msgs.push(s);
            black_box(est.messages(&view_msgs));
        }
        let u = common::user_msg(SESSION, prose(30, t));
        let uid = u.id.clone();
        view_msgs.push(u);
        for _ in 0..3 {
            seed += 1;
            black_box(est.messages(&view_msgs)); // estimate_request before the step
            let m = step_msg(&uid, seed, false);
            black_box(est.message(&m)); // the step joins the running figure
            view_msgs.push(m);
            let plan = prune::plan(&view_msgs, &mut est, &rules);
            if !plan.is_empty() {
                prune::apply(&mut view_msgs, &plan, 1);
                black_box(est.messages(&view_msgs)); // reset_estimate after a prune
            }
        }
    }
    let (hits, misses) = est.cache_stats();
    println!(
        "estimator/cache_hit_rate: {turns} turns, {} steps: {hits} hits, {misses} misses, hit rate {:.2}% ({:.0} ms)",
        turns * 3,
        hits as f64 * 100.0 / (hits + misses) as f64,
        start.elapsed().as_secs_f64() * 1000.0
    );
}

/// The anchor index of a compaction over the history it summarises (the costliest of the
/// records: every output is scanned), as a plan measures it again for each tail it tries: the
/// first pass reads every message (`cold`), a later pass over the same messages reads the plan's
/// cache (`warm`).
fn records(c: &mut Criterion) {
    let mut group = c.benchmark_group("records");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    let est = Estimator::for_model("gpt-4o");
    for parts in [1_000usize, 10_000] {
        let history = session(parts);
        group.bench_with_input(BenchmarkId::new("cold", parts), &parts, |b, _| {
            b.iter(|| {
                let mut cache = pith_context::anchors::Cache::default();
                black_box(pith_context::anchors::index_cached(
                    &history,
                    &[],
                    1_500,
                    &est,
                    "",
                    &mut cache,
                ))
            })
        });
        let mut cache = pith_context::anchors::Cache::default();
        pith_context::anchors::index_cached(&history, &[], 1_500, &est, "", &mut cache);
        group.bench_with_input(BenchmarkId::new("warm", parts), &parts, |b, _| {
            b.iter(|| {
                black_box(pith_context::anchors::index_cached(
                    &history,
                    &[],
                    1_500,
                    &est,
                    "",
                    &mut cache,
                ))
            })
        });
    }
    group.finish();
}

criterion_group!(
    benches,
    per_step,
    estimator_throughput,
    cache_hit_rate,
    records
);
criterion_main!(benches);
