//! Building a provider for "provider/model" from the config.

use std::sync::Arc;

use pith_config::{Config, ProviderKind};
use pith_provider::anthropic::AnthropicProvider;
use pith_provider::error::FaultKind;
use pith_provider::openai::OpenAiProvider;
use pith_provider::transport::{self, Timeouts};
use pith_provider::{ChatRequest, EventStream, Provider, ProviderError};

/// Why a model named in the config or `/model` cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("model \"{name}\" must be written provider/model, e.g. openai/gpt-4.1")]
    NotProviderModel { name: String },
    #[error(
        "unknown provider \"{provider}\" in model \"{name}\" (configured: {}); add a [provider.{provider}] section",
        configured.join(", ")
    )]
    UnknownProvider {
        provider: String,
        name: String,
        configured: Vec<String>,
    },
    /// The provider's client cannot be built from its section.
    #[error("provider \"{provider}\"")]
    Provider {
        provider: String,
        #[source]
        source: ProviderError,
    },
    #[error(
        "provider \"{provider}\": its stored key was saved for {stored}, but base_url is now {base_url}; it is not sent elsewhere — run `pith auth login {provider}` to use it there"
    )]
    KeyForOtherUrl {
        provider: String,
        stored: String,
        base_url: String,
    },
    #[error(
        "provider \"{provider}\" needs an API key: set the environment variable {var} or run `pith auth login {provider}`"
    )]
    NoKey { provider: String, var: String },
}

/// Splits "provider/model" (the model id may itself contain slashes: "openrouter/anthropic/x").
pub fn split_model(name: &str) -> Result<(&str, &str), ModelError> {
    pith_protocol::model_name::split(name).ok_or_else(|| ModelError::NotProviderModel {
        name: name.to_string(),
    })
}

/// The provider for `name` and the model id to send it.
pub fn build(config: &Config, name: &str) -> Result<(Arc<dyn Provider>, String), ModelError> {
    let (provider_name, model_id) = split_model(name)?;
    let Some(pc) = config.provider.get(provider_name) else {
        return Err(ModelError::UnknownProvider {
            provider: provider_name.to_string(),
            name: name.to_string(),
            configured: config.provider.keys().cloned().collect(),
        });
    };
    let client_error = |source| ModelError::Provider {
        provider: provider_name.to_string(),
        source,
    };
    let api_key = api_key(provider_name, pc)?;
    if let Some(key) = &api_key {
        pith_secrets::register(key);
    }
    for (header, value) in &pc.headers {
        if pith_secrets::is_secret_name(header) {
            pith_secrets::register(value);
        }
    }
    let timeouts = Timeouts::from_config(pc);
    let (inner, url): (Arc<dyn Provider>, String) = match pc.kind {
        ProviderKind::Openai | ProviderKind::Responses => {
            let build = match pc.kind {
                ProviderKind::Responses => OpenAiProvider::responses,
                _ => OpenAiProvider::new,
            };
            let p = build(&pc.base_url, api_key, pc.headers.clone(), timeouts)
                .map_err(client_error)?
                .with_effort(pc.reasoning_effort)
                .with_encrypted_reasoning(pc.encrypted_reasoning)
                .with_web_search(config.websearch.hosted);
            let url = p.url().to_string();
            let p = match pc.output_cap {
                Some(field) => p.with_output_cap(field),
                None => p,
            };
            (Arc::new(p), url)
        }
        ProviderKind::Anthropic => {
            let p = AnthropicProvider::new(&pc.base_url, api_key, pc.headers.clone(), timeouts)
                .map_err(client_error)?
                .with_web_search(config.websearch.hosted);
            let url = p.url().to_string();
            (Arc::new(p), url)
        }
    };
    let provider = Described {
        inner,
        endpoint: transport::endpoint(&url),
        provider: provider_name.to_string(),
        key_env: pc.api_key_env.clone().filter(|v| !v.is_empty()),
    };
    Ok((Arc::new(provider), model_id.to_string()))
}

