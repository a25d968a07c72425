//! The provider's hosted web search (`[websearch] hosted = true`) through the real binary
//! against the mock provider speaking each wire: the request offers the provider's search (and
//! not pith's own `websearch` beside it), the stream's search events become a `websearch` part
//! that `pith run` prints (query and pages) and the store keeps, and the next request leaves it
//! out (the answer that followed it stands).

use crate::support;

use serde_json::{Value, json};
use support::pith::{PithEnv, stderr};
use support::{MockResponse, MockServer};
use support::{anthropic as an, responses as rs};

const KEY: &str = "sk-hosted-test-0b7d21";

/// A config whose model speaks `kind` to the mock, with hosted search on and a SearXNG backend
/// configured too (which the hosted search replaces).
fn env_for(server: &MockServer, kind: &str) -> PithEnv {
    let env = PithEnv::new(&server.url(), 128_000, 16_000, "");
    let base = match kind {
        "responses" => server.openai_base_url(),
        _ => server.url(),
    };
    let config = format!(
        r#"model = "web/m1"

[websearch]
hosted = true
backend = "searxng"
url = "http://127.0.0.1:9"

[webfetch]
enabled = false

[memory]
tool = false

[permission]
list = "allow"

[provider.web]
kind = "{kind}"
base_url = "{base}"
api_key_env = "PITH_TEST_HOSTED_KEY"
max_retries = 0

[models."web/m1"]
context = 128000
output = 16000
"#
    );
    std::fs::write(&env.config, config).unwrap();
    env
}

async fn run(env: &PithEnv) -> std::process::Output {
    let fut = env
        .command(&["run", "find it"])
        .env("PITH_TEST_HOSTED_KEY", KEY)
        .output();
    tokio::time::timeout(std::time::Duration::from_secs(60), fut)
        .await
        .expect("pith finished")
        .expect("pith ran")
}

/// The stored `websearch` part of the session, as exported.
async fn stored_search(env: &PithEnv) -> Value {
    let export = env.export_latest().await;
    let found = export.to_string();
    let parts: Vec<Value> = export["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|m| m["parts"].as_array().cloned().unwrap_or_default())
        .filter(|p| p.to_string().contains("\"websearch\""))
        .collect();
    assert_eq!(parts.len(), 1, "{found}");
    parts[0].clone()
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| {
            t["name"]
                .as_str()
                .or(t["type"].as_str())
                .unwrap_or("")
                .to_string()
        })
        .collect()
}

