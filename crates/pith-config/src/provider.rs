//! Providers and models: where requests go, and what a model can take.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    Openai,
    Anthropic,
    /// OpenAI's Responses API (`{base_url}/responses`).
    Responses,
}

impl ProviderKind {
    /// The name written in a config file (`kind = "…"`).
    pub fn as_str(&self) -> &'static str {
        match self {
            ProviderKind::Openai => "openai",
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::Responses => "responses",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderConfig {
    pub kind: ProviderKind,
    /// openai kind: includes the version (`https://api.openai.com/v1`); anthropic kind:
    /// `https://api.anthropic.com`.
    pub base_url: String,
    /// Name of the environment variable that holds the API key (never the key itself).
    #[serde(default)]
    pub api_key_env: Option<String>,
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Retries for rate limits, 5xx, timeouts and broken streams.
    #[serde(default)]
    pub max_retries: Option<u32>,
    /// Seconds to wait for a connection.
    #[serde(default)]
    pub connect_timeout_secs: Option<u64>,
    /// Seconds to wait for the first byte of an answer after sending the request (a local server
    /// reads the whole prompt first). `timeout_secs` is the older name.
    #[serde(default, alias = "timeout_secs")]
    pub first_byte_timeout_secs: Option<u64>,
    /// Seconds of silence tolerated in the middle of a streamed answer.
    #[serde(default)]
    pub idle_timeout_secs: Option<u64>,
    /// The longest wait before a retry: a server asking for longer (`retry-after`) gets the error
    /// reported instead.
    #[serde(default)]
    pub max_retry_wait_secs: Option<u64>,
    /// Which field carries the output cap (openai kind); unset: `max_completion_tokens` for
    /// api.openai.com, `max_tokens` for every other server.
    #[serde(default)]
    pub output_cap: Option<OutputCap>,
    /// Whether the server takes a reasoning effort (`reasoning_effort` on chat completions,
    /// `reasoning.effort` on the Responses API); unset: only api.openai.com.
    #[serde(default)]
    pub reasoning_effort: Option<bool>,
    /// Responses API: send `store: false` and carry the model's reasoning back encrypted
    /// (`include: ["reasoning.encrypted_content"]`), as OpenAI and Azure OpenAI take; unset:
    /// only api.openai.com.
    #[serde(default)]
    pub encrypted_reasoning: Option<bool>,
}

impl Default for ProviderConfig {
    fn default() -> Self {
        ProviderConfig {
            kind: ProviderKind::Openai,
            base_url: String::new(),
            api_key_env: None,
            headers: BTreeMap::new(),
            max_retries: None,
            connect_timeout_secs: None,
            first_byte_timeout_secs: None,
            idle_timeout_secs: None,
            max_retry_wait_secs: None,
            output_cap: None,
            reasoning_effort: None,
            encrypted_reasoning: None,
        }
    }
}

/// The request field that carries the output cap on an OpenAI-compatible server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutputCap {
    /// `max_tokens`: llama.cpp, Ollama, vLLM, OpenRouter and most other servers.
    MaxTokens,
    /// `max_completion_tokens`: OpenAI's own API (its newer models reject `max_tokens`).
    MaxCompletionTokens,
    /// Send no cap (a server that rejects both fields).
    None,
}

impl OutputCap {
    /// The field for a server at `base_url` when the config names none.
    pub fn default_for(base_url: &str) -> OutputCap {
        let host = url::Url::parse(base_url.trim())
            .ok()
            .and_then(|u| u.host_str().map(str::to_ascii_lowercase));
        match host.as_deref() {
            Some("api.openai.com") => OutputCap::MaxCompletionTokens,
            _ => OutputCap::MaxTokens,
        }
    }
}

/// Limits and prices of one model (`[models."provider/model"]` or the catalog).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct ModelConfig {
    /// Context window in tokens (0 = unknown: automatic compaction off).
    #[serde(default)]
    pub context: u64,
    /// Maximum input tokens, where the provider limits it separately.
    #[serde(default)]
    pub input: Option<u64>,
    /// Maximum output tokens.
    #[serde(default)]
    pub output: u64,
    /// USD per million input tokens.
    #[serde(default)]
    pub cost_input: f64,
    /// USD per million output tokens.
    #[serde(default)]
    pub cost_output: f64,
    #[serde(default)]
    pub cost_cache_read: Option<f64>,
    #[serde(default)]
    pub cost_cache_write: Option<f64>,
    /// Anthropic extended thinking budget in tokens.
    #[serde(default)]
    pub thinking_budget: Option<u32>,
    /// How hard the model reasons: "minimal", "low", "medium" or "high" (`--effort` and
    /// `/effort` override it for a session).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<pith_protocol::llm::ReasoningEffort>,
    /// `max_tokens` to request (defaults to min(output, 32000)).
    #[serde(default)]
    pub max_tokens: Option<u32>,
    /// The model takes images (attached with `@shot.png`); unset: pith's guess from the name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub images: Option<bool>,
}
