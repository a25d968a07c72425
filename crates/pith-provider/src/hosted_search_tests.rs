//! The providers' hosted web search (`[websearch] hosted`): the tool each wire is offered, and
//! the events its stream reports the search with (the query, the pages found, the pages the
//! answer cites), as `StreamEvent::WebSearch`. Off, the bodies are what they were.

use std::collections::VecDeque;

use serde_json::{Value, json};

use crate::openai::Flow;
use crate::{ChatMessage, ChatRequest, StreamEvent, ToolSpec, UserContent};
use pith_protocol::llm::WebResult;

fn request(tools: bool) -> ChatRequest {
    ChatRequest {
        model: "m".into(),
        system: vec!["sys".into()],
        messages: vec![ChatMessage::User {
            content: vec![UserContent::Text { text: "hi".into() }],
        }],
        tools: if tools {
            vec![ToolSpec {
                name: "read".into(),
                description: "reads".into(),
                parameters: json!({"type": "object"}),
            }]
        } else {
            Vec::new()
        },
        max_tokens: None,
        temperature: None,
        thinking_budget: None,
        reasoning_effort: None,
    }
}

fn r(title: &str, url: &str) -> WebResult {
    WebResult {
        title: title.into(),
        url: url.into(),
    }
}

fn search(id: &str, query: &str, results: Vec<WebResult>, error: Option<&str>) -> StreamEvent {
    StreamEvent::WebSearch {
        id: id.into(),
        query: query.into(),
        results,
        error: error.map(str::to_string),
    }
}

#[test]
fn responses_offers_web_search_with_the_tools_only() {
    let dialect = crate::responses::Dialect {
        openai: true,
        effort: false,
    };
    let plain = crate::responses::request_body(&request(true), dialect);
    let mut body = plain.clone();
    crate::responses::add_web_search(&mut body);
    assert_eq!(body["tools"][1], json!({"type": "web_search"}));
    assert_eq!(
        body["include"],
        json!([
            "reasoning.encrypted_content",
            "web_search_call.action.sources"
        ])
    );
    // nothing else changes
    body["tools"].as_array_mut().unwrap().pop();
    body["include"].as_array_mut().unwrap().pop();
    assert_eq!(body, plain);
    // a request without tools (the compaction agent's) gets none
    let mut bare = crate::responses::request_body(&request(false), dialect);
    let before = bare.clone();
    crate::responses::add_web_search(&mut bare);
    assert_eq!(bare, before);
}

#[test]
fn anthropic_offers_its_server_tool_with_the_tools_only() {
    let plain = crate::anthropic::request_body(&request(true));
    let mut body = plain.clone();
    crate::anthropic::add_web_search(&mut body);
    assert_eq!(
        body["tools"][1],
        json!({"type": "web_search_20250305", "name": "web_search", "max_uses": 5})
    );
    body["tools"].as_array_mut().unwrap().pop();
    assert_eq!(body, plain);
    let mut bare = crate::anthropic::request_body(&request(false));
    let before = bare.clone();
    crate::anthropic::add_web_search(&mut bare);
    assert_eq!(bare, before);
    // an MCP tool offered as `web_search` (server `web`, tool `search`) keeps its name
    let mut req = request(true);
    req.tools[0].name = "web_search".into();
    let mut taken = crate::anthropic::request_body(&req);
    let before = taken.clone();
    crate::anthropic::add_web_search(&mut taken);
    assert_eq!(taken, before);
}

