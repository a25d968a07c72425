//! Permission decisions through the engine: allow, deny by rule, ask answered once / always /
//! deny with a note, and the doom-loop check; and history pages answered while a question holds
//! the turn. Drives the engine as the TUI does (ops in, events out).

use crate::support;

use pith_config::{PermissionAction, PermissionSetting};
use pith_protocol::event::{Event, Op, PermissionReply, SessionEvent, TurnEnd, TurnEvent};
use pith_protocol::message::{Message, PartKind, Role};
use pith_store::Store;
use support::engine::harness;
use support::openai;

fn bash(id: &str, command: &str) -> support::MockResponse {
    let args = serde_json::json!({ "command": command }).to_string();
    openai::tool_calls(&[(id, "bash", args.as_str())], Some((1000, 10)))
}

#[tokio::test]
async fn ask_answered_once_runs_the_call_and_asks_again_next_time() {
    let mut h = harness(vec![], false).await;
    h.server.push(bash("c1", "echo first > one.txt"));
    h.server.push(bash("c2", "echo second > two.txt"));
    h.server.push(openai::text("done", Some((1200, 2))));
    h.send(Op::user_turn("write files"));
    let req = h.permission_asked().await;
    assert_eq!(req.tool, "bash");
    assert_eq!(req.call_id, "c1");
    assert!(req.title.contains("echo first"), "{}", req.title);
    h.send(Op::PermissionReply {
        id: req.id,
        reply: PermissionReply::Once,
        message: None,
    });
    // "once" does not cover the next call.
    let req2 = h.permission_asked().await;
    assert_eq!(req2.call_id, "c2");
    h.send(Op::PermissionReply {
        id: req2.id,
        reply: PermissionReply::Once,
        message: None,
    });
    assert_eq!(h.turn_finished().await, TurnEnd::Stop);
    assert!(h.workspace.path().join("one.txt").exists());
    assert!(h.workspace.path().join("two.txt").exists());
}

/// The TUI asks for older history as the user scrolls up; the answer must not wait for the turn
/// (here held by an open permission question) to end.
#[tokio::test]
async fn history_pages_are_answered_while_a_question_holds_the_turn() {
    let mut h = harness(vec![], false).await;
    // an earlier conversation of 450 messages, written by another connection (as a past run did)
    let store = Store::open(h.data.path()).unwrap();
    let mut ids = Vec::new();
    for i in 0..450 {
        let role = if i % 2 == 0 {
            Role::User
        } else {
            Role::Assistant
        };
        let mut m = Message::new(&h.session_id, role);
        m.push(PartKind::Text {
            text: format!("message {i}"),
            synthetic: false,
        });
        store.save_message(&m).unwrap();
        ids.push(m.id);
    }
    h.server.push(bash("c1", "echo held > held.txt"));
    h.server.push(openai::text("done", Some((1200, 2))));
    h.send(Op::user_turn("write a file"));
    let req = h.permission_asked().await;
    h.send(Op::LoadHistory {
        session_id: h.session_id.clone(),
        before: ids[400].clone(),
    });
    let Event::Session(SessionEvent::History {
        session_id,
        messages,
        more,
        ..
    }) = h
        .until("history", |e| {
            matches!(e, Event::Session(SessionEvent::History { .. }))
        })
        .await
    else {
        unreachable!()
    };
    assert_eq!(session_id, h.session_id);
    let got: Vec<&str> = messages.iter().map(|m| m.id.as_str()).collect();
    let want: Vec<&str> = ids[200..400].iter().map(String::as_str).collect();
    assert_eq!(
        got, want,
        "the 200 messages before the one asked for, oldest first"
    );
    assert!(more);
    assert_eq!(messages[0].parts.len(), 1);
    // the first page has nothing before it
    h.send(Op::LoadHistory {
        session_id: h.session_id.clone(),
        before: ids[200].clone(),
    });
    let Event::Session(SessionEvent::History { messages, more, .. }) = h
        .until("history", |e| {
            matches!(e, Event::Session(SessionEvent::History { .. }))
        })
        .await
    else {
        unreachable!()
    };
    assert_eq!((messages.len(), more), (200, false));
    h.send(Op::PermissionReply {
        id: req.id,
        reply: PermissionReply::Once,
        message: None,
    });
    assert_eq!(h.turn_finished().await, TurnEnd::Stop);
}

