//! One context figure everywhere: the status bar (`ContextUsage`), `/context` (whose rows add
//! up to it), the session list (`Session::tokens`, also after an interrupted turn) and a resumed
//! session all show the same number.

use crate::support;

use std::sync::Arc;

use pith_engine as engine;
use pith_protocol::event::{ContextEvent, Event, Op, OutputEvent, TurnEnd, TurnEvent};
use pith_store::Store;
use support::engine::{Harness, harness_with};
use support::openai;

/// Events up to the end of the turn; the last `ContextUsage` figure among them.
async fn turn_figure(h: &mut Harness) -> (TurnEnd, u64) {
    let mut used = None;
    loop {
        match h
            .until("usage or end", |e| {
                matches!(
                    e,
                    Event::Context(ContextEvent::ContextUsage(_))
                        | Event::Turn(TurnEvent::TurnFinished { .. })
                )
            })
            .await
        {
            Event::Context(ContextEvent::ContextUsage(u)) => used = Some(u.used),
            Event::Turn(TurnEvent::TurnFinished { reason }) => {
                return (reason, used.expect("a figure"));
            }
            _ => unreachable!(),
        }
    }
}

/// Text that streams and then never ends (no finish, no usage).
fn unfinished(text: &str) -> support::MockResponse {
    let frames = text.split(' ').map(|w| {
        openai::frame(&openai::delta_chunk(
            serde_json::json!({ "content": format!("{w} ") }),
            None,
        ))
    });
    support::MockResponse::sse(frames).hold_open()
}

fn stored_tokens(h: &Harness) -> u64 {
    let store = Store::open(h.data.path()).unwrap();
    store.get_session(&h.session_id).unwrap().tokens
}

#[tokio::test]
async fn status_bar_context_rows_session_list_and_resume_show_one_figure() {
    // `/context` is asked before the second turn; the rows are checked against the first.
    let mut h = harness_with(vec![], false, |_| {}).await;
    // the provider counts 41,000 tokens: the figure is that report, not an estimate
    h.server.push(openai::text("done", Some((41_000, 5))));
    h.send(Op::UserTurn {
        id: "1".into(),
        text: "look at the code".into(),
        pasted: Vec::new(),
    });
    let (end, figure) = turn_figure(&mut h).await;
    assert_eq!(end, TurnEnd::Stop);
    assert_eq!(figure, 41_005);

    assert_context_rows_add_up_to(&mut h, figure).await;

    // A second turn, interrupted after some text: the figure is the report plus estimates.
    h.server.push(unfinished("half an answer about the code"));
    h.send(Op::UserTurn {
        id: "2".into(),
        text: "and now the tests, in detail please".into(),
        pasted: Vec::new(),
    });
    h.until("text", |e| {
        matches!(e, Event::Output(OutputEvent::TextDelta { .. }))
    })
    .await;
    h.send(Op::Interrupt);
    let (end, figure) = turn_figure(&mut h).await;
    assert_eq!(end, TurnEnd::Interrupted);
    assert!(figure > 41_005, "{figure}");

    // The session list shows it too.
    assert_eq!(stored_tokens(&h), figure);

    // And a resumed session starts from it.
    let first = resumed_figure(h).await;
    assert_eq!(
        first, figure,
        "the resumed session shows the figure it was left with"
    );
}

/// `/context`: the rows add up to `figure`, and with free and reserved to the window.
async fn assert_context_rows_add_up_to(h: &mut Harness, figure: u64) {
    h.send(Op::ContextBreakdown);
    let Event::Context(ContextEvent::ContextBreakdown { breakdown: b, .. }) = h
        .until("breakdown", |e| {
            matches!(e, Event::Context(ContextEvent::ContextBreakdown { .. }))
        })
        .await
    else {
        unreachable!()
    };
    let rows = b.system + b.pinned + b.tools + b.summary + b.messages + b.tool_outputs;
    assert_eq!(rows, figure, "{b:?}");
    assert_eq!(rows + b.free + b.reserved, b.window, "{b:?}");
    // A 128k window this small a context serves with estimates; `/context` counts exactly.
    assert!(b.exact, "/context rows are estimates: {b:?}");
}

