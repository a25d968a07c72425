//! The Anthropic provider against an in-process mock speaking the Messages API event stream.

use crate::support;

use std::collections::BTreeMap;
use std::time::Duration;

use futures_util::StreamExt;
use pith_protocol::message::Usage;
use pith_provider::anthropic::{AnthropicProvider, EventParser, http_error, request_body};
use pith_provider::transport::Timeouts;
use pith_provider::{
    AssistantContent, ChatMessage, ChatRequest, FaultKind, FinishReason, Provider, ProviderError,
    StreamEvent, ToolSpec, UserContent,
};
use serde_json::{Value, json};
use support::anthropic::frame;
use support::{MockResponse, MockServer};

const KEY: &str = "sk-ant-test-SECRET-0123456789";

// ---------------------------------------------------------------- helpers

fn message_start(input: u64, cache_write: u64, cache_read: u64) -> String {
    frame(
        "message_start",
        &json!({"type": "message_start", "message": {
            "id": "msg_01", "type": "message", "role": "assistant", "content": [],
            "model": "claude-test", "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": input, "cache_creation_input_tokens": cache_write,
                      "cache_read_input_tokens": cache_read, "output_tokens": 1}}}),
    )
}

fn block_start(index: u64, block: Value) -> String {
    frame(
        "content_block_start",
        &json!({"type": "content_block_start", "index": index, "content_block": block}),
    )
}

fn delta(index: u64, delta: Value) -> String {
    frame(
        "content_block_delta",
        &json!({"type": "content_block_delta", "index": index, "delta": delta}),
    )
}

fn text_delta(index: u64, text: &str) -> String {
    delta(index, json!({"type": "text_delta", "text": text}))
}

fn json_delta(index: u64, partial: &str) -> String {
    delta(
        index,
        json!({"type": "input_json_delta", "partial_json": partial}),
    )
}

fn block_stop(index: u64) -> String {
    frame(
        "content_block_stop",
        &json!({"type": "content_block_stop", "index": index}),
    )
}

fn message_delta(stop_reason: &str, output: u64) -> String {
    frame(
        "message_delta",
        &json!({"type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": null},
                "usage": {"output_tokens": output}}),
    )
}

fn message_stop() -> String {
    frame("message_stop", &json!({"type": "message_stop"}))
}

/// A stream of these frames, each in its own TCP write 20 ms apart.
fn sse(frames: impl IntoIterator<Item = String>) -> MockResponse {
    MockResponse::sse(frames).delay_ms(20)
}

/// A stream written in exactly these chunks, 20 ms apart.
fn chunks(chunks: Vec<Vec<u8>>) -> MockResponse {
    MockResponse::chunks(chunks).delay_ms(20)
}

fn ping() -> String {
    frame("ping", &json!({"type": "ping"}))
}

fn provider(server: &MockServer) -> AnthropicProvider {
    let mut headers = BTreeMap::new();
    headers.insert("anthropic-beta".to_string(), "test-beta-1".to_string());
    AnthropicProvider::new(
        &server.url(),
        Some(KEY.to_string()),
        headers,
        Timeouts::all(Duration::from_secs(10)),
    )
    .expect("provider")
}

fn simple_request() -> ChatRequest {
    ChatRequest {
        model: "claude-test".into(),
        system: vec!["You are pith.".into()],
        messages: vec![user("hi")],
        tools: vec![],
        max_tokens: Some(1000),
        temperature: None,
        thinking_budget: None,
        reasoning_effort: None,
    }
}

fn user(text: &str) -> ChatMessage {
    ChatMessage::User {
        content: vec![UserContent::Text { text: text.into() }],
    }
}

type Item = Result<StreamEvent, ProviderError>;

/// Runs one request against a mock serving `reply` and collects every stream item.
async fn run(reply: MockResponse) -> (Vec<Item>, MockServer) {
    let server = MockServer::with(vec![reply]).await;
    let stream = provider(&server)
        .stream(&simple_request())
        .await
        .expect("stream opens");
    let items = tokio::time::timeout(Duration::from_secs(10), stream.collect::<Vec<_>>())
        .await
        .expect("stream finishes");
    (items, server)
}

async fn run_ok(reply: MockResponse) -> Vec<StreamEvent> {
    let (items, _) = run(reply).await;
    items
        .into_iter()
        .map(|i| i.expect("no error item"))
        .collect()
}

/// Everything up to the error item, and the error; asserts the error is last.
async fn run_err(reply: MockResponse) -> (Vec<StreamEvent>, ProviderError) {
    let (mut items, _) = run(reply).await;
    let err = items
        .pop()
        .expect("at least one item")
        .expect_err("last item is an error");
    let events = items
        .into_iter()
        .map(|i| i.expect("only the last item is an error"))
        .collect();
    (events, err)
}

