//! First run: no model configured. Find one the user can use right away: an API key in the
//! environment, or a local OpenAI-compatible server (Ollama on 11434, llama.cpp on 8080).

use std::time::Duration;

use crate::config::known::{KNOWN_PROVIDERS, KnownProvider};

const PROBE_TIMEOUT: Duration = Duration::from_millis(400);

/// The first known provider whose key is set (`env` looks a variable up), with its model.
fn by_key(env: impl Fn(&str) -> Option<String>) -> Option<(&'static KnownProvider, &'static str)> {
    KNOWN_PROVIDERS.iter().find_map(|p| {
        let key = p.key_env?;
        let model = p.first_run_model?;
        env(key)
            .is_some_and(|v| !v.trim().is_empty())
            .then_some((p, model))
    })
}

/// A model from the environment's API keys (`env` looks a variable up).
pub fn model_from_keys(env: impl Fn(&str) -> Option<String>) -> Option<String> {
    by_key(env).map(|(_, model)| model.to_string())
}

/// What a user with no configured provider should do (shown in the TUI): with a known
/// provider's key set, the config lines that use it; otherwise a local-server example.
pub fn hint(env: impl Fn(&str) -> Option<String>) -> String {
    let config_path = "~/.config/pith/config.toml (or pith.toml in the workspace)";
    if let Some((p, model)) = by_key(env) {
        let key = p.key_env.unwrap_or_default();
        let kind = p.kind.as_str();
        return format!(
            "No model is configured. {key} is set — add to {config_path}:\n\
             model = \"{model}\"\n\
             [provider.{name}]\n\
             kind = \"{kind}\"\n\
             base_url = \"{base_url}\"\n\
             api_key_env = \"{key}\"",
            name = p.name,
            base_url = p.base_url,
        );
    }
    let keys: Vec<&str> = KNOWN_PROVIDERS.iter().filter_map(|p| p.key_env).collect();
    format!(
        "No model is configured and no API key was found. Set {}, or point pith at a local \
         server — add to {config_path}:\n\
         model = \"ollama/qwen2.5-coder:14b\"\n\
         [provider.ollama]\n\
         kind = \"openai\"\n\
         base_url = \"http://127.0.0.1:11434/v1\"   # llama.cpp: http://127.0.0.1:8080/v1\n\
         [models.\"ollama/qwen2.5-coder:14b\"]\n\
         context = 32768\n\
         output = 8192",
        keys.join(", ")
    )
}

/// Asks local servers which models they serve: Ollama (`/api/tags`), llama.cpp (`/v1/models`).
pub async fn probe_local() -> Option<String> {
    let client = reqwest::Client::builder()
        .timeout(PROBE_TIMEOUT)
        .no_proxy()
        .build()
        .ok()?;
    let ollama = async {
        let v: serde_json::Value = client
            .get("http://127.0.0.1:11434/api/tags")
            .send()
            .await
            .ok()?
            .json()
            .await
            .ok()?;
        let name = v["models"][0]["name"].as_str()?;
        Some(format!("ollama/{name}"))
    };
    let llamacpp = async {
        let v: serde_json::Value = client
            .get("http://127.0.0.1:8080/v1/models")
            .send()
            .await
            .ok()?
            .json()
            .await
            .ok()?;
        let id = v["data"][0]["id"].as_str()?;
        Some(format!("llamacpp/{id}"))
    };
    let (a, b) = tokio::join!(ollama, llamacpp);
    a.or(b)
}

/// The model to use when none is given, configured or resumed — one rule for the TUI and
/// `pith run`: the first hosted provider whose key is set (in the environment or stored by
/// `pith auth login`), else a local server that answers. With the reason, for the notice.
pub async fn implied_model() -> Option<(String, &'static str)> {
    let key = |k: &str| crate::secrets::env_var(k).or_else(|| crate::auth::stored_for_env(k));
    match model_from_keys(key) {
        Some(m) => Some((m, "its API key is set")),
        None => probe_local().await.map(|m| (m, "a local server answers")),
    }
}

/// What the user is told when [`implied_model`] chose the model.
pub fn implied_notice(model: &str, why: &str) -> String {
    format!(
        "No model is configured; using {model} because {why}. Set model = \"provider/model\" in the config to choose another."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_pick_a_model_in_order() {
        let env = |k: &str| (k == "OPENAI_API_KEY").then(|| "sk-x".to_string());
        assert_eq!(model_from_keys(env).as_deref(), Some("openai/gpt-4.1"));
        let both =
            |k: &str| matches!(k, "OPENAI_API_KEY" | "ANTHROPIC_API_KEY").then(|| "k".to_string());
        assert_eq!(
            model_from_keys(both).as_deref(),
            Some("anthropic/claude-sonnet-4-5")
        );
        let empty = |k: &str| (k == "OPENAI_API_KEY").then(|| " ".to_string());
        assert_eq!(model_from_keys(empty), None);
    }

    #[test]
    fn first_run_detection() {
        let none = |_: &str| None;
        let hint = hint(none);
        assert!(hint.contains("11434") && hint.contains("8080"), "{hint}");
        assert!(hint.starts_with("No model is configured"), "{hint}");
        let openai = |k: &str| (k == "OPENAI_API_KEY").then(|| "sk-x".to_string());
        assert!(super::hint(openai).contains("model = \"openai/"));
        let anthropic = |k: &str| (k == "ANTHROPIC_API_KEY").then(|| "sk-ant".to_string());
        assert!(super::hint(anthropic).contains("model = \"anthropic/"));
        let router = |k: &str| (k == "OPENROUTER_API_KEY").then(|| "or".to_string());
        assert!(super::hint(router).contains("openrouter.ai"));
        let blank = |k: &str| (k == "OPENAI_API_KEY").then(String::new);
        assert!(super::hint(blank).contains("no API key"));
    }
}
