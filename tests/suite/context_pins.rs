//! `/pin` through the real engine against the mock (ARCHITECTURE.md §6.4 "Pins and steering"):
//! a pinned line is in every request word for word, through three compactions, until `/unpin`;
//! a resumed session has its pins; `/context` shows them as a row that adds up with the rest;
//! the status bar's notice says when a compaction is coming; `/compact FOCUS` given while a
//! summary is written in the background shapes the summary.

use crate::support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use pith_config::Config;
use pith_protocol::event::{
    CompactionNotice, ContextEvent, Event, Op, Pin, SessionEvent, TurnEnd, TurnEvent,
};
use pith_store::Store;
use serde_json::Value;
use support::engine::{Harness, harness_with};
use support::{MockResponse, openai};

const PIN: &str = "PIN-7731: the staging API listens on port 8443, never 8080";
const SECOND: &str = "Never edit files under vendor/.";
const SUMMARY: &str = "## Goal\nKeep going.\n## Constraints & Preferences\nNone\n## Progress\nSome.\n## Key Decisions\nNone\n## Next Steps\nNone\n## Critical Context\nSUMMARY-{}\n## Relevant Files\nNone";

/// A 20k window with a 2k output cap (18k usable); `background` as given.
fn window(config: &mut Config, background: Option<f64>) {
    let m = config.models.values_mut().next().unwrap();
    m.context = 20_000;
    m.output = 2_000;
    config.compaction.background = background;
}

fn last_user_text(body: &Value) -> String {
    support::message_text(body["messages"].as_array().unwrap().last().unwrap())
}

fn is_summary_request(body: &Value) -> bool {
    last_user_text(body).starts_with("[pith: context compaction]")
        || body.get("tools").is_none() && body.to_string().contains("## Critical Context")
}

/// Every step answers with ~900 tokens of text, every summary request with a summary that
/// forgets everything; `summary(n, response)` may change how summary `n` (from 1) is sent.
fn serve(
    h: &Harness,
    summary: impl Fn(usize, MockResponse) -> MockResponse + Send + Sync + 'static,
) {
    let count = Arc::new(AtomicUsize::new(0));
    h.server.respond_with(move |body| {
        let prompt = (body.to_string().len() / 4) as u64;
        if is_summary_request(body) {
            let n = count.fetch_add(1, Ordering::SeqCst) + 1;
            let text = SUMMARY.replace("{}", &n.to_string());
            return summary(n, openai::text(&text, Some((prompt, 60))));
        }
        let answer = "A long answer about the code, with reasons and details. ".repeat(64);
        openai::text(&answer, Some((prompt, (answer.len() / 4) as u64)))
    });
}

/// One turn; the compactions it made and the compaction notices it sent, in order.
async fn turn(h: &mut Harness, n: usize) -> (usize, Vec<Option<CompactionNotice>>) {
    let prompt = format!(
        "Step {n}: look at the next part of the code. {}",
        "Context. ".repeat(40)
    );
    h.send(Op::user_turn(prompt));
    let (mut compacted, mut notices) = (0, Vec::new());
    loop {
        match h.until("turn events", |_| true).await {
            Event::Context(ContextEvent::CompactionFinished { .. }) => compacted += 1,
            Event::Context(ContextEvent::CompactionAhead { notice }) => notices.push(notice),
            Event::Turn(TurnEvent::TurnFinished { reason }) => {
                assert_eq!(reason, TurnEnd::Stop);
                return (compacted, notices);
            }
            _ => {}
        }
    }
}

/// Sends `op` and returns the pins it was answered with.
async fn pins_after(h: &mut Harness, op: Op) -> Vec<Pin> {
    h.send(op);
    match h
        .until("the pins", |e| {
            matches!(
                e,
                Event::Session(SessionEvent::PinsChanged { .. })
                    | Event::Turn(TurnEvent::Error { .. })
            )
        })
        .await
    {
        Event::Session(SessionEvent::PinsChanged { pins, .. }) => pins,
        other => panic!("not answered with the pins: {other:?}"),
    }
}

fn texts(pins: &[Pin]) -> Vec<&str> {
    pins.iter().map(|p| p.text.as_str()).collect()
}