async fn open_err(reply: MockResponse) -> ProviderError {
    let server = MockServer::with(vec![reply]).await;
    match provider(&server).stream(&simple_request()).await {
        Ok(_) => panic!("expected an HTTP error"),
        Err(e) => e,
    }
}

fn usage(input: u64, output: u64, cache_read: u64, cache_write: u64) -> StreamEvent {
    StreamEvent::Usage(Usage {
        input,
        output,
        reasoning: 0,
        cache_read,
        cache_write,
    })
}

// ---------------------------------------------------------------- streaming

#[tokio::test]
async fn text_stream_with_usage_and_cache_figures() {
    let events = run_ok(sse([
        message_start(25, 1_200, 30_000),
        block_start(0, json!({"type": "text", "text": ""})),
        ping(),
        text_delta(0, "Hello"),
        text_delta(0, ", world"),
        block_stop(0),
        message_delta("end_turn", 12),
        message_stop(),
    ]))
    .await;
    assert_eq!(
        events,
        vec![
            StreamEvent::TextDelta("Hello".into()),
            StreamEvent::TextDelta(", world".into()),
            usage(25, 12, 30_000, 1_200),
            StreamEvent::Finish(FinishReason::Stop),
        ]
    );
}

#[tokio::test]
async fn tool_use_json_split_at_awkward_boundaries_and_mid_line_chunk() {
    // The input, cut inside a key, inside a \u escape, inside an escaped quote and between a
    // number's digits. "é" stays raw so a chunk boundary can fall inside its UTF-8 bytes.
    let pieces = [
        "",
        "{\"pa",
        "th\": \"src/caf\\u00",
        "e9/é.rs\", \"pattern\": \"say \\",
        "\"hi\\\"\", \"limit\": 1",
        "20}",
    ];
    let mut frames = vec![
        message_start(10, 0, 0),
        block_start(0, json!({"type": "text", "text": ""})),
        text_delta(0, "Reading."),
        block_stop(0),
        block_start(
            1,
            json!({"type": "tool_use", "id": "toolu_01", "name": "grep", "input": {}}),
        ),
    ];
    frames.extend(pieces.iter().map(|p| json_delta(1, p)));
    frames.extend([block_stop(1), message_delta("tool_use", 40), message_stop()]);

    // Two TCP writes for the whole body: the boundary falls inside the `data:` JSON line of
    // the delta holding "é", between the two bytes of that character.
    let body = frames.concat().into_bytes();
    let e_acute = "é".as_bytes();
    let at = body
        .windows(e_acute.len())
        .position(|w| w == e_acute)
        .expect("é in body")
        + 1;
    let line_start = body[..at].iter().rposition(|&b| b == b'\n').unwrap() + 1;
    assert!(
        body[line_start..].starts_with(b"data: "),
        "split inside a data line"
    );
    let reply = chunks(vec![body[..at].to_vec(), body[at..].to_vec()]);

    let events = {
        let (items, _) = run(reply).await;
        items
            .into_iter()
            .map(|i| i.expect("no error"))
            .collect::<Vec<_>>()
    };
    let expected_args = pieces.concat();
    assert_eq!(
        events,
        vec![
            StreamEvent::TextDelta("Reading.".into()),
            StreamEvent::ToolCallStart {
                id: "toolu_01".into(),
                name: "grep".into()
            },
            StreamEvent::ToolCall {
                id: "toolu_01".into(),
                name: "grep".into(),
                arguments: expected_args.clone(),
            },
            usage(10, 40, 0, 0),
            StreamEvent::Finish(FinishReason::ToolCalls),
        ]
    );
    let parsed: Value = serde_json::from_str(&expected_args).unwrap();
    assert_eq!(
        parsed,
        json!({"path": "src/café/é.rs", "pattern": "say \"hi\"", "limit": 120})
    );
}

#[tokio::test]
async fn every_frame_split_in_its_data_line_still_parses() {
    let frames = [
        message_start(3, 0, 0),
        block_start(0, json!({"type": "text", "text": ""})),
        text_delta(0, "abc"),
        block_stop(0),
        message_delta("max_tokens", 7),
        message_stop(),
    ];
    // Each frame written in two pieces, cut 10 bytes into its `data:` line.
    let mut chunks = Vec::new();
    for f in &frames {
        let at = f.find("data: ").unwrap() + 10;
        chunks.push(f.as_bytes()[..at].to_vec());
        chunks.push(f.as_bytes()[at..].to_vec());
    }
    let (items, _) = run(MockResponse::chunks(chunks).delay_ms(2)).await;
    let events: Vec<_> = items.into_iter().map(|i| i.unwrap()).collect();
    assert_eq!(
        events,
        vec![
            StreamEvent::TextDelta("abc".into()),
            usage(3, 7, 0, 0),
            StreamEvent::Finish(FinishReason::Length),
        ]
    );
}

