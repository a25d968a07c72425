//! Builders for OpenAI chat-completions streams (`chat.completion.chunk` SSE frames).

use serde_json::{Value, json};

use super::mock::MockResponse;

/// One `data: {json}\n\n` frame.
pub fn frame(value: &Value) -> String {
    format!("data: {value}\n\n")
}

/// The terminating `data: [DONE]\n\n` frame.
pub fn done() -> String {
    "data: [DONE]\n\n".to_string()
}

/// A chunk with one choice carrying `delta` and an optional finish reason.
pub fn delta_chunk(delta: Value, finish_reason: Option<&str>) -> Value {
    json!({
        "id": "chatcmpl-mock",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": "mock-model",
        "choices": [{ "index": 0, "delta": delta, "finish_reason": finish_reason }],
    })
}

/// The trailing usage chunk (`choices: []`) sent with `stream_options.include_usage`.
pub fn usage_chunk(prompt: u64, completion: u64, cached: u64) -> Value {
    json!({
        "id": "chatcmpl-mock",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": "mock-model",
        "choices": [],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "prompt_tokens_details": { "cached_tokens": cached },
            "completion_tokens_details": { "reasoning_tokens": 0 },
        },
    })
}

/// An OpenAI-style error body: `{"error":{"message","type","code","param"}}`.
pub fn error_body(code: &str, message: &str) -> Value {
    json!({
        "error": {
            "message": message,
            "type": "invalid_request_error",
            "code": code,
            "param": null,
        }
    })
}

/// Each chunk as a frame, then `[DONE]`.
pub fn chunks(chunks: Vec<Value>) -> MockResponse {
    let mut frames: Vec<String> = chunks.iter().map(frame).collect();
    frames.push(done());
    MockResponse::sse(frames)
}

/// Splits `s` into up to `n` non-empty pieces on char boundaries (one piece for short strings).
pub fn split(s: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = s.chars().collect();
    if chars.is_empty() {
        return vec![String::new()];
    }
    let n = n.clamp(1, chars.len());
    let size = chars.len().div_ceil(n);
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

fn role_chunk() -> Value {
    delta_chunk(json!({ "role": "assistant", "content": "" }), None)
}

/// A text answer streamed over several chunks, `finish_reason: "stop"`, then a usage chunk
/// `(prompt, completion)` if given, then `[DONE]`.
pub fn text(text: &str, usage: Option<(u64, u64)>) -> MockResponse {
    let mut out = vec![role_chunk()];
    for piece in split(text, 4) {
        out.push(delta_chunk(json!({ "content": piece }), None));
    }
    out.push(delta_chunk(json!({}), Some("stop")));
    if let Some((p, c)) = usage {
        out.push(usage_chunk(p, c, 0));
    }
    chunks(out)
}

/// Reasoning (`reasoning_content`) streamed before a text answer.
pub fn reasoning_then_text(reasoning: &str, text: &str, usage: Option<(u64, u64)>) -> MockResponse {
    let mut out = vec![role_chunk()];
    for piece in split(reasoning, 3) {
        out.push(delta_chunk(json!({ "reasoning_content": piece }), None));
    }
    for piece in split(text, 3) {
        out.push(delta_chunk(json!({ "content": piece }), None));
    }
    out.push(delta_chunk(json!({}), Some("stop")));
    if let Some((p, c)) = usage {
        out.push(usage_chunk(p, c, 0));
    }
    chunks(out)
}

/// Tool calls `(id, name, arguments_json)`: each call starts with a delta carrying its index, id
/// and name, then its arguments arrive in several deltas by index; `finish_reason: "tool_calls"`,
/// usage if given, `[DONE]`.
pub fn tool_calls(calls: &[(&str, &str, &str)], usage: Option<(u64, u64)>) -> MockResponse {
    let mut frames = vec![frame(&delta_chunk(
        json!({ "role": "assistant", "content": null }),
        None,
    ))];
    frames.extend(tool_call_frames(calls, usage));
    MockResponse::sse(frames)
}

/// Text followed by tool calls in the same response.
pub fn text_and_tool_calls(
    text: &str,
    calls: &[(&str, &str, &str)],
    usage: Option<(u64, u64)>,
) -> MockResponse {
    let mut frames = vec![frame(&role_chunk())];
    for piece in split(text, 3) {
        frames.push(frame(&delta_chunk(json!({ "content": piece }), None)));
    }
    frames.extend(tool_call_frames(calls, usage));
    MockResponse::sse(frames)
}

/// The frames of `tool_calls` after the role chunk (ends with `[DONE]`).
pub(crate) fn tool_call_frames(
    calls: &[(&str, &str, &str)],
    usage: Option<(u64, u64)>,
) -> Vec<String> {
    let mut out = Vec::new();
    for (index, (id, name, args)) in calls.iter().enumerate() {
        out.push(delta_chunk(
            json!({ "tool_calls": [{
                "index": index,
                "id": id,
                "type": "function",
                "function": { "name": name, "arguments": "" },
            }] }),
            None,
        ));
        for piece in split(args, 3) {
            out.push(delta_chunk(
                json!({ "tool_calls": [{ "index": index, "function": { "arguments": piece } }] }),
                None,
            ));
        }
    }
    out.push(delta_chunk(json!({}), Some("tool_calls")));
    if let Some((p, c)) = usage {
        out.push(usage_chunk(p, c, 0));
    }
    let mut frames: Vec<String> = out.iter().map(frame).collect();
    frames.push(done());
    frames
}
