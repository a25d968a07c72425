//! One plain request to the configured model (no tools): the baseline's summary and each probe
//! question.

use std::sync::Arc;

use futures_util::StreamExt as _;
use pith_provider::{ChatMessage, ChatRequest, Provider, ProviderError, StreamEvent, UserContent};

/// The configured model, as `pith run` builds it.
pub(super) struct Model {
    /// `provider/model`.
    pub(super) name: String,
    provider: Arc<dyn Provider>,
    model_id: String,
    /// Its window and output limit (config, else catalog).
    pub(super) info: pith_config::ModelConfig,
}

impl Model {
    /// The model `name` of `config`; a window neither the config nor the catalog knows is asked
    /// of a local server (llama.cpp, Ollama), so a probe's context can be fitted to it.
    pub(super) async fn build(config: &pith_config::Config, name: &str) -> anyhow::Result<Model> {
        let (provider, model_id) = pith_engine::factory::build(config, name)?;
        let resolved = pith_config::catalog::resolve(config, name);
        let mut info = resolved.info;
        if (resolved.window_guessed || info.context == 0)
            && let Some((window, _)) = provider.probe_window(&model_id).await
        {
            info.context = window;
        }
        Ok(Model {
            name: name.to_string(),
            provider,
            model_id,
            info,
        })
    }

    /// The answer to `user` under `system`, at most `cap` tokens long.
    pub(super) async fn ask(
        &self,
        system: &str,
        user: String,
        cap: u32,
    ) -> Result<String, ProviderError> {
        let request = ChatRequest {
            model: self.model_id.clone(),
            system: vec![system.to_string()],
            messages: vec![ChatMessage::User {
                content: vec![UserContent::Text { text: user }],
            }],
            tools: Vec::new(),
            max_tokens: Some(cap),
            temperature: None,
            thinking_budget: None,
            reasoning_effort: None,
        };
        let mut stream = self.provider.stream(&request).await?;
        let mut out = String::new();
        while let Some(event) = stream.next().await {
            if let StreamEvent::TextDelta(t) = event? {
                out.push_str(&t);
            }
        }
        Ok(out)
    }
}
