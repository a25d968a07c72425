//! MCP through the real engine, against real MCP servers pith did not write (the official Python
//! SDK, `crates/pith-test-support/mcp/server.py`) over stdio and streamable HTTP: tools listed
//! and called by the mock model, permissions, results of every kind, faults (a server that fails to start, exits
//! mid-call, hangs, returns a huge result), `list_changed`, deferred definitions behind
//! `tool_search`, prompts and resources.

use crate::support;

use pith_config::{Config, McpServerConfig, PermissionAction, PermissionSetting};
use pith_protocol::event::{
    ContextEvent, Event, McpServerStatus, McpState, Op, OutputEvent, SettingsEvent, TurnEnd,
    TurnEvent,
};
use serde_json::{Value, json};
use support::engine::{Harness, harness_with};
use support::mcp::{self, HttpServer};
use support::openai;

fn call(id: &str, tool: &str, args: Value) -> support::MockResponse {
    let args = args.to_string();
    openai::tool_calls(&[(id, tool, args.as_str())], Some((1000, 10)))
}

fn allow(server: &str) -> Vec<(&str, PermissionSetting)> {
    vec![(server, PermissionSetting::Action(PermissionAction::Allow))]
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
            .until("mcp status", |e| {
                matches!(e, Event::Settings(SettingsEvent::McpStatus { .. }))
            })
            .await;
        let Event::Settings(SettingsEvent::McpStatus { servers }) = ev else {
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
    assert_eq!(status.transport, pith_protocol::event::McpTransport::Http);
    h.server
        .push(call("c1", "web_add", json!({"a": 1, "b": 2})));
    h.server.push(openai::text("3", Some((1100, 2))));
    h.send(Op::user_turn("add"));
    assert_eq!(h.turn_finished().await, TurnEnd::Stop);
    assert_eq!(h.tool_results(1), ["3"]);
}

#[tokio::test]
async fn a_server_that_fails_to_start_is_reported_and_the_session_goes_on() {
    let Some(py) = mcp::python() else { return };
    let broken = McpServerConfig {
        command: Some(py.clone()),
        args: vec![
            "-c".into(),
            "import sys; print('missing API token', file=sys.stderr); sys.exit(3)".into(),
        ],
        ..McpServerConfig::default()
    };
    let absent = McpServerConfig {
        command: Some("/nonexistent/mcp-server".into()),
        ..McpServerConfig::default()
    };
    let mut h = harness_with(vec![], true, move |c| {
        c.mcp.insert("broken".into(), broken);
        c.mcp.insert("absent".into(), absent);
    })
    .await;
    let ev = h
        .until("status", |e| {
            matches!(e, Event::Settings(SettingsEvent::McpStatus { servers }) if servers.iter().all(|s| s.state != McpState::Starting))
        })
        .await;
    let Event::Settings(SettingsEvent::McpStatus { servers }) = ev else {
        unreachable!()
    };
    let reason = |name: &str| match &servers.iter().find(|s| s.name == name).unwrap().state {
        McpState::Failed { reason } => reason.clone(),
        other => panic!("{name}: {other:?}"),
    };
    let broken = reason("broken");
    assert!(broken.contains("exit status 3"), "{broken}");
    assert!(broken.contains("missing API token"), "{broken}");
    let absent = reason("absent");
    assert!(
        absent.contains("cannot start `/nonexistent/mcp-server`"),
        "{absent}"
    );
    h.server
        .push(openai::text("fine without it", Some((900, 3))));
    h.send(Op::user_turn("hello"));
    assert_eq!(h.turn_finished().await, TurnEnd::Stop);
    // no MCP tool was offered
    assert!(
        tool_names(&h.server.request_body(0))
            .iter()
            .all(|n| !n.contains('_') || n == "tool_search")
    );
}

#[tokio::test]
async fn a_server_that_exits_mid_call_is_reported_and_restarted_on_the_next_call() {
    let Some(py) = mcp::python() else { return };
    let mut h = with_server(&py, |_| {}).await;
    assert_eq!(settled(&mut h, "t").await.state, McpState::Ready);
    h.server.push(call("c1", "t_pid", json!({})));
    h.server.push(call("c2", "t_crash", json!({})));
    h.server.push(call("c3", "t_pid", json!({})));
    h.server.push(openai::text("done", Some((1300, 2))));
    h.send(Op::user_turn("crash it"));
    let exited = h
        .until("exited", |e| {
            matches!(e, Event::Settings(SettingsEvent::McpStatus { servers }) if matches!(servers[0].state, McpState::Exited { .. }))
        })
        .await;
    let Event::Settings(SettingsEvent::McpStatus { servers }) = exited else {
        unreachable!()
    };
    let McpState::Exited { reason } = &servers[0].state else {
        unreachable!()
    };
    assert!(reason.contains("exit status 3"), "{reason}");
    assert_eq!(h.turn_finished().await, TurnEnd::Stop);
    let first = h.tool_results(1)[0].clone();
    let results = h.tool_results(3);
    assert!(
        results[1].contains("stopped during the call"),
        "{results:?}"
    );
    assert!(
        results[1].contains("restarted on the next call"),
        "{results:?}"
    );
    let second = &results[2];
    assert!(
        first.parse::<u32>().is_ok() && second.parse::<u32>().is_ok(),
        "{results:?}"
    );
    assert_ne!(&first, second, "a new process answered");
}

#[tokio::test]
async fn a_hung_call_is_bounded_by_the_timeout_and_the_server_stays_usable() {
    let Some(py) = mcp::python() else { return };
    let mut h = with_server(&py, |c| {
        c.mcp.get_mut("t").unwrap().tool_timeout_secs = Some(1);
    })
    .await;
    h.server.push(call("c1", "t_hang", json!({})));
    h.server
        .push(call("c2", "t_echo", json!({"text": "still here"})));
    h.server.push(openai::text("done", Some((1200, 2))));
    h.send(Op::user_turn("hang"));
    assert_eq!(h.turn_finished().await, TurnEnd::Stop);
    let hung = &h.tool_results(1)[0];
    assert!(hung.contains("did not answer hang within 1 s"), "{hung}");
    assert_eq!(h.tool_results(2)[1], "echo: still here");
}

#[tokio::test]
async fn a_hung_call_is_interrupted() {
    let Some(py) = mcp::python() else { return };
    let mut h = with_server(&py, |_| {}).await;
    h.server.push(call("c1", "t_hang", json!({})));
    h.send(Op::user_turn("hang"));
    h.until("tool started", |e| {
        matches!(e, Event::Output(OutputEvent::ToolStarted { .. }))
    })
    .await;
    h.send(Op::Interrupt);
    let finished = h
        .until("tool finished", |e| {
            matches!(e, Event::Output(OutputEvent::ToolFinished { .. }))
        })
        .await;
    let Event::Output(OutputEvent::ToolFinished { error, .. }) = finished else {
        unreachable!()
    };
    assert_eq!(error.as_deref(), Some("Tool execution was interrupted"));
    assert_eq!(h.turn_finished().await, TurnEnd::Interrupted);
    // The server is still up for the next turn.
    h.server
        .push(call("c2", "t_echo", json!({"text": "after"})));
    h.server.push(openai::text("done", Some((1200, 2))));
    h.send(Op::user_turn("again"));
    assert_eq!(h.turn_finished().await, TurnEnd::Stop);
    let last = h.server.requests().len() - 1;
    assert!(h.tool_results(last).contains(&"echo: after".to_string()));
}

#[tokio::test]
async fn a_huge_result_is_truncated_like_any_tool_output() {
    let Some(py) = mcp::python() else { return };
    let mut h = with_server(&py, |_| {}).await;
    h.server.push(call("c1", "t_huge", json!({"lines": 20000})));
    h.server.push(openai::text("done", Some((1200, 2))));
    h.send(Op::user_turn("big"));
    assert_eq!(h.turn_finished().await, TurnEnd::Stop);
    let result = &h.tool_results(1)[0];
    assert!(
        result.len() < 60 * 1024,
        "{} bytes reached the model",
        result.len()
    );
    assert!(result.starts_with("line 0 "), "{}", &result[..100]);
    let saved = std::fs::read_dir(h.data.path().join("tool-output"))
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| std::fs::metadata(e.path()).unwrap().len())
        .max()
        .unwrap();
    assert!(
        saved > 1_000_000,
        "the whole output was saved ({saved} bytes)"
    );
}

