//! The model a session talks to: its provider, limits, retries and timeouts, built from the
//! configuration; and the one conversion of stored messages to wire messages.

use std::sync::Arc;

use crate::factory::ModelError;
use pith_config::catalog;
use pith_context::overflow::Limits;
use pith_protocol::llm::ChatMessage;
use pith_protocol::message::Message;
use pith_provider::retry::RetryPolicy;
use pith_provider::{self, Provider};

/// The model a session talks to.
#[derive(Clone)]
pub(crate) struct ModelSetup {
    /// "provider/model".
    pub name: String,
    pub provider: Arc<dyn Provider>,
    /// The id the provider knows.
    pub model_id: String,
    pub info: pith_config::ModelConfig,
    pub limits: Limits,
    /// Retries of its provider (`max_retries`, `max_retry_wait_secs`).
    pub retry: RetryPolicy,
    /// Its provider's timeouts, for saying what pith waits for.
    pub timeouts: pith_provider::transport::Timeouts,
    /// The window is a guess (no config, not in the catalog): a local server is asked, and a
    /// window learned from a server replaces it.
    pub window_guessed: bool,
    /// Its server is on this machine or the local network.
    pub local: bool,
}

impl ModelSetup {
    pub(crate) fn build(
        config: &pith_config::Config,
        name: &str,
    ) -> Result<(Self, Option<String>), ModelError> {
        let (provider, model_id) = crate::factory::build(config, name)?;
        let pc = crate::factory::split_model(name)
            .ok()
            .and_then(|(p, _)| config.provider.get(p));
        let retry = RetryPolicy::for_provider(pc);
        let timeouts = pc
            .map(pith_provider::transport::Timeouts::from_config)
            .unwrap_or_default();
        let local = pc.is_some_and(|p| pith_provider::openai::is_local(&p.base_url));
        let resolved = catalog::resolve(config, name);
        let info = resolved.info;
        let limits = Limits::from(&info);
        Ok((
            ModelSetup {
                name: name.to_string(),
                provider,
                model_id,
                info,
                limits,
                retry,
                timeouts,
                window_guessed: resolved.window_guessed,
                local,
            },
            resolved.warning,
        ))
    }
}

/// Converts messages already in model order to wire messages (ARCHITECTURE.md §4.2).
pub(crate) fn to_wire(messages: &[Message]) -> Vec<ChatMessage> {
    let refs: Vec<&Message> = messages.iter().collect();
    pith_context::view::convert(&refs, &mut |_, _| None)
}
