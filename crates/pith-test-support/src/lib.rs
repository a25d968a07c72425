//! Shared helpers for pith's integration tests (`tests/all.rs`, a dev-dependency only): an
//! in-process mock provider on 127.0.0.1 speaking the real wire formats, checking every request
//! against the rules the APIs enforce (`wire`); the engine driven in process (`engine`); real
//! MCP servers (`mcp`); fault helpers (`faults`); reading what a run produced (`output`).
//!
//! It depends on the workspace crates below the binary, never on `pith` itself: a dev-dependency
//! cycle would build a second copy of the `pith` library whose types do not match the test's.
#![allow(clippy::unwrap_used)] // a helper may panic on what it did not expect: the test fails

pub mod anthropic;
pub mod engine;
pub mod faults;
pub mod mcp;
pub mod mock;
pub mod openai;
pub mod output;
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