#[tokio::test]
async fn tools_added_at_run_time_are_offered_from_the_next_step() {
    let Some(py) = mcp::python() else { return };
    let mut h = with_server(&py, |_| {}).await;
    h.server.push(call("c1", "t_grow", json!({})));
    h.server.push(call("c2", "t_extra", json!({"word": "new"})));
    h.server.push(openai::text("done", Some((1200, 2))));
    h.send(Op::user_turn("grow"));
    assert_eq!(h.turn_finished().await, TurnEnd::Stop);
    assert!(!tool_names(&h.server.request_body(0)).contains(&"t_extra".to_string()));
    assert!(tool_names(&h.server.request_body(1)).contains(&"t_extra".to_string()));
    assert_eq!(h.tool_results(2)[1], "extra: new");
}

#[tokio::test]
async fn mcp_tools_ask_by_default() {
    let Some(py) = mcp::python() else { return };
    let server = mcp::stdio(&py);
    let mut h = harness_with(vec![], false, move |c| {
        c.mcp.insert("t".into(), server);
    })
    .await;
    h.server.push(call("c1", "t_echo", json!({"text": "x"})));
    h.server.push(openai::text("done", Some((1200, 2))));
    h.send(Op::user_turn("echo"));
    let req = h.permission_asked().await;
    assert_eq!(req.tool, "t_echo");
    assert_eq!(req.patterns, ["echo"]);
    h.send(Op::PermissionReply {
        id: req.id,
        reply: pith_protocol::event::PermissionReply::Deny,
        message: None,
    });
    assert_eq!(h.turn_finished().await, TurnEnd::Stop);
    assert_eq!(h.tool_results(1), ["The user denied this call."]);
}