/// The key to send: the `api_key_env` variable, else the key `pith auth login` stored for this
/// provider at this `base_url`.
fn api_key(name: &str, pc: &pith_config::ProviderConfig) -> Result<Option<String>, ModelError> {
    if let Some(var) = &pc.api_key_env
        && let Some(v) = pith_secrets::env_var(var)
        && !v.trim().is_empty()
    {
        return Ok(Some(v));
    }
    match pith_auth::stored_key(name, &pc.base_url) {
        Ok(Some(key)) => return Ok(Some(key)),
        Ok(None) => {}
        Err(pith_auth::Refused::OtherUrl { stored }) => {
            return Err(ModelError::KeyForOtherUrl {
                provider: name.to_string(),
                stored,
                base_url: pc.base_url.clone(),
            });
        }
    }
    match &pc.api_key_env {
        Some(var) => Err(ModelError::NoKey {
            provider: name.to_string(),
            var: var.clone(),
        }),
        None => Ok(None),
    }
}

/// A provider whose errors say where the request went and what to check: the endpoint for a
/// 404 or a connection that failed, the key's variable for a refused key.
struct Described {
    inner: Arc<dyn Provider>,
    endpoint: String,
    /// The `[provider.NAME]` it was built from.
    provider: String,
    key_env: Option<String>,
}

#[async_trait::async_trait]
impl Provider for Described {
    async fn stream(&self, request: &ChatRequest) -> Result<EventStream, ProviderError> {
        self.inner
            .stream(request)
            .await
            .map_err(|e| describe(e, &self.endpoint, &self.provider, self.key_env.as_deref()))
    }

    async fn probe_window(&self, model: &str) -> Option<(u64, String)> {
        self.inner.probe_window(model).await
    }

    fn images_by_default(&self) -> bool {
        self.inner.images_by_default()
    }

    fn takes_effort(&self) -> bool {
        self.inner.takes_effort()
    }

    fn hosted_search(&self) -> bool {
        self.inner.hosted_search()
    }
}

/// Adds what to check to an error that happened before the answer started.
pub fn describe(
    mut err: ProviderError,
    endpoint: &str,
    provider: &str,
    key_env: Option<&str>,
) -> ProviderError {
    match (err.kind, err.status) {
        (FaultKind::Auth, _) => {
            let hint = match key_env {
                Some(var) => format!(
                    "; check the API key in the environment variable {var} (provider \"{provider}\")"
                ),
                None => format!(
                    "; provider \"{provider}\" sends no API key: set api_key_env in [provider.{provider}] to the variable that holds one"
                ),
            };
            err.message.push_str(&hint);
        }
        (_, Some(404)) => {
            err.message.push_str(&format!(
                " (POST {endpoint}); check base_url in [provider.{provider}] and the model name"
            ));
        }
        (FaultKind::Network, None) if err.unreachable => {
            err.message = format!(
                "cannot reach {endpoint}: {}; {}",
                err.message,
                unreachable_fix(endpoint, provider)
            );
        }
        _ => {}
    }
    err
}

