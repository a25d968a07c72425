//! Anthropic Messages API (streaming), with prompt caching and extended thinking.
//!
//! - [`request_body`]: `ChatRequest` → JSON body (pure; see `request.rs`).
//! - [`EventParser`]: the SSE event stream → `StreamEvent`s (pure; see `stream.rs`).
//! - [`AnthropicProvider`]: the HTTP transport and error classification.

mod request;
mod stream;

use std::collections::BTreeMap;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;

#[cfg(test)]
pub(crate) use request::{MIN_THINKING_BUDGET, effort_budget};
pub use request::{add_web_search, request_body};
pub use stream::{EventParser, events};

use super::transport::{self, Timeouts};
use super::{ChatRequest, EventStream, FaultKind, Provider, ProviderError};

/// The API version this provider speaks.
pub(crate) const ANTHROPIC_VERSION: &str = "2023-06-01";
/// Longest error message kept from a response body.
const MAX_MESSAGE_CHARS: usize = 300;

/// A provider for `kind = "anthropic"`: `POST {base_url}/v1/messages` with `stream: true`.
#[derive(Debug, Clone)]
pub struct AnthropicProvider {
    client: reqwest::Client,
    url: String,
    headers: HeaderMap,
    /// Kept only to scrub it from error messages.
    api_key: Option<String>,
    timeouts: Timeouts,
    /// `url` as shown in messages.
    endpoint: String,
    /// The web search server tool is offered with the tools (`[websearch] hosted`).
    web_search: bool,
}

impl AnthropicProvider {
    /// `base_url` is e.g. `https://api.anthropic.com` (a trailing `/` or `/v1` is tolerated).
    /// `headers` are added to every request and override the defaults. `timeouts` bound
    /// connecting, the wait for the first byte of the answer and any silence within it.
    pub fn new(
        base_url: &str,
        api_key: Option<String>,
        headers: BTreeMap<String, String>,
        timeouts: Timeouts,
    ) -> Result<Self, ProviderError> {
        super::init_tls();
        let base = base_url.trim_end_matches('/');
        let base = base.strip_suffix("/v1").unwrap_or(base);
        let url = format!("{base}/v1/messages");

        let mut map = HeaderMap::new();
        map.insert(
            HeaderName::from_static("anthropic-version"),
            HeaderValue::from_static(ANTHROPIC_VERSION),
        );
        map.insert(
            reqwest::header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        if let Some(key) = api_key.as_deref().filter(|k| !k.is_empty()) {
            let mut value = HeaderValue::from_str(key).map_err(|_| {
                ProviderError::new(
                    FaultKind::Auth,
                    "anthropic: the API key contains characters not allowed in a header",
                )
            })?;
            value.set_sensitive(true);
            map.insert(HeaderName::from_static("x-api-key"), value);
        }
        for (name, value) in &headers {
            let header = HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
                ProviderError::new(
                    FaultKind::BadRequest,
                    format!("anthropic: invalid header name `{}`", one_line(name)),
                )
            })?;
            // The value may be a secret: never echo it.
            let mut value = HeaderValue::from_str(value).map_err(|_| {
                ProviderError::new(
                    FaultKind::BadRequest,
                    format!("anthropic: invalid value for header `{header}`"),
                )
            })?;
            value.set_sensitive(true);
            map.insert(header, value);
        }

        let client = super::client::for_base(&url, timeouts.connect).map_err(|e| {
            ProviderError::new(
                FaultKind::Network,
                one_line(&format!("anthropic: cannot build the HTTP client: {e}")),
            )
        })?;
        Ok(AnthropicProvider {
            client,
            endpoint: transport::endpoint(&url),
            url,
            headers: map,
            api_key: api_key.filter(|k| !k.is_empty()),
            timeouts,
            web_search: false,
        })
    }

    /// Offers the web search server tool with the tools.
    pub fn with_web_search(mut self, on: bool) -> Self {
        self.web_search = on;
        self
    }

    /// The endpoint requests go to.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Removes the API key from an error message, should a server echo it.
    fn scrub(&self, err: ProviderError) -> ProviderError {
        err.scrubbed(self.api_key.as_deref())
    }
}

