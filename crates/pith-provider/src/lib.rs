//! Model providers: the `Provider` trait over the neutral types of [`pith_protocol::llm`], the wire
//! formats (OpenAI-compatible, Anthropic), classified errors and retries.

pub mod anthropic;
/// The HTTP clients, from `pith-http` (also used by HTTP MCP servers).
pub use pith_http as client;
pub mod cost;
pub mod error;
pub mod limits;
pub mod openai;
pub mod responses;
pub mod retry;
pub mod transport;

use std::pin::Pin;

use futures_util::Stream;

pub use error::{FaultKind, ProviderError};

pub use pith_protocol::llm::{
    AssistantContent, ChatMessage, ChatRequest, FinishReason, StreamEvent, ToolSpec, UserContent,
};

pub type EventStream = Pin<Box<dyn Stream<Item = Result<StreamEvent, ProviderError>> + Send>>;

#[async_trait::async_trait]
pub trait Provider: Send + Sync {
    /// Sends the request and returns the event stream. Errors before the first byte (HTTP status,
    /// connection) come back as `Err`; faults mid-stream as an `Err` item in the stream.
    async fn stream(&self, request: &ChatRequest) -> Result<EventStream, ProviderError>;

    /// The context window a local server reports for `model` (llama.cpp `/props`, Ollama
    /// `/api/ps` and `/api/show`), and where it was read; `None` when the server cannot say.
    async fn probe_window(&self, _model: &str) -> Option<(u64, String)> {
        None
    }

    /// Whether the provider's models take images when neither the config nor the model's name
    /// says.
    fn images_by_default(&self) -> bool {
        false
    }

    /// Whether a request's reasoning effort reaches the server; `false`: it is never sent.
    fn takes_effort(&self) -> bool {
        true
    }

    /// Whether the provider offers its own web search with the tools (`[websearch] hosted` on
    /// a wire that has one): pith's `websearch` tool is then not offered beside it.
    fn hosted_search(&self) -> bool {
        false
    }
}

pub use openai::init_tls;

#[cfg(test)]
mod effort_tests;
#[cfg(test)]
mod hosted_search_tests;
