//! Shared helpers for integration tests: an in-process mock provider speaking the real wire
//! formats. `tests/all.rs` declares it once; each test module reaches it as `crate::support`.
#![allow(dead_code, unused_imports)]

pub mod anthropic;
pub mod engine;
pub mod faults;
pub mod mcp;
pub mod mock;
pub mod openai;
pub mod pith;
pub mod responses;
pub mod wire;
pub mod wire_responses;

pub use mock::{MockResponse, MockServer, Recorded, http_client};

/// Text of a chat message in a request body (string content, or its text parts joined).
pub fn message_text(m: &serde_json::Value) -> String {
    use serde_json::Value;
    match &m["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}