/// Shuts the engine down, starts a new one on the same session and returns the first context
/// figure it shows.
async fn resumed_figure(h: Harness) -> u64 {
    h.send(Op::Shutdown);
    let Harness {
        handle,
        data,
        workspace,
        session_id,
        server,
        ..
    } = h;
    handle.done.await.expect("the first engine ends");
    let store = Arc::new(Store::open(data.path()).expect("the store opens again"));
    let session = store
        .get_session(&session_id)
        .expect("the session is stored");
    let mut config = pith_config::Config {
        model: Some(support::engine::MODEL.into()),
        ..Default::default()
    };
    config.provider.insert(
        "mock".into(),
        pith_config::ProviderConfig {
            kind: pith_config::ProviderKind::Openai,
            base_url: format!("{}/v1", server.url()),
            ..Default::default()
        },
    );
    config.models.insert(
        support::engine::MODEL.into(),
        pith_config::ModelConfig {
            context: 128_000,
            output: 8_000,
            ..Default::default()
        },
    );
    let mut resumed = engine::spawn(
        support::engine::options(
            config,
            &workspace.path().canonicalize().unwrap(),
            data.path(),
            false,
        ),
        store,
        session,
    )
    .expect("the left session can be resumed at once");
    loop {
        if let Some(Event::Context(ContextEvent::ContextUsage(u))) =
            resumed.events.recv().await.map(|m| m.event)
        {
            return u.used;
        }
    }
}

/// A turn interrupted before the provider reported anything still leaves a figure for the
/// session list (it used to list 0 tokens).
#[tokio::test]
async fn an_interrupted_turn_leaves_the_figure_in_the_session_list() {
    let mut h = harness_with(vec![], true, |_| {}).await;
    h.server.push(unfinished("never finished"));
    h.send(Op::UserTurn {
        id: "1".into(),
        text: "a prompt long enough to count for something".into(),
        pasted: Vec::new(),
    });
    h.until("thinking", |e| {
        matches!(e, Event::Turn(TurnEvent::State { .. }))
    })
    .await;
    h.send(Op::Interrupt);
    let (end, figure) = turn_figure(&mut h).await;
    assert_eq!(end, TurnEnd::Interrupted);
    assert!(figure > 0);
    assert_eq!(stored_tokens(&h), figure);
}

/// `/context` asked once and answered.
async fn breakdown(h: &mut Harness) -> pith_protocol::event::Breakdown {
    h.send(Op::ContextBreakdown);
    let Event::Context(ContextEvent::ContextBreakdown { breakdown: b, .. }) = h
        .until("breakdown", |e| {
            matches!(e, Event::Context(ContextEvent::ContextBreakdown { .. }))
        })
        .await
    else {
        unreachable!()
    };
    b
}

/// The fixed rows of `/context` (the system prompt, the tool definitions) are what they are:
/// a provider's report after a turn moves the rows that grow (messages, outputs), not them.
#[tokio::test]
async fn context_fixed_rows_hold_between_views() {
    let mut h = harness_with(vec![], false, |_| {}).await;
    let before = breakdown(&mut h).await;
    h.server.push(openai::text("done", Some((41_000, 5))));
    h.send(Op::user_turn("look at the code"));
    turn_figure(&mut h).await;
    let after = breakdown(&mut h).await;
    assert_eq!(
        (before.system, before.tools),
        (after.system, after.tools),
        "{before:?}\n{after:?}"
    );
    let rows = after.system
        + after.pinned
        + after.tools
        + after.summary
        + after.messages
        + after.tool_outputs;
    assert_eq!(
        rows, 41_005,
        "the rows still add up to the figure: {after:?}"
    );
}

/// `/new` starts without the last session's compaction line in `/context`.
#[tokio::test]
async fn context_after_new_has_no_compaction_line() {
    let mut h = harness_with(vec![], false, |c| {
        let m = c.models.values_mut().next().unwrap();
        m.context = 8_000;
        m.output = 1_000;
    })
    .await;
    h.server.push(openai::text("read it", Some((2_500, 20))));
    let long = "the old design notes, line by line. ".repeat(250);
    h.send(Op::user_turn(format!("First, the notes: {long}")));
    assert_eq!(h.turn_finished().await, TurnEnd::Stop);
    for n in 0..3 {
        let answer = format!("Answer {n}: {}", "details of the plan. ".repeat(60));
        h.server.push(openai::text(&answer, Some((2_500, 300))));
        h.send(Op::user_turn(format!("Next step {n}, please.")));
        assert_eq!(h.turn_finished().await, TurnEnd::Stop);
    }
    h.server
        .push(openai::text("the summary", Some((2_000, 60))));
    h.server
        .push(openai::text("the summary", Some((2_000, 60))));
    h.send(Op::Compact { focus: None });
    assert_eq!(h.turn_finished().await, TurnEnd::Compacted);
    assert!(breakdown(&mut h).await.last_compaction.is_some());
    h.send(Op::NewSession);
    let fresh = breakdown(&mut h).await;
    assert_eq!(fresh.last_compaction, None, "{fresh:?}");
}