#[tokio::test]
async fn ask_answered_always_covers_the_same_command_for_the_session() {
    let mut h = harness(vec![], false).await;
    h.server.push(bash("c1", "touch a.txt"));
    h.server.push(bash("c2", "touch b.txt"));
    h.server.push(openai::text("done", Some((1200, 2))));
    h.send(Op::user_turn("touch"));
    let req = h.permission_asked().await;
    assert!(!req.patterns.is_empty());
    h.send(Op::PermissionReply {
        id: req.id,
        reply: PermissionReply::Always,
        message: None,
    });
    // The second `touch` runs without asking.
    let ev = h
        .until("the turn's end or a second question", |e| {
            matches!(
                e,
                Event::Turn(TurnEvent::TurnFinished { .. })
                    | Event::Turn(TurnEvent::PermissionAsked(_))
            )
        })
        .await;
    assert!(
        matches!(ev, Event::Turn(TurnEvent::TurnFinished { .. })),
        "asked again: {ev:?}"
    );
    assert!(h.workspace.path().join("b.txt").exists());
}

#[tokio::test]
async fn ask_denied_with_a_note_tells_the_model() {
    let mut h = harness(vec![], false).await;
    h.server.push(bash("c1", "rm -rf build"));
    h.server.push(openai::text("ok, I won't", Some((1200, 2))));
    h.send(Op::user_turn("clean"));
    let req = h.permission_asked().await;
    h.send(Op::PermissionReply {
        id: req.id,
        reply: PermissionReply::Deny,
        message: Some("use cargo clean instead".into()),
    });
    assert_eq!(h.turn_finished().await, TurnEnd::Stop);
    let results = h.tool_results(1);
    assert_eq!(results.len(), 1);
    assert!(results[0].contains("denied"), "{}", results[0]);
    assert!(
        results[0].contains("use cargo clean instead"),
        "{}",
        results[0]
    );
}

#[tokio::test]
async fn deny_rule_never_asks_and_allow_rule_never_asks() {
    let mut h = harness(
        vec![(
            "bash",
            PermissionSetting::Patterns(
                [
                    ("git status*".to_string(), PermissionAction::Allow),
                    ("rm *".to_string(), PermissionAction::Deny),
                ]
                .into_iter()
                .collect(),
            ),
        )],
        false,
    )
    .await;
    h.server.push(bash("c1", "rm notes.txt"));
    h.server.push(bash("c2", "git status"));
    h.server.push(openai::text("done", Some((1200, 2))));
    std::fs::write(h.workspace.path().join("notes.txt"), "keep me").unwrap();
    h.send(Op::user_turn("go"));
    let ev = h
        .until("the turn's end or a question", |e| {
            matches!(
                e,
                Event::Turn(TurnEvent::TurnFinished { .. })
                    | Event::Turn(TurnEvent::PermissionAsked(_))
            )
        })
        .await;
    assert!(
        matches!(ev, Event::Turn(TurnEvent::TurnFinished { .. })),
        "asked: {ev:?}"
    );
    assert!(
        h.workspace.path().join("notes.txt").exists(),
        "a denied command ran"
    );
    let first = h.tool_results(1);
    assert!(!first.is_empty());
    // The allowed `git status` ran (it fails outside a repo, but it ran: an exit code is reported).
    let second = h.tool_results(2);
    assert_eq!(second.len(), 2);
    assert!(!second[1].contains("denied"), "{}", second[1]);
}

#[tokio::test]
async fn a_third_identical_call_in_a_row_asks_first() {
    let mut h = harness(
        vec![("bash", PermissionSetting::Action(PermissionAction::Allow))],
        false,
    )
    .await;
    for i in 0..3 {
        h.server.push(bash(&format!("c{i}"), "echo same"));
    }
    h.server.push(openai::text("stopping", Some((1200, 2))));
    h.send(Op::user_turn("loop"));
    let req = h.permission_asked().await;
    assert_eq!(req.call_id, "c2", "the third identical call asks");
    h.send(Op::PermissionReply {
        id: req.id,
        reply: PermissionReply::Deny,
        message: None,
    });
    assert_eq!(h.turn_finished().await, TurnEnd::Stop);
    let results = h.tool_results(3);
    assert_eq!(results.len(), 3);
    assert!(results[0].contains("same") && results[1].contains("same"));
    assert!(results[2].contains("denied"), "{}", results[2]);
}

