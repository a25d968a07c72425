//! MCP through the real engine, against real MCP servers pith did not write (the official Python
//! SDK, `tests/mcp/server.py`) over stdio and streamable HTTP: tools listed and called by the
//! mock model, permissions, results of every kind, faults (a server that fails to start, exits
//! mid-call, hangs, returns a huge result), `list_changed`, deferred definitions behind
//! `tool_search`, prompts and resources.

mod support;

use pith::config::{Action, Config, PermissionSetting};
use pith::event::{Event, McpServerStatus, McpState, Op, TurnEnd};
use serde_json::{Value, json};
use support::engine::{Harness, harness_with};
use support::mcp::{self, HttpServer};
use support::openai;

fn call(id: &str, tool: &str, args: Value) -> support::MockResponse {
    let args = args.to_string();
    openai::tool_calls(&[(id, tool, args.as_str())], Some((1000, 10)))
}

fn allow(server: &str) -> Vec<(&str, PermissionSetting)> {
    vec![(server, PermissionSetting::Action(Action::Allow))]
}

/// An engine with the stdio test server as `t`, its tools allowed.
async fn with_server(python: &str, edit: impl FnOnce(&mut Config)) -> Harness {
    let server = mcp::stdio(python);
    harness_with(allow("t"), true, move |c| {
        c.mcp.insert("t".into(), server);
        edit(c);
    })
    .await
}

/// Waits for a status in which `name` is no longer starting.
async fn settled(h: &mut Harness, name: &str) -> McpServerStatus {
    loop {
        let ev = h
            .until("mcp status", |e| matches!(e, Event::McpStatus { .. }))
            .await;
        let Event::McpStatus { servers } = ev else {
            unreachable!()
        };
        let s = servers.into_iter().find(|s| s.name == name).unwrap();
        if s.state != McpState::Starting {
            return s;
        }
    }
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|t| t["function"]["name"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn stdio_server_tools_are_listed_and_called_with_every_kind_of_result() {
    let Some(py) = mcp::python() else { return };
    let mut h = with_server(&py, |_| {}).await;
    let status = settled(&mut h, "t").await;
    assert_eq!(status.state, McpState::Ready);
    assert!(status.tools >= 10, "{status:?}");
    assert!(status.tokens > 100, "{status:?}");
    assert!(!status.deferred);
    assert_eq!(status.prompts[0].name, "review");
    assert!(status.resources);

    h.server.push(call("c1", "t_echo", json!({"text": "hi"})));
    h.server.push(openai::tool_calls(
        &[
            ("c2", "t_add", r#"{"a": 2, "b": 40}"#),
            ("c3", "t_picture", "{}"),
            ("c4", "t_link", "{}"),
            ("c5", "t_fail", r#"{"reason": "testing"}"#),
        ],
        Some((1100, 10)),
    ));
    h.server.push(openai::text("done", Some((1200, 2))));
    h.send(Op::user_turn("use the tools"));
    assert_eq!(h.turn_finished().await, TurnEnd::Stop);

    let first = h.server.request_body(0);
    let names = tool_names(&first);
    assert!(names.contains(&"t_echo".to_string()), "{names:?}");
    let echo = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "t_echo")
        .unwrap();
    assert_eq!(
        echo["function"]["parameters"]["properties"]["text"]["type"],
        "string"
    );
    assert!(
        echo["function"]["description"]
            .as_str()
            .unwrap()
            .starts_with("Echo the text back")
    );

    assert_eq!(h.tool_results(1), ["echo: hi"]);
    let results = h.tool_results(2);
    assert_eq!(results[1], "42");
    assert!(
        results[2].starts_with("[image: image/png, ") && results[2].contains(".png]"),
        "{results:?}"
    );
    assert!(
        results[3].contains("[resource link: notes <mem://notes>"),
        "{results:?}"
    );
    assert!(
        results[4].contains("failed on purpose: testing"),
        "{results:?}"
    );
    let png = results[2]
        .split("saved to ")
        .nth(1)
        .unwrap()
        .trim_end_matches(']');
    assert!(std::fs::read(png).unwrap().starts_with(b"\x89PNG"));
    // the error result reached the model as an error
    let body = h.server.request_body(2);
    let wire_error = body["messages"].as_array().unwrap().iter().any(|m| {
        m["role"] == "tool"
            && m["content"]
                .as_str()
                .unwrap_or("")
                .contains("failed on purpose")
    });
    assert!(wire_error);
}

#[tokio::test]
async fn http_server_tools_are_called_too() {
    let Some(py) = mcp::python() else { return };
    let http = HttpServer::start(&py).await;
    let config = http.config();
    let mut h = harness_with(allow("web"), true, move |c| {
        c.mcp.insert("web".into(), config);
    })
    .await;
    let status = settled(&mut h, "web").await;
    assert_eq!(status.state, McpState::Ready, "{status:?}");
    assert_eq!(status.transport, "http");
    h.server
        .push(call("c1", "web_add", json!({"a": 1, "b": 2})));
    h.server.push(openai::text("3", Some((1100, 2))));
    h.send(Op::user_turn("add"));
    assert_eq!(h.turn_finished().await, TurnEnd::Stop);
    assert_eq!(h.tool_results(1), ["3"]);
}
