//! The Responses API provider (`kind = "responses"`) against the mock server: the request
//! bodies (snapshots), the typed event stream, tool calls and their outputs, encrypted reasoning
//! carried back where the server keeps it and nothing OpenAI-only sent elsewhere, and errors
//! classified as for the other APIs (overflow → window learned, 429 and failures retried).

use crate::support;

use std::collections::BTreeMap;

use futures_util::StreamExt;
use pith_protocol::llm::{ChatMessage, ChatRequest, ReasoningEffort, ToolSpec, UserContent};
use pith_provider::openai::OpenAiProvider;
use pith_provider::transport::Timeouts;
use pith_provider::{Provider, StreamEvent};
use serde_json::{Value, json};
use support::pith::{PithEnv, of_type, stderr};
use support::responses as rs;
use support::{MockResponse, MockServer};

fn provider(server: &MockServer) -> OpenAiProvider {
    OpenAiProvider::responses(
        &server.openai_base_url(),
        Some("sk-test-secret".into()),
        BTreeMap::new(),
        Timeouts::default(),
    )
    .unwrap()
}

fn request() -> ChatRequest {
    ChatRequest {
        model: "gpt-test".into(),
        system: vec!["You are terse.".into(), "Env: here.".into()],
        messages: vec![ChatMessage::User {
            content: vec![UserContent::Text { text: "Hi".into() }],
        }],
        tools: vec![ToolSpec {
            name: "read".into(),
            description: "Read a file".into(),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        }],
        max_tokens: Some(4_000),
        temperature: Some(0.2),
        thinking_budget: None,
        reasoning_effort: Some(ReasoningEffort::High),
    }
}

async fn collect(p: &OpenAiProvider, r: &ChatRequest) -> Vec<StreamEvent> {
    let stream = p.stream(r).await.unwrap();
    stream.map(Result::unwrap).collect().await
}

/// A pith environment whose mock provider speaks the Responses API; `provider` lines go to
/// `[provider.mock]`.
fn env(server: &MockServer, context: u64, output: u64, provider: &str) -> PithEnv {
    let env = PithEnv::with_provider(&server.url(), context, output, "", provider);
    let text = std::fs::read_to_string(&env.config).unwrap();
    std::fs::write(
        &env.config,
        text.replace("kind = \"openai\"", "kind = \"responses\""),
    )
    .unwrap();
    env
}

/// A request body with the agent prompt and the tool definitions shortened, for snapshots.
fn shortened(body: &Value, env: &PithEnv) -> Value {
    let mut v = support::pith::normalized(body, env.workspace.path());
    v["instructions"] = json!("[…instructions…]");
    if let Some(tools) = v["tools"].as_array() {
        let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
        v["tools"] = json!(names);
    }
    v
}

#[tokio::test]
async fn a_text_turn_to_a_local_server_sends_only_the_basic_fields() {
    let server = MockServer::start().await;
    server.push(rs::text("Hello there.", Some((120, 4))));
    let p = provider(&server);
    let events = collect(&p, &request()).await;
    let text: String = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::TextDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(text, "Hello there.");
    assert!(
        events.contains(&StreamEvent::Usage(pith_protocol::llm::Usage {
            input: 120,
            output: 4,
            ..Default::default()
        }))
    );
    assert_eq!(
        events.last(),
        Some(&StreamEvent::Finish(pith_protocol::llm::FinishReason::Stop))
    );
    let req = &server.requests()[0];
    assert_eq!(req.path, "/v1/responses");
    assert_eq!(req.secret("authorization"), Some("Bearer sk-test-secret"));
    // 127.0.0.1 is not OpenAI: no store, include or reasoning; the temperature stays
    for key in ["store", "include", "reasoning"] {
        assert!(req.body.get(key).is_none(), "{key}: {}", req.body);
    }
    insta::assert_json_snapshot!("responses_text_turn_local", req.body);
}

