//! Provider error classes (shared by every wire format).

use std::time::Duration;

use pith_protocol::text::one_line_max;

/// What kind of fault a provider request met: it decides whether the request is retried (the
/// engine's `event::ErrorKind` is the other, front-end-facing name — this one never reaches a
/// front end as such).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FaultKind {
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

impl FaultKind {
    pub fn is_retryable(self) -> bool {
        matches!(
            self,
            FaultKind::RateLimit | FaultKind::Server | FaultKind::Network | FaultKind::Malformed
        )
    }
}

/// An error from a provider. `message` never contains the API key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ProviderError {
    pub kind: FaultKind,
    pub message: String,
    pub status: Option<u16>,
    pub retry_after: Option<Duration>,
    /// No connection could be made (nothing listens, the host is unknown): the engine then says
    /// what to check (`factory::describe`) without reading the message.
    pub unreachable: bool,
}

impl ProviderError {
    pub fn new(kind: FaultKind, message: impl Into<String>) -> Self {
        ProviderError {
            kind,
            message: message.into(),
            status: None,
            retry_after: None,
            unreachable: false,
        }
    }

    /// Removes `secret` (the API key) and every other secret pith knows (secret header values)
    /// from the message, should a server echo them back.
    pub(crate) fn scrubbed(mut self, secret: Option<&str>) -> Self {
        if let Some(key) = secret.map(str::trim).filter(|k| k.len() >= 4)
            && self.message.contains(key)
        {
            self.message = self.message.replace(key, "[REDACTED]");
        }
        if let std::borrow::Cow::Owned(clean) = pith_secrets::scrub(&self.message) {
            self.message = clean;
        }
        self
    }
}

/// Body fragments (lower case) that mean the prompt does not fit the context window.
const OVERFLOW_MARKERS: &[&str] = &[
    "context_length_exceeded",
    "model_context_window_exceeded",
    "exceed_context_size_error",
    "maximum context length",
    "exceeds the context",
    "exceed the context",
    "context window",
    "context length",
    "prompt is too long",
    "exceed context limit",
    "exceeds the maximum number of tokens",
    "input is too long",
];

const RATE_LIMIT_MARKERS: &[&str] = &["rate_limit", "rate limit", "ratelimit", "too many requests"];
const SERVER_MARKERS: &[&str] = &[
    "overloaded",
    "server_error",
    "internal error",
    "internal server error",
    "service unavailable",
];
const AUTH_MARKERS: &[&str] = &[
    "authentication_error",
    "invalid_api_key",
    "permission_error",
    "unauthorized",
    "invalid api key",
];
/// A 429 for an exhausted quota or billing problem: retrying cannot help.
const QUOTA_MARKERS: &[&str] = &["insufficient_quota", "billing_hard_limit", "quota exceeded"];

fn contains_any(haystack: &str, needles: &[&str]) -> bool {
    needles.iter().any(|n| haystack.contains(n))
}

/// Classifies an error from its HTTP status (None for an error event inside a stream) and body.
/// The body is checked before the status: a 400 whose body says the context is exceeded is a
/// `ContextOverflow`.
pub fn classify(status: Option<u16>, body: &str) -> FaultKind {
    let lower = body.to_lowercase();
    if contains_any(&lower, OVERFLOW_MARKERS) || status == Some(413) {
        return FaultKind::ContextOverflow;
    }
    match status {
        Some(401 | 403) => FaultKind::Auth,
        Some(429) if contains_any(&lower, QUOTA_MARKERS) => FaultKind::BadRequest,
        Some(429) => FaultKind::RateLimit,
        Some(408) => FaultKind::Network,
        Some(500..=599) => FaultKind::Server,
        Some(_) if lower.contains("overloaded_error") => FaultKind::Server,
        Some(400..=499) => FaultKind::BadRequest,
        Some(_) => FaultKind::BadRequest,
        None => {
            if contains_any(&lower, QUOTA_MARKERS) {
                FaultKind::BadRequest
            } else if contains_any(&lower, RATE_LIMIT_MARKERS) {
                FaultKind::RateLimit
            } else if contains_any(&lower, AUTH_MARKERS) {
                FaultKind::Auth
            } else if contains_any(&lower, SERVER_MARKERS) {
                FaultKind::Server
            } else if lower.contains("invalid_request_error") {
                FaultKind::BadRequest
            } else {
                // An error event inside a 200 stream with nothing to go by: most likely the
                // upstream model server failed mid-answer.
                FaultKind::Server
            }
        }
    }
}

