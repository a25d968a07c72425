//! Background compaction through the real engine against a mock that counts tokens as a real
//! server would (from the request's size): the summary is written ahead of the threshold with
//! the session's own request (its prefix unchanged) and swapped in there; a stale one is not
//! used; none is written when automatic compaction is off or the background is; an interrupt
//! stops it.

use crate::support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use pith_config::Config;
use pith_protocol::event::{CompactionCost, ContextEvent, Event, Op, TurnEnd, TurnEvent};
use serde_json::Value;
use support::engine::{Harness, harness_with};
use support::{MockResponse, openai};

const SUMMARY_TEMPLATE: &str = "## Goal\nKeep going.\n## Constraints & Preferences\nNone\n## Progress\nSome.\n## Key Decisions\nNone\n## Next Steps\nNone\n## Critical Context\n{}\n## Relevant Files\nNone";

/// A 20k window with a 2k output cap: 18k usable, the background starts at 65% (11.7k).
fn window(config: &mut Config, background: Option<f64>, auto: bool) {
    let m = config.models.values_mut().next().unwrap();
    m.context = 20_000;
    m.output = 2_000;
    config.compaction.background = background;
    config.compaction.auto = auto;
}

fn last_user_text(body: &Value) -> String {
    support::message_text(body["messages"].as_array().unwrap().last().unwrap())
}

fn is_summary_request(body: &Value) -> bool {
    last_user_text(body).starts_with("[pith: context compaction]")
        || body.get("tools").is_none() && body.to_string().contains("## Critical Context")
}

/// Answers every step with ~900 tokens of text and every summary request with `SUMMARY-n` (n
/// counts summary requests from 1); `summary(n)` may change how summary `n` is sent.
fn serve(
    h: &Harness,
    summary: impl Fn(usize, MockResponse) -> MockResponse + Send + Sync + 'static,
) {
    let count = Arc::new(AtomicUsize::new(0));
    h.server.respond_with(move |body| {
        let prompt = (body.to_string().len() / 4) as u64;
        if is_summary_request(body) {
            let n = count.fetch_add(1, Ordering::SeqCst) + 1;
            let text = SUMMARY_TEMPLATE.replace("{}", &format!("SUMMARY-{n}"));
            return summary(n, openai::text(&text, Some((prompt, 60))));
        }
        let answer = "A long answer about the code, with reasons and details. ".repeat(64);
        openai::text(&answer, Some((prompt, (answer.len() / 4) as u64)))
    });
}

/// One turn; returns the compactions it made.
async fn turn(h: &mut Harness, n: usize) -> (TurnEnd, Vec<CompactionCost>) {
    let prompt = format!(
        "Step {n}: look at the next part of the code. {}",
        "Context. ".repeat(40)
    );
    h.send(Op::user_turn(prompt));
    let mut done = Vec::new();
    loop {
        match h.until("turn events", |_| true).await {
            Event::Context(ContextEvent::CompactionFinished { cost, .. }) => done.push(cost),
            Event::Turn(TurnEvent::TurnFinished { reason }) => return (reason, done),
            _ => {}
        }
    }
}

fn summary_requests(h: &Harness) -> Vec<usize> {
    (0..h.server.requests().len())
        .filter(|&i| is_summary_request(&h.server.request_body(i)))
        .collect()
}

/// Turns until a background summary request has been made.
async fn until_background(h: &mut Harness, n: &mut usize) {
    while summary_requests(h).is_empty() {
        assert_eq!(turn(h, *n).await.0, TurnEnd::Stop);
        *n += 1;
        assert!(*n < 40, "no background summary");
    }
}

/// Turns until one compacts automatically.
async fn until_auto(h: &mut Harness, n: &mut usize) {
    loop {
        let (end, done) = turn(h, *n).await;
        assert_eq!(end, TurnEnd::Stop);
        *n += 1;
        if !done.is_empty() {
            return;
        }
        assert!(*n < 80, "no automatic compaction");
    }
}

/// The body of the request of one more turn.
async fn one_more_request(h: &mut Harness) -> String {
    h.send(Op::user_turn("and now?"));
    assert_eq!(h.turn_finished().await, TurnEnd::Stop);
    h.server
        .request_body(h.server.requests().len() - 1)
        .to_string()
}

