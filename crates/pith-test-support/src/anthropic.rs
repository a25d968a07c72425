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

/// Anthropic's prompt cache as the API reports it: a request's blocks in cache order (tools,
/// system, then each message's content blocks); at each `cache_control` breakpoint the longest
/// prefix an earlier request wrote is looked for at that block or up to 20 blocks before it;
/// what is found is read (`cache_read_input_tokens`), the rest up to the last breakpoint is
/// written (`cache_creation_input_tokens`), what follows it is plain input. Tokens are bytes / 4.
#[derive(Default)]
pub struct PrefixCache {
    written: std::sync::Mutex<std::collections::HashSet<u64>>,
}

/// Blocks a breakpoint looks back over for an earlier write.
const LOOKBACK: usize = 20;

impl PrefixCache {
    /// `(input, cache_read, cache_write)` for this request body; remembers what it writes.
    pub fn usage(&self, body: &Value) -> (u64, u64, u64) {
        use std::hash::{Hash, Hasher};
        let mut blocks: Vec<(String, bool)> = Vec::new();
        let mut push = |role: &str, b: &Value| {
            let mut b = b.clone();
            let marked = b
                .as_object_mut()
                .and_then(|m| m.remove("cache_control"))
                .is_some();
            // keys in one order whatever built the block (serde_json may keep insertion order)
            let b = super::mock::sorted(b);
            blocks.push((format!("{role}:{b}"), marked));
        };
        for t in body["tools"].as_array().into_iter().flatten() {
            push("tool", t);
        }
        match &body["system"] {
            Value::String(s) => push("system", &json!({"type": "text", "text": s})),
            Value::Array(a) => a.iter().for_each(|b| push("system", b)),
            _ => {}
        }
        for m in body["messages"].as_array().into_iter().flatten() {
            let role = m["role"].as_str().unwrap_or("");
            match &m["content"] {
                Value::String(s) => push(role, &json!({"type": "text", "text": s})),
                Value::Array(a) => a.iter().for_each(|b| push(role, b)),
                _ => {}
            }
        }
        let mut hashes = Vec::with_capacity(blocks.len());
        let mut cum = Vec::with_capacity(blocks.len());
        let mut h = std::collections::hash_map::DefaultHasher::new();
        let mut total = 0u64;
        for (text, _) in &blocks {
            text.hash(&mut h);
            hashes.push(h.finish());
            total += text.len() as u64 / 4;
            cum.push(total);
        }
        let breakpoints: Vec<usize> = (0..blocks.len()).filter(|&i| blocks[i].1).collect();
        let mut written = self.written.lock().unwrap();
        let mut read_to: Option<usize> = None;
        for &b in &breakpoints {
            if let Some(p) = (b.saturating_sub(LOOKBACK)..=b)
                .rev()
                .find(|&p| written.contains(&hashes[p]))
            {
                read_to = read_to.max(Some(p));
            }
        }
        let read = read_to.map_or(0, |p| cum[p]);
        let last = breakpoints.last().map_or(0, |&b| cum[b]);
        let write = last.saturating_sub(read);
        for &b in &breakpoints {
            written.insert(hashes[b]);
        }
        (total - read - write, read, write)
    }
}
