//! Permission decisions through the engine: allow, deny by rule, ask answered once / always /
//! deny with a note, and the doom-loop check; and history pages answered while a question holds
//! the turn. Drives the engine as the TUI does (ops in, events out).

mod support;

use std::sync::Arc;
use std::time::Duration;

use pith::config::{Action, Config, ModelConfig, PermissionSetting, ProviderConfig, ProviderKind};
use pith::engine::{self, EngineHandle, EngineOptions};
use pith::event::{Event, Op, PermissionReply};
use pith::message::{Message, PartKind, Role};
use pith::store::Store;
use support::MockServer;
use support::openai;

const MODEL: &str = "mock/test-model";

struct Harness {
    server: MockServer,
    handle: EngineHandle,
    workspace: tempfile::TempDir,
    data: tempfile::TempDir,
    session_id: String,
}

async fn harness(permission: Vec<(&str, PermissionSetting)>, headless: bool) -> Harness {
    let server = MockServer::start().await;
    let workspace = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let mut config = Config {
        model: Some(MODEL.into()),
        ..Config::default()
    };
    config.provider.insert(
        "mock".into(),
        ProviderConfig {
            kind: ProviderKind::Openai,
            base_url: format!("{}/v1", server.url()),
            api_key_env: None,
            headers: Default::default(),
            max_retries: Some(1),
            timeout_secs: None,
            output_cap: None,
        },
    );
    config.models.insert(
        MODEL.into(),
        ModelConfig {
            context: 128_000,
            output: 8_000,
            ..ModelConfig::default()
        },
    );
    for (k, v) in permission {
        config.permission.insert(k.into(), v);
    }
    let store = Arc::new(Store::open(data.path()).unwrap());
    let ws = workspace.path().canonicalize().unwrap();
    let session = store.create_session(&ws.to_string_lossy(), MODEL).unwrap();
    let session_id = session.id.clone();
    let handle = engine::spawn(
        EngineOptions {
            config,
            workspace: ws,
            data_dir: data.path().to_path_buf(),
            headless,
            auto_yes: false,
        },
        store,
        session,
    )
    .unwrap();
    Harness {
        server,
        handle,
        workspace,
        data,
        session_id,
    }
}

impl Harness {
    /// Receives events until `pred` matches one (answering nothing), with a time limit.
    async fn until(&mut self, what: &str, pred: impl Fn(&Event) -> bool) -> Event {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        loop {
            let ev = tokio::time::timeout_at(deadline, self.handle.events.recv())
                .await
                .unwrap_or_else(|_| panic!("timed out waiting for {what}"))
                .expect("engine alive");
            if pred(&ev) {
                return ev;
            }
        }
    }

    async fn turn_finished(&mut self) -> String {
        match self
            .until("turn_finished", |e| matches!(e, Event::TurnFinished { .. }))
            .await
        {
            Event::TurnFinished { reason } => reason,
            _ => unreachable!(),
        }
    }

    async fn permission_asked(&mut self) -> pith::event::PermissionRequest {
        match self
            .until("permission_asked", |e| {
                matches!(e, Event::PermissionAsked(_))
            })
            .await
        {
            Event::PermissionAsked(r) => r,
            _ => unreachable!(),
        }
    }

    fn send(&self, op: Op) {
        self.handle.ops.send(op).unwrap();
    }

    /// The tool results the model received in request `i`.
    fn tool_results(&self, i: usize) -> Vec<String> {
        let body = self.server.request_body(i);
        body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "tool")
            .map(|m| m["content"].as_str().unwrap_or_default().to_string())
            .collect()
    }
}

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
    h.send(Op::UserTurn {
        text: "write files".into(),
    });
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
    assert_eq!(h.turn_finished().await, "stop");
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
    h.send(Op::UserTurn {
        text: "write a file".into(),
    });
    let req = h.permission_asked().await;
    h.send(Op::LoadHistory {
        session_id: h.session_id.clone(),
        before: ids[400].clone(),
    });
    let Event::History {
        session_id,
        messages,
        more,
    } = h
        .until("history", |e| matches!(e, Event::History { .. }))
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
    let Event::History { messages, more, .. } = h
        .until("history", |e| matches!(e, Event::History { .. }))
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
    assert_eq!(h.turn_finished().await, "stop");
}

#[tokio::test]
async fn ask_answered_always_covers_the_same_command_for_the_session() {
    let mut h = harness(vec![], false).await;
    h.server.push(bash("c1", "touch a.txt"));
    h.server.push(bash("c2", "touch b.txt"));
    h.server.push(openai::text("done", Some((1200, 2))));
    h.send(Op::UserTurn {
        text: "touch".into(),
    });
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
            matches!(e, Event::TurnFinished { .. } | Event::PermissionAsked(_))
        })
        .await;
    assert!(
        matches!(ev, Event::TurnFinished { .. }),
        "asked again: {ev:?}"
    );
    assert!(h.workspace.path().join("b.txt").exists());
}

#[tokio::test]
async fn ask_denied_with_a_note_tells_the_model() {
    let mut h = harness(vec![], false).await;
    h.server.push(bash("c1", "rm -rf build"));
    h.server.push(openai::text("ok, I won't", Some((1200, 2))));
    h.send(Op::UserTurn {
        text: "clean".into(),
    });
    let req = h.permission_asked().await;
    h.send(Op::PermissionReply {
        id: req.id,
        reply: PermissionReply::Deny,
        message: Some("use cargo clean instead".into()),
    });
    assert_eq!(h.turn_finished().await, "stop");
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
                    ("git status*".to_string(), Action::Allow),
                    ("rm *".to_string(), Action::Deny),
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
    h.send(Op::UserTurn { text: "go".into() });
    let ev = h
        .until("the turn's end or a question", |e| {
            matches!(e, Event::TurnFinished { .. } | Event::PermissionAsked(_))
        })
        .await;
    assert!(matches!(ev, Event::TurnFinished { .. }), "asked: {ev:?}");
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
        vec![("bash", PermissionSetting::Action(Action::Allow))],
        false,
    )
    .await;
    for i in 0..3 {
        h.server.push(bash(&format!("c{i}"), "echo same"));
    }
    h.server.push(openai::text("stopping", Some((1200, 2))));
    h.send(Op::UserTurn {
        text: "loop".into(),
    });
    let req = h.permission_asked().await;
    assert_eq!(req.call_id, "c2", "the third identical call asks");
    h.send(Op::PermissionReply {
        id: req.id,
        reply: PermissionReply::Deny,
        message: None,
    });
    assert_eq!(h.turn_finished().await, "stop");
    let results = h.tool_results(3);
    assert_eq!(results.len(), 3);
    assert!(results[0].contains("same") && results[1].contains("same"));
    assert!(results[2].contains("denied"), "{}", results[2]);
}

#[tokio::test]
async fn interrupt_while_a_question_is_open_ends_the_turn_with_a_valid_history() {
    let mut h = harness(vec![], false).await;
    h.server.push(bash("c1", "echo never"));
    h.send(Op::UserTurn { text: "go".into() });
    let _req = h.permission_asked().await;
    h.send(Op::Interrupt);
    assert_eq!(h.turn_finished().await, "interrupted");
    h.server.push(openai::text("ok", Some((1200, 2))));
    h.send(Op::UserTurn {
        text: "next".into(),
    });
    assert_eq!(h.turn_finished().await, "stop");
    let results = h.tool_results(1);
    assert_eq!(results.len(), 1);
    assert!(results[0].contains("interrupted"), "{}", results[0]);
}