/// What to check when nothing answers at `endpoint`: its host and port, and for a known local
/// provider the server to start.
fn unreachable_fix(endpoint: &str, provider: &str) -> String {
    let (scheme, rest) = endpoint.split_once("://").unwrap_or(("http", endpoint));
    let authority = rest.split(['/', '?', '#']).next().unwrap_or(rest);
    // no credentials (`user:pass@host`) in what is shown
    let host = authority.rsplit('@').next().unwrap_or(authority);
    let at = if host
        .rsplit_once(':')
        .is_some_and(|(_, p)| p.parse::<u16>().is_ok())
    {
        host.to_string()
    } else {
        let port = if scheme.eq_ignore_ascii_case("https") {
            443
        } else {
            80
        };
        format!("{host}:{port}")
    };
    match provider {
        "llamacpp" => format!(
            "is llama-server running on {at}? (start it with `llama-server -m MODEL.gguf --port PORT`, or set base_url in [provider.llamacpp])"
        ),
        "ollama" => format!(
            "is Ollama running on {at}? (start it with `ollama serve`, or set base_url in [provider.ollama])"
        ),
        _ => format!(
            "is the server running on {at} (and its host name right), and is base_url in [provider.{provider}] right?"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_names_split_at_the_first_slash() {
        assert_eq!(
            split_model("openrouter/anthropic/claude").unwrap(),
            ("openrouter", "anthropic/claude")
        );
        assert!(split_model("gpt-4").is_err());
        assert!(split_model("/x").is_err());
    }

    #[test]
    fn errors_say_what_to_check() {
        let mut e = ProviderError::new(FaultKind::Auth, "HTTP 401 unauthorized: Incorrect API key");
        e.status = Some(401);
        let m = describe(
            e.clone(),
            "http://h/v1/chat/completions",
            "openai",
            Some("OPENAI_API_KEY"),
        )
        .message;
        assert_eq!(
            m,
            "HTTP 401 unauthorized: Incorrect API key; check the API key in the environment variable OPENAI_API_KEY (provider \"openai\")"
        );
        let m = describe(e, "http://h/v1/chat/completions", "local", None).message;
        assert!(m.contains("set api_key_env in [provider.local]"), "{m}");

        let mut e = ProviderError::new(FaultKind::BadRequest, "HTTP 404 not found: no such model");
        e.status = Some(404);
        let m = describe(e, "http://h/v1/chat/completions", "p", None).message;
        assert_eq!(
            m,
            "HTTP 404 not found: no such model (POST http://h/v1/chat/completions); check base_url in [provider.p] and the model name"
        );

        let mut e = ProviderError::new(
            FaultKind::Network,
            "connection failed: tcp connect error: Connection refused",
        );
        e.unreachable = true;
        let m = describe(
            e.clone(),
            "http://127.0.0.1:1/v1/chat/completions",
            "p",
            None,
        )
        .message;
        assert!(
            m.starts_with("cannot reach http://127.0.0.1:1/v1/chat/completions: connection failed"),
            "{m}"
        );
        assert!(
            m.ends_with("is the server running on 127.0.0.1:1 (and its host name right), and is base_url in [provider.p] right?"),
            "{m}"
        );
        let m = describe(
            e.clone(),
            "http://127.0.0.1:8080/v1/chat/completions",
            "llamacpp",
            None,
        )
        .message;
        assert!(
            m.contains("is llama-server running on 127.0.0.1:8080?"),
            "{m}"
        );
        let m = describe(e.clone(), "http://localhost:11434/v1/x", "ollama", None).message;
        assert!(m.contains("is Ollama running on localhost:11434?"), "{m}");
        // Decided by the flag, not the words: a cut stream is not "cannot reach".
        e.unreachable = false;
        assert_eq!(describe(e.clone(), "x", "p", None), e);

        // Others are left as they are.
        let e = ProviderError::new(FaultKind::Server, "HTTP 500 server error");
        assert_eq!(describe(e.clone(), "x", "p", Some("K")), e);
    }

    #[test]
    fn missing_key_names_the_variable_not_a_value() {
        let mut config = Config::default();
        config.provider.insert(
            "p".into(),
            pith_config::ProviderConfig {
                kind: ProviderKind::Openai,
                base_url: "http://127.0.0.1:1/v1".into(),
                api_key_env: Some("PITH_TEST_SURELY_UNSET_KEY".into()),
                headers: Default::default(),
                ..Default::default()
            },
        );
        let err = build(&config, "p/m").err().unwrap().to_string();
        assert!(err.contains("PITH_TEST_SURELY_UNSET_KEY"), "{err}");
        let err = build(&config, "q/m").err().unwrap().to_string();
        assert!(err.contains("unknown provider \"q\""), "{err}");
    }
}
