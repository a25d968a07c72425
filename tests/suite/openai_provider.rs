//! The OpenAI-compatible provider against the in-process mock server.

use crate::support;

use serde_json::{Value, json};
use support::{MockResponse, MockServer, openai as oa};

// ---- the mock server itself -------------------------------------------------------------

#[tokio::test]
async fn mock_records_requests_and_redacts_credentials() {
    let server = MockServer::start().await;
    server.push(MockResponse::status(200, json!({"ok": true})).header("x-test", "1"));
    let client = support::http_client();
    let resp = client
        .post(format!("{}/chat/completions", server.openai_base_url()))
        .header("authorization", "Bearer sk-secret")
        .header("x-custom", "yes")
        .json(&json!({"model": "m"}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["x-test"], "1");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0].path, "/v1/chat/completions");
    assert_eq!(reqs[0].header("authorization"), Some("REDACTED"));
    assert_eq!(reqs[0].secret("authorization"), Some("Bearer sk-secret"));
    assert_eq!(reqs[0].header("x-custom"), Some("yes"));
    assert_eq!(reqs[0].body, json!({"model": "m"}));
    assert!(!format!("{reqs:?}").contains("sk-secret"));
}

#[tokio::test]
async fn mock_answers_500_when_exhausted_and_404_on_unknown_paths() {
    let server = MockServer::start().await;
    let client = support::http_client();
    let resp = client
        .post(format!("{}/v1/messages", server.url()))
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 500);
    assert!(resp.text().await.unwrap().contains("mock script exhausted"));
    let resp = client
        .post(format!("{}/v2/nope", server.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 404);
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn mock_sse_frames_arrive_in_order_and_cut_breaks_the_body() {
    let server = MockServer::start().await;
    let frames = vec![
        "data: 1\n\n".to_string(),
        "event: x\ndata: 2\n\n".to_string(),
        "data: 3\n\n".to_string(),
    ];
    server.push(MockResponse::sse(frames.clone()).delay_ms(5));
    server.push(MockResponse::sse(frames).cut_after(2));
    let client = support::http_client();
    let url = format!("{}/chat/completions", server.openai_base_url());
    let resp = client.post(&url).send().await.unwrap();
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    assert_eq!(
        resp.text().await.unwrap(),
        "data: 1\n\nevent: x\ndata: 2\n\ndata: 3\n\n"
    );

    let mut resp = client.post(&url).send().await.unwrap();
    let mut got = Vec::new();
    let err = loop {
        match resp.chunk().await {
            Ok(Some(b)) => got.extend_from_slice(&b),
            Ok(None) => panic!("a cut stream must not end cleanly"),
            Err(e) => break e,
        }
    };
    assert_eq!(
        String::from_utf8(got).unwrap(),
        "data: 1\n\nevent: x\ndata: 2\n\n"
    );
    assert!(
        err.is_body() || err.is_decode() || err.is_request(),
        "{err:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_mock_servers_run_in_parallel() {
    let mut handles = Vec::new();
    for i in 0..8u64 {
        handles.push(tokio::spawn(async move {
            let server = MockServer::start().await;
            server.push(oa::text(&format!("hello {i}"), Some((i, 1))));
            let resp = support::http_client()
                .post(format!("{}/chat/completions", server.openai_base_url()))
                .json(&json!({ "n": i }))
                .send()
                .await
                .unwrap();
            let body = resp.text().await.unwrap();
            assert!(body.ends_with("data: [DONE]\n\n"));
            assert_eq!(server.request_body(0), json!({ "n": i }));
            server.url()
        }));
    }
    let mut urls = Vec::new();
    for h in handles {
        urls.push(h.await.unwrap());
    }
    urls.sort();
    urls.dedup();
    assert_eq!(urls.len(), 8);
}

// ---- the provider against the mock ------------------------------------------------------

use std::collections::BTreeMap;
use std::time::Duration;

use futures_util::StreamExt;
use pith_protocol::message::Usage;
use pith_provider::openai::OpenAiProvider;
use pith_provider::transport::Timeouts;
use pith_provider::{
    AssistantContent, ChatMessage, ChatRequest, FaultKind, FinishReason, Provider, ProviderError,
    StreamEvent, ToolSpec, UserContent,
};

const KEY: &str = "sk-test-0123456789abcdef";

fn provider(server: &MockServer) -> OpenAiProvider {
    OpenAiProvider::new(
        &server.openai_base_url(),
        Some(KEY.to_string()),
        BTreeMap::from([("x-title".to_string(), "pith-tests".to_string())]),
        Timeouts::all(Duration::from_secs(10)),
    )
    .unwrap()
}

fn simple_request() -> ChatRequest {
    ChatRequest {
        model: "gpt-test".into(),
        system: vec!["You are pith.".into()],
        messages: vec![ChatMessage::User {
            content: vec![UserContent::Text { text: "hi".into() }],
        }],
        tools: vec![],
        max_tokens: None,
        temperature: None,
        thinking_budget: None,
        reasoning_effort: None,
    }
}

/// Runs one request and collects every stream item (stopping after the first error item).
async fn collect(server: &MockServer) -> Vec<Result<StreamEvent, ProviderError>> {
    let mut stream = provider(server).stream(&simple_request()).await.unwrap();
    let mut out = Vec::new();
    while let Some(item) = stream.next().await {
        let is_err = item.is_err();
        out.push(item);
        if is_err {
            break;
        }
    }
    out
}

fn events(items: Vec<Result<StreamEvent, ProviderError>>) -> Vec<StreamEvent> {
    items
        .into_iter()
        .map(|i| i.unwrap_or_else(|e| panic!("unexpected error item: {e:?}")))
        .collect()
}

fn text_of(events: &[StreamEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::TextDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

fn last_error(items: Vec<Result<StreamEvent, ProviderError>>) -> ProviderError {
    match items.into_iter().last() {
        Some(Err(e)) => e,
        other => panic!("expected an error item last, got {other:?}"),
    }
}

async fn request_error(server: &MockServer) -> ProviderError {
    match provider(server).stream(&simple_request()).await {
        Err(e) => e,
        Ok(_) => panic!("expected the request to fail"),
    }
}

#[tokio::test]
async fn text_stream_with_usage_and_request_shape() {
    let server = MockServer::start().await;
    server.push(oa::text("Hello there, world!", Some((120, 7))));
    let evs = events(collect(&server).await);
    assert_eq!(text_of(&evs), "Hello there, world!");
    assert!(
        evs.iter()
            .filter(|e| matches!(e, StreamEvent::TextDelta(_)))
            .count()
            > 1
    );
    let n = evs.len();
    assert_eq!(
        evs[n - 2],
        StreamEvent::Usage(Usage {
            input: 120,
            output: 7,
            ..Usage::default()
        })
    );
    assert_eq!(evs[n - 1], StreamEvent::Finish(FinishReason::Stop));

    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    let r = &reqs[0];
    assert_eq!(r.path, "/v1/chat/completions");
    assert_eq!(r.secret("authorization"), Some(&*format!("Bearer {KEY}")));
    assert_eq!(r.header("x-title"), Some("pith-tests"));
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.body["stream"], json!(true));
    assert_eq!(r.body["stream_options"], json!({"include_usage": true}));
    assert_eq!(
        r.body["messages"],
        json!([
            {"role": "system", "content": "You are pith."},
            {"role": "user", "content": "hi"},
        ])
    );
    assert!(r.body.get("tools").is_none());
}

#[tokio::test]
async fn no_key_means_no_authorization_header() {
    let server = MockServer::start().await;
    server.push(oa::text("ok", None));
    let p = OpenAiProvider::new(
        &format!("{}/", server.openai_base_url()),
        None,
        BTreeMap::new(),
        Timeouts::default(),
    )
    .unwrap();
    let mut s = p.stream(&simple_request()).await.unwrap();
    while s.next().await.is_some() {}
    let reqs = server.requests();
    assert_eq!(reqs[0].path, "/v1/chat/completions");
    assert_eq!(reqs[0].header("authorization"), None);
}

#[tokio::test]
async fn reasoning_content_streams_before_text() {
    let server = MockServer::start().await;
    server.push(oa::reasoning_then_text(
        "Let me think about it.",
        "Answer.",
        None,
    ));
    let evs = events(collect(&server).await);
    let reasoning: String = evs
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ReasoningDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(reasoning, "Let me think about it.");
    assert_eq!(text_of(&evs), "Answer.");
    let first_text = evs
        .iter()
        .position(|e| matches!(e, StreamEvent::TextDelta(_)))
        .unwrap();
    let last_reasoning = evs
        .iter()
        .rposition(|e| matches!(e, StreamEvent::ReasoningDelta(_)))
        .unwrap();
    assert!(last_reasoning < first_text);
    // Usage missing: no Usage event, still a clean finish.
    assert!(!evs.iter().any(|e| matches!(e, StreamEvent::Usage(_))));
    assert_eq!(evs.last(), Some(&StreamEvent::Finish(FinishReason::Stop)));
}

#[tokio::test]
async fn two_parallel_tool_calls_streamed_as_deltas() {
    let server = MockServer::start().await;
    server.push(oa::tool_calls(
        &[
            ("call_a", "bash", r#"{"command":"ls -la"}"#),
            ("call_b", "read", r#"{"path":"src/main.rs","limit":20}"#),
        ],
        Some((50, 30)),
    ));
    let evs = events(collect(&server).await);
    let starts: Vec<_> = evs
        .iter()
        .filter(|e| matches!(e, StreamEvent::ToolCallStart { .. }))
        .collect();
    assert_eq!(
        starts,
        vec![
            &StreamEvent::ToolCallStart {
                id: "call_a".into(),
                name: "bash".into()
            },
            &StreamEvent::ToolCallStart {
                id: "call_b".into(),
                name: "read".into()
            },
        ]
    );
    // The starts come as soon as id and name are known, before the calls complete.
    let first_call = evs
        .iter()
        .position(|e| matches!(e, StreamEvent::ToolCall { .. }))
        .unwrap();
    assert!(
        evs[..first_call]
            .iter()
            .filter(|e| matches!(e, StreamEvent::ToolCallStart { .. }))
            .count()
            == 2
    );
    let tail = &evs[first_call..];
    assert_eq!(
        tail,
        &[
            StreamEvent::ToolCall {
                id: "call_a".into(),
                name: "bash".into(),
                arguments: r#"{"command":"ls -la"}"#.into()
            },
            StreamEvent::ToolCall {
                id: "call_b".into(),
                name: "read".into(),
                arguments: r#"{"path":"src/main.rs","limit":20}"#.into()
            },
            StreamEvent::Usage(Usage {
                input: 50,
                output: 30,
                ..Usage::default()
            }),
            StreamEvent::Finish(FinishReason::ToolCalls),
        ]
    );
}

#[tokio::test]
async fn a_new_id_at_a_used_index_starts_a_new_call() {
    let server = MockServer::start().await;
    let tc = |v: Value| oa::delta_chunk(json!({ "tool_calls": [v] }), None);
    server.push(oa::chunks(vec![
        tc(json!({"index": 0, "id": "c1", "type": "function", "function": {"name": "read", "arguments": "{\"pa"}})),
        tc(json!({"index": 0, "function": {"arguments": "th\":\"a\"}"}})),
        tc(json!({"index": 0, "id": "c2", "type": "function", "function": {"name": "read", "arguments": ""}})),
        tc(json!({"index": 0, "function": {"arguments": "{\"path\":\"b\"}"}})),
        oa::delta_chunk(json!({}), Some("tool_calls")),
    ]));
    let evs = events(collect(&server).await);
    let calls: Vec<_> = evs
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ToolCall {
                id,
                name,
                arguments,
            } => Some((id.as_str(), name.as_str(), arguments.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(
        calls,
        vec![
            ("c1", "read", r#"{"path":"a"}"#),
            ("c2", "read", r#"{"path":"b"}"#)
        ]
    );
}

#[tokio::test]
async fn usage_in_a_trailing_empty_choices_chunk_with_cache() {
    let server = MockServer::start().await;
    server.push(oa::chunks(vec![
        oa::delta_chunk(json!({"content": "hi"}), None),
        oa::delta_chunk(json!({}), Some("stop")),
        {
            let mut u = oa::usage_chunk(1000, 12, 800);
            u["usage"]["completion_tokens_details"]["reasoning_tokens"] = json!(4);
            u
        },
    ]));
    let evs = events(collect(&server).await);
    assert_eq!(
        evs,
        vec![
            StreamEvent::TextDelta("hi".into()),
            StreamEvent::Usage(Usage {
                input: 200,
                output: 12,
                reasoning: 4,
                cache_read: 800,
                cache_write: 0,
            }),
            StreamEvent::Finish(FinishReason::Stop),
        ]
    );
}

#[tokio::test]
async fn finish_without_done_is_complete() {
    let server = MockServer::start().await;
    server.push(MockResponse::sse(vec![
        oa::frame(&oa::delta_chunk(json!({"content": "partial"}), None)),
        oa::frame(&oa::delta_chunk(json!({}), Some("length"))),
    ]));
    let evs = events(collect(&server).await);
    assert_eq!(
        evs,
        vec![
            StreamEvent::TextDelta("partial".into()),
            StreamEvent::Finish(FinishReason::Length),
        ]
    );
}

#[tokio::test]
async fn mid_stream_error_event_with_and_without_event_name() {
    for named in [false, true] {
        let server = MockServer::start().await;
        let err =
            json!({"error": {"message": "Upstream overloaded, try later", "type": "server_error"}});
        let err_frame = if named {
            format!("event: error\ndata: {err}\n\n")
        } else {
            oa::frame(&err)
        };
        server.push(MockResponse::sse(vec![
            oa::frame(&oa::delta_chunk(json!({"content": "Hel"}), None)),
            err_frame,
            oa::done(),
        ]));
        let items = collect(&server).await;
        assert_eq!(
            items[0].as_ref().unwrap(),
            &StreamEvent::TextDelta("Hel".into())
        );
        let e = last_error(items);
        assert_eq!(e.kind, FaultKind::Server, "named={named}");
        assert!(e.message.contains("Upstream overloaded"), "{}", e.message);
    }

    // An overflow reported inside the stream is still an overflow.
    let server = MockServer::start().await;
    server.push(MockResponse::sse(vec![oa::frame(&oa::error_body(
        "context_length_exceeded",
        "This model's maximum context length is 8192 tokens.",
    ))]));
    assert_eq!(
        last_error(collect(&server).await).kind,
        FaultKind::ContextOverflow
    );
}

#[tokio::test]
async fn cut_stream_is_a_network_error_item() {
    let server = MockServer::start().await;
    server.push(
        MockResponse::sse(vec![
            oa::frame(&oa::delta_chunk(json!({"content": "Hello "}), None)),
            oa::frame(&oa::delta_chunk(json!({"content": "wor"}), None)),
            oa::frame(&oa::delta_chunk(json!({"content": "ld"}), None)),
            oa::frame(&oa::delta_chunk(json!({}), Some("stop"))),
            oa::done(),
        ])
        .cut_after(2),
    );
    let items = collect(&server).await;
    assert_eq!(items.len(), 3, "{items:?}");
    assert_eq!(
        items[1].as_ref().unwrap(),
        &StreamEvent::TextDelta("wor".into())
    );
    let e = last_error(items);
    assert_eq!(e.kind, FaultKind::Network);
    assert!(
        e.message
            .starts_with("stream ended before the response finished"),
        "{}",
        e.message
    );
    assert!(!e.message.contains("127.0.0.1"), "{}", e.message);
}

#[tokio::test]
async fn clean_end_without_done_or_finish_is_a_network_error() {
    let server = MockServer::start().await;
    server.push(MockResponse::sse(vec![oa::frame(&oa::delta_chunk(
        json!({"content": "Hello"}),
        None,
    ))]));
    let e = last_error(collect(&server).await);
    assert_eq!(e.kind, FaultKind::Network);
    assert_eq!(e.message, "stream ended before the response finished");
}

#[tokio::test]
async fn malformed_chunk_is_a_malformed_error_item() {
    let server = MockServer::start().await;
    server.push(MockResponse::sse(vec![
        oa::frame(&oa::delta_chunk(json!({"content": "ok"}), None)),
        "data: {\"choices\": [ {\"delta\": \n\n".to_string(),
        oa::done(),
    ]));
    let items = collect(&server).await;
    assert_eq!(items.len(), 2);
    assert_eq!(last_error(items).kind, FaultKind::Malformed);
}

#[tokio::test]
async fn rate_limit_with_retry_after() {
    let server = MockServer::start().await;
    server.push(
        MockResponse::status(
            429,
            oa::error_body("rate_limit_exceeded", "Rate limit reached for gpt-test"),
        )
        .header("retry-after", "3"),
    );
    server.push(
        MockResponse::status(429, json!({"error": {"message": "slow down"}}))
            .header("retry-after-ms", "250"),
    );
    let e = request_error(&server).await;
    assert_eq!(e.kind, FaultKind::RateLimit);
    assert_eq!(e.status, Some(429));
    assert_eq!(e.retry_after, Some(Duration::from_secs(3)));
    assert_eq!(
        e.message,
        "HTTP 429 rate limited: Rate limit reached for gpt-test"
    );
    let e = request_error(&server).await;
    assert_eq!(e.retry_after, Some(Duration::from_millis(250)));
}

#[tokio::test]
async fn server_error_500() {
    let server = MockServer::start().await;
    // An empty script answers 500 {"error":{"message":"mock script exhausted"}}.
    let e = request_error(&server).await;
    assert_eq!(e.kind, FaultKind::Server);
    assert_eq!(e.status, Some(500));
    assert_eq!(e.message, "HTTP 500 server error: mock script exhausted");
    assert!(e.kind.is_retryable());
}

#[tokio::test]
async fn context_overflow_bodies() {
    let server = MockServer::start().await;
    server.push(MockResponse::status(
        400,
        oa::error_body(
            "context_length_exceeded",
            "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.",
        ),
    ));
    server.push(MockResponse::status(
        400,
        json!({"error": {
            "code": 400,
            "message": "the request exceeds the available context size, try increasing it",
            "type": "exceed_context_size_error",
            "n_prompt_tokens": 9000,
            "n_ctx": 8192
        }}),
    ));
    server.push(MockResponse::raw(
        413,
        "text/plain",
        "Request Entity Too Large",
    ));
    for _ in 0..3 {
        let e = request_error(&server).await;
        assert_eq!(e.kind, FaultKind::ContextOverflow, "{}", e.message);
        assert!(!e.kind.is_retryable());
    }
}

#[tokio::test]
async fn auth_error_never_shows_the_key() {
    let server = MockServer::start().await;
    // A careless server that echoes the key back.
    server.push(MockResponse::status(
        401,
        json!({"error": {"message": format!("Incorrect API key provided: {KEY}"), "code": "invalid_api_key"}}),
    ));
    let e = request_error(&server).await;
    assert_eq!(e.kind, FaultKind::Auth);
    assert!(
        e.message
            .starts_with("HTTP 401 unauthorized: Incorrect API key provided")
    );
    assert!(!e.message.contains(KEY), "{}", e.message);
    assert!(!format!("{e:?}").contains(KEY));
}

#[tokio::test]
async fn connection_refused_is_network() {
    let server = MockServer::start().await;
    let base = server.openai_base_url();
    drop(server);
    tokio::time::sleep(Duration::from_millis(20)).await;
    let p = OpenAiProvider::new(
        &base,
        Some(KEY.into()),
        BTreeMap::new(),
        Timeouts::default(),
    )
    .unwrap();
    let e = match p.stream(&simple_request()).await {
        Err(e) => e,
        Ok(_) => panic!("expected a connection error"),
    };
    assert_eq!(e.kind, FaultKind::Network);
    assert!(!e.message.contains(KEY));
    assert!(!e.message.contains("/chat/completions"), "{}", e.message);
}

#[tokio::test]
async fn non_streamed_json_answer_is_accepted() {
    let server = MockServer::start().await;
    server.push(MockResponse::status(
        200,
        json!({
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "plain"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 1}
        }),
    ));
    let evs = events(collect(&server).await);
    assert_eq!(text_of(&evs), "plain");
    assert_eq!(evs.last(), Some(&StreamEvent::Finish(FinishReason::Stop)));
}

#[tokio::test]
async fn dropping_the_stream_closes_the_connection() {
    let server = MockServer::start().await;
    server.push(
        MockResponse::sse(vec![oa::frame(&oa::delta_chunk(
            json!({"content": "first"}),
            None,
        ))])
        .hold_open(),
    );
    server.push(oa::text("second", None));
    let p = provider(&server);
    let mut s = p.stream(&simple_request()).await.unwrap();
    assert_eq!(
        s.next().await.unwrap().unwrap(),
        StreamEvent::TextDelta("first".into())
    );
    // The server holds the stream open; waiting would hang.
    assert!(
        tokio::time::timeout(Duration::from_millis(100), s.next())
            .await
            .is_err()
    );
    drop(s);
    // The provider stays usable for the next request.
    let mut s = p.stream(&simple_request()).await.unwrap();
    let mut text = String::new();
    while let Some(Ok(ev)) = s.next().await {
        if let StreamEvent::TextDelta(t) = ev {
            text.push_str(&t);
        }
    }
    assert_eq!(text, "second");
}

#[tokio::test]
async fn request_body_snapshot() {
    let server = MockServer::start().await;
    server.push(oa::text("ok", None));
    let request = ChatRequest {
        model: "gpt-4.1".into(),
        system: vec![
            "You are pith, a coding agent.".into(),
            "<env>\nWorking directory: /work/project\n</env>".into(),
        ],
        messages: vec![
            ChatMessage::User {
                content: vec![UserContent::Text {
                    text: "List the files.".into(),
                }],
            },
            ChatMessage::Assistant {
                content: vec![
                    AssistantContent::Reasoning {
                        text: "I should run ls.".into(),
                        signature: None,
                        redacted: None,
                    },
                    AssistantContent::Text {
                        text: "Let me look.".into(),
                    },
                    AssistantContent::ToolCall {
                        id: "call_1".into(),
                        name: "bash".into(),
                        input: json!({"command": "ls", "timeout": 30}),
                    },
                ],
            },
            ChatMessage::ToolResult {
                call_id: "call_1".into(),
                content: "Cargo.toml\nsrc\n".into(),
                is_error: false,
            },
        ],
        tools: vec![ToolSpec {
            name: "bash".into(),
            description: "Run a shell command.".into(),
            parameters: json!({
                "type": "object",
                "properties": {"command": {"type": "string"}, "timeout": {"type": "integer"}},
                "required": ["command"]
            }),
        }],
        max_tokens: Some(32000),
        temperature: Some(0.3),
        thinking_budget: None,
        reasoning_effort: None,
    };
    let mut s = provider(&server).stream(&request).await.unwrap();
    while s.next().await.is_some() {}
    let body = server.request_body(0);
    assert_eq!(
        body,
        pith_provider::openai::request_body(&request, pith_config::OutputCap::MaxTokens)
    );
    insta::assert_json_snapshot!("openai_request_body", body);
}
