//! `[websearch]`: the `websearch` tool's backend, off until configured. A backend is a search
//! service the user names (`searxng`, `brave`, `tavily`), at its usual address or `url`, with
//! its key read from the variable `key_env` only (never written in a file). `hosted = true`
//! uses the provider's own search instead where the wire offers one (OpenAI Responses,
//! Anthropic). An untrusted workspace file sets none of it (`load/trust.rs`): it would send
//! the model's queries somewhere.

use serde::{Deserialize, Serialize};

/// A search service the `websearch` tool can ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SearchBackend {
    /// A SearXNG instance (`/search?q=…&format=json`; its JSON output must be enabled).
    Searxng,
    /// The Brave Search API (`X-Subscription-Token`).
    Brave,
    /// The Tavily search API (a bearer key).
    Tavily,
}

impl SearchBackend {
    pub fn as_str(self) -> &'static str {
        match self {
            SearchBackend::Searxng => "searxng",
            SearchBackend::Brave => "brave",
            SearchBackend::Tavily => "tavily",
        }
    }

    /// Where the service answers when `url` is not given (`None`: SearXNG has no public one).
    pub fn default_url(self) -> Option<&'static str> {
        match self {
            SearchBackend::Searxng => None,
            SearchBackend::Brave => Some("https://api.search.brave.com"),
            SearchBackend::Tavily => Some("https://api.tavily.com"),
        }
    }

    /// Whether it needs a key.
    pub fn needs_key(self) -> bool {
        !matches!(self, SearchBackend::Searxng)
    }
}

/// `[websearch]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebsearchConfig {
    /// The search service; unset: no `websearch` tool (unless `hosted` and the wire has one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend: Option<SearchBackend>,
    /// The service's base URL (required for SearXNG; Brave and Tavily have their own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The environment variable holding the key (Brave, Tavily; optional for SearXNG, sent as
    /// a bearer token).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_env: Option<String>,
    /// Use the provider's hosted search where its wire offers one (OpenAI Responses
    /// `web_search`, Anthropic `web_search_20250305`) instead of `backend`.
    #[serde(default)]
    pub hosted: bool,
    /// Hits asked for and shown at most (1 to 20).
    #[serde(default = "default_max_results")]
    pub max_results: usize,
    /// Seconds a search may take (1 to 120).
    #[serde(default = "default_timeout")]
    pub timeout_secs: u64,
}

fn default_max_results() -> usize {
    8
}

fn default_timeout() -> u64 {
    15
}

impl Default for WebsearchConfig {
    fn default() -> Self {
        WebsearchConfig {
            backend: None,
            url: None,
            key_env: None,
            hosted: false,
            max_results: default_max_results(),
            timeout_secs: default_timeout(),
        }
    }
}

impl WebsearchConfig {
    /// The base URL of the configured backend: `url`, else the service's own.
    pub fn base_url(&self) -> Option<String> {
        let backend = self.backend?;
        self.url
            .clone()
            .or_else(|| backend.default_url().map(str::to_string))
    }

    /// What is wrong with it: the key it is about and the message.
    pub(crate) fn check(&self) -> Result<(), (&'static str, String)> {
        if !(1..=20).contains(&self.max_results) {
            return Err((
                "max_results",
                format!(
                    "websearch.max_results must be 1 to 20, got {}",
                    self.max_results
                ),
            ));
        }
        if !(1..=120).contains(&self.timeout_secs) {
            return Err((
                "timeout_secs",
                format!(
                    "websearch.timeout_secs must be 1 to 120, got {}",
                    self.timeout_secs
                ),
            ));
        }
        if let Some(url) = &self.url {
            let lower = url.trim().to_ascii_lowercase();
            if !(lower.starts_with("http://") || lower.starts_with("https://")) {
                return Err((
                    "url",
                    format!("websearch.url must be an http:// or https:// URL, got \"{url}\""),
                ));
            }
        }
        if self.key_env.as_deref().is_some_and(|k| k.trim().is_empty()) {
            return Err((
                "key_env",
                "websearch.key_env is empty: name the variable that holds the key".to_string(),
            ));
        }
        let Some(backend) = self.backend else {
            if self.url.is_some() || self.key_env.is_some() {
                return Err((
                    "backend",
                    "websearch.url and key_env need websearch.backend (\"searxng\", \"brave\" or \"tavily\")"
                        .to_string(),
                ));
            }
            return Ok(());
        };
        if self.base_url().is_none() {
            return Err((
                "url",
                format!(
                    "websearch.backend = \"{}\" needs websearch.url (the instance's address)",
                    backend.as_str()
                ),
            ));
        }
        if backend.needs_key() && self.key_env.is_none() {
            return Err((
                "key_env",
                format!(
                    "websearch.backend = \"{}\" needs websearch.key_env (the variable holding its key)",
                    backend.as_str()
                ),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> WebsearchConfig {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn off_by_default_and_each_backend_needs_what_it_needs() {
        let off = WebsearchConfig::default();
        assert_eq!(
            (off.backend, off.hosted, off.base_url()),
            (None, false, None)
        );
        assert!(off.check().is_ok());
        let brave = parse("backend = \"brave\"\nkey_env = \"BRAVE_API_KEY\"");
        assert!(brave.check().is_ok());
        assert_eq!(
            brave.base_url().as_deref(),
            Some("https://api.search.brave.com")
        );
        let bad = |text: &str, key: &str| {
            let (k, message) = parse(text).check().unwrap_err();
            assert_eq!(k, key, "{text}: {message}");
        };
        bad("backend = \"brave\"", "key_env");
        bad("backend = \"tavily\"", "key_env");
        bad("backend = \"searxng\"", "url");
        bad("url = \"http://127.0.0.1:8888\"", "backend");
        bad("backend = \"searxng\"\nurl = \"file:///etc/passwd\"", "url");
        bad(
            "backend = \"searxng\"\nurl = \"http://s\"\nmax_results = 0",
            "max_results",
        );
        bad(
            "backend = \"searxng\"\nurl = \"http://s\"\ntimeout_secs = 600",
            "timeout_secs",
        );
        let searx = parse("backend = \"searxng\"\nurl = \"http://127.0.0.1:8888/\"");
        assert!(searx.check().is_ok());
        assert!(toml::from_str::<WebsearchConfig>("backend = \"google\"").is_err());
        assert!(toml::from_str::<WebsearchConfig>("key = \"sk-123\"").is_err());
    }
}
