//! Background jobs in an editor (`pith acp`): the model's background command and its
//! `job_output` render as tool calls, `/ps` answers with the list, the list that comes unasked
//! when a job starts is not said in the thread, and the job ends with `pith acp`.

use std::time::Duration;

use serde_json::{Value, json};

use super::acp::{Client, prompt};
use crate::support::faults::started_as;
use crate::support::pith::PithEnv;
use crate::support::{MockServer, openai};

fn text_of(updates: &[Value], kind: &str) -> String {
    updates
        .iter()
        .filter(|u| u["sessionUpdate"] == kind)
        .filter_map(|u| u["content"]["text"].as_str())
        .collect()
}

#[tokio::test]
async fn an_editor_shows_the_job_calls_and_ps_lists_the_jobs() {
    let server = MockServer::start().await;
    let env = PithEnv::new(
        &server.url(),
        128_000,
        8_000,
        "[jobs]\nmax = 4\n\n[permission]\nbash = \"allow\"\n",
    );
    let m = format!("pith-acp-job-{}", pith_protocol::message::new_id());
    let cmd = format!("echo up; exec -a {m} sleep 600");
    server.push(openai::tool_calls(
        &[(
            "c1",
            "bash",
            &json!({"command": cmd, "background": true}).to_string(),
        )],
        None,
    ));
    server.push(openai::tool_calls(
        &[("c2", "job_output", r#"{"id": 1}"#)],
        None,
    ));
    server.push(openai::text("it runs", None));
    let mut c = Client::start(&env);
    c.initialize().await;
    let sid = c.new_session(&env).await;
    let r = c.call("session/prompt", prompt(&sid, "start it")).await;
    assert_eq!(r["stopReason"], "end_turn", "{r}");
    let updates = c.take_all();
    let calls: Vec<&Value> = updates
        .iter()
        .filter(|u| u["sessionUpdate"] == "tool_call")
        .collect();
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert_eq!(calls[0]["kind"], "execute", "{:?}", calls[0]);
    assert_eq!(calls[1]["kind"], "read", "{:?}", calls[1]);
    let said = text_of(&updates, "agent_message_chunk");
    assert!(!said.contains("Background jobs"), "said unasked: {said}");
    assert_eq!(started_as(&m).len(), 1, "the job runs");

    let r = c.call("session/prompt", prompt(&sid, "/ps")).await;
    assert_eq!(r["stopReason"], "end_turn", "{r}");
    let listed = text_of(&c.take_all(), "agent_message_chunk");
    assert!(listed.contains("Background jobs"), "{listed}");
    assert!(
        listed.contains(&format!("- 1: `echo up; exec -a {m} sleep 600` — running")),
        "{listed}"
    );
    assert_eq!(server.requests().len(), 3, "/ps asked the model nothing");

    drop(c);
    let start = std::time::Instant::now();
    while !started_as(&m).is_empty() && start.elapsed() < Duration::from_secs(10) {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(started_as(&m).is_empty(), "the job ended with pith acp");
}
