//! Builders for Anthropic Messages streams (`event: …` / `data: …` SSE frames).

use serde_json::{Value, json};

use super::mock::MockResponse;

/// One `event: NAME\ndata: {json}\n\n` frame.
pub fn frame(event: &str, data: &Value) -> String {
    format!("event: {event}\ndata: {data}\n\n")
}

/// A content block of a scripted answer.
pub enum Block<'a> {
    Text(&'a str),
    Thinking {
        text: &'a str,
        signature: &'a str,
    },
    ToolUse {
        id: &'a str,
        name: &'a str,
        input_json: &'a str,
    },
}

/// Usage figures: input, output, cache_read, cache_write.
pub type Usage = (u64, u64, u64, u64);

/// A whole streamed message: message_start (usage), the blocks (text and JSON split over several
/// deltas), message_delta (stop reason, output tokens), message_stop.
pub fn message(blocks: &[Block], stop_reason: &str, usage: Usage) -> MockResponse {
    let (input, output, cache_read, cache_write) = usage;
    let mut frames = vec![frame(
        "message_start",
        &json!({"type": "message_start", "message": {
            "id": "msg_mock", "type": "message", "role": "assistant", "model": "mock",
            "content": [], "stop_reason": null,
            "usage": {"input_tokens": input, "output_tokens": 1,
                      "cache_read_input_tokens": cache_read,
                      "cache_creation_input_tokens": cache_write}}}),
    )];
    frames.push(frame("ping", &json!({"type": "ping"})));
    for (index, block) in blocks.iter().enumerate() {
        let (start, deltas): (Value, Vec<Value>) = match block {
            Block::Text(t) => (
                json!({"type": "text", "text": ""}),
                super::openai::split(t, 3)
                    .into_iter()
                    .map(|p| json!({"type": "text_delta", "text": p}))
                    .collect(),
            ),
            Block::Thinking { text, signature } => {
                let mut d: Vec<Value> = super::openai::split(text, 2)
                    .into_iter()
                    .map(|p| json!({"type": "thinking_delta", "thinking": p}))
                    .collect();
                d.push(json!({"type": "signature_delta", "signature": signature}));
                (json!({"type": "thinking", "thinking": ""}), d)
            }
            Block::ToolUse {
                id,
                name,
                input_json,
            } => (
                json!({"type": "tool_use", "id": id, "name": name, "input": {}}),
                super::openai::split(input_json, 3)
                    .into_iter()
                    .map(|p| json!({"type": "input_json_delta", "partial_json": p}))
                    .collect(),
            ),
        };
        frames.push(frame(
            "content_block_start",
            &json!({"type": "content_block_start", "index": index, "content_block": start}),
        ));
        for delta in deltas {
            frames.push(frame(
                "content_block_delta",
                &json!({"type": "content_block_delta", "index": index, "delta": delta}),
            ));
        }
        frames.push(frame(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": index}),
        ));
    }
    frames.push(frame(
        "message_delta",
        &json!({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": null},
                "usage": {"output_tokens": output}}),
    ));
    frames.push(frame("message_stop", &json!({"type": "message_stop"})));
    MockResponse::sse(frames)
}

/// An Anthropic error body.
pub fn error_body(kind: &str, message: &str) -> Value {
    json!({"type": "error", "error": {"type": kind, "message": message}})
}
