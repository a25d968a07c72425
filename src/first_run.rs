//! First run: no model configured. Find one the user can use right away: an API key in the
//! environment, or a local OpenAI-compatible server (Ollama on 11434, llama.cpp on 8080).

use std::time::Duration;

/// Models picked when only an API key is found.
const BY_KEY: &[(&str, &str)] = &[
    ("ANTHROPIC_API_KEY", "anthropic/claude-sonnet-4-5"),
    ("OPENAI_API_KEY", "openai/gpt-4.1"),
    (
        "OPENROUTER_API_KEY",
        "openrouter/anthropic/claude-sonnet-4.5",
    ),
];

const PROBE_TIMEOUT: Duration = Duration::from_millis(400);

/// A model from the environment's API keys (`env` looks a variable up).
pub fn model_from_keys(env: impl Fn(&str) -> Option<String>) -> Option<String> {
    BY_KEY
        .iter()
        .find(|(var, _)| env(var).is_some_and(|v| !v.trim().is_empty()))
        .map(|(_, model)| model.to_string())
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
}