#[tokio::test]
async fn responses_hosted_search_is_offered_shown_and_not_sent_back() {
    let server = MockServer::start().await;
    let env = env_for(&server, "responses");
    let ev = |v: Value| rs::frame(&v);
    server.push(MockResponse::sse(vec![
        ev(json!({"type": "response.created", "response": {"id": "r1", "status": "in_progress"}})),
        ev(json!({"type": "response.output_item.added", "item": {"type": "web_search_call", "id": "ws_mock1", "status": "in_progress"}})),
        ev(json!({"type": "response.output_item.done", "item": {"type": "web_search_call", "id": "ws_mock1", "status": "completed",
            "action": {"type": "search", "query": "pith agent compaction",
                "sources": [{"type": "url", "url": "https://example.org/pith"}]}}})),
        ev(json!({"type": "response.output_item.added", "item": {"type": "message", "id": "msg_1", "role": "assistant", "content": []}})),
        ev(json!({"type": "response.output_text.delta", "item_id": "msg_1", "delta": "Found the docs."})),
        ev(json!({"type": "response.output_text.annotation.added", "item_id": "msg_1",
            "annotation": {"type": "url_citation", "url": "https://example.org/cited", "title": "Cited page", "start_index": 0, "end_index": 5}})),
        ev(json!({"type": "response.output_item.done", "item": {"type": "message", "id": "msg_1", "role": "assistant",
            "content": [{"type": "output_text", "text": "Found the docs."}]}})),
        ev(json!({"type": "response.output_item.added", "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "list", "arguments": ""}})),
        ev(json!({"type": "response.output_item.done", "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "list", "arguments": "{}", "status": "completed"}})),
        ev(json!({"type": "response.completed", "response": {"id": "r1", "status": "completed", "usage": rs::usage(100, 20, 0, 0)}})),
    ]));
    server.push(rs::text("done", None));
    let out = run(&env).await;
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(server.violations().is_empty(), "{:?}", server.violations());
    // offered: the provider's search, not pith's beside it
    let first = server.request_body(0);
    let names = tool_names(&first);
    assert!(names.iter().any(|n| n == "web_search"), "{names:?}");
    assert!(!names.iter().any(|n| n == "websearch"), "{names:?}");
    // not api.openai.com: no `include` of OpenAI's (the sources are asked for only there)
    assert!(first.get("include").is_none(), "{first}");
    // shown: the query and the pages, found and cited
    assert!(
        err.contains("· websearch pith agent compaction (the provider's)"),
        "{err}"
    );
    assert!(err.contains("  ↳ https://example.org/pith\n"), "{err}");
    assert!(
        err.contains("↳ Cited page  https://example.org/cited"),
        "{err}"
    );
    // stored as a completed websearch part of the hosted backend
    let part = stored_search(&env).await.to_string();
    assert!(
        part.contains("\"backend\":\"hosted\"") && part.contains("https://example.org/cited"),
        "{part}"
    );
    // not sent back: the next request holds the answer and the call, not the search
    let second = server.request_body(1).to_string();
    assert!(
        second.contains("Found the docs.") && second.contains("call_1"),
        "{second}"
    );
    assert!(
        !second.contains("ws_mock1") && !second.contains("web_search_call"),
        "{second}"
    );
}

#[tokio::test]
async fn anthropic_hosted_search_is_offered_shown_and_not_sent_back() {
    let server = MockServer::start().await;
    let env = env_for(&server, "anthropic");
    let f = |name: &str, v: Value| an::frame(name, &v);
    server.push(MockResponse::sse(vec![
        f("message_start", json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
            "model": "mock", "content": [], "stop_reason": null, "usage": {"input_tokens": 50, "output_tokens": 1}}})),
        f("content_block_start", json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "server_tool_use", "id": "srvtoolu_mock1", "name": "web_search", "input": {}}})),
        f("content_block_delta", json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": "{\"query\": \"pith compaction\"}"}})),
        f("content_block_stop", json!({"type": "content_block_stop", "index": 0})),
        f("content_block_start", json!({"type": "content_block_start", "index": 1,
            "content_block": {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_mock1", "content": [
                {"type": "web_search_result", "title": "Pith docs", "url": "https://example.org/pith-docs", "encrypted_content": "EqENCRYPTED"}]}})),
        f("content_block_stop", json!({"type": "content_block_stop", "index": 1})),
        f("content_block_start", json!({"type": "content_block_start", "index": 2, "content_block": {"type": "text", "text": ""}})),
        f("content_block_delta", json!({"type": "content_block_delta", "index": 2, "delta": {"type": "text_delta", "text": "Read the docs."}})),
        f("content_block_stop", json!({"type": "content_block_stop", "index": 2})),
        f("content_block_start", json!({"type": "content_block_start", "index": 3,
            "content_block": {"type": "tool_use", "id": "toolu_1", "name": "list", "input": {}}})),
        f("content_block_stop", json!({"type": "content_block_stop", "index": 3})),
        f("message_delta", json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}})),
        f("message_stop", json!({"type": "message_stop"})),
    ]));
    server.push(an::message(
        &[an::Block::Text("done")],
        "end_turn",
        (60, 2, 0, 0),
    ));
    let out = run(&env).await;
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(server.violations().is_empty(), "{:?}", server.violations());
    let first = server.request_body(0);
    let tools = first["tools"].to_string();
    assert!(
        tools.contains("\"type\":\"web_search_20250305\""),
        "{tools}"
    );
    assert!(
        !tool_names(&first).iter().any(|n| n == "websearch"),
        "{tools}"
    );
    assert!(
        err.contains("· websearch pith compaction (the provider's)"),
        "{err}"
    );
    assert!(
        err.contains("↳ Pith docs  https://example.org/pith-docs"),
        "{err}"
    );
    let part = stored_search(&env).await.to_string();
    assert!(
        part.contains("\"backend\":\"hosted\"") && part.contains("pith-docs"),
        "{part}"
    );
    let second = server.request_body(1).to_string();
    assert!(
        second.contains("Read the docs.") && second.contains("toolu_1"),
        "{second}"
    );
    assert!(
        !second.contains("srvtoolu_mock1")
            && !second.contains("server_tool_use")
            && !second.contains("EqENCRYPTED"),
        "{second}"
    );
}
