//! Building a provider for "provider/model" from the config.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};

use super::Provider;
use super::anthropic::AnthropicProvider;
use super::openai::OpenAiProvider;
use crate::config::{Config, ProviderKind};

/// Splits "provider/model" (the model id may itself contain slashes: "openrouter/anthropic/x").
pub fn split_model(name: &str) -> anyhow::Result<(&str, &str)> {
    match name.split_once('/') {
        Some((p, m)) if !p.is_empty() && !m.is_empty() => Ok((p, m)),
        _ => bail!("model \"{name}\" must be written provider/model, e.g. openai/gpt-4.1"),
    }
}

/// The provider for `name` and the model id to send it.
pub fn build(config: &Config, name: &str) -> anyhow::Result<(Arc<dyn Provider>, String)> {
    let (provider_name, model_id) = split_model(name)?;
    let Some(pc) = config.provider.get(provider_name) else {
        let known: Vec<&str> = config.provider.keys().map(String::as_str).collect();
        bail!(
            "unknown provider \"{provider_name}\" in model \"{name}\" (configured: {}); add a [provider.{provider_name}] section",
            known.join(", ")
        );
    };
    let api_key = match &pc.api_key_env {
        Some(var) => match std::env::var(var) {
            Ok(v) if !v.trim().is_empty() => Some(v),
            _ => bail!(
                "provider \"{provider_name}\" needs an API key: set the environment variable {var}"
            ),
        },
        None => None,
    };
    if let Some(key) = &api_key {
        crate::secrets::register(key);
    }
    for (header, value) in &pc.headers {
        if crate::secrets::is_secret_name(header) {
            crate::secrets::register(value);
        }
    }
    let timeout = pc.timeout_secs.map(Duration::from_secs);
    let provider: Arc<dyn Provider> = match pc.kind {
        ProviderKind::Openai => {
            let p = OpenAiProvider::new(&pc.base_url, api_key, pc.headers.clone(), timeout)
                .with_context(|| format!("provider \"{provider_name}\""))?;
            Arc::new(match pc.output_cap {
                Some(field) => p.with_output_cap(field),
                None => p,
            })
        }
        ProviderKind::Anthropic => Arc::new(
            AnthropicProvider::new(&pc.base_url, api_key, pc.headers.clone(), timeout)
                .with_context(|| format!("provider \"{provider_name}\""))?,
        ),
    };
    Ok((provider, model_id.to_string()))
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
    fn missing_key_names_the_variable_not_a_value() {
        let mut config = Config::default();
        config.provider.insert(
            "p".into(),
            crate::config::ProviderConfig {
                kind: ProviderKind::Openai,
                base_url: "http://127.0.0.1:1/v1".into(),
                api_key_env: Some("PITH_TEST_SURELY_UNSET_KEY".into()),
                headers: Default::default(),
                max_retries: None,
                timeout_secs: None,
                output_cap: None,
            },
        );
        let err = build(&config, "p/m").err().unwrap().to_string();
        assert!(err.contains("PITH_TEST_SURELY_UNSET_KEY"), "{err}");
        let err = build(&config, "q/m").err().unwrap().to_string();
        assert!(err.contains("unknown provider \"q\""), "{err}");
    }
}