/// The session's own requests (not the summaries) from request `from` on.
fn step_requests(h: &Harness, from: usize) -> Vec<String> {
    (from..h.server.requests().len())
        .map(|i| h.server.request_body(i))
        .filter(|b| !is_summary_request(b))
        .map(|b| b.to_string())
        .collect()
}

#[tokio::test]
async fn a_pin_is_in_every_request_word_for_word_through_three_compactions_until_unpinned() {
    let mut h = harness_with(vec![], true, |c| window(c, Some(0.0))).await;
    serve(&h, |_, r| r);
    let pins = pins_after(
        &mut h,
        Op::Pin {
            text: Some(PIN.into()),
        },
    )
    .await;
    assert_eq!(texts(&pins), [PIN]);
    assert!(pins[0].tokens > 5, "{pins:?}");
    let (mut compactions, mut n) = (0, 0);
    while compactions < 3 {
        let from = h.server.requests().len();
        let (done, _) = turn(&mut h, n).await;
        compactions += done;
        n += 1;
        assert!(n < 90, "only {compactions} compactions");
        for body in step_requests(&h, from) {
            assert!(
                body.contains(&format!("1. {PIN}")),
                "turn {n}: the pin is missing"
            );
        }
    }
    // the summaries forgot everything; the pin was never theirs to keep
    let from = h.server.requests().len();
    turn(&mut h, n).await;
    let last = step_requests(&h, from).pop().unwrap();
    assert!(last.contains("SUMMARY-") && last.contains(PIN), "{last}");
    n += 1;

    let pins = pins_after(&mut h, Op::Unpin { number: None }).await;
    assert!(pins.is_empty());
    let from = h.server.requests().len();
    turn(&mut h, n).await;
    let after = step_requests(&h, from);
    assert!(!after.is_empty());
    for body in after {
        assert!(
            !body.contains("PIN-7731") && !body.contains("Pinned by the user"),
            "{body}"
        );
    }
}

#[tokio::test]
async fn pins_are_bounded_numbered_and_kept_with_the_session() {
    let mut h = harness_with(vec![], true, |c| window(c, Some(0.0))).await;
    serve(&h, |_, r| r);
    pins_after(
        &mut h,
        Op::Pin {
            text: Some(PIN.into()),
        },
    )
    .await;
    let pins = pins_after(
        &mut h,
        Op::Pin {
            text: Some(SECOND.into()),
        },
    )
    .await;
    assert_eq!(texts(&pins), [PIN, SECOND]);
    // `/pin` alone lists them
    assert_eq!(
        texts(&pins_after(&mut h, Op::Pin { text: None }).await),
        [PIN, SECOND]
    );
    // refused, each with why in one line, and nothing pinned
    for (text, why) in [
        ("two\nlines", "one line"),
        (&"x".repeat(501) as &str, "at most 500"),
        (SECOND, "already pinned as 2"),
    ] {
        h.send(Op::Pin {
            text: Some(text.into()),
        });
        match h
            .until("the refusal", |e| {
                matches!(e, Event::Turn(TurnEvent::Error { .. }))
            })
            .await
        {
            Event::Turn(TurnEvent::Error { message, .. }) => {
                assert!(
                    message.contains(why) && !message.contains('\n'),
                    "{message}"
                )
            }
            _ => unreachable!(),
        }
    }
    h.send(Op::Unpin { number: Some(3) });
    h.until("no pin 3", |e| matches!(e, Event::Turn(TurnEvent::Error { message, .. }) if message.contains("no pin 3"))).await;

    // the session is left and resumed in a new engine: its pins come with it
    h.send(Op::Shutdown);
    let Harness {
        handle,
        data,
        workspace,
        session_id,
        server,
    } = h;
    handle.done.await.expect("the first engine ends");
    let store = Arc::new(Store::open(data.path()).unwrap());
    assert_eq!(store.pins(&session_id).unwrap(), [PIN, SECOND]);
    let session = store.get_session(&session_id).unwrap();
    let mut config = support::engine::mock_config(&server);
    window(&mut config, Some(0.0));
    let ws = workspace.path().canonicalize().unwrap();
    let handle = pith_engine::spawn(
        support::engine::options(config, &ws, data.path(), true),
        store,
        session,
    )
    .unwrap();
    let mut h = Harness {
        server,
        handle,
        workspace,
        data,
        session_id,
    };
    let from = h.server.requests().len();
    turn(&mut h, 0).await;
    let body = step_requests(&h, from).pop().unwrap();
    assert!(
        body.contains(&format!("1. {PIN}")) && body.contains(&format!("2. {SECOND}")),
        "{body}"
    );

    // `/unpin 1` takes the first; the second is 1 now
    let pins = pins_after(&mut h, Op::Unpin { number: Some(1) }).await;
    assert_eq!(texts(&pins), [SECOND]);
    let from = h.server.requests().len();
    turn(&mut h, 1).await;
    let body = step_requests(&h, from).pop().unwrap();
    assert!(
        body.contains(&format!("1. {SECOND}")) && !body.contains("PIN-7731"),
        "{body}"
    );
}