#[tokio::test]
async fn the_background_summary_is_swapped_in_at_the_threshold() {
    let mut h = harness_with(vec![], true, |c| window(c, Some(0.65), true)).await;
    serve(&h, |_, r| r);
    let mut compactions = Vec::new();
    let mut started_at = None;
    for n in 0..40 {
        let (end, done) = turn(&mut h, n).await;
        assert_eq!(end, TurnEnd::Stop);
        if started_at.is_none() && !summary_requests(&h).is_empty() {
            started_at = Some(n);
        }
        if !done.is_empty() {
            compactions = done;
            assert!(
                started_at.is_some_and(|s| s < n),
                "started {started_at:?}, swapped {n}"
            );
            break;
        }
    }
    assert_eq!(compactions.len(), 1, "{compactions:?}");
    let c = compactions[0];
    assert!(c.background && c.cache_friendly, "{c:?}");
    // No summary written at the threshold: every summary request after the background one was
    // made from the compacted context (the next background summary, when the swapped-in context
    // is already past the start).
    let sums = summary_requests(&h);
    assert!(
        !h.server
            .request_body(sums[0])
            .to_string()
            .contains("SUMMARY-1")
    );
    for &i in &sums[1..] {
        let body = h.server.request_body(i).to_string();
        assert!(
            body.contains("SUMMARY-1"),
            "a summary request at the threshold: {i}"
        );
    }
    // Its prefix is the session's request byte for byte: the next step's request starts with
    // it (minus the instruction).
    let bg = h.server.request_body(sums[0]);
    let next = h.server.request_body(sums[0] + 1);
    let bg_msgs = bg["messages"].as_array().unwrap();
    let next_msgs = next["messages"].as_array().unwrap();
    assert_eq!(bg["tools"], next["tools"]);
    assert_eq!(
        &bg_msgs[..bg_msgs.len() - 1],
        &next_msgs[..bg_msgs.len() - 1],
        "the background request's prefix differs from the session's"
    );
    // The request after the swap carries the summary instead of the history it replaced.
    let biggest = (0..h.server.requests().len())
        .map(|i| h.server.request_body(i).to_string().len())
        .max()
        .unwrap();
    h.send(Op::user_turn("and now?"));
    assert_eq!(h.turn_finished().await, TurnEnd::Stop);
    let last = h.server.request_body(h.server.requests().len() - 1);
    let text = last.to_string();
    assert!(text.contains("SUMMARY-1"), "summary missing");
    // Not to 70% any more: every prompt here is ~360 characters of the user's own sentences,
    // and those are carried word for word (ARCHITECTURE §6.4), so they take their share.
    assert!(
        text.len() * 10 < biggest * 8,
        "not compacted: {} of {biggest} bytes",
        text.len()
    );
}

#[tokio::test]
async fn a_stale_background_summary_is_not_used() {
    let mut h = harness_with(vec![], true, |c| window(c, Some(0.65), true)).await;
    serve(&h, |_, r| r);
    let mut n = 0;
    until_background(&mut h, &mut n).await;
    // /compact rewrites what the background summary covers.
    h.send(Op::Compact { focus: None });
    assert_eq!(h.turn_finished().await, TurnEnd::Compacted);
    until_auto(&mut h, &mut n).await;
    let last = one_more_request(&mut h).await;
    assert!(!last.contains("SUMMARY-1"), "the stale summary was used");
}

#[tokio::test]
async fn no_background_summary_when_auto_or_background_is_off() {
    // auto off: no summary at all, however full the context gets.
    let mut h = harness_with(vec![], true, |c| window(c, Some(0.65), false)).await;
    serve(&h, |_, r| r);
    for n in 0..14 {
        turn(&mut h, n).await;
    }
    assert!(summary_requests(&h).is_empty());

    // background = 0: the summary is written at the threshold, in the foreground.
    let mut h = harness_with(vec![], true, |c| window(c, Some(0.0), true)).await;
    serve(&h, |_, r| r);
    for n in 0..40 {
        let before = h.server.requests().len();
        let (_, done) = turn(&mut h, n).await;
        if let Some(c) = done.first() {
            assert!(!c.background, "{c:?}");
            let sums = summary_requests(&h);
            assert_eq!(sums.len(), 1, "{sums:?}");
            assert!(
                sums[0] >= before,
                "summary written before the threshold turn"
            );
            return;
        }
        assert!(summary_requests(&h).is_empty(), "turn {n}");
    }
    panic!("no compaction");
}

