//! An eliciting MCP server (`crates/pith-test-support/mcp/elicit_server.py`, the official
//! Python SDK) through the real binary: `pith acp` puts its form to the editor as a
//! `session/request_permission` (Accept with the defaults, or only Decline), and `pith run`
//! declines with a line on stderr (an `info` event with `--format json`) unless `--yes` and
//! every required field has a default.

use crate::support;

use serde_json::{Value, json};
use support::pith::PithEnv;
use support::{MockServer, mcp, openai};

use super::acp::{Client, prompt};

/// The Python that runs the SDK, as an absolute path (the test's HOME hides pyenv's shims).
fn python() -> Option<String> {
    let py = mcp::python()?;
    let out = std::process::Command::new(&py)
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .ok()?;
    Some(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn env_with_server(server: &MockServer, py: &str) -> PithEnv {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("crates/pith-test-support/mcp/elicit_server.py");
    let extra = format!(
        "[mcp.e]\ncommand = {}\nargs = [{}]\n\n[permission]\ne = \"allow\"\n",
        json!(py),
        json!(script.to_string_lossy())
    );
    PithEnv::new(&server.url(), 128_000, 8_000, &extra)
}

fn call(tool: &str) -> support::MockResponse {
    openai::tool_calls(&[("c1", tool, "{}")], Some((1000, 10)))
}

fn tool_result(server: &MockServer) -> String {
    let body = server.requests().last().unwrap().body.clone();
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .and_then(|m| m["content"].as_str().map(str::to_string))
        .unwrap_or_else(|| panic!("no tool result: {body}"))
}

fn option_ids(asked: &Value) -> Vec<String> {
    asked["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["optionId"].as_str().unwrap().to_string())
        .collect()
}

async fn acp_answer(tool: &str, choice: &'static str) -> Option<(Value, String)> {
    let py = python()?;
    let server = MockServer::start().await;
    let env = env_with_server(&server, &py);
    let mut c = Client::start(&env);
    c.initialize().await;
    let sid = c.new_session(&env).await;
    server.push(call(tool));
    server.push(openai::text("ok", Some((1100, 2))));
    let id = c.send("session/prompt", prompt(&sid, "go")).await;
    let r = c.wait(id, &move |_| choice).await;
    assert_eq!(r["result"]["stopReason"], "end_turn", "{r}");
    let asked = c
        .asked
        .iter()
        .find(|a| {
            a["toolCall"]["toolCallId"]
                .as_str()
                .is_some_and(|id| id.starts_with("elicitation-"))
        })
        .cloned()
        .expect("the form was put to the editor");
    Some((asked, tool_result(&server)))
}

#[tokio::test]
async fn an_editor_accepts_a_form_with_its_defaults() {
    let Some((asked, result)) = acp_answer("e_configure", "accept").await else {
        return;
    };
    assert_eq!(option_ids(&asked), ["accept", "decline"]);
    let text = asked["toolCall"]["content"][0]["content"]["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        text.starts_with("MCP server e asks: How should staging be deployed?"),
        "{text}"
    );
    assert!(text.contains("default 2"), "{text}");
    assert_eq!(
        result,
        r#"accept: {"env": "dev", "name": "v1", "notify": true, "replicas": 2}"#
    );
}

#[tokio::test]
async fn an_editor_can_only_decline_a_required_field_without_a_default() {
    let Some((asked, result)) = acp_answer("e_ask_name", "decline").await else {
        return;
    };
    assert_eq!(option_ids(&asked), ["decline"]);
    let text = asked["toolCall"]["content"][0]["content"]["text"]
        .as_str()
        .unwrap();
    assert!(text.contains("pith can only decline"), "{text}");
    assert_eq!(result, "decline");
}

#[tokio::test]
async fn pith_run_declines_and_says_so_and_yes_takes_the_defaults() {
    let Some(py) = python() else { return };
    let server = MockServer::start().await;
    let env = env_with_server(&server, &py);
    server.push(call("e_configure"));
    server.push(openai::text("ok", Some((1100, 2))));
    let out = env.run(&["run", "go"]).await;
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("MCP server e asked: \"How should staging be deployed?\"; declined"),
        "{stderr}"
    );
    assert_eq!(tool_result(&server), "decline");

    server.push(call("e_configure"));
    server.push(openai::text("ok", Some((1100, 2))));
    let (out, events) = env.run_json(&["--yes", "go"]).await;
    assert!(out.status.success(), "{out:?}");
    let note = events
        .iter()
        .find(|e| {
            e["type"] == "info"
                && e["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("MCP server e asked"))
        })
        .unwrap_or_else(|| panic!("no info event: {events:?}"));
    assert!(
        note["message"]
            .as_str()
            .unwrap()
            .contains("accepted with its defaults (--yes)"),
        "{note}"
    );
    assert_eq!(
        tool_result(&server),
        r#"accept: {"env": "dev", "name": "v1", "notify": true, "replicas": 2}"#
    );
}
