//! Shared helpers for integration tests: an in-process mock provider speaking the real wire
//! formats. Every test file that needs it declares `mod support;`.
#![allow(dead_code, unused_imports)]

pub mod anthropic;
pub mod engine;
pub mod faults;
pub mod mcp;
pub mod mock;
pub mod openai;
pub mod pith;
pub mod wire;

pub use mock::{MockResponse, MockServer, Recorded, http_client};