/// A short label for messages.
fn label(kind: FaultKind) -> &'static str {
    match kind {
        FaultKind::ContextOverflow => "context overflow",
        FaultKind::RateLimit => "rate limited",
        FaultKind::Server => "server error",
        FaultKind::Network => "network error",
        FaultKind::Malformed => "malformed response",
        FaultKind::Auth => "unauthorized",
        FaultKind::BadRequest => "bad request",
        FaultKind::Cancelled => "cancelled",
    }
}

/// The human part of an error body: `error.message` (OpenAI, Anthropic, llama.cpp), a string
/// `error`, a top-level `message` / `detail`, else the body itself; one line, at most 300 chars.
pub(crate) fn error_detail(body: &str) -> String {
    let trimmed = body.trim();
    let from_json = serde_json::from_str::<serde_json::Value>(trimmed)
        .ok()
        .and_then(|v| {
            let err = v.get("error");
            err.and_then(|e| e.get("message"))
                .and_then(|m| m.as_str())
                .or_else(|| err.and_then(|e| e.as_str()))
                .or_else(|| v.get("message").and_then(|m| m.as_str()))
                .or_else(|| v.get("detail").and_then(|m| m.as_str()))
                .map(str::to_string)
        });
    one_line_max(from_json.as_deref().unwrap_or(trimmed), 300)
}

/// A numeric status hidden in an error body (`error.code: 502`, `error.status`, `status`).
fn status_in_body(body: &str) -> Option<u16> {
    let v: serde_json::Value = serde_json::from_str(body.trim()).ok()?;
    let err = v.get("error");
    [
        err.and_then(|e| e.get("code")),
        err.and_then(|e| e.get("status")),
        v.get("status"),
        v.get("code"),
    ]
    .into_iter()
    .flatten()
    .find_map(|c| {
        c.as_u64()
            .or_else(|| c.as_str().and_then(|s| s.parse().ok()))
    })
    .and_then(|c| u16::try_from(c).ok())
    .filter(|c| (400..600).contains(c))
}

/// Parses `retry-after-ms` (milliseconds), then `retry-after` (seconds or an HTTP date).
pub fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let get = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    if let Some(ms) = get("retry-after-ms").and_then(|v| v.parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    let value = get("retry-after")?;
    if let Ok(secs) = value.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs.min(1e9)));
    }
    let date = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    let wait = date.with_timezone(&chrono::Utc) - chrono::Utc::now();
    Some(wait.to_std().unwrap_or(Duration::ZERO))
}

/// An error from an HTTP response that was not a success: classified, with a one-line message
/// `HTTP 429 rate limited: <detail>`. The message holds only the status and the response body,
/// never anything from the request.
pub(crate) fn from_http(
    status: u16,
    headers: &reqwest::header::HeaderMap,
    body: &str,
) -> ProviderError {
    let kind = classify(Some(status), body);
    let detail = if super::transport::looks_like_html(body.as_bytes()) {
        // A proxy's or a web server's error page: its title says enough.
        format!("an HTML page ({})", super::transport::html_summary(body))
    } else {
        error_detail(body)
    };
    let what = match status {
        404 => "not found",
        _ => label(kind),
    };
    let message = if detail.is_empty() {
        format!("HTTP {status} {what}")
    } else {
        format!("HTTP {status} {what}: {detail}")
    };
    ProviderError {
        kind,
        message,
        status: Some(status),
        retry_after: retry_after(headers),
        unreachable: false,
    }
}

