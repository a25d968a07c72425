//! The typed engine contract: a prompt's id comes back on the stored message (also when it is
//! typed mid-turn), a model switch is its own event, errors say what they are about, and turns
//! end with a typed reason.

use crate::support;

use pith_protocol::event::{
    ContextEvent, ErrorKind, Event, EventMsg, Op, OutputEvent, PermissionReply, SessionEvent,
    SettingsEvent, Submission, TurnEnd, TurnEvent,
};
use pith_protocol::message::{Message, Role};
use pith_store::Store;
use support::engine::{Harness, harness};
use support::{MockResponse, openai};

fn user_turn(id: &str, text: &str) -> Op {
    Op::UserTurn {
        id: id.into(),
        text: text.into(),
        pasted: Vec::new(),
    }
}

/// Waits for the user message the engine stored for the prompt with this id.
async fn echoed(h: &mut Harness, id: &str) -> Message {
    let pred = |e: &Event| {
        matches!(e, Event::Output(OutputEvent::Message { message })
            if message.role == Role::User && message.submission_id.as_deref() == Some(id))
    };
    match h.until("the prompt's message", pred).await {
        Event::Output(OutputEvent::Message { message }) => message,
        _ => unreachable!(),
    }
}

fn stored(h: &Harness) -> Vec<Message> {
    Store::open(h.data.path())
        .unwrap()
        .load_all(&h.session_id)
        .unwrap()
}

#[tokio::test]
async fn a_prompt_comes_back_with_its_id() {
    let mut h = harness(vec![], false).await;
    h.server.push(openai::text("hello", Some((100, 2))));
    h.send(user_turn("P1", "hi there"));
    let m = echoed(&mut h, "P1").await;
    assert_eq!(m.text(), "hi there");
    assert_eq!(h.turn_finished().await, TurnEnd::Stop);
    let users: Vec<Message> = stored(&h)
        .into_iter()
        .filter(|m| m.role == Role::User)
        .collect();
    assert_eq!(users.len(), 1);
    assert_eq!(users[0].submission_id.as_deref(), Some("P1"));
}