#[async_trait::async_trait]
impl Provider for AnthropicProvider {
    fn images_by_default(&self) -> bool {
        true
    }

    fn hosted_search(&self) -> bool {
        self.web_search
    }

    async fn stream(&self, request: &ChatRequest) -> Result<EventStream, ProviderError> {
        let mut body = request_body(request);
        if self.web_search {
            add_web_search(&mut body);
        }
        tracing::debug!(
            model = %request.model,
            messages = request.messages.len(),
            tools = request.tools.len(),
            "anthropic: POST {}",
            self.url
        );
        let request = self
            .client
            .post(&self.url)
            .headers(self.headers.clone())
            .json(&body);
        let started = tokio::time::Instant::now();
        let response = transport::send(request, &self.timeouts, &self.endpoint)
            .await
            .map_err(|mut err| {
                err.message = one_line(&format!("anthropic: {}", err.message));
                self.scrub(err)
            })?;

        let status = response.status();
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        let retry_after = super::error::retry_after(response.headers());
        let mut body = transport::body(response, self.timeouts, started, self.endpoint.clone());
        if !status.is_success() {
            let text = transport::read_text(&mut body, transport::ERROR_BODY_LIMIT).await;
            let mut err = http_error(status.as_u16(), &text);
            err.retry_after = retry_after;
            let err = self.scrub(err);
            tracing::debug!(status = status.as_u16(), kind = ?err.kind, "{}", err.message);
            return Err(err);
        }
        let body = transport::event_body(body, &content_type, status.as_u16(), &self.endpoint)
            .await
            .map_err(|e| self.scrub(e))?;
        let key = self.api_key.clone();
        let stream = events(body);
        Ok(Box::pin(futures_util::StreamExt::map(
            stream,
            move |item| item.map_err(|e| e.scrubbed(key.as_deref())),
        )))
    }
}

/// Classifies an HTTP error response (status and body) into a `ProviderError` with a one-line
/// message. `retry_after` is left for the caller (it comes from the headers).
pub fn http_error(status: u16, body: &str) -> ProviderError {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let etype = parsed
        .as_ref()
        .and_then(|v| v.pointer("/error/type"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let message = parsed
        .as_ref()
        .and_then(|v| v.pointer("/error/message"))
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| body.trim().to_string());
    let kind = classify(Some(status), etype, &message);
    let mut text = format!("anthropic: HTTP {status}");
    if !etype.is_empty() {
        text.push(' ');
        text.push_str(etype);
    }
    if !message.is_empty() {
        text.push_str(": ");
        text.push_str(&message);
    }
    let mut err = ProviderError::new(kind, one_line(&text));
    err.status = Some(status);
    err
}

/// Maps an Anthropic error (HTTP status if any, `error.type`, `error.message`) to an error class.
pub fn classify(status: Option<u16>, error_type: &str, message: &str) -> FaultKind {
    let lower = message.to_ascii_lowercase();
    let overflow = error_type == "request_too_large"
        || lower.contains("prompt is too long")
        || lower.contains("exceed context limit");
    if status == Some(529) || error_type == "overloaded_error" {
        return FaultKind::Server;
    }
    if status == Some(413) || overflow {
        return FaultKind::ContextOverflow;
    }
    if status == Some(429) || error_type == "rate_limit_error" {
        return FaultKind::RateLimit;
    }
    match status {
        Some(401 | 403) => return FaultKind::Auth,
        Some(s) if s >= 500 => return FaultKind::Server,
        Some(s) if s >= 400 => return FaultKind::BadRequest,
        _ => {}
    }
    match error_type {
        "authentication_error" | "permission_error" => FaultKind::Auth,
        "invalid_request_error" | "not_found_error" => FaultKind::BadRequest,
        // api_error, timeout_error, and anything unknown mid-stream: the server's fault.
        _ => FaultKind::Server,
    }
}

/// An error message on one line, capped.
fn one_line(s: &str) -> String {
    pith_protocol::text::one_line_max(s, MAX_MESSAGE_CHARS)
}