#[tokio::test]
async fn thinking_with_signature_then_tool_use() {
    let events = run_ok(sse([
        message_start(100, 0, 0),
        block_start(
            0,
            json!({"type": "thinking", "thinking": "", "signature": ""}),
        ),
        delta(
            0,
            json!({"type": "thinking_delta", "thinking": "Let me look "}),
        ),
        delta(
            0,
            json!({"type": "thinking_delta", "thinking": "at the file."}),
        ),
        delta(
            0,
            json!({"type": "signature_delta", "signature": "EqQBCkYIARgCIkBsig=="}),
        ),
        block_stop(0),
        block_start(
            1,
            json!({"type": "tool_use", "id": "toolu_02", "name": "read", "input": {}}),
        ),
        block_stop(1),
        message_delta("tool_use", 55),
        message_stop(),
    ]))
    .await;
    assert_eq!(
        events,
        vec![
            StreamEvent::ReasoningDelta("Let me look ".into()),
            StreamEvent::ReasoningDelta("at the file.".into()),
            StreamEvent::ReasoningSignature("EqQBCkYIARgCIkBsig==".into()),
            StreamEvent::ToolCallStart {
                id: "toolu_02".into(),
                name: "read".into()
            },
            // No input_json_delta at all: empty input is `{}`.
            StreamEvent::ToolCall {
                id: "toolu_02".into(),
                name: "read".into(),
                arguments: "{}".into()
            },
            usage(100, 55, 0, 0),
            StreamEvent::Finish(FinishReason::ToolCalls),
        ]
    );
}

#[tokio::test]
async fn redacted_thinking_is_passed_on() {
    let events = run_ok(sse([
        message_start(5, 0, 0),
        block_start(
            0,
            json!({"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"}),
        ),
        block_stop(0),
        block_start(1, json!({"type": "text", "text": ""})),
        text_delta(1, "Done."),
        block_stop(1),
        message_delta("end_turn", 9),
        message_stop(),
    ]))
    .await;
    assert_eq!(
        events,
        vec![
            StreamEvent::RedactedReasoning("EmwKAhgBEgy3va3pzix/LafPsn4a".into()),
            StreamEvent::TextDelta("Done.".into()),
            usage(5, 9, 0, 0),
            StreamEvent::Finish(FinishReason::Stop),
        ]
    );
}

#[tokio::test]
async fn unknown_events_and_blocks_are_ignored() {
    let events = run_ok(sse([
        "event: future_event\ndata: not even json\n\n".to_string(),
        message_start(1, 0, 0),
        frame("future_event", &json!({"type": "future_event", "x": 1})),
        block_start(0, json!({"type": "future_block", "stuff": []})),
        delta(0, json!({"type": "future_delta", "y": 2})),
        block_stop(0),
        block_start(1, json!({"type": "text", "text": ""})),
        delta(1, json!({"type": "citations_delta", "citation": {}})),
        text_delta(1, "ok"),
        block_stop(1),
        ping(),
        message_delta("end_turn", 2),
        message_stop(),
        // Anything after message_stop is not read.
        text_delta(1, "late"),
    ]))
    .await;
    assert_eq!(
        events,
        vec![
            StreamEvent::TextDelta("ok".into()),
            usage(1, 2, 0, 0),
            StreamEvent::Finish(FinishReason::Stop),
        ]
    );
}

#[tokio::test]
async fn error_event_mid_stream_overloaded_is_a_server_error() {
    let (events, err) = run_err(sse([
        message_start(1, 0, 0),
        block_start(0, json!({"type": "text", "text": ""})),
        text_delta(0, "partial"),
        frame(
            "error",
            &json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        ),
        // Never reached: the stream ends at the error.
        text_delta(0, " more"),
        message_stop(),
    ]))
    .await;
    assert_eq!(events, vec![StreamEvent::TextDelta("partial".into())]);
    assert_eq!(err.kind, FaultKind::Server);
    assert!(err.kind.is_retryable());
    assert!(err.message.contains("overloaded_error"), "{}", err.message);
}

