//! `session/load` replays a session from the engine's pages (the newest with `SessionLoaded`,
//! the older ones asked for with `Op::LoadHistory`): a session longer than one page comes back
//! whole and in order, whether its engine starts at once or waits for the workspace's trust.

use serde_json::{Value, json};

use super::acp::Client;
use crate::support::MockServer;
use crate::support::pith::{MODEL, PithEnv};
use pith_protocol::message::{Message, PartKind, Role};

/// A stored session of `n` prompts, each answered, in the workspace: its id.
fn stored_session(env: &PithEnv, n: usize) -> String {
    let store = pith_store::Store::open(env.data.path()).unwrap();
    let dir = env.path().canonicalize().unwrap();
    let session = store.create_session(&dir.to_string_lossy(), MODEL).unwrap();
    for i in 0..n {
        for (role, text) in [
            (Role::User, format!("prompt {i}")),
            (Role::Assistant, format!("answer {i}.")),
        ] {
            let mut m = Message::new(&session.id, role);
            m.push(PartKind::Text {
                text,
                synthetic: false,
            });
            store.save_message(&m).unwrap();
        }
    }
    session.id
}

async fn load(env: &PithEnv, sid: &str) -> Vec<Value> {
    let mut c = Client::start(env);
    c.initialize().await;
    let cwd = env.workspace.path().to_str().unwrap();
    let r = c
        .call(
            "session/load",
            json!({"sessionId": sid, "cwd": cwd, "mcpServers": []}),
        )
        .await;
    assert_eq!(r["modes"]["currentModeId"], "default", "{r}");
    c.take_all()
}

fn texts(replay: &[Value], kind: &str) -> Vec<String> {
    replay
        .iter()
        .filter(|u| u["sessionUpdate"] == kind)
        .map(|u| u["content"]["text"].as_str().unwrap().to_string())
        .collect()
}

fn assert_whole(replay: &[Value], n: usize) {
    let want: Vec<String> = (0..n).map(|i| format!("prompt {i}")).collect();
    assert_eq!(texts(replay, "user_message_chunk"), want);
    let said: Vec<String> = (0..n).map(|i| format!("answer {i}.")).collect();
    assert_eq!(texts(replay, "agent_message_chunk"), said);
}

/// 520 messages: three of the engine's pages (200 each).
const PROMPTS: usize = 260;

#[tokio::test]
async fn a_session_longer_than_a_page_is_replayed_whole_and_in_order() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 128_000, 8_000, "");
    let sid = stored_session(&env, PROMPTS);
    assert_whole(&load(&env, &sid).await, PROMPTS);
}

#[tokio::test]
async fn a_session_whose_workspace_awaits_trust_is_replayed_the_same() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 128_000, 8_000, "");
    std::fs::write(
        env.path().join("pith.toml"),
        "[permission]\nbash = \"allow\"\n",
    )
    .unwrap();
    let sid = stored_session(&env, PROMPTS);
    assert_whole(&load(&env, &sid).await, PROMPTS);
}
