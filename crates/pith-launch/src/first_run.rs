//! First run: no model configured. Find one the user can use right away: an API key in the
//! environment, or a local OpenAI-compatible server (Ollama on 11434, llama.cpp on 8080).

use std::time::Duration;

use pith_config::known::{KNOWN_PROVIDERS, KnownProvider};

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

/// Where the probe found a model: the server's address, and its model.
pub const OLLAMA_URL: &str = "http://127.0.0.1:11434";
pub const LLAMACPP_URL: &str = "http://127.0.0.1:8080";

/// Asks local servers which models they serve: Ollama (`/api/tags`), llama.cpp (`/v1/models`).
/// Returns the server's address and the model.
pub async fn probe_local() -> Option<(&'static str, String)> {
    let client = reqwest::Client::builder()
        .timeout(PROBE_TIMEOUT)
        .no_proxy()
        .build()
        .ok()?;
    let ollama = async {
        let v: serde_json::Value = client
            .get(format!("{OLLAMA_URL}/api/tags"))
            .send()
            .await
            .ok()?
            .json()
            .await
            .ok()?;
        let name = v["models"][0]["name"].as_str()?;
        Some((OLLAMA_URL, format!("ollama/{name}")))
    };
    let llamacpp = async {
        let v: serde_json::Value = client
            .get(format!("{LLAMACPP_URL}/v1/models"))
            .send()
            .await
            .ok()?
            .json()
            .await
            .ok()?;
        let id = v["data"][0]["id"].as_str()?;
        Some((LLAMACPP_URL, format!("llamacpp/{id}")))
    };
    let (a, b) = tokio::join!(ollama, llamacpp);
    a.or(b)
}

/// The model [`implied_model`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Implied {
    pub model: String,
    /// Why, for the notice.
    pub why: &'static str,
    /// A local server found by probing (its address): the user confirms it before the first
    /// prompt goes to it.
    pub server: Option<&'static str>,
}

/// The model to use when none is given, configured or resumed — one rule for every front end:
/// the first hosted provider whose key is set (in the environment or stored by `pith auth
/// login`), else, when `probe` (the TUI, which asks before using it), a local server that
/// answers. `pith run` and the editor do not probe: whatever listens on a local port would get
/// the prompt unasked; they use a local server when it is named (`--model`, the config).
pub async fn implied_model(probe: bool) -> Option<Implied> {
    let key = |k: &str| pith_secrets::env_var(k).or_else(|| pith_auth::stored_for_env(k));
    if let Some(model) = model_from_keys(key) {
        return Some(Implied {
            model,
            why: "its API key is set",
            server: None,
        });
    }
    if !probe {
        return None;
    }
    let (server, model) = probe_local().await?;
    Some(Implied {
        model,
        why: "a local server answers",
        server: Some(server),
    })
}

/// The local servers the user agreed to send prompts to (`<data dir>/local-servers.json`, a
/// list of addresses): each found by probing is confirmed once.
pub struct LocalServers {
    path: std::path::PathBuf,
}

impl LocalServers {
    pub fn new(data_dir: &std::path::Path) -> LocalServers {
        LocalServers {
            path: data_dir.join("local-servers.json"),
        }
    }

    fn read(&self) -> Vec<String> {
        std::fs::read(&self.path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    }

    pub fn confirmed(&self, url: &str) -> bool {
        self.read().iter().any(|u| u == url)
    }

    pub fn confirm(&self, url: &str) -> std::io::Result<()> {
        let mut all = self.read();
        if !all.iter().any(|u| u == url) {
            all.push(url.to_string());
        }
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let tmp = self
            .path
            .with_extension(format!("json.{}", std::process::id()));
        std::fs::write(&tmp, serde_json::to_vec_pretty(&all)?)?;
        std::fs::rename(&tmp, &self.path)
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