#[test]
fn error_events_are_classified() {
    let cases = [
        ("overloaded_error", "Overloaded", FaultKind::Server),
        ("api_error", "Internal server error", FaultKind::Server),
        ("rate_limit_error", "Slow down", FaultKind::RateLimit),
        (
            "invalid_request_error",
            "prompt is too long: 210000 tokens > 200000 maximum",
            FaultKind::ContextOverflow,
        ),
        (
            "invalid_request_error",
            "messages.1: tool_use ids must be unique",
            FaultKind::BadRequest,
        ),
        ("authentication_error", "invalid x-api-key", FaultKind::Auth),
        (
            "request_too_large",
            "Request exceeds the maximum size",
            FaultKind::ContextOverflow,
        ),
    ];
    for (etype, message, kind) in cases {
        let mut parser = EventParser::new();
        let data = json!({"type": "error", "error": {"type": etype, "message": message}});
        let err = parser
            .handle("error", &data.to_string())
            .expect_err("an error event is an error");
        assert_eq!(err.kind, kind, "{etype}: {message}");
    }
}

#[tokio::test]
async fn stream_ending_before_message_stop_is_a_network_error() {
    let (events, err) = run_err(sse([
        message_start(1, 0, 0),
        block_start(0, json!({"type": "text", "text": ""})),
        text_delta(0, "half"),
    ]))
    .await;
    assert_eq!(events, vec![StreamEvent::TextDelta("half".into())]);
    assert_eq!(err.kind, FaultKind::Network);
    assert!(
        err.message.contains("before message_stop"),
        "{}",
        err.message
    );
}

#[tokio::test]
async fn connection_cut_mid_stream_is_a_network_error() {
    let frames = vec![
        message_start(1, 0, 0),
        block_start(0, json!({"type": "text", "text": ""})),
        text_delta(0, "half"),
        text_delta(0, " never"),
        message_stop(),
    ];
    let (events, err) = run_err(sse(frames).cut_after(3)).await;
    assert_eq!(events, vec![StreamEvent::TextDelta("half".into())]);
    assert_eq!(err.kind, FaultKind::Network);
    assert!(err.message.contains("interrupted"), "{}", err.message);
    assert!(!err.message.contains(KEY));
}

#[tokio::test]
async fn stalled_stream_times_out_as_a_network_error() {
    let server = MockServer::with(vec![
        sse([
            message_start(1, 0, 0),
            block_start(0, json!({"type": "text", "text": ""})),
            message_stop(),
        ])
        .delay_ms(5_000),
    ])
    .await;
    let p = AnthropicProvider::new(
        &server.url(),
        None,
        BTreeMap::new(),
        Timeouts::all(Duration::from_millis(300)),
    )
    .unwrap();
    let items: Vec<_> = tokio::time::timeout(
        Duration::from_secs(3),
        p.stream(&simple_request()).await.unwrap().collect(),
    )
    .await
    .expect("the provider's timeout fires first");
    let err = items.last().unwrap().clone().unwrap_err();
    assert_eq!(err.kind, FaultKind::Network);
}

#[tokio::test]
async fn invalid_json_is_malformed() {
    let (events, err) = run_err(sse([
        message_start(1, 0, 0),
        "event: content_block_delta\ndata: {\"type\": \"content_block_delta\", \"index\": 0,\n\n"
            .to_string(),
        message_stop(),
    ]))
    .await;
    assert!(events.is_empty());
    assert_eq!(err.kind, FaultKind::Malformed);
}

#[tokio::test]
async fn invalid_tool_input_json_is_malformed() {
    let (events, err) = run_err(sse([
        message_start(1, 0, 0),
        block_start(
            0,
            json!({"type": "tool_use", "id": "toolu_03", "name": "bash", "input": {}}),
        ),
        json_delta(0, "{\"command\": \"ls"),
        block_stop(0),
        message_stop(),
    ]))
    .await;
    assert_eq!(
        events,
        vec![StreamEvent::ToolCallStart {
            id: "toolu_03".into(),
            name: "bash".into()
        }]
    );
    assert_eq!(err.kind, FaultKind::Malformed);
}

// ---------------------------------------------------------------- HTTP errors

fn error_body(etype: &str, message: &str) -> Value {
    json!({"type": "error", "error": {"type": etype, "message": message}})
}

#[tokio::test]
async fn http_529_is_a_server_error() {
    let err = open_err(MockResponse::status(
        529,
        error_body("overloaded_error", "Overloaded"),
    ))
    .await;
    assert_eq!(err.kind, FaultKind::Server);
    assert_eq!(err.status, Some(529));
    assert_eq!(
        err.message,
        "anthropic: HTTP 529 overloaded_error: Overloaded"
    );
}

