//! Where a context window figure came from (`Event::ContextWindow`), stored and sent as the
//! text it always was.

use serde::{Deserialize, Serialize};

/// Where the engine learnt a model's context window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum WindowSource {
    /// An overflow error stated it (`server error`).
    ServerError,
    /// The size of a request the server refused as too long (`rejected request`): an upper
    /// bound of the real window.
    RejectedRequest,
    /// The local server said so when asked at start: what was asked, as the probe named it
    /// (`llama.cpp http://…/props`, `Ollama http://…/api/ps`, …).
    Server(String),
}

impl WindowSource {
    /// The text it is stored, sent and shown as.
    pub fn as_str(&self) -> &str {
        match self {
            WindowSource::ServerError => "server error",
            WindowSource::RejectedRequest => "rejected request",
            WindowSource::Server(asked) => asked,
        }
    }
}

impl From<String> for WindowSource {
    fn from(text: String) -> WindowSource {
        match text.as_str() {
            "server error" => WindowSource::ServerError,
            "rejected request" => WindowSource::RejectedRequest,
            _ => WindowSource::Server(text),
        }
    }
}

impl From<WindowSource> for String {
    fn from(source: WindowSource) -> String {
        match source {
            WindowSource::Server(asked) => asked,
            other => other.as_str().to_string(),
        }
    }
}

impl std::fmt::Display for WindowSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_are_the_texts_they_were() {
        for (source, text) in [
            (WindowSource::ServerError, "server error"),
            (WindowSource::RejectedRequest, "rejected request"),
            (
                WindowSource::Server("llama.cpp http://127.0.0.1:8080/props".into()),
                "llama.cpp http://127.0.0.1:8080/props",
            ),
        ] {
            let json = serde_json::to_value(&source).unwrap();
            assert_eq!(json, serde_json::json!(text));
            assert_eq!(
                serde_json::from_value::<WindowSource>(json).unwrap(),
                source
            );
            assert_eq!(source.to_string(), text);
        }
    }
}
