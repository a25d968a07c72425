//! Memory and instruction files in an editor (`pith acp`): `/remember` writes the project's
//! file (no one is asked which: the documented default) and answers with the file, `/memory`
//! lists the files, and a subfolder's `AGENTS.md` loaded on first touch is said as a thought.

use serde_json::Value;

use super::acp::{Client, env, prompt};
use crate::support::{MockServer, openai};

/// The text of the updates of `kind`.
fn text_of(updates: &[Value], kind: &str) -> String {
    updates
        .iter()
        .filter(|u| u["sessionUpdate"] == kind)
        .filter_map(|u| u["content"]["text"].as_str())
        .collect()
}

#[tokio::test]
async fn remember_memory_and_a_loaded_subfolder_file_in_an_editor() {
    let server = MockServer::start().await;
    let env = env(&server);
    let ws = env.workspace.path().canonicalize().unwrap();
    let mut c = Client::start(&env);
    c.initialize().await;
    let sid = c.new_session(&env).await;
    let r = c
        .call(
            "session/prompt",
            prompt(&sid, "/remember use pnpm, never npm"),
        )
        .await;
    assert_eq!(r["stopReason"], "end_turn", "{r}");
    let said = text_of(&c.take_all(), "agent_message_chunk");
    assert!(said.contains("remembered in"), "{said}");
    assert_eq!(
        std::fs::read_to_string(ws.join("AGENTS.md")).unwrap(),
        "## Memory\n\n- use pnpm, never npm\n"
    );
    let r = c.call("session/prompt", prompt(&sid, "/memory")).await;
    assert_eq!(r["stopReason"], "end_turn", "{r}");
    let listed = text_of(&c.take_all(), "agent_message_chunk");
    assert!(
        listed.contains(&format!("project: {}", ws.join("AGENTS.md").display())),
        "{listed}"
    );
    // a read under sub/ loads its AGENTS.md, said as a thought
    std::fs::create_dir_all(ws.join("sub")).unwrap();
    std::fs::write(ws.join("sub/AGENTS.md"), "Sub rule.").unwrap();
    std::fs::write(ws.join("sub/x.rs"), "fn x() {}\n").unwrap();
    server.push(openai::tool_calls(
        &[("c1", "read", r#"{"file_path":"sub/x.rs"}"#)],
        None,
    ));
    server.push(openai::text("read", None));
    let r = c
        .call("session/prompt", prompt(&sid, "Read sub/x.rs"))
        .await;
    assert_eq!(r["stopReason"], "end_turn", "{r}");
    let thoughts = text_of(&c.take_all(), "agent_thought_chunk");
    assert!(thoughts.contains("↳ loaded sub/AGENTS.md ("), "{thoughts}");
    let last = server.request_body(server.requests().len() - 1);
    let system = crate::support::message_text(&last["messages"][0]);
    assert!(system.contains("Sub rule.") && system.contains("- use pnpm, never npm"));
}