#[test]
fn responses_web_search_calls_and_citations() {
    let frames = [
        json!({"type": "response.output_item.added", "item": {"type": "web_search_call", "id": "ws_1", "status": "in_progress"}}),
        json!({"type": "response.output_item.done", "item": {"type": "web_search_call", "id": "ws_1", "status": "completed",
            "action": {"type": "search", "query": "rust 2024 edition",
                "sources": [{"type": "url", "url": "https://blog.rust-lang.org/2025/02/20/Rust-1.85.0/"}]}}}),
        json!({"type": "response.output_item.added", "item": {"type": "message", "id": "msg_1"}}),
        json!({"type": "response.output_text.delta", "item_id": "msg_1", "delta": "It shipped in 1.85."}),
        json!({"type": "response.output_text.annotation.added", "item_id": "msg_1", "annotation":
            {"type": "url_citation", "url": "https://doc.rust-lang.org/edition-guide/", "title": "Edition Guide", "start_index": 0, "end_index": 5}}),
        json!({"type": "response.output_item.done", "item": {"type": "web_search_call", "id": "ws_2", "status": "failed",
            "action": {"type": "open_page", "url": "https://example.org/"}}}),
        json!({"type": "response.completed", "response": {"status": "completed"}}),
    ];
    let mut p = crate::responses::EventParser::new();
    let mut out = VecDeque::new();
    for f in &frames {
        let name = f["type"].as_str().unwrap_or("").to_string();
        if p.on_event(&name, &f.to_string(), &mut out) == Flow::Done {
            break;
        }
    }
    let events: Vec<StreamEvent> = out.into_iter().map(Result::unwrap).collect();
    assert_eq!(
        events[..4],
        [
            search(
                "ws_1",
                "rust 2024 edition",
                vec![r("", "https://blog.rust-lang.org/2025/02/20/Rust-1.85.0/")],
                None
            ),
            StreamEvent::TextDelta("It shipped in 1.85.".into()),
            search(
                "ws_1",
                "",
                vec![r(
                    "Edition Guide",
                    "https://doc.rust-lang.org/edition-guide/"
                )],
                None
            ),
            search("ws_2", "open https://example.org/", vec![], Some("failed")),
        ]
    );
    // a hosted search is no call of pith's: the answer stops
    assert_eq!(
        events.last(),
        Some(&StreamEvent::Finish(crate::FinishReason::Stop))
    );
}

fn anthropic_events(frames: &[(&str, Value)]) -> Vec<StreamEvent> {
    let mut p = crate::anthropic::EventParser::new();
    let mut out = Vec::new();
    for (name, data) in frames {
        out.extend(p.handle(name, &data.to_string()).unwrap());
    }
    out
}

#[test]
fn anthropic_server_tool_use_results_and_citations() {
    let events = anthropic_events(&[
        (
            "message_start",
            json!({"type": "message_start", "message": {"usage": {"input_tokens": 10}}}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": "{\"query\": \"tokio "}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": "spawn_blocking\"}"}}),
        ),
        (
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 1,
            "content_block": {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": [
                {"type": "web_search_result", "title": "spawn_blocking in tokio::task", "url": "https://docs.rs/tokio/latest/tokio/task/fn.spawn_blocking.html", "encrypted_content": "EqgfCioIARgB", "page_age": null},
                {"type": "web_search_result", "title": "Bridging with sync code", "url": "https://tokio.rs/tokio/topics/bridging", "encrypted_content": "Eq"}
            ]}}),
        ),
        (
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 1}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 2,
            "content_block": {"type": "text", "text": "", "citations": []}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 2,
            "delta": {"type": "citations_delta", "citation": {"type": "web_search_result_location",
                "url": "https://tokio.rs/tokio/topics/bridging", "title": "Bridging with sync code", "cited_text": "..."}}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 2,
            "delta": {"type": "text_delta", "text": "Use spawn_blocking."}}),
        ),
        (
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 2}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 3,
            "content_block": {"type": "server_tool_use", "id": "srvtoolu_2", "name": "web_search", "input": {"query": "again"}}}),
        ),
        (
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 3}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 4,
            "content_block": {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_2",
                "content": {"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"}}}),
        ),
        (
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 4}),
        ),
        (
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 5}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ]);
    assert_eq!(
        events[..5],
        [
            search(
                "srvtoolu_1",
                "tokio spawn_blocking",
                vec![
                    r(
                        "spawn_blocking in tokio::task",
                        "https://docs.rs/tokio/latest/tokio/task/fn.spawn_blocking.html"
                    ),
                    r(
                        "Bridging with sync code",
                        "https://tokio.rs/tokio/topics/bridging"
                    ),
                ],
                None
            ),
            search(
                "srvtoolu_1",
                "",
                vec![r(
                    "Bridging with sync code",
                    "https://tokio.rs/tokio/topics/bridging"
                )],
                None
            ),
            StreamEvent::TextDelta("Use spawn_blocking.".into()),
            search("srvtoolu_2", "again", vec![], Some("max_uses_exceeded")),
            StreamEvent::Usage(pith_protocol::message::Usage {
                input: 10,
                output: 5,
                ..Default::default()
            }),
        ]
    );
    assert_eq!(
        events.last(),
        Some(&StreamEvent::Finish(crate::FinishReason::Stop))
    );
}
