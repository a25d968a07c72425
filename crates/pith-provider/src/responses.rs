//! The OpenAI Responses API (streaming).
//!
//! `POST {base_url}/responses` with `input` items, `instructions` and `stream: true`; the answer
//! is parsed from typed SSE events (`response.output_text.delta`, …, `response.completed`). The
//! transport, the key, the headers and the HTTP error classes are the chat-completions
//! provider's ([`crate::openai::OpenAiProvider::responses`]); only the body and the
//! stream differ. On api.openai.com pith sends `store: false` and asks for the encrypted
//! reasoning, which it carries back in the next request; other servers get the basic fields.

mod body;
mod stream;

#[cfg(test)]
pub(crate) use body::ENCRYPTED_PREFIX;
pub(crate) use body::is_responses_reasoning;
pub use body::{Dialect, add_web_search, request_body};
pub(crate) use stream::response_events;
pub use stream::{EventParser, parse_sse};

/// Whether `base_url` is OpenAI's own API.
pub(crate) fn is_openai_host(base_url: &str) -> bool {
    reqwest::Url::parse(base_url.trim())
        .ok()
        .and_then(|u| {
            u.host_str()
                .map(|h| h.eq_ignore_ascii_case("api.openai.com"))
        })
        .unwrap_or(false)
}