#[tokio::test]
async fn context_shows_the_pins_as_a_row_that_adds_up() {
    let mut h = harness_with(vec![], true, |c| window(c, Some(0.0))).await;
    serve(&h, |_, r| r);
    pins_after(
        &mut h,
        Op::Pin {
            text: Some(PIN.into()),
        },
    )
    .await;
    turn(&mut h, 0).await;
    h.send(Op::ContextBreakdown);
    let Event::Context(ContextEvent::ContextBreakdown {
        breakdown: b, pins, ..
    }) = h
        .until("breakdown", |e| {
            matches!(e, Event::Context(ContextEvent::ContextBreakdown { .. }))
        })
        .await
    else {
        unreachable!()
    };
    assert_eq!(texts(&pins), [PIN]);
    let each: u64 = pins.iter().map(|p| p.tokens).sum();
    // the row is the block: its header and each pin
    assert!(b.pinned > each && b.pinned < each + 40, "{b:?} {pins:?}");
    let rows = b.system + b.pinned + b.tools + b.summary + b.messages + b.tool_outputs;
    assert_eq!(rows + b.free + b.reserved, b.window, "{b:?}");
}

#[tokio::test]
async fn with_no_summary_ahead_the_notice_says_a_compaction_is_coming_until_it_happened() {
    let mut h = harness_with(vec![], true, |c| window(c, Some(0.0))).await;
    serve(&h, |_, r| r);
    let mut seen = Vec::new();
    for n in 0..40 {
        let (done, notices) = turn(&mut h, n).await;
        seen.extend(notices);
        if done > 0 {
            break;
        }
    }
    assert_eq!(
        seen.first(),
        Some(&Some(CompactionNotice::Soon)),
        "{seen:?}"
    );
    assert_eq!(
        seen.last(),
        Some(&None),
        "the notice stays after the compaction: {seen:?}"
    );
    assert!(!seen.contains(&Some(CompactionNotice::Writing)), "{seen:?}");
}

