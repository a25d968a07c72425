//! A prompt that can never fit the model's window is refused before it is stored: nothing of
//! it reaches the store or any later request, and the next prompt pays no compaction for it.

use crate::support;

use pith_config::Config;
use pith_protocol::event::{Event, Op, OutputEvent, SessionEvent, TurnEnd, TurnEvent};
use pith_store::Store;
use support::engine::harness_with;
use support::openai;

/// A 12k window with a 2k output cap: 10k usable.
fn small_window(config: &mut Config) {
    let m = config.models.values_mut().next().unwrap();
    m.context = 12_000;
    m.output = 2_000;
}

/// 5,000 numbered lines, each marked so a trace of it in a request is easy to find.
fn huge_paste() -> String {
    (0..5_000)
        .map(|i| format!("BIGPASTE line {i}: some pasted log output to read"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn an_oversized_prompt_is_refused_unstored_and_costs_the_next_turn_nothing() {
    let mut h = harness_with(vec![], false, small_window).await;
    let big = huge_paste();
    h.send(Op::UserTurn {
        id: "big".into(),
        text: big.clone(),
        pasted: Vec::new(),
    });
    let refused = h
        .until("prompt_refused", |e| {
            matches!(e, Event::Session(SessionEvent::PromptRefused { .. }))
        })
        .await;
    let Event::Session(SessionEvent::PromptRefused {
        id,
        text,
        tokens,
        usable,
        message,
    }) = refused
    else {
        unreachable!()
    };
    assert_eq!(id, "big");
    assert_eq!(text, big, "the text comes back whole for the composer");
    assert!(tokens >= usable, "{tokens} < {usable}");
    assert!(usable > 0 && usable <= 10_000, "{usable}");
    assert!(message.contains("not sent"), "{message}");
    assert_eq!(h.turn_finished().await, TurnEnd::Error);
    assert!(h.server.requests().is_empty(), "nothing was sent");
    // Nothing reached a model: the session is not listed (nor resumed by `pith -c`).
    let store = Store::open(h.data.path()).unwrap();
    assert!(store.list_sessions().unwrap().is_empty());
    let dir = h.workspace.path().canonicalize().unwrap();
    assert!(
        store
            .latest_session(&dir.to_string_lossy())
            .unwrap()
            .is_none()
    );

    // The next small prompt: one request, no trace of the paste, no compaction.
    h.server.push(openai::text("fine", Some((900, 5))));
    h.send(Op::UserTurn {
        id: "small".into(),
        text: "what is 2 + 2?".into(),
        pasted: Vec::new(),
    });
    assert_eq!(h.turn_finished().await, TurnEnd::Stop);
    let requests = h.server.requests();
    assert_eq!(requests.len(), 1, "one model call, no compaction");
    let body = h.server.request_body(0).to_string();
    assert!(!body.contains("BIGPASTE"), "the refused prompt was sent");
    assert!(!body.contains("[pith: context compaction]"));
    assert!(body.contains("what is 2 + 2?"));

    // The store never held it; now the session is listed.
    assert_eq!(store.list_sessions().unwrap().len(), 1);
    let stored = store.load_all(&h.session_id).unwrap();
    let all = serde_json::to_string(&stored).unwrap();
    assert!(!all.contains("BIGPASTE"), "the refused prompt was stored");
    assert_eq!(stored.len(), 2, "the small prompt and its answer");
}

/// A prompt typed while a turn runs is refused the same way, and the turn ends as it would
/// have: no extra request for a queue that held only the refused prompt.
#[tokio::test]
async fn an_oversized_prompt_typed_mid_turn_is_refused_and_costs_no_request() {
    let mut h = harness_with(vec![], false, small_window).await;
    h.server
        .push(openai::text("first answer", Some((900, 5))).first_delay_ms(600));
    h.send(Op::UserTurn {
        id: "one".into(),
        text: "hello".into(),
        pasted: Vec::new(),
    });
    h.until("the user message", |e| {
        matches!(e, Event::Output(OutputEvent::Message { .. }))
    })
    .await;
    h.send(Op::UserTurn {
        id: "big".into(),
        text: huge_paste(),
        pasted: Vec::new(),
    });
    let mut refused = false;
    let end = loop {
        match h
            .until("events", |e| {
                matches!(
                    e,
                    Event::Session(SessionEvent::PromptRefused { .. })
                        | Event::Turn(TurnEvent::TurnFinished { .. })
                )
            })
            .await
        {
            Event::Session(SessionEvent::PromptRefused { id, .. }) => {
                assert_eq!(id, "big");
                refused = true;
            }
            Event::Turn(TurnEvent::TurnFinished { reason }) => break reason,
            _ => unreachable!(),
        }
    };
    assert!(refused, "refused within the turn");
    assert_eq!(end, TurnEnd::Stop);
    assert_eq!(
        h.server.requests().len(),
        1,
        "no request for the refused prompt"
    );
    assert!(!h.server.request_body(0).to_string().contains("BIGPASTE"));
}
