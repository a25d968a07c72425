//! Stopping at a permission question: the call is denied and the turn ends with no further
//! request to the model (the TUI's Esc and Ctrl+C send `Op::Interrupt`; an editor's
//! `cancelled` answer to `session/request_permission` does the same). Denying with a note
//! (`n`) lets the model go on.

use crate::support;

use serde_json::json;
use support::MockServer;
use support::engine::harness;
use support::openai;
use support::pith::PithEnv;

use pith_protocol::event::{Op, TurnEnd};

use super::acp::{Client, prompt};

fn bash(id: &str, command: &str) -> support::MockResponse {
    let args = json!({ "command": command }).to_string();
    openai::tool_calls(&[(id, "bash", args.as_str())], Some((1000, 10)))
}

#[tokio::test]
async fn stopping_at_a_question_denies_the_call_and_sends_no_further_request() {
    let mut h = harness(vec![], false).await;
    h.server.push(bash("c1", "touch stopped.txt"));
    h.server
        .push(openai::text("going on anyway", Some((1200, 2))));
    h.send(Op::user_turn("touch it"));
    let _req = h.permission_asked().await;
    h.send(Op::Interrupt);
    assert_eq!(h.turn_finished().await, TurnEnd::Interrupted);
    assert_eq!(h.server.requests().len(), 1, "the model was asked again");
    assert!(!h.workspace.path().join("stopped.txt").exists());
}

#[tokio::test]
async fn an_editor_that_cancels_the_question_ends_the_turn() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 128_000, 8_000, "");
    let mut c = Client::start(&env);
    c.initialize().await;
    let sid = c.new_session(&env).await;
    server.push(bash("c1", "touch stopped.txt"));
    server.push(openai::text("going on anyway", Some((1200, 2))));
    let id = c.send("session/prompt", prompt(&sid, "touch it")).await;
    let r = c.wait(id, &|_| "cancelled").await;
    assert_eq!(r["result"]["stopReason"], "cancelled", "{r}");
    assert_eq!(c.asked.len(), 1);
    assert_eq!(server.requests().len(), 1, "the model was asked again");
    assert!(!env.workspace.path().join("stopped.txt").exists());
    // the session still works
    server.push(openai::text("back", None));
    let r = c.call("session/prompt", prompt(&sid, "again")).await;
    assert_eq!(r["stopReason"], "end_turn");
}
