//! The providers pith knows without any configuration: where they are, the variable that holds
//! their key, and the model a first run picks when only that key is set. The one table behind
//! the built-in `[provider.*]` entries, the first-run model choice and its hint.

use super::ProviderKind;

pub struct KnownProvider {
    pub name: &'static str,
    pub kind: ProviderKind,
    pub base_url: &'static str,
    /// The environment variable holding the API key (local servers need none).
    pub key_env: Option<&'static str>,
    /// The model used when this provider's key is the only thing set ("provider/model").
    pub first_run_model: Option<&'static str>,
}

/// In order of preference for a first run.
pub const KNOWN_PROVIDERS: &[KnownProvider] = &[
    KnownProvider {
        name: "anthropic",
        kind: ProviderKind::Anthropic,
        base_url: "https://api.anthropic.com",
        key_env: Some("ANTHROPIC_API_KEY"),
        first_run_model: Some("anthropic/claude-sonnet-4-5"),
    },
    KnownProvider {
        name: "openai",
        kind: ProviderKind::Openai,
        base_url: "https://api.openai.com/v1",
        key_env: Some("OPENAI_API_KEY"),
        first_run_model: Some("openai/gpt-4.1"),
    },
    KnownProvider {
        name: "openrouter",
        kind: ProviderKind::Openai,
        base_url: "https://openrouter.ai/api/v1",
        key_env: Some("OPENROUTER_API_KEY"),
        first_run_model: Some("openrouter/anthropic/claude-sonnet-4.5"),
    },
    KnownProvider {
        name: "ollama",
        kind: ProviderKind::Openai,
        base_url: "http://127.0.0.1:11434/v1",
        key_env: None,
        first_run_model: None,
    },
    KnownProvider {
        name: "llamacpp",
        kind: ProviderKind::Openai,
        base_url: "http://127.0.0.1:8080/v1",
        key_env: None,
        first_run_model: None,
    },
];