#[tokio::test]
async fn interrupt_while_a_question_is_open_ends_the_turn_with_a_valid_history() {
    let mut h = harness(vec![], false).await;
    h.server.push(bash("c1", "echo never"));
    h.send(Op::user_turn("go"));
    let _req = h.permission_asked().await;
    h.send(Op::Interrupt);
    assert_eq!(h.turn_finished().await, TurnEnd::Interrupted);
    h.server.push(openai::text("ok", Some((1200, 2))));
    h.send(Op::user_turn("next"));
    assert_eq!(h.turn_finished().await, TurnEnd::Stop);
    let results = h.tool_results(1);
    assert_eq!(results.len(), 1);
    assert!(results[0].contains("interrupted"), "{}", results[0]);
}

/// An edit of a file the session has not read fails whatever the user answers: the user is not
/// asked, and the model is told to read it first.
#[tokio::test]
async fn an_edit_that_cannot_succeed_is_not_put_to_the_user() {
    let mut h = harness(vec![], false).await;
    std::fs::write(h.workspace.path().join("a.txt"), "one\n").unwrap();
    let args = serde_json::json!({"file_path": "a.txt", "old_string": "one", "new_string": "two"})
        .to_string();
    h.server.push(openai::tool_calls(
        &[("c1", "edit", args.as_str())],
        Some((1000, 10)),
    ));
    h.server.push(openai::text("ok", Some((1200, 2))));
    h.send(Op::user_turn("edit it"));
    let ev = h
        .until("the question or the end", |e| {
            matches!(
                e,
                Event::Turn(TurnEvent::PermissionAsked(_))
                    | Event::Turn(TurnEvent::TurnFinished { .. })
            )
        })
        .await;
    assert!(
        matches!(ev, Event::Turn(TurnEvent::TurnFinished { .. })),
        "asked to approve an edit that cannot succeed: {ev:?}"
    );
    let results = h.tool_results(1);
    assert!(results[0].contains("has not been read"), "{results:?}");
    assert_eq!(
        std::fs::read_to_string(h.workspace.path().join("a.txt")).unwrap(),
        "one\n"
    );
}

/// A reply that comes after its call was interrupted (the user answers a question the turn no
/// longer has) does nothing: "always" grants nothing, and the same command is asked about again.
#[tokio::test]
async fn a_late_reply_to_an_interrupted_question_does_nothing() {
    let mut h = harness(vec![], false).await;
    h.server.push(bash("c1", "echo late > late.txt"));
    h.send(Op::user_turn("go"));
    let stale = h.permission_asked().await;
    h.send(Op::Interrupt);
    assert_eq!(h.turn_finished().await, TurnEnd::Interrupted);
    h.send(Op::PermissionReply {
        id: stale.id.clone(),
        reply: PermissionReply::Always,
        message: None,
    });
    h.server.push(bash("c2", "echo late > late.txt"));
    h.server.push(openai::text("ok", Some((1200, 2))));
    h.send(Op::user_turn("again"));
    let req = h.permission_asked().await;
    assert_eq!(req.call_id, "c2", "the late always was applied");
    assert_ne!(req.id, stale.id);
    h.send(Op::PermissionReply {
        id: req.id,
        reply: PermissionReply::Deny,
        message: None,
    });
    assert_eq!(h.turn_finished().await, TurnEnd::Stop);
    assert!(!h.workspace.path().join("late.txt").exists());
}

/// The same call asked for in three prompts is the user's wish, not a loop: the doom-loop
/// check counts within a turn, so the third prompt's call runs without a question.
#[tokio::test]
async fn the_same_call_in_three_prompts_is_no_doom_loop() {
    let allow = PermissionSetting::Action(PermissionAction::Allow);
    let mut h = harness(vec![("bash", allow)], false).await;
    for i in 0..3 {
        h.server.push(bash(&format!("c{i}"), "echo ran-again"));
        h.server.push(openai::text("ran it", Some((1200, 2))));
        h.send(Op::user_turn("run it again"));
        loop {
            match h.until("the turn's end", |_| true).await {
                Event::Turn(TurnEvent::PermissionAsked(r)) => panic!("asked: {}", r.title),
                Event::Turn(TurnEvent::TurnFinished { reason }) => {
                    assert_eq!(reason, TurnEnd::Stop);
                    break;
                }
                _ => {}
            }
        }
    }
    // each prompt's call ran: its result went back to the model
    let requests = h.server.requests();
    assert_eq!(requests.len(), 6);
    for i in [1, 3, 5] {
        let body = requests[i].body.to_string();
        assert!(body.contains("ran-again"), "{body}");
        assert!(!body.contains("Repeating the same call"), "{body}");
    }
}