/// A permission question holds the first step; a prompt sent meanwhile reaches the model at the
/// next step and is stored with its id.
#[tokio::test]
async fn a_prompt_typed_mid_turn_is_delivered_at_the_next_step_with_its_id() {
    let mut h = harness(vec![], false).await;
    let args = serde_json::json!({ "command": "echo hi" }).to_string();
    h.server
        .push(openai::tool_calls(&[("c1", "bash", &args)], Some((100, 5))));
    h.server.push(openai::text("noted", Some((150, 2))));
    h.send(user_turn("P1", "run it"));
    let req = h.permission_asked().await;
    h.send(user_turn("P2", "also say hello"));
    h.send(Op::PermissionReply {
        id: req.id,
        reply: PermissionReply::Once,
        message: None,
    });
    let m = echoed(&mut h, "P2").await;
    assert_eq!(m.text(), "also say hello", "stored as typed");
    assert!(m.mid_turn);
    assert_eq!(h.turn_finished().await, TurnEnd::Stop);
    let body = h.server.request_body(1);
    let last = body["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["role"], "user");
    assert!(
        last["content"]
            .to_string()
            .contains("The user sent the following message:\\nalso say hello"),
        "sent inside the reminder: {last}"
    );
    let stored = stored(&h);
    let late = stored
        .iter()
        .find(|m| m.submission_id.as_deref() == Some("P2"))
        .unwrap();
    assert_eq!(
        (late.text().as_str(), late.mid_turn),
        ("also say hello", true)
    );
}

/// Asks for `model` (submission "switch-<model>") and returns the engine's answer: the switch
/// or the error.
async fn switch(h: &mut Harness, model: &str) -> EventMsg {
    submit(
        h,
        &format!("switch-{model}"),
        Op::SetModel {
            model: model.into(),
        },
    );
    h.until_msg("the answer to the switch", |m| {
        matches!(
            m.event,
            Event::Settings(SettingsEvent::ModelChanged { .. })
                | Event::Turn(TurnEvent::Error { .. })
        )
    })
    .await
}

#[tokio::test]
async fn a_model_switch_is_its_own_event_and_a_refused_one_an_error_of_its_kind() {
    let mut h = harness(vec![], false).await;
    assert_eq!(
        switch(&mut h, "mock/other-model").await,
        EventMsg {
            submission: Some("switch-mock/other-model".into()),
            event: Event::Settings(SettingsEvent::ModelChanged {
                model: "mock/other-model".into(),
            }),
        }
    );
    let ev = switch(&mut h, "nowhere/model").await;
    assert!(
        matches!(&ev.event, Event::Turn(TurnEvent::Error { kind: ErrorKind::Model, message, .. }) if message.contains("nowhere/model")),
        "{ev:?}"
    );
    assert_eq!(
        ev.submission().map(String::as_str),
        Some("switch-nowhere/model")
    );
}

fn submit(h: &Harness, id: &str, op: Op) {
    let id = id.to_string();
    h.handle.ops.send(Submission { id, op }).unwrap();
}

/// Each answer names the op it answers, whoever answers it (the runner, or the pump while a
/// turn may run), so a front end waiting on one op is not ended by another's answer.
#[tokio::test]
async fn every_answer_names_the_submission_it_answers() {
    let mut h = harness(vec![], false).await;
    let asks = [
        ("sessions", Op::ListSessions),
        ("context", Op::ContextBreakdown),
        ("effort", Op::SetEffort { effort: None }),
        (
            "mode",
            Op::SetPermissionMode {
                mode: pith_protocol::event::PermissionMode::AcceptEdits,
            },
        ),
        (
            "page",
            Op::LoadHistory {
                session_id: h.session_id.clone(),
                before: "z".into(),
            },
        ),
        ("undo", Op::Undo),
        ("resources", Op::ListMcpResources),
    ];
    for (id, op) in asks {
        submit(&h, id, op);
        let msg = h.until_msg(id, |m| m.submission().is_some()).await;
        assert_eq!(msg.submission().map(String::as_str), Some(id), "{msg:?}");
        let ev = msg.event;
        let answers = match id {
            "sessions" => matches!(ev, Event::Session(SessionEvent::Sessions { .. })),
            "context" => matches!(ev, Event::Context(ContextEvent::ContextBreakdown { .. })),
            "effort" => matches!(ev, Event::Settings(SettingsEvent::EffortChanged { .. })),
            "mode" => matches!(
                ev,
                Event::Settings(SettingsEvent::PermissionModeChanged { .. })
            ),
            "page" => matches!(ev, Event::Session(SessionEvent::History { .. })),
            // nothing to take back
            "undo" => matches!(
                ev,
                Event::Turn(TurnEvent::Error {
                    kind: ErrorKind::Undo,
                    ..
                })
            ),
            _ => matches!(
                ev,
                Event::Settings(SettingsEvent::McpResources { .. })
                    | Event::Turn(TurnEvent::Error { .. })
            ),
        };
        assert!(answers, "{id} answered with {ev:?}");
    }
    // what answers no op names none
    let json = serde_json::to_value(Event::info("hi")).unwrap();
    assert_eq!(json, serde_json::json!({"type": "info", "message": "hi"}));
}

#[tokio::test]
async fn a_failed_request_is_a_provider_error_and_ends_the_turn_with_error() {
    let mut h = harness(vec![], false).await;
    h.server.push(MockResponse::status(
        401,
        openai::error_body("invalid_api_key", "Incorrect API key provided"),
    ));
    h.send(user_turn("P1", "hi"));
    let ev = h
        .until("the error", |e| {
            matches!(e, Event::Turn(TurnEvent::Error { .. }))
        })
        .await;
    assert!(
        matches!(
            &ev,
            Event::Turn(TurnEvent::Error {
                kind: ErrorKind::Provider,
                ..
            })
        ),
        "{ev:?}"
    );
    assert_eq!(h.turn_finished().await, TurnEnd::Error);
}

/// `/context` while an answer streams (here: a stream that stalls and never ends) is answered
/// at once, not when the step is over.
#[tokio::test]
async fn context_breakdown_is_answered_while_an_answer_streams() {
    let mut h = harness(vec![], false).await;
    let frames = vec![openai::frame(&openai::delta_chunk(
        serde_json::json!({"content": "a long answer that has only begun"}),
        None,
    ))];
    h.server.push(MockResponse::sse(frames).hold_open());
    h.send(user_turn("P1", "explain everything"));
    h.until("the first words", |e| {
        matches!(e, Event::Output(OutputEvent::TextDelta { .. }))
    })
    .await;
    h.send(Op::ContextBreakdown);
    let ev = h
        .until("the breakdown, or the turn's end", |e| {
            matches!(
                e,
                Event::Context(ContextEvent::ContextBreakdown { .. })
                    | Event::Turn(TurnEvent::TurnFinished { .. })
            )
        })
        .await;
    let Event::Context(ContextEvent::ContextBreakdown { breakdown: b, .. }) = ev else {
        panic!("the turn ended before the breakdown: {ev:?}");
    };
    assert!(b.messages > 0, "the prompt is counted: {b:?}");
    h.send(Op::Interrupt);
}

/// `/effort high` on a provider that does not take a reasoning effort: the user is told it is
/// not sent, the front end is not told it is in effect, and no request carries it.
#[tokio::test]
async fn an_effort_the_provider_does_not_take_is_said_not_sent_and_not_claimed() {
    let mut h = harness(vec![], false).await;
    h.send(Op::SetEffort {
        effort: Some(pith_protocol::llm::ReasoningEffort::High),
    });
    let info = h
        .until("the warning", |e| {
            matches!(e, Event::Turn(TurnEvent::Info { .. }))
        })
        .await;
    let Event::Turn(TurnEvent::Info { message, .. }) = info else {
        unreachable!()
    };
    assert!(
        message.starts_with("not sent: mock does not take a reasoning effort")
            && message.contains("reasoning_effort = true in [provider.mock]"),
        "{message}"
    );
    let changed = h
        .until("the effort", |e| {
            matches!(e, Event::Settings(SettingsEvent::EffortChanged { .. }))
        })
        .await;
    assert!(
        matches!(
            changed,
            Event::Settings(SettingsEvent::EffortChanged { effort: None, .. })
        ),
        "{changed:?}"
    );
    h.server.push(openai::text("hello", Some((100, 2))));
    h.send(user_turn("P1", "hi"));
    assert_eq!(h.turn_finished().await, TurnEnd::Stop);
    assert!(h.server.request_body(0).get("reasoning_effort").is_none());

    // a provider that says it takes one gets it, and no warning
    let mut h = support::engine::harness_with(vec![], false, |c| {
        c.provider.get_mut("mock").unwrap().reasoning_effort = Some(true);
    })
    .await;
    h.send(Op::SetEffort {
        effort: Some(pith_protocol::llm::ReasoningEffort::High),
    });
    let ev = h
        .until("the effort", |e| {
            matches!(
                e,
                Event::Settings(SettingsEvent::EffortChanged { .. })
                    | Event::Turn(TurnEvent::Info { .. })
            )
        })
        .await;
    assert!(
        matches!(
            ev,
            Event::Settings(SettingsEvent::EffortChanged {
                effort: Some(_),
                ..
            })
        ),
        "{ev:?}"
    );
}

/// With `compaction.auto = false` no auto-compact point is reported; the user is told once when
/// the context passes where pith would have compacted, and once more near the window.
#[tokio::test]
async fn without_auto_compaction_the_point_is_not_shown_and_crossing_it_is_said_once() {
    let mut h = support::engine::harness_with(vec![], false, |c| {
        c.compaction.auto = false;
        let m = c.models.values_mut().next().unwrap();
        m.context = 10_000;
        m.output = 1_000;
    })
    .await;
    let mut infos = Vec::new();
    for (i, prompt_tokens) in [9_200, 9_250, 9_900].into_iter().enumerate() {
        h.server.push(openai::text("ok", Some((prompt_tokens, 2))));
        h.send(user_turn(&format!("P{i}"), "go on"));
        loop {
            let ev = h
                .until("the turn's end", |e| {
                    matches!(
                        e,
                        Event::Turn(TurnEvent::Info { .. })
                            | Event::Context(ContextEvent::ContextUsage(_))
                            | Event::Turn(TurnEvent::TurnFinished { .. })
                    )
                })
                .await;
            match ev {
                Event::Context(ContextEvent::ContextUsage(u)) => assert_eq!(u.usable, 0, "{u:?}"),
                Event::Turn(TurnEvent::Info { message, .. }) => infos.push(message),
                _ => break,
            }
        }
    }
    assert_eq!(infos.len(), 2, "{infos:?}");
    assert!(
        infos[0].contains("pith would compact here")
            && infos[0].contains("compaction.auto = false"),
        "{infos:?}"
    );
    assert!(
        infos[1].contains("10,000-token window") && infos[1].contains("/compact now"),
        "{infos:?}"
    );
}