/// An `{"error": …}` event inside a stream. A numeric `error.code` (OpenRouter sends the
/// upstream HTTP status there) is used as the status for classification.
pub(crate) fn from_stream_error(data: &str) -> ProviderError {
    let status = status_in_body(data);
    let kind = classify(status, data);
    let detail = error_detail(data);
    ProviderError {
        kind,
        message: format!("stream error ({}): {detail}", label(kind)),
        status,
        retry_after: None,
        unreachable: false,
    }
}

/// A transport error from reqwest (connect, timeout, broken body). The message never holds the
/// URL (it may carry credentials or query parameters).
pub(crate) fn from_reqwest(err: reqwest::Error) -> ProviderError {
    let status = err.status().map(|s| s.as_u16());
    let unreachable = err.is_connect();
    let what = if err.is_timeout() {
        "request timed out"
    } else if err.is_connect() {
        "connection failed"
    } else if err.is_body() || err.is_decode() {
        "connection broken while reading the response"
    } else {
        "request failed"
    };
    let err = err.without_url();
    let mut message = format!("{what}: {err}");
    let mut source = std::error::Error::source(&err);
    let mut depth = 0;
    while let Some(s) = source {
        let text = s.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = s.source();
        depth += 1;
        if depth > 4 {
            break;
        }
    }
    ProviderError {
        kind: FaultKind::Network,
        message: one_line_max(&message, 400),
        status,
        retry_after: None,
        unreachable,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::{HeaderMap, HeaderValue};

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn overflow_bodies_win_over_status() {
        let cases = [
            (
                400,
                r#"{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}"#,
            ),
            (
                400,
                r#"{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens","code":400}"#,
            ),
            (
                400,
                r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9000,"n_ctx":8192}}"#,
            ),
            (
                400,
                r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#,
            ),
            (
                400,
                r#"{"type":"error","error":{"type":"invalid_request_error","message":"input length and `max_tokens` exceed context limit: 190000 + 32000 > 200000"}}"#,
            ),
            (
                400,
                r#"{"error":{"message":"Input exceeds the context window of this model"}}"#,
            ),
            (500, "prompt exceeds the context size"),
            (413, "request entity too large"),
            (413, ""),
        ];
        for (status, body) in cases {
            assert_eq!(
                classify(Some(status), body),
                FaultKind::ContextOverflow,
                "{status} {body}"
            );
        }
        assert_eq!(
            classify(
                None,
                r#"{"error":{"message":"maximum context length exceeded"}}"#
            ),
            FaultKind::ContextOverflow
        );
    }

    #[test]
    fn statuses_map_to_kinds() {
        assert_eq!(classify(Some(429), "slow down"), FaultKind::RateLimit);
        assert_eq!(
            classify(Some(429), r#"{"error":{"code":"insufficient_quota"}}"#),
            FaultKind::BadRequest
        );
        assert_eq!(classify(Some(500), ""), FaultKind::Server);
        assert_eq!(classify(Some(502), "bad gateway"), FaultKind::Server);
        assert_eq!(classify(Some(503), ""), FaultKind::Server);
        assert_eq!(classify(Some(529), "overloaded"), FaultKind::Server);
        assert_eq!(
            classify(
                Some(400),
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#
            ),
            FaultKind::Server
        );
        assert_eq!(classify(Some(401), "bad key"), FaultKind::Auth);
        assert_eq!(classify(Some(403), ""), FaultKind::Auth);
        assert_eq!(
            classify(Some(400), "invalid tool schema"),
            FaultKind::BadRequest
        );
        assert_eq!(classify(Some(404), "no such model"), FaultKind::BadRequest);
        assert_eq!(classify(Some(422), ""), FaultKind::BadRequest);
        assert_eq!(classify(Some(408), ""), FaultKind::Network);
    }

    #[test]
    fn stream_errors_classify_by_body() {
        assert_eq!(
            classify(None, r#"{"error":{"type":"rate_limit_error"}}"#),
            FaultKind::RateLimit
        );
        assert_eq!(
            classify(None, r#"{"error":{"type":"overloaded_error"}}"#),
            FaultKind::Server
        );
        assert_eq!(
            classify(
                None,
                r#"{"error":{"type":"invalid_request_error","message":"bad"}}"#
            ),
            FaultKind::BadRequest
        );
        assert_eq!(
            classify(None, r#"{"error":{"message":"something broke"}}"#),
            FaultKind::Server
        );

        let e = from_stream_error(r#"{"error":{"code":429,"message":"Provider rate limited"}}"#);
        assert_eq!(e.kind, FaultKind::RateLimit);
        assert_eq!(e.status, Some(429));
        assert!(e.message.contains("Provider rate limited"), "{}", e.message);
        let e = from_stream_error(
            r#"{"error":{"code":"context_length_exceeded","message":"too long"}}"#,
        );
        assert_eq!(e.kind, FaultKind::ContextOverflow);
        assert_eq!(e.status, None);
    }

    #[test]
    fn from_http_builds_a_one_line_message() {
        let e = from_http(
            429,
            &headers(&[("retry-after", "7")]),
            r#"{"error":{"message":"Rate limit reached\nfor requests","type":"requests"}}"#,
        );
        assert_eq!(e.kind, FaultKind::RateLimit);
        assert_eq!(
            e.message,
            "HTTP 429 rate limited: Rate limit reached for requests"
        );
        assert_eq!(e.retry_after, Some(Duration::from_secs(7)));
        assert_eq!(e.status, Some(429));

        let long = "x".repeat(1000);
        let e = from_http(502, &HeaderMap::new(), &long);
        assert_eq!(e.kind, FaultKind::Server);
        assert!(e.message.starts_with("HTTP 502 server error: xxx"));
        assert!(e.message.chars().count() < 340, "{}", e.message.len());

        let e = from_http(503, &HeaderMap::new(), "  ");
        assert_eq!(e.message, "HTTP 503 server error");
        let e = from_http(400, &HeaderMap::new(), r#"{"error":"plain string"}"#);
        assert_eq!(e.message, "HTTP 400 bad request: plain string");
        let e = from_http(
            404,
            &HeaderMap::new(),
            r#"{"error":{"message":"no such model"}}"#,
        );
        assert_eq!(e.kind, FaultKind::BadRequest);
        assert_eq!(e.message, "HTTP 404 not found: no such model");
        let e = from_http(
            502,
            &HeaderMap::new(),
            "<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>",
        );
        assert_eq!(e.kind, FaultKind::Server);
        assert_eq!(
            e.message,
            "HTTP 502 server error: an HTML page (502 Bad Gateway)"
        );
    }

    #[test]
    fn retry_after_headers() {
        assert_eq!(
            retry_after(&headers(&[
                ("retry-after-ms", "1500"),
                ("retry-after", "9")
            ])),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(
            retry_after(&headers(&[("retry-after", "2")])),
            Some(Duration::from_secs(2))
        );
        assert_eq!(
            retry_after(&headers(&[("retry-after", "0.5")])),
            Some(Duration::from_millis(500))
        );
        let future = chrono::Utc::now() + chrono::TimeDelta::seconds(30);
        let date = future.format("%a, %d %b %Y %H:%M:%S GMT").to_string();
        let d = retry_after(&headers(&[("retry-after", &date)])).unwrap();
        assert!(
            d > Duration::from_secs(25) && d <= Duration::from_secs(31),
            "{d:?}"
        );
        assert_eq!(
            retry_after(&headers(&[(
                "retry-after",
                "Wed, 21 Oct 2015 07:28:00 GMT"
            )])),
            Some(Duration::ZERO)
        );
        assert_eq!(retry_after(&headers(&[("retry-after", "soon")])), None);
        assert_eq!(retry_after(&headers(&[("retry-after", "-3")])), None);
        assert_eq!(retry_after(&HeaderMap::new()), None);
    }

    #[test]
    fn retryable_kinds() {
        assert!(FaultKind::RateLimit.is_retryable());
        assert!(FaultKind::Network.is_retryable());
        assert!(!FaultKind::ContextOverflow.is_retryable());
        assert!(!FaultKind::Auth.is_retryable());
    }
}
