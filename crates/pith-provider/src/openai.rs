//! OpenAI-compatible chat completions (streaming).
//!
//! `POST {base_url}/chat/completions` with `stream: true`; the answer is parsed from SSE
//! (`data: {chunk}` … `data: [DONE]`). Works with OpenAI, OpenRouter, vLLM, llama.cpp, Ollama,
//! DeepSeek and other servers that speak this format.

mod body;
mod probe;
mod stream;

use std::collections::BTreeMap;

use futures_util::StreamExt;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};

#[cfg(test)]
pub(crate) use body::add_effort;
pub(crate) use body::arguments;
pub use body::request_body;
pub use stream::{ChunkParser, Flow, SseParser, parse_sse};
pub(crate) use stream::{ENDED_EARLY, completion_events, drive_sse};

use super::error::{FaultKind, ProviderError, from_http};
use super::responses;
use super::transport::{self, Timeouts};
use super::{ChatRequest, EventStream, Provider};
use pith_config::OutputCap;

/// Whether a provider at `base_url` is on this machine or the local network.
pub fn is_local(base_url: &str) -> bool {
    probe::server_root(base_url).is_some()
}

pub use pith_http::init_tls;

/// Which of OpenAI's APIs a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Api {
    ChatCompletions,
    Responses,
}

/// A provider for the OpenAI chat-completions wire format, or (built with
/// [`OpenAiProvider::responses`]) the Responses API.
pub struct OpenAiProvider {
    api: Api,
    client: reqwest::Client,
    url: String,
    api_key: Option<String>,
    headers: HeaderMap,
    timeouts: Timeouts,
    /// `url` as shown in messages.
    endpoint: String,
    /// The field that carries the request's output cap.
    output_cap: OutputCap,
    /// The server takes a reasoning effort (`reasoning_effort` / `reasoning.effort`).
    effort: bool,
    /// The Responses API's encrypted reasoning and `store: false` (api.openai.com by default).
    encrypted_reasoning: bool,
    /// The Responses API's hosted web search is offered with the tools (`[websearch] hosted`).
    web_search: bool,
}

