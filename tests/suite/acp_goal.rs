//! `/goal` in an editor (Agent Client Protocol, ARCHITECTURE.md §5.2): offered in
//! `available_commands_update`; `/goal TEXT` is one prompt that runs the goal's turns until the
//! model says MET, each check a line of the answer; `/goal` alone answers with the goal.

use crate::support;

use serde_json::Value;
use support::{MockServer, openai};

use super::acp::{Client, env, prompt};

fn text_of(updates: &[Value]) -> String {
    updates
        .iter()
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .filter_map(|u| u["content"]["text"].as_str())
        .collect()
}

#[tokio::test]
async fn an_editor_runs_a_goal_to_met_and_sees_each_check() {
    let server = MockServer::start().await;
    let env = env(&server);
    let mut c = Client::start(&env);
    c.initialize().await;
    let sid = c.new_session(&env).await;
    server.push_all([
        openai::text("first half written", Some((1_000, 5))),
        openai::text("CONTINUE: the second half is missing", Some((1_000, 5))),
        openai::text("second half written", Some((1_000, 5))),
        openai::text("MET: both halves are there", Some((1_000, 5))),
    ]);
    let r = c
        .call(
            "session/prompt",
            prompt(&sid, "/goal both halves are written"),
        )
        .await;
    assert_eq!(r["stopReason"], "end_turn", "{r}");
    let updates = c.take_all();
    let offered = updates
        .iter()
        .find(|u| u["sessionUpdate"] == "available_commands_update")
        .expect("the commands");
    assert!(
        offered["availableCommands"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["name"] == "goal"),
        "{offered}"
    );
    let text = text_of(&updates);
    assert!(
        text.contains("first half written") && text.contains("second half written"),
        "{text}"
    );
    assert!(
        text.contains("Goal check: not met yet (the second half is missing)"),
        "{text}"
    );
    assert!(
        text.contains("Goal check: met (both halves are there)"),
        "{text}"
    );
    assert!(text.contains("goal met after 2 turns"), "{text}");
    assert_eq!(server.requests().len(), 4);

    let r = c.call("session/prompt", prompt(&sid, "/goal")).await;
    assert_eq!(r["stopReason"], "end_turn", "{r}");
    let text = text_of(&c.take_all());
    assert!(
        text.contains("Goal (met, 2 of 30 turns): both halves are written"),
        "{text}"
    );
    assert_eq!(server.requests().len(), 4, "answered without a request");
}