#[tokio::test]
async fn http_529_then_success() {
    let server = MockServer::with(vec![
        MockResponse::status(529, error_body("overloaded_error", "Overloaded")),
        sse([
            message_start(2, 0, 0),
            block_start(0, json!({"type": "text", "text": ""})),
            text_delta(0, "ok"),
            block_stop(0),
            message_delta("end_turn", 1),
            message_stop(),
        ]),
    ])
    .await;
    let p = provider(&server);
    let first = p.stream(&simple_request()).await;
    assert!(matches!(first, Err(ref e) if e.kind == FaultKind::Server && e.kind.is_retryable()));
    let events: Vec<_> = p
        .stream(&simple_request())
        .await
        .expect("second attempt opens")
        .collect()
        .await;
    assert_eq!(events.len(), 3);
    assert_eq!(events[0], Ok(StreamEvent::TextDelta("ok".into())));
    assert_eq!(server.requests().len(), 2);
    assert_eq!(server.requests()[0].body, server.requests()[1].body);
}

#[tokio::test]
async fn http_429_honours_retry_after() {
    let err = open_err(
        MockResponse::status(
            429,
            error_body("rate_limit_error", "Number of requests exceeded"),
        )
        .header("retry-after", "7"),
    )
    .await;
    assert_eq!(err.kind, FaultKind::RateLimit);
    assert_eq!(err.retry_after, Some(Duration::from_secs(7)));
}

#[tokio::test]
async fn http_400_prompt_too_long_is_context_overflow() {
    let err = open_err(MockResponse::status(
        400,
        error_body(
            "invalid_request_error",
            "prompt is too long: 208310 tokens > 200000 maximum",
        ),
    ))
    .await;
    assert_eq!(err.kind, FaultKind::ContextOverflow);
    assert_eq!(err.status, Some(400));
}

#[tokio::test]
async fn http_error_messages_are_one_line_and_never_hold_the_key() {
    // A body that (absurdly) echoes the key and spans lines.
    let err = open_err(MockResponse::status(
        401,
        error_body(
            "authentication_error",
            &format!("invalid x-api-key\n{KEY}\n  try again"),
        ),
    ))
    .await;
    assert_eq!(err.kind, FaultKind::Auth);
    assert!(!err.message.contains(KEY), "{}", err.message);
    assert!(!err.message.contains('\n'), "{}", err.message);
    assert!(err.message.contains("[REDACTED]"), "{}", err.message);
}

#[test]
fn http_statuses_are_classified() {
    let cases = [
        (
            529,
            error_body("overloaded_error", "Overloaded"),
            FaultKind::Server,
        ),
        (500, error_body("api_error", "Internal"), FaultKind::Server),
        (503, json!("upstream down"), FaultKind::Server),
        (
            429,
            error_body("rate_limit_error", "slow"),
            FaultKind::RateLimit,
        ),
        (
            401,
            error_body("authentication_error", "bad key"),
            FaultKind::Auth,
        ),
        (403, error_body("permission_error", "no"), FaultKind::Auth),
        (
            413,
            error_body(
                "request_too_large",
                "Request exceeds the maximum allowed number of bytes",
            ),
            FaultKind::ContextOverflow,
        ),
        (
            400,
            error_body(
                "invalid_request_error",
                "input length and `max_tokens` exceed context limit: 187254 + 20000 > 200000",
            ),
            FaultKind::ContextOverflow,
        ),
        (
            400,
            error_body("invalid_request_error", "max_tokens: must be positive"),
            FaultKind::BadRequest,
        ),
        (
            404,
            error_body("not_found_error", "model: nope"),
            FaultKind::BadRequest,
        ),
    ];
    for (status, body, kind) in cases {
        let text = match &body {
            Value::String(s) => s.clone(),
            v => v.to_string(),
        };
        let err = http_error(status, &text);
        assert_eq!(err.kind, kind, "{status} {text}");
        assert_eq!(err.status, Some(status));
    }
    // A huge non-JSON body is cut to one short line.
    let err = http_error(502, &"<html>\n bad gateway \n</html>".repeat(200));
    assert_eq!(err.kind, FaultKind::Server);
    assert!(err.message.len() < 400 && !err.message.contains('\n'));
}

#[tokio::test]
async fn connection_refused_is_a_network_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let p = AnthropicProvider::new(&url, Some(KEY.into()), BTreeMap::new(), Timeouts::default())
        .unwrap();
    let err = match p.stream(&simple_request()).await {
        Ok(_) => panic!("nothing listens there"),
        Err(e) => e,
    };
    assert_eq!(err.kind, FaultKind::Network);
    assert!(!err.message.contains(KEY));
}

// ---------------------------------------------------------------- what is sent

fn ok_reply() -> MockResponse {
    sse([
        message_start(1, 0, 0),
        message_delta("end_turn", 1),
        message_stop(),
    ])
}

