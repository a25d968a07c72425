//! Provider error classes (shared by every wire format).

use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The prompt does not fit the model's context window. Not retried blindly: the engine
    /// compacts and retries the step once.
    ContextOverflow,
    /// HTTP 429 or a rate-limit error body. Retried, honouring `retry_after`.
    RateLimit,
    /// HTTP 5xx, Anthropic `overloaded_error` / 529. Retried with backoff.
    Server,
    /// Connection failed, or the stream was cut before it finished. Retried.
    Network,
    /// A stream event that could not be parsed. Retried.
    Malformed,
    /// 401/403. Reported.
    Auth,
    /// Any other 4xx. Reported.
    BadRequest,
    /// The request was cancelled by the user.
    Cancelled,
}

impl ErrorKind {
    pub fn is_retryable(self) -> bool {
        matches!(
            self,
            ErrorKind::RateLimit | ErrorKind::Server | ErrorKind::Network | ErrorKind::Malformed
        )
    }
}

/// An error from a provider. `message` never contains the API key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ProviderError {
    pub kind: ErrorKind,
    pub message: String,
    pub status: Option<u16>,
    pub retry_after: Option<Duration>,
}

impl ProviderError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        ProviderError {
            kind,
            message: message.into(),
            status: None,
            retry_after: None,
        }
    }
}