#[tokio::test]
async fn an_interrupt_stops_the_background_summary() {
    let mut h = harness_with(vec![], false, |c| window(c, Some(0.65), true)).await;
    // The first summary never ends unless pith lets go of it.
    serve(&h, |n, r| if n == 1 { r.hold_open() } else { r });
    let mut n = 0;
    until_background(&mut h, &mut n).await;
    // A turn interrupted while the background summary is being written.
    h.server
        .push(openai::text("slow", Some((100, 1))).first_delay_ms(10_000));
    h.send(Op::user_turn("one more"));
    let asked = h.server.requests().len();
    while h.server.requests().len() == asked {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    h.send(Op::Interrupt);
    assert_eq!(h.turn_finished().await, TurnEnd::Interrupted);
    // At the threshold the held summary is not waited for: a new one is written.
    until_auto(&mut h, &mut n).await;
    assert!(summary_requests(&h).len() >= 2);
    let last = one_more_request(&mut h).await;
    assert!(!last.contains("SUMMARY-1"));
}

/// An engine on the Anthropic wire format whose mock models the prompt cache; `change` sets
/// the compaction options.
async fn anthropic(change: impl FnOnce(&mut Config)) -> Harness {
    harness_with(vec![], true, |c| {
        window(c, Some(0.0), true);
        // Room for a summary after a full prefix: 15k usable, 5k of output.
        c.models.values_mut().next().unwrap().output = 5_000;
        let p = c.provider.values_mut().next().unwrap();
        p.kind = pith_config::ProviderKind::Anthropic;
        change(c);
    })
    .await
}

/// Serves `h` as Anthropic would, with the prompt cache; summaries take `summary_delay_ms`
/// between frames, steps `step_delay_ms` before their first byte.
fn serve_anthropic(h: &Harness, step_delay_ms: u64, summary_delay_ms: u64) {
    let cache = support::anthropic::PrefixCache::default();
    h.server.respond_with(move |body| {
        let (input, read, write) = cache.usage(body);
        if is_summary_request(body) {
            let text = SUMMARY_TEMPLATE.replace("{}", "SUMMARY");
            let blocks = [support::anthropic::Block::Text(&text)];
            return support::anthropic::message(&blocks, "end_turn", (input, 60, read, write))
                .delay_ms(summary_delay_ms);
        }
        let answer = "A long answer about the code, with reasons and details. ".repeat(64);
        let out = (answer.len() / 4) as u64;
        let blocks = [support::anthropic::Block::Text(&answer)];
        support::anthropic::message(&blocks, "end_turn", (input, out, read, write))
            .first_delay_ms(step_delay_ms)
    });
}

/// Turns until the first compaction; its cost and the pause it made (from the event before it
/// started, the end of the step that reached the threshold, to its end: the time the session
/// waits).
async fn until_compacted(h: &mut Harness) -> (CompactionCost, std::time::Duration) {
    for n in 0..60 {
        let prompt = format!(
            "Step {n}: look at the next part of the code. {}",
            "Context. ".repeat(40)
        );
        h.send(Op::user_turn(prompt));
        let mut started = None;
        let mut last = std::time::Instant::now();
        loop {
            let event = h.until("turn events", |_| true).await;
            let at = std::time::Instant::now();
            match event {
                Event::Context(ContextEvent::CompactionStarted { .. }) => started = Some(last),
                Event::Context(ContextEvent::CompactionFinished { cost, .. }) => {
                    let pause = started.map(|s| s.elapsed()).unwrap_or_default();
                    h.turn_finished().await;
                    return (cost, pause);
                }
                Event::Turn(TurnEvent::TurnFinished { reason }) => {
                    assert_eq!(reason, TurnEnd::Stop);
                    break;
                }
                _ => {}
            }
            last = at;
        }
    }
    panic!("no compaction");
}

fn cached_share(c: &CompactionCost) -> f64 {
    c.cache_read as f64 / c.input.max(1) as f64
}

#[tokio::test]
async fn the_cache_friendly_summary_reads_its_prefix_from_the_cache() {
    let mut h = anthropic(|_| {}).await;
    serve_anthropic(&h, 0, 0);
    let (friendly, _) = until_compacted(&mut h).await;
    assert!(
        friendly.cache_friendly && !friendly.background,
        "{friendly:?}"
    );
    assert!(cached_share(&friendly) >= 0.8, "{friendly:?}");

    // A separate compaction model sends its own request: nothing of it is cached.
    let mut h = anthropic(|c| c.compaction.model = Some("mock/summariser".into())).await;
    serve_anthropic(&h, 0, 0);
    let (dedicated, _) = until_compacted(&mut h).await;
    assert!(!dedicated.cache_friendly, "{dedicated:?}");
    assert!(cached_share(&dedicated) < 0.2, "{dedicated:?}");
}

/// The figures in BENCHMARKS.md §7: `cargo test --test all context_background:: -- --ignored
/// --nocapture`. Steps take 1.5 s, the summary streams over about 5 s.
#[tokio::test]
#[ignore]
async fn measure_the_pause_and_the_cache_share() {
    for (name, background, model) in [
        ("foreground, dedicated", 0.0, Some("mock/summariser")),
        ("foreground, cache-friendly", 0.0, None),
        ("background (0.65)", 0.65, None),
    ] {
        let mut h = anthropic(|c| {
            c.compaction.background = Some(background);
            c.compaction.model = model.map(str::to_string);
        })
        .await;
        serve_anthropic(&h, 1_500, 600);
        let (cost, pause) = until_compacted(&mut h).await;
        println!(
            "{name:28} pause {:>9.3} ms · input {:>6} · from cache {:>5.1}% · background {}",
            pause.as_secs_f64() * 1000.0,
            cost.input,
            100.0 * cached_share(&cost),
            cost.background
        );
    }
}