#[tokio::test]
async fn headers_and_path() {
    let (_, server) = run(ok_reply()).await;
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    let r = &reqs[0];
    assert_eq!(r.path, "/v1/messages");
    assert_eq!(r.secret("x-api-key"), Some(KEY));
    assert_eq!(r.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.header("anthropic-beta"), Some("test-beta-1"));
    assert_eq!(r.body["stream"], json!(true));
    assert_eq!(r.body["model"], json!("claude-test"));
}

#[tokio::test]
async fn no_key_no_header_and_base_url_with_v1() {
    let server = MockServer::with(vec![ok_reply()]).await;
    let p = AnthropicProvider::new(
        &format!("{}/v1/", server.url()),
        None,
        BTreeMap::new(),
        Timeouts::default(),
    )
    .unwrap();
    let events: Vec<_> = p.stream(&simple_request()).await.unwrap().collect().await;
    assert!(events.iter().all(Result::is_ok));
    let r = &server.requests()[0];
    assert_eq!(r.path, "/v1/messages");
    assert!(!r.headers.contains_key("x-api-key"));
}

#[test]
fn bad_configured_header_is_rejected_without_echoing_its_value() {
    let mut headers = BTreeMap::new();
    headers.insert("x-secret".to_string(), "line1\nhunter2".to_string());
    let err = AnthropicProvider::new("http://127.0.0.1:1", None, headers, Timeouts::default())
        .unwrap_err();
    assert!(!err.message.contains("hunter2"), "{}", err.message);
}

fn tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "read".into(),
            description: "Read a file".into(),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string"}},
                               "required": ["path"]}),
        },
        ToolSpec {
            name: "bash".into(),
            description: "Run a command".into(),
            parameters: json!({"type": "object", "properties": {"command": {"type": "string"}}}),
        },
    ]
}

/// A session a few steps in: cache breakpoints on the system header, the last tool and the
/// last two messages; tool results merged into one user message with the text after them.
#[tokio::test]
async fn snapshot_request_with_cache_breakpoints() {
    let req = ChatRequest {
        model: "claude-sonnet-4-5".into(),
        system: vec![
            "You are pith, a coding agent.".into(),
            "<env>\nWorking directory: /repo\n</env>".into(),
        ],
        messages: vec![
            user("Fix the failing test."),
            ChatMessage::Assistant {
                content: vec![
                    AssistantContent::Text {
                        text: "Looking at both files.".into(),
                    },
                    AssistantContent::ToolCall {
                        id: "toolu_a".into(),
                        name: "read".into(),
                        input: json!({"path": "src/lib.rs"}),
                    },
                    AssistantContent::ToolCall {
                        id: "toolu_b".into(),
                        name: "bash".into(),
                        input: json!("not an object"),
                    },
                ],
            },
            ChatMessage::ToolResult {
                call_id: "toolu_a".into(),
                content: "fn main() {}".into(),
                is_error: false,
            },
            ChatMessage::ToolResult {
                call_id: "toolu_b".into(),
                content: "exit 1".into(),
                is_error: true,
            },
            ChatMessage::User {
                content: vec![
                    UserContent::Text { text: "".into() },
                    UserContent::Text {
                        text: "Also check the README.".into(),
                    },
                ],
            },
            ChatMessage::Assistant {
                content: vec![AssistantContent::Text {
                    text: "Checking.".into(),
                }],
            },
            ChatMessage::User {
                content: vec![
                    UserContent::Text {
                        text: "Here is a screenshot.".into(),
                    },
                    UserContent::Image {
                        mime: "image/png".into(),
                        data_base64: "iVBORw0KGgo=".into(),
                    },
                ],
            },
        ],
        tools: tools(),
        max_tokens: Some(16_000),
        temperature: Some(0.2),
        thinking_budget: None,
        reasoning_effort: None,
    };
    let server = MockServer::with(vec![ok_reply()]).await;
    let _ = provider(&server)
        .stream(&req)
        .await
        .unwrap()
        .collect::<Vec<_>>()
        .await;
    let body = server.requests()[0].body.clone();
    assert_eq!(body, request_body(&req), "what is sent is request_body");
    assert_eq!(count_breakpoints(&body), 4);
    insta::assert_json_snapshot!("request_cache_breakpoints", body);
}

