//! Builders for OpenAI Responses API streams (typed SSE events).

use serde_json::{Value, json};

use super::mock::MockResponse;

/// One `event: TYPE\ndata: {json}\n\n` frame (the type taken from the event's `type`).
pub fn frame(event: &Value) -> String {
    let name = event["type"].as_str().unwrap_or("message");
    format!("event: {name}\ndata: {event}\n\n")
}

pub fn usage(input: u64, output: u64, cached: u64, reasoning: u64) -> Value {
    json!({
        "input_tokens": input,
        "input_tokens_details": { "cached_tokens": cached },
        "output_tokens": output,
        "output_tokens_details": { "reasoning_tokens": reasoning },
        "total_tokens": input + output,
    })
}

fn created() -> Value {
    json!({ "type": "response.created", "response": { "id": "resp_mock", "status": "in_progress" } })
}

fn completed(usage: Option<Value>) -> Value {
    json!({ "type": "response.completed", "response": {
        "id": "resp_mock", "status": "completed", "usage": usage.unwrap_or(Value::Null) } })
}

fn text_events(id: &str, text: &str) -> Vec<Value> {
    let mut out = vec![
        json!({ "type": "response.output_item.added", "output_index": 0,
                "item": { "type": "message", "id": id, "role": "assistant", "content": [] } }),
    ];
    for piece in super::openai::split(text, 3) {
        out.push(json!({ "type": "response.output_text.delta", "item_id": id,
                         "output_index": 0, "content_index": 0, "delta": piece }));
    }
    out.push(
        json!({ "type": "response.output_item.done", "output_index": 0,
        "item": { "type": "message", "id": id, "role": "assistant",
                  "content": [{ "type": "output_text", "text": text }] } }),
    );
    out
}

fn reasoning_events(id: &str, summary: &str, encrypted: &str) -> Vec<Value> {
    let mut out = vec![json!({ "type": "response.output_item.added",
        "item": { "type": "reasoning", "id": id, "summary": [] } })];
    for piece in super::openai::split(summary, 2) {
        out.push(
            json!({ "type": "response.reasoning_summary_text.delta", "item_id": id,
                         "summary_index": 0, "delta": piece }),
        );
    }
    out.push(
        json!({ "type": "response.output_item.done", "item": { "type": "reasoning",
        "id": id, "summary": [{ "type": "summary_text", "text": summary }],
        "encrypted_content": encrypted } }),
    );
    out
}

fn respond(events: Vec<Value>, usage: Option<Value>) -> MockResponse {
    let mut frames = vec![frame(&created())];
    frames.extend(events.iter().map(frame));
    frames.push(frame(&completed(usage)));
    MockResponse::sse(frames)
}

/// A text answer, then `response.completed` with `usage (input, output)` if given.
pub fn text(text: &str, usage: Option<(u64, u64)>) -> MockResponse {
    respond(
        text_events("msg_1", text),
        usage.map(|(i, o)| self::usage(i, o, 0, 0)),
    )
}

/// A reasoning item (summary streamed, `encrypted` content) before a text answer.
pub fn reasoning_then_text(
    summary: &str,
    encrypted: &str,
    text: &str,
    usage: Value,
) -> MockResponse {
    let mut events = reasoning_events("rs_1", summary, encrypted);
    events.extend(text_events("msg_1", text));
    respond(events, Some(usage))
}

/// Function calls `(call_id, name, arguments)`, their arguments streamed as deltas; optionally
/// a reasoning item `(summary, encrypted)` first.
pub fn tool_calls(
    calls: &[(&str, &str, &str)],
    reasoning: Option<(&str, &str)>,
    usage: Option<(u64, u64)>,
) -> MockResponse {
    let mut events = match reasoning {
        Some((s, e)) => reasoning_events("rs_1", s, e),
        None => Vec::new(),
    };
    for (n, (call_id, name, args)) in calls.iter().enumerate() {
        let item_id = format!("fc_{n}");
        events.push(json!({ "type": "response.output_item.added", "item": {
            "type": "function_call", "id": item_id, "call_id": call_id, "name": name,
            "arguments": "" } }));
        for piece in super::openai::split(args, 3) {
            events.push(json!({ "type": "response.function_call_arguments.delta",
                                "item_id": item_id, "delta": piece }));
        }
        events.push(json!({ "type": "response.function_call_arguments.done",
                            "item_id": item_id, "arguments": args }));
        events.push(json!({ "type": "response.output_item.done", "item": {
            "type": "function_call", "id": item_id, "call_id": call_id, "name": name,
            "arguments": args, "status": "completed" } }));
    }
    respond(events, usage.map(|(i, o)| self::usage(i, o, 0, 0)))
}

/// A stream that ends in `response.failed` with this error.
pub fn failed(code: &str, message: &str) -> MockResponse {
    MockResponse::sse(vec![
        frame(&created()),
        frame(
            &json!({ "type": "response.failed", "response": { "id": "resp_mock",
            "status": "failed", "error": { "code": code, "message": message } } }),
        ),
    ])
}