#[tokio::test]
async fn compact_with_a_focus_while_the_summary_is_written_ahead_is_written_with_the_focus() {
    let mut h = harness_with(vec![], true, |c| window(c, Some(0.65))).await;
    // the summary written ahead never ends unless pith lets go of it
    serve(&h, |n, r| if n == 1 { r.hold_open() } else { r });
    let mut notices = Vec::new();
    let mut n = 0;
    while !notices.contains(&Some(CompactionNotice::Writing)) {
        notices.extend(turn(&mut h, n).await.1);
        n += 1;
        assert!(n < 40, "no background summary: {notices:?}");
    }
    // the summary written ahead is sent from a task of its own
    let summaries = |h: &Harness| {
        (0..h.server.requests().len())
            .filter(|&i| is_summary_request(&h.server.request_body(i)))
            .count()
    };
    for _ in 0..200 {
        if summaries(&h) > 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert_eq!(summaries(&h), 1);
    h.send(Op::Compact {
        focus: Some("FOCUS-KEEP-THE-PORTS".into()),
    });
    let mut after = Vec::new();
    loop {
        match h.until("the compaction", |_| true).await {
            Event::Context(ContextEvent::CompactionAhead { notice }) => after.push(notice),
            Event::Turn(TurnEvent::TurnFinished { reason }) => {
                assert_eq!(reason, TurnEnd::Compacted);
                break;
            }
            _ => {}
        }
    }
    let sums: Vec<String> = (0..h.server.requests().len())
        .map(|i| h.server.request_body(i))
        .filter(is_summary_request)
        .map(|b| b.to_string())
        .collect();
    assert_eq!(sums.len(), 2, "the focus got a summary of its own");
    assert!(!sums[0].contains("FOCUS-KEEP-THE-PORTS"));
    assert!(
        sums[1].contains("FOCUS-KEEP-THE-PORTS"),
        "the focus did not reach the summary"
    );
    assert_eq!(
        after.last(),
        Some(&None),
        "the notice is withdrawn: {after:?}"
    );
    // the held summary was dropped: what is carried on is the focused one
    let from = h.server.requests().len();
    turn(&mut h, n).await;
    let body = step_requests(&h, from).pop().unwrap();
    assert!(
        body.contains("SUMMARY-2") && !body.contains("SUMMARY-1\\n"),
        "{body}"
    );
}

#[tokio::test]
async fn pins_are_refused_past_their_share_of_the_window() {
    // 18k usable: the pins may take 900 tokens of every request
    let mut h = harness_with(vec![], true, |c| window(c, Some(0.0))).await;
    serve(&h, |_, r| r);
    let mut held = 0;
    let message = loop {
        let text = format!(
            "{held}: {}",
            "keep every port and hash exactly; ".repeat(13)
        );
        assert!(text.len() <= 500 && held < 20);
        h.send(Op::Pin { text: Some(text) });
        match h
            .until("an answer", |e| {
                matches!(
                    e,
                    Event::Session(SessionEvent::PinsChanged { .. })
                        | Event::Turn(TurnEvent::Error { .. })
                )
            })
            .await
        {
            Event::Session(SessionEvent::PinsChanged { pins, .. }) => held = pins.len(),
            Event::Turn(TurnEvent::Error { message, .. }) => break message,
            _ => unreachable!(),
        }
    };
    assert!(held >= 3, "refused at {held}: {message}");
    assert!(
        message.contains("more than the 900 this window allows"),
        "{message}"
    );
    let store = Store::open(h.data.path()).unwrap();
    assert_eq!(store.pins(&h.session_id).unwrap().len(), held);
}

#[tokio::test]
async fn a_summary_written_by_a_compaction_model_of_its_own_is_told_the_pins() {
    let mut h = harness_with(vec![], true, |c| {
        window(c, None);
        let mut own = c.models.values().next().unwrap().clone();
        own.context = 20_000;
        c.models.insert("mock/summariser".into(), own);
        c.compaction.model = Some("mock/summariser".into());
    })
    .await;
    serve(&h, |_, r| r);
    pins_after(
        &mut h,
        Op::Pin {
            text: Some(PIN.into()),
        },
    )
    .await;
    let mut n = 0;
    while turn(&mut h, n).await.0 == 0 {
        n += 1;
        assert!(n < 40, "no compaction");
    }
    let sums: Vec<Value> = (0..h.server.requests().len())
        .map(|i| h.server.request_body(i))
        .filter(is_summary_request)
        .collect();
    assert!(!sums.is_empty());
    for body in sums {
        // the dedicated request: the compaction agent's own system prompt, no tools
        assert!(body.get("tools").is_none(), "{body}");
        let text = body.to_string();
        assert!(
            text.contains(&format!("1. {PIN}")) && text.contains("do not restate"),
            "{text}"
        );
    }
}

/// A summary written ahead that ends while the engine is idle changes the notice to
/// "written", without waiting for the next step.
#[tokio::test]
async fn the_notice_says_when_the_summary_written_ahead_is_ready_while_idle() {
    let mut h = harness_with(vec![], true, |c| window(c, Some(0.65))).await;
    // the summary takes a moment, so it ends after the turn that started it
    serve(&h, |_, r| r.first_delay_ms(1_500));
    let mut notices = Vec::new();
    let mut n = 0;
    while !notices.contains(&Some(CompactionNotice::Writing)) {
        notices.extend(turn(&mut h, n).await.1);
        n += 1;
        assert!(n < 40, "no background summary: {notices:?}");
    }
    if notices.contains(&Some(CompactionNotice::Ready)) {
        return; // written within the turn already: nothing to wait for
    }
    // no op is sent: the idle engine says so by itself
    let ready = h
        .until("the notice that the summary is written", |e| {
            matches!(e, Event::Context(ContextEvent::CompactionAhead { .. }))
        })
        .await;
    assert!(
        matches!(
            ready,
            Event::Context(ContextEvent::CompactionAhead {
                notice: Some(CompactionNotice::Ready)
            })
        ),
        "{ready:?}"
    );
}