/// The step after a thinking + tool_use reply: the thinking block goes back first, with its
/// signature, and the tool result follows; thinking is on, so no temperature.
#[tokio::test]
async fn snapshot_thinking_sent_back_with_signature() {
    let req = ChatRequest {
        model: "claude-sonnet-4-5".into(),
        system: vec!["You are pith.".into()],
        messages: vec![
            user("What is in Cargo.toml?"),
            ChatMessage::Assistant {
                content: vec![
                    AssistantContent::ToolCall {
                        id: "toolu_01".into(),
                        name: "read".into(),
                        input: json!({"path": "Cargo.toml"}),
                    },
                    AssistantContent::Reasoning {
                        text: "I should read the manifest.".into(),
                        signature: Some("EqQBCkYIARgCIkBsig==".into()),
                        redacted: None,
                    },
                    AssistantContent::Reasoning {
                        text: String::new(),
                        signature: None,
                        redacted: Some("EmwKAhgBEgy3va3pzix".into()),
                    },
                    // Interrupted before its signature arrived: cannot be sent back.
                    AssistantContent::Reasoning {
                        text: "half a thought".into(),
                        signature: None,
                        redacted: None,
                    },
                    AssistantContent::Text { text: "".into() },
                ],
            },
            ChatMessage::ToolResult {
                call_id: "toolu_01".into(),
                content: "[package]\nname = \"pith\"".into(),
                is_error: false,
            },
        ],
        tools: tools(),
        max_tokens: Some(4_000),
        temperature: Some(0.7),
        thinking_budget: Some(10_000),
        reasoning_effort: None,
    };
    let server = MockServer::with(vec![ok_reply()]).await;
    let _ = provider(&server)
        .stream(&req)
        .await
        .unwrap()
        .collect::<Vec<_>>()
        .await;
    let body = server.requests()[0].body.clone();
    assert!(body.get("temperature").is_none());
    assert!(
        body["max_tokens"].as_u64().unwrap() > body["thinking"]["budget_tokens"].as_u64().unwrap()
    );
    insta::assert_json_snapshot!("request_thinking_sent_back", body);
}

// ---------------------------------------------------------------- request_body rules

fn count_breakpoints(v: &Value) -> usize {
    match v {
        Value::Object(m) => {
            usize::from(m.contains_key("cache_control"))
                + m.values().map(count_breakpoints).sum::<usize>()
        }
        Value::Array(a) => a.iter().map(count_breakpoints).sum(),
        _ => 0,
    }
}

fn has_empty_text(v: &Value) -> bool {
    match v {
        Value::Object(m) => {
            (m.get("type") == Some(&json!("text")) && m.get("text") == Some(&json!("")))
                || m.values().any(has_empty_text)
        }
        Value::Array(a) => a.iter().any(has_empty_text),
        _ => false,
    }
}

#[test]
fn request_body_defaults_and_limits() {
    let mut req = simple_request();
    req.max_tokens = None;
    req.temperature = Some(0.5);
    let body = request_body(&req);
    assert_eq!(body["max_tokens"], json!(8192));
    assert_eq!(body["temperature"], json!(0.5));
    assert!(body.get("thinking").is_none());
    assert!(body.get("tools").is_none(), "no empty tools array");

    // Thinking budget above max_tokens: max_tokens is raised past it, budget kept.
    req.thinking_budget = Some(20_000);
    req.max_tokens = Some(16_000);
    let body = request_body(&req);
    assert_eq!(
        body["thinking"],
        json!({"type": "enabled", "budget_tokens": 20_000})
    );
    assert!(body["max_tokens"].as_u64().unwrap() > 20_000);
    assert!(body.get("temperature").is_none());

    // A budget below the API minimum is raised to it.
    req.thinking_budget = Some(100);
    let body = request_body(&req);
    assert_eq!(body["thinking"]["budget_tokens"], json!(1024));
    assert_eq!(body["max_tokens"], json!(16_000));
}

#[test]
fn request_body_breakpoints_never_exceed_four_and_skip_thinking() {
    let mut messages = Vec::new();
    for i in 0..6 {
        messages.push(user(&format!("q{i}")));
        messages.push(ChatMessage::Assistant {
            content: vec![AssistantContent::Reasoning {
                text: "t".into(),
                signature: Some("s".into()),
                redacted: None,
            }],
        });
    }
    let req = ChatRequest {
        system: vec!["header".into(), "rest".into(), "".into()],
        messages,
        tools: tools(),
        ..simple_request()
    };
    let body = request_body(&req);
    assert_eq!(count_breakpoints(&body), 4);
    assert!(body["system"][0].get("cache_control").is_some());
    assert!(body["system"][1].get("cache_control").is_none());
    assert_eq!(
        body["system"].as_array().unwrap().len(),
        2,
        "empty block dropped"
    );
    assert!(body["tools"][1].get("cache_control").is_some());
    assert!(body["tools"][0].get("cache_control").is_none());
    // The last message holds only a thinking block, which cannot be cached: the two
    // breakpoints go to the newest messages that can carry one.
    let msgs = body["messages"].as_array().unwrap();
    assert!(
        msgs.last().unwrap()["content"][0]
            .get("cache_control")
            .is_none()
    );
    assert!(
        msgs[msgs.len() - 2]["content"][0]
            .get("cache_control")
            .is_some()
    );
    assert!(
        msgs[msgs.len() - 4]["content"][0]
            .get("cache_control")
            .is_some()
    );

    // No system, no tools: only the message breakpoints.
    let req = ChatRequest {
        system: vec![],
        ..simple_request()
    };
    let body = request_body(&req);
    assert!(body.get("system").is_none());
    assert_eq!(count_breakpoints(&body), 1);
}