#[tokio::test]
async fn definitions_are_deferred_behind_tool_search_on_a_small_window() {
    let Some(py) = mcp::python() else { return };
    let mut h = with_server(&py, |c| {
        // The test server's definitions take ~500 tokens: more than 4% of this window.
        c.models.get_mut(support::engine::MODEL).unwrap().context = 10_000;
        c.models.get_mut(support::engine::MODEL).unwrap().output = 1_000;
        c.tool_search.threshold = 0.04;
    })
    .await;
    let status = settled(&mut h, "t").await;
    assert!(status.deferred, "{status:?}");
    h.server
        .push(call("c1", "tool_search", json!({"names": ["t_echo"]})));
    h.server
        .push(call("c2", "t_echo", json!({"text": "loaded"})));
    h.server.push(openai::text("done", Some((1200, 2))));
    h.send(Op::user_turn("echo"));
    assert_eq!(h.turn_finished().await, TurnEnd::Stop);
    let first = h.server.request_body(0);
    let names = tool_names(&first);
    assert!(names.contains(&"tool_search".to_string()), "{names:?}");
    assert!(names.iter().all(|n| !n.starts_with("t_")), "{names:?}");
    let index = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "tool_search")
        .unwrap()["function"]["description"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(index.contains("- t_echo: Echo the text back"), "{index}");
    let second = tool_names(&h.server.request_body(1));
    assert!(second.contains(&"t_echo".to_string()), "{second:?}");
    assert!(!second.contains(&"t_add".to_string()), "{second:?}");
    assert!(h.tool_results(1)[0].contains("t_echo(text*)"));
    assert_eq!(h.tool_results(2)[1], "echo: loaded");
}

#[tokio::test]
async fn the_context_figure_counts_the_definitions_the_request_carries() {
    let Some(py) = mcp::python() else { return };
    let mut plain = harness_with(vec![], true, |_| {}).await;
    plain.send(Op::ContextBreakdown);
    let Event::Context(ContextEvent::ContextBreakdown {
        breakdown: without, ..
    }) = plain
        .until("breakdown", |e| {
            matches!(e, Event::Context(ContextEvent::ContextBreakdown { .. }))
        })
        .await
    else {
        unreachable!()
    };
    let mut h = with_server(&py, |_| {}).await;
    let status = settled(&mut h, "t").await;
    h.send(Op::ContextBreakdown);
    let Event::Context(ContextEvent::ContextBreakdown {
        breakdown: with, ..
    }) = h
        .until("breakdown", |e| {
            matches!(e, Event::Context(ContextEvent::ContextBreakdown { .. }))
        })
        .await
    else {
        unreachable!()
    };
    // `/context` counts with the tokenizer: the definitions counted in the request and one by
    // one for the status may differ by a token at their joins, no more.
    let added = with.tools - without.tools;
    assert!(
        added.abs_diff(status.tokens) <= 2,
        "{added} tokens added, the status says {}",
        status.tokens
    );
}

#[tokio::test]
async fn prompts_become_user_messages_and_resources_attach_to_the_next_one() {
    let Some(py) = mcp::python() else { return };
    let mut h = with_server(&py, |_| {}).await;
    settled(&mut h, "t").await;
    h.server.push(openai::text("reviewed", Some((1000, 2))));
    h.send(Op::McpPrompt {
        id: "p1".into(),
        server: "t".into(),
        prompt: "review".into(),
        args: "12 the tests".into(),
    });
    assert_eq!(h.turn_finished().await, TurnEnd::Stop);
    let body = h.server.request_body(0);
    let last = body["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(
        last["content"],
        "Please review pull request 12, looking at the tests."
    );

    h.send(Op::AttachMcpResource {
        server: "t".into(),
        uri: "mem://notes".into(),
    });
    h.until(
        "attached",
        |e| matches!(e, Event::Turn(TurnEvent::Info { message, .. }) if message.starts_with("attached t:mem://notes")),
    )
    .await;
    h.server.push(openai::text("ok", Some((1100, 2))));
    h.send(Op::user_turn("what do the notes say?"));
    assert_eq!(h.turn_finished().await, TurnEnd::Stop);
    let body = h.server.request_body(1).to_string();
    assert!(body.contains("remember the milk"), "{body}");

    // A prompt with a missing argument is refused with its usage.
    h.send(Op::McpPrompt {
        id: "p2".into(),
        server: "t".into(),
        prompt: "review".into(),
        args: String::new(),
    });
    let err = h
        .until("error", |e| {
            matches!(e, Event::Turn(TurnEvent::Error { .. }))
        })
        .await;
    let Event::Turn(TurnEvent::Error { message, .. }) = err else {
        unreachable!()
    };
    assert!(message.contains("missing argument: pr"), "{message}");
}