impl std::fmt::Debug for OpenAiProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiProvider")
            .field("url", &self.url)
            .field("api_key", &self.api_key.as_ref().map(|_| "REDACTED"))
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl OpenAiProvider {
    /// `base_url` includes the API version (`https://api.openai.com/v1`); a trailing slash is
    /// ignored. `Authorization: Bearer KEY` is sent only when a key is given; `headers` are added
    /// to every request. `timeouts` bound connecting, the wait for the first byte of the answer
    /// and any silence within it (not the whole answer, which may stream for minutes).
    pub fn new(
        base_url: &str,
        api_key: Option<String>,
        headers: BTreeMap<String, String>,
        timeouts: Timeouts,
    ) -> Result<Self, ProviderError> {
        Self::build(Api::ChatCompletions, base_url, api_key, headers, timeouts)
    }

    /// A provider for the Responses API: `POST {base_url}/responses`.
    pub fn responses(
        base_url: &str,
        api_key: Option<String>,
        headers: BTreeMap<String, String>,
        timeouts: Timeouts,
    ) -> Result<Self, ProviderError> {
        Self::build(Api::Responses, base_url, api_key, headers, timeouts)
    }

    fn build(
        api: Api,
        base_url: &str,
        api_key: Option<String>,
        headers: BTreeMap<String, String>,
        timeouts: Timeouts,
    ) -> Result<Self, ProviderError> {
        let config_error = |msg: String| ProviderError::new(FaultKind::BadRequest, msg);
        let base = base_url.trim().trim_end_matches('/');
        let url = match api {
            Api::ChatCompletions => format!("{base}/chat/completions"),
            Api::Responses => format!("{base}/responses"),
        };
        let parsed = reqwest::Url::parse(&url)
            .map_err(|e| config_error(format!("invalid provider base_url: {e}")))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(config_error(format!(
                "invalid provider base_url: scheme {:?} is not http or https",
                parsed.scheme()
            )));
        }

        let mut header_map = HeaderMap::new();
        for (name, value) in &headers {
            let hn = HeaderName::from_bytes(name.trim().as_bytes())
                .map_err(|_| config_error(format!("invalid header name {name:?}")))?;
            // The value may be a secret: never show it.
            let hv = HeaderValue::from_str(value.trim())
                .map_err(|_| config_error(format!("invalid value for header {name:?}")))?;
            header_map.insert(hn, hv);
        }
        let api_key = api_key.filter(|k| !k.trim().is_empty());
        if let Some(key) = &api_key
            && HeaderValue::from_str(&format!("Bearer {}", key.trim())).is_err()
        {
            return Err(config_error(
                "the API key contains characters not allowed in a header".into(),
            ));
        }

        let client = super::client::for_base(base, timeouts.connect)
            .map_err(|e| config_error(format!("cannot build the HTTP client: {e}")))?;
        let openai_host = crate::responses::is_openai_host(base);
        Ok(OpenAiProvider {
            api,
            effort: openai_host,
            encrypted_reasoning: openai_host,
            web_search: false,
            client,
            endpoint: transport::endpoint(&url),
            url,
            api_key,
            headers: header_map,
            timeouts,
            output_cap: OutputCap::default_for(base),
        })
    }

    /// Sends the output cap in `field` instead of the one chosen from the base URL.
    pub fn with_output_cap(mut self, field: OutputCap) -> Self {
        self.output_cap = field;
        self
    }

    /// Sends the reasoning effort to this server (`Some(true)`) or never (`Some(false)`);
    /// `None` keeps the default: only to api.openai.com.
    pub fn with_effort(mut self, accepted: Option<bool>) -> Self {
        if let Some(a) = accepted {
            self.effort = a;
        }
        self
    }

    /// Sends `store: false` and carries reasoning back encrypted on the Responses API
    /// (`Some(true)`) or not; `None` keeps the default: only on api.openai.com.
    pub fn with_encrypted_reasoning(mut self, on: Option<bool>) -> Self {
        if let Some(on) = on {
            self.encrypted_reasoning = on;
        }
        self
    }

    /// Offers OpenAI's hosted web search with the tools (the Responses API only; chat
    /// completions has none).
    pub fn with_web_search(mut self, on: bool) -> Self {
        self.web_search = on && self.api == Api::Responses;
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
impl Provider for OpenAiProvider {
    fn takes_effort(&self) -> bool {
        self.effort
    }

    fn hosted_search(&self) -> bool {
        self.web_search
    }

    async fn stream(&self, request: &ChatRequest) -> Result<EventStream, ProviderError> {
        let body = match self.api {
            Api::ChatCompletions => {
                let mut body = request_body(request, self.output_cap);
                body::add_effort(&mut body, request, self.effort);
                body
            }
            Api::Responses => {
                let mut body = responses::request_body(
                    request,
                    responses::Dialect {
                        openai: self.encrypted_reasoning,
                        effort: self.effort,
                    },
                );
                if self.web_search {
                    responses::add_web_search(&mut body);
                }
                body
            }
        };
        tracing::debug!(
            url = %self.url,
            model = %request.model,
            messages = request.messages.len(),
            tools = request.tools.len(),
            api = ?self.api,
            "openai: request"
        );
        let mut rb = self
            .client
            .post(&self.url)
            .header(ACCEPT, "text/event-stream")
            .json(&body);
        if let Some(key) = &self.api_key {
            rb = rb.header(AUTHORIZATION, format!("Bearer {}", key.trim()));
        }
        for (name, value) in &self.headers {
            rb = rb.header(name, value);
        }
        let started = tokio::time::Instant::now();
        let resp = transport::send(rb, &self.timeouts, &self.endpoint)
            .await
            .map_err(|e| self.scrub(e))?;

        let status = resp.status();
        let content_type = resp
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        let headers = resp.headers().clone();
        let mut body = transport::body(resp, self.timeouts, started, self.endpoint.clone());
        if !status.is_success() {
            let text = transport::read_text(&mut body, transport::ERROR_BODY_LIMIT).await;
            let err = self.scrub(from_http(status.as_u16(), &headers, &text));
            tracing::warn!(status = status.as_u16(), kind = ?err.kind, "openai: {}", err.message);
            return Err(err);
        }

        if content_type.starts_with("application/json") {
            // The server ignored `stream: true`.
            let text = read_all(&mut body).await.map_err(|e| self.scrub(e))?;
            let items = match self.api {
                Api::ChatCompletions => completion_events(&text),
                Api::Responses => responses::response_events(&text),
            };
            return Ok(Box::pin(futures_util::stream::iter(items)));
        }
        let body = transport::event_body(body, &content_type, status.as_u16(), &self.endpoint)
            .await
            .map_err(|e| self.scrub(e))?;

        let key = self.api_key.clone();
        let events = match self.api {
            Api::ChatCompletions => parse_sse(body),
            Api::Responses => responses::parse_sse(body),
        };
        let events = events.map(move |item| item.map_err(|e| e.scrubbed(key.as_deref())));
        Ok(Box::pin(events))
    }

    async fn probe_window(&self, model: &str) -> Option<(u64, String)> {
        probe::window(&self.client, &self.url, model).await
    }
}

/// The whole body as text (within the stream's bounds).
async fn read_all(body: &mut transport::ByteStream) -> Result<String, ProviderError> {
    let mut buf = Vec::new();
    while let Some(chunk) = body.next().await {
        buf.extend_from_slice(&chunk?);
    }
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_url_and_rejects_bad_config() {
        let p = OpenAiProvider::new(
            "http://localhost:8080/v1/",
            None,
            BTreeMap::new(),
            Timeouts::default(),
        )
        .unwrap();
        assert_eq!(p.url(), "http://localhost:8080/v1/chat/completions");
        let p = OpenAiProvider::new(
            "https://api.openai.com/v1",
            Some("sk-secret".into()),
            BTreeMap::new(),
            Timeouts::default(),
        )
        .unwrap();
        assert!(!format!("{p:?}").contains("sk-secret"));
        assert_eq!(p.output_cap, OutputCap::MaxCompletionTokens);
        let p = OpenAiProvider::new(
            "http://127.0.0.1:8080/v1",
            None,
            BTreeMap::new(),
            Timeouts::default(),
        )
        .unwrap();
        assert_eq!(p.output_cap, OutputCap::MaxTokens);
        assert_eq!(
            p.with_output_cap(OutputCap::None).output_cap,
            OutputCap::None
        );

        assert!(
            OpenAiProvider::new("not a url", None, BTreeMap::new(), Timeouts::default()).is_err()
        );
        assert!(
            OpenAiProvider::new("ftp://x/v1", None, BTreeMap::new(), Timeouts::default()).is_err()
        );
        let bad = BTreeMap::from([("bad name".to_string(), "v".to_string())]);
        assert!(OpenAiProvider::new("http://x/v1", None, bad, Timeouts::default()).is_err());
        let secret = BTreeMap::from([("x-key".to_string(), "line\nbreak-secret".to_string())]);
        let err =
            OpenAiProvider::new("http://x/v1", None, secret, Timeouts::default()).unwrap_err();
        assert!(!err.message.contains("break-secret"), "{}", err.message);
    }
}