#[test]
fn request_body_merges_roles_and_drops_empty_content() {
    let req = ChatRequest {
        messages: vec![
            user("a"),
            ChatMessage::Assistant {
                content: vec![AssistantContent::Text { text: "".into() }],
            },
            user(""),
            user("b"),
            ChatMessage::Assistant {
                content: vec![AssistantContent::ToolCall {
                    id: "t1".into(),
                    name: "read".into(),
                    input: Value::Null,
                }],
            },
            // A user text before the result in history: the result still goes first.
            user("interjection"),
            ChatMessage::ToolResult {
                call_id: "t1".into(),
                content: "".into(),
                is_error: false,
            },
            // A trailing assistant prefill loses its trailing whitespace.
            ChatMessage::Assistant {
                content: vec![AssistantContent::Text {
                    text: "Summary:\n".into(),
                }],
            },
        ],
        tools: tools(),
        ..simple_request()
    };
    let body = request_body(&req);
    assert!(!has_empty_text(&body));
    let msgs = body["messages"].as_array().unwrap();
    let roles: Vec<_> = msgs.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "assistant", "user", "assistant"]);
    let texts: Vec<_> = msgs[0]["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["a", "b"]);
    assert_eq!(msgs[1]["content"][0]["input"], json!({}));
    assert_eq!(msgs[2]["content"][0]["type"], json!("tool_result"));
    assert!(msgs[2]["content"][0].get("content").is_none());
    assert_eq!(msgs[2]["content"][1]["text"], json!("interjection"));
    assert_eq!(msgs[3]["content"][0]["text"], json!("Summary:"));
}

/// The API rejects tool blocks in a request that defines no tools (the last step, a summary):
/// there the provider sends calls and results as text.
#[test]
fn tool_blocks_go_as_text_in_a_request_without_tools() {
    let history = vec![
        user("list"),
        ChatMessage::Assistant {
            content: vec![AssistantContent::ToolCall {
                id: "t1".into(),
                name: "bash".into(),
                input: json!({"command": "ls"}),
            }],
        },
        ChatMessage::ToolResult {
            call_id: "t1".into(),
            content: "a.txt".into(),
            is_error: false,
        },
    ];
    let with_tools = request_body(&ChatRequest {
        messages: history.clone(),
        tools: tools(),
        ..simple_request()
    });
    assert_eq!(with_tools["messages"][1]["content"][0]["type"], "tool_use");
    let without = request_body(&ChatRequest {
        messages: history,
        ..simple_request()
    });
    let text = without.to_string();
    assert!(
        !text.contains("tool_use") && !text.contains("tool_result"),
        "{text}"
    );
    assert_eq!(
        without["messages"][1]["content"][0]["text"],
        "[called tool bash with {\"command\":\"ls\"}]"
    );
    assert_eq!(
        without["messages"][2]["content"][0]["text"],
        "[tool result]\na.txt"
    );
}

#[test]
fn parser_dispatches_on_type_without_event_lines_and_takes_cumulative_usage() {
    let mut p = EventParser::new();
    let mut out = Vec::new();
    for data in [
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 10,
            "cache_creation_input_tokens": 5, "cache_read_input_tokens": 7, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block":
            {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": "Hi"}}),
        json!({"type": "content_block_stop", "index": 1}),
        // Later usage reports are cumulative and replace earlier figures.
        json!({"type": "message_delta", "delta": {"stop_reason": "refusal"},
               "usage": {"input_tokens": 12, "output_tokens": 30}}),
        json!({"type": "message_stop"}),
    ] {
        out.extend(p.handle("message", &data.to_string()).unwrap());
    }
    assert!(p.is_done());
    assert_eq!(
        out,
        vec![
            StreamEvent::TextDelta("Hi".into()),
            usage(12, 30, 7, 5),
            StreamEvent::Finish(FinishReason::ContentFilter),
        ]
    );
    // Missing index on a block event is malformed, not a panic.
    let err = EventParser::new()
        .handle("content_block_stop", r#"{"type": "content_block_stop"}"#)
        .unwrap_err();
    assert_eq!(err.kind, FaultKind::Malformed);
}