#[tokio::test]
async fn where_reasoning_is_kept_the_request_asks_for_it_encrypted() {
    let server = MockServer::start().await;
    server.push(rs::reasoning_then_text(
        "Thinking about it",
        "gAAAAenc1",
        "Done.",
        rs::usage(200, 30, 150, 20),
    ));
    let p = provider(&server)
        .with_encrypted_reasoning(Some(true))
        .with_effort(Some(true));
    let events = collect(&p, &request()).await;
    assert_eq!(
        events[..2],
        [
            StreamEvent::ReasoningDelta("Thinking ".into()),
            StreamEvent::ReasoningDelta("about it".into()),
        ]
    );
    assert!(events.contains(&StreamEvent::ReasoningSignature(
        "openai-responses:gAAAAenc1".into()
    )));
    assert!(
        events.contains(&StreamEvent::Usage(pith_protocol::llm::Usage {
            input: 50,
            output: 30,
            reasoning: 20,
            cache_read: 150,
            cache_write: 0,
        }))
    );
    insta::assert_json_snapshot!("responses_text_turn_openai", server.request_body(0));
}

#[tokio::test]
async fn a_tool_call_round_trip_through_pith() {
    let server = MockServer::start().await;
    let env = env(&server, 64_000, 4_000, "");
    std::fs::write(env.workspace.path().join("notes.txt"), "alpha\nbeta\n").unwrap();
    server.push(rs::tool_calls(
        &[("call_r1", "read", r#"{"path":"notes.txt"}"#)],
        None,
        Some((900, 20)),
    ));
    server.push(rs::text("The notes say alpha and beta.", Some((1_000, 9))));
    let (out, events) = env
        .run_json(&["--effort", "high", "What do the notes say?"])
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(server.requests().len(), 2);
    let second = server.request_body(1);
    let input = second["input"].as_array().unwrap();
    let call = input.iter().find(|i| i["type"] == "function_call").unwrap();
    assert_eq!(call["call_id"], "call_r1");
    let output = input
        .iter()
        .find(|i| i["type"] == "function_call_output")
        .unwrap();
    assert_eq!(output["call_id"], "call_r1");
    assert!(output["output"].as_str().unwrap().contains("beta"));
    // a local server that did not say it takes an effort gets none, nor OpenAI's fields
    for key in ["store", "include", "reasoning"] {
        assert!(second.get(key).is_none(), "{key}: {second}");
    }
    assert_eq!(second["max_output_tokens"], 4_000);
    let usage = of_type(&events, "context_usage");
    assert!(!usage.is_empty(), "{events:?}");
    insta::assert_json_snapshot!("responses_tool_round_trip", shortened(&second, &env));
}

#[tokio::test]
async fn encrypted_reasoning_is_carried_into_the_next_turn() {
    let server = MockServer::start().await;
    let env = env(
        &server,
        64_000,
        4_000,
        "encrypted_reasoning = true\nreasoning_effort = true",
    );
    std::fs::write(env.workspace.path().join("a.txt"), "A").unwrap();
    server.push(rs::tool_calls(
        &[("call_1", "read", r#"{"path":"a.txt"}"#)],
        Some(("Read it first", "gAAAA-first")),
        Some((800, 40)),
    ));
    server.push(rs::reasoning_then_text(
        "Now answer",
        "gAAAA-second",
        "It says A.",
        rs::usage(900, 30, 600, 12),
    ));
    let (out, _) = env
        .run_json(&["--effort", "medium", "What is in a.txt?"])
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    server.push(rs::text("Yes.", Some((1_000, 2))));
    let (out, _) = env.run_json(&["-c", "Sure?"]).await;
    assert!(out.status.success(), "{}", stderr(&out));

    let first = server.request_body(0);
    assert_eq!(first["store"], false);
    assert_eq!(first["include"], json!(["reasoning.encrypted_content"]));
    // `--effort` applies to `-c` runs only when given again: the second run has none
    assert_eq!(
        first["reasoning"],
        json!({"effort": "medium", "summary": "auto"})
    );
    let last = server.request_body(2);
    assert!(last.get("reasoning").is_none(), "{last}");
    let kinds: Vec<&str> = last["input"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["type"].as_str().unwrap_or("message"))
        .collect();
    assert_eq!(
        kinds,
        [
            "message",
            "reasoning",
            "function_call",
            "function_call_output",
            "reasoning",
            "message",
            "message"
        ]
    );
    insta::assert_json_snapshot!("responses_reasoning_carried", shortened(&last, &env));
}

#[tokio::test]
async fn an_overflow_teaches_the_window_and_the_summary_uses_the_same_api() {
    let server = MockServer::start().await;
    let env = env(&server, 32_000, 4_000, "");
    server.push(rs::text(
        &"Step after step. ".repeat(300),
        Some((3_000, 1_800)),
    ));
    assert!(env.run(&["run", "Plan it."]).await.status.success());
    // llama.cpp's overflow body, as its /v1/responses sends it
    server.push(MockResponse::status(
        400,
        json!({"error": {"code": 400, "message": "request (6120 tokens) exceeds the available context size (6000 tokens), try increasing it", "type": "exceed_context_size_error", "n_prompt_tokens": 6120, "n_ctx": 6000}}),
    ));
    server.push(rs::text(
        "## Goal\nPlan.\n## Constraints & Preferences\nNone\n## Progress\nSome.\n## Key Decisions\nNone\n## Next Steps\nNone\n## Critical Context\nplan\n## Relevant Files\nNone",
        Some((1_500, 200)),
    ));
    server.push(rs::text("Done.", Some((2_000, 5))));
    let (out, events) = env.run_json(&["-c", "Go on."]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let learned = of_type(&events, "context_window");
    assert_eq!(learned.len(), 1, "{events:?}");
    assert_eq!(learned[0]["window"], 6_000);
    assert_eq!(of_type(&events, "compaction_finished").len(), 1);
    let reqs = server.requests();
    assert_eq!(reqs.len(), 4);
    assert!(reqs.iter().all(|r| r.path == "/v1/responses"));
    assert!(reqs[3].body["max_output_tokens"].as_u64().unwrap() <= 1_500);
}

#[tokio::test]
async fn rate_limits_and_failed_responses_are_retried() {
    let server = MockServer::start().await;
    let env = env(&server, 64_000, 4_000, "");
    server.push(
        MockResponse::status(
            429,
            json!({"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}}),
        )
        .header("retry-after", "0"),
    );
    server.push(rs::failed("server_error", "The server had an error"));
    server.push(rs::text("Fine.", Some((100, 2))));
    let out = env.run(&["run", "Hi"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("retrying 1/3"), "{err}");
    assert!(err.contains("retrying 2/3"), "{err}");
    assert_eq!(server.requests().len(), 3);
    assert!(String::from_utf8_lossy(&out.stdout).contains("Fine."));
}

#[tokio::test]
async fn a_refused_request_ends_the_turn_with_one_clear_error() {
    let server = MockServer::start().await;
    let env = env(&server, 64_000, 4_000, "");
    server.push(rs::failed(
        "invalid_prompt",
        "Invalid prompt: flagged as potentially violating our usage policy",
    ));
    let out = env.run(&["run", "Hi"]).await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("Invalid prompt"), "{err}");
    assert_eq!(server.requests().len(), 1, "not retried");
}

#[test]
fn the_mock_holds_requests_to_the_responses_rules() {
    let v = |body: Value| support::wire::violations("/v1/responses", &body);
    let good = json!({
        "model": "m", "max_output_tokens": 10, "tools": [{"type": "function", "name": "read"}],
        "input": [
            {"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
            {"type": "reasoning", "summary": [], "encrypted_content": "e"},
            {"type": "function_call", "call_id": "c1", "name": "read", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "x"},
        ],
    });
    let clean = v(good.clone());
    assert!(clean.is_empty(), "{clean:?}");
    let mut no_cap = good.clone();
    no_cap.as_object_mut().unwrap().remove("max_output_tokens");
    assert!(v(no_cap)[0].contains("max_output_tokens"));
    let mut orphan = good.clone();
    orphan["input"][3]["call_id"] = json!("c2");
    let broken = v(orphan).join("; ");
    assert!(
        broken.contains("no function_call before it made"),
        "{broken}"
    );
    assert!(broken.contains("have no function_call_output"), "{broken}");
    let mut bad_part = good.clone();
    bad_part["input"][0]["content"][0]["type"] = json!("output_text");
    assert!(v(bad_part)[0].contains("in a user message"));
    let mut untyped = good.clone();
    untyped["input"][1] =
        json!({"role": "assistant", "content": [{"type": "output_text", "text": "x"}]});
    assert!(v(untyped)[0].contains("without type \"message\""));
    let mut lone = good.clone();
    lone["input"] = json!([
        {"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
        {"type": "reasoning", "summary": [], "encrypted_content": "e"},
    ]);
    assert!(v(lone)[0].contains("not followed by its output"));
    let mut no_tools = good;
    no_tools.as_object_mut().unwrap().remove("tools");
    assert!(v(no_tools)[0].contains("without tools"));
}
