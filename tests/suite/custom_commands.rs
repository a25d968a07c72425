//! Custom slash commands through the engine: the expansion is the user's message (stored with
//! its `/name` label), `model:` runs that one turn with another model and `agent:` as another
//! agent, then the session goes back to its own.

use crate::support;

use pith_config::AgentConfig;
use pith_protocol::event::{ErrorKind, Event, Op, TurnEnd, TurnEvent};
use pith_protocol::message::Role;
use serde_json::{Value, json};
use support::engine::{Harness, harness, harness_with};
use support::openai;

fn run(label: &str, text: &str, model: Option<&str>, agent: Option<&str>) -> Op {
    Op::RunCommand {
        id: "C1".into(),
        label: label.into(),
        text: text.into(),
        model: model.map(str::to_string),
        agent: agent.map(str::to_string),
    }
}

/// The parts of a request that say who was asked what: the model, the system prompt's first
/// line, the tools offered and the conversation after the system prompt.
fn essentials(body: &Value) -> Value {
    let messages = body["messages"].as_array().unwrap();
    let system = messages.iter().find(|m| m["role"] == "system").map(|m| {
        support::message_text(m)
            .lines()
            .next()
            .unwrap_or("")
            .to_string()
    });
    let mut tools: Vec<&str> = body["tools"]
        .as_array()
        .map(|t| {
            t.iter()
                .filter_map(|t| t["function"]["name"].as_str())
                .collect()
        })
        .unwrap_or_default();
    tools.sort();
    json!({
        "model": body["model"],
        "system_first_line": system,
        "tools": tools,
        "messages": messages.iter().filter(|m| m["role"] != "system").collect::<Vec<_>>(),
    })
}

async fn finish(h: &mut Harness) -> TurnEnd {
    h.turn_finished().await
}

#[tokio::test]
async fn a_command_with_a_model_runs_that_turn_with_it_then_goes_back() {
    let mut h = harness(vec![], false).await;
    h.server.push(openai::text("reviewed", Some((100, 2))));
    h.server.push(openai::text("plain", Some((100, 2))));
    h.send(run(
        "/review src/a.rs",
        "Review src/a.rs for bugs.",
        Some("mock/cheap-model"),
        None,
    ));
    assert_eq!(finish(&mut h).await, TurnEnd::Stop);
    h.send(Op::user_turn("and now?"));
    assert_eq!(finish(&mut h).await, TurnEnd::Stop);
    let first = h.server.request_body(0);
    insta::assert_json_snapshot!("command_with_model_request", essentials(&first));
    assert_eq!(h.server.request_body(1)["model"], "test-model");
    // the stored message is the expansion, labelled with the command
    let stored = pith_store::Store::open(h.data.path())
        .unwrap()
        .load_all(&h.session_id)
        .unwrap();
    let user = stored
        .iter()
        .find(|m| m.role == Role::User && m.submission_id.as_deref() == Some("C1"))
        .unwrap();
    assert_eq!(user.text(), "Review src/a.rs for bugs.");
    assert_eq!(user.command.as_deref(), Some("/review src/a.rs"));
    let answer = stored.iter().find(|m| m.role == Role::Assistant).unwrap();
    assert_eq!(answer.model.as_deref(), Some("mock/cheap-model"));
}

#[tokio::test]
async fn a_command_with_an_agent_runs_as_that_agent() {
    let mut h = harness_with(vec![], false, |c| {
        c.agent.insert(
            "reviewer".into(),
            AgentConfig {
                description: "reviews".into(),
                prompt: Some("You are a strict reviewer.".into()),
                tools: Some(vec!["read".into(), "grep".into()]),
                ..AgentConfig::default()
            },
        );
    })
    .await;
    h.server.push(openai::text("looks fine", Some((100, 2))));
    h.server.push(openai::text("plain", Some((100, 2))));
    h.send(run("/check", "Check the parser.", None, Some("reviewer")));
    assert_eq!(finish(&mut h).await, TurnEnd::Stop);
    h.send(Op::user_turn("next"));
    assert_eq!(finish(&mut h).await, TurnEnd::Stop);
    let first = essentials(&h.server.request_body(0));
    assert_eq!(first["system_first_line"], "You are a strict reviewer.");
    assert_eq!(first["tools"], json!(["grep", "read"]));
    let second = essentials(&h.server.request_body(1));
    assert_ne!(second["system_first_line"], "You are a strict reviewer.");
    assert!(
        second["tools"].as_array().unwrap().len() > 2,
        "the session's own tools are back: {second}"
    );
}

#[tokio::test]
async fn an_unknown_agent_or_model_sends_nothing_and_says_why() {
    let mut h = harness(vec![], false).await;
    h.send(run("/x", "Do x.", None, Some("ghost")));
    let ev = h
        .until_msg("the error", |m| {
            matches!(m.event, Event::Turn(TurnEvent::Error { .. }))
        })
        .await;
    assert!(
        matches!(&ev.event, Event::Turn(TurnEvent::Error { kind: ErrorKind::Command, message, .. })
            if message.starts_with("/x: no agent named ghost")),
        "{ev:?}"
    );
    assert_eq!(ev.submission().map(String::as_str), Some("C1"));
    assert_eq!(finish(&mut h).await, TurnEnd::Error);
    h.send(run("/y", "Do y.", Some("nowhere/m"), None));
    let ev = h
        .until_msg("the error", |m| {
            matches!(m.event, Event::Turn(TurnEvent::Error { .. }))
        })
        .await;
    assert!(
        matches!(&ev.event, Event::Turn(TurnEvent::Error { kind: ErrorKind::Command, message, .. })
            if message.starts_with("/y: cannot use model nowhere/m")),
        "{ev:?}"
    );
    assert_eq!(ev.submission().map(String::as_str), Some("C1"));
    assert_eq!(finish(&mut h).await, TurnEnd::Error);
    assert!(h.server.requests().is_empty());
}

mod headless {
    use super::support::pith::{PithEnv, stderr};
    use super::support::{MockServer, openai};

    fn env_with_command(server: &MockServer) -> PithEnv {
        let env = PithEnv::new(&server.url(), 128_000, 16_000, "");
        let dir = env.workspace.path().join(".pith/commands/git");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("review.md"),
            "---\ndescription: Review a file\n---\nReview $1 carefully; then $ARGUMENTS.\n",
        )
        .unwrap();
        env
    }

    fn last_user_text(server: &MockServer) -> String {
        let body = server.request_body(server.requests().len() - 1);
        let messages = body["messages"].as_array().unwrap();
        let user = messages.iter().rev().find(|m| m["role"] == "user").unwrap();
        super::support::message_text(user)
    }

    #[tokio::test]
    async fn pith_run_expands_a_project_command_in_a_trusted_workspace() {
        let server = MockServer::start().await;
        let env = env_with_command(&server);
        server.push(openai::text("ok", None));
        let out = env.run(&["--trust", "run", "/git:review src/a.rs"]).await;
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(
            last_user_text(&server),
            "Review src/a.rs carefully; then src/a.rs."
        );
    }

    #[tokio::test]
    async fn an_untrusted_workspace_command_is_not_expanded() {
        let server = MockServer::start().await;
        let env = env_with_command(&server);
        let out = env.run(&["run", "/git:review src/a.rs"]).await;
        // not expanded, and not sent as a prompt either: an unknown command, as in the TUI
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("project commands not used: this directory is not trusted"),
            "{}",
            stderr(&out)
        );
        assert!(
            stderr(&out).contains("pith: error: unknown command /git:review"),
            "{}",
            stderr(&out)
        );
        assert!(server.requests().is_empty());
    }
}
