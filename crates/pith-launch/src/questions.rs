//! The questions asked before an engine starts, decided here once for every front end
//! (ARCHITECTURE.md §1): may the workspace's `pith.toml` set what it sets
//! ([`Setup::trust_question`]), which model a new session starts with when none is named
//! ([`Setup::first_model`]), and whether its provider's key is missing ([`Setup::missing_key`]).
//! They are asked in that order: trusting the workspace loads its configuration again, which
//! may name the model, whose provider decides the key. Each front end renders them in its
//! medium: the TUI's modals, `pith run`'s warnings and errors, the editor's permission request.

use pith_config::known::KNOWN_PROVIDERS;
use pith_config::load::Trust;
use pith_protocol::launch::{KeyNeed, LocalServer, TrustQuestion};

use crate::first_run::{self, LocalServers};
use crate::setup::Setup;

/// What a new session's model is when no one named it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FirstModel {
    /// `--model`, the configuration or the session resumed names it: nothing to decide.
    Named,
    /// The environment implies one ([`first_run::implied_model`]); `notice` says why.
    Implied {
        model: String,
        notice: String,
        /// A local server found by probing that the user never confirmed: asked before the
        /// first prompt goes to it ([`Setup::remember_local`] keeps a yes).
        ask: Option<LocalServer>,
    },
    /// Nothing implies one: a key pasted for one of [`Setup::hosted_providers`] gives one
    /// ([`Setup::model_for_key`]); without it there is no model.
    Unknown,
}

impl Setup {
    /// The question to ask before starting, when the workspace's `pith.toml` holds settings that
    /// need trust and the user has never answered for this directory.
    pub fn trust_question(&self) -> Option<TrustQuestion> {
        let t = &self.loaded.workspace_trust;
        let pending: Vec<String> = t
            .ignored
            .iter()
            .filter(|k| k.as_str() != "trusted_directories")
            .cloned()
            .collect();
        (self.trust == Trust::Unknown && !t.trusted && !pending.is_empty()).then(|| TrustQuestion {
            workspace: self.workspace.clone(),
            ignored: pending,
        })
    }

    /// The model a new session starts with when `flag`, the configuration and a resumed session
    /// name none: the same rule for every front end. Only the TUI, which asks before using
    /// one, `probe`s for a local server.
    pub async fn first_model(&self, flag: Option<&str>, resuming: bool, probe: bool) -> FirstModel {
        if flag.is_some() || self.config().model.is_some() || resuming {
            return FirstModel::Named;
        }
        let Some(implied) = first_run::implied_model(probe).await else {
            return FirstModel::Unknown;
        };
        let notice = first_run::implied_notice(&implied.model, implied.why);
        let ask = implied
            .server
            .filter(|url| !LocalServers::new(&self.data_dir).confirmed(url))
            .map(|url| LocalServer {
                url: url.to_string(),
                model: implied.model.clone(),
            });
        FirstModel::Implied {
            model: implied.model,
            notice,
            ask,
        }
    }

    /// The user agreed to send prompts to the local server at `url`: not asked again.
    pub fn remember_local(&self, url: &str) {
        if let Err(e) = LocalServers::new(&self.data_dir).confirm(url) {
            tracing::warn!("cannot record the local server {url}: {e}");
        }
    }

    /// The built-in hosted providers a first run can use with just a key, in order of preference.
    pub fn hosted_providers(&self) -> Vec<KeyNeed> {
        KNOWN_PROVIDERS
            .iter()
            .filter(|k| k.first_run_model.is_some())
            .filter_map(|k| {
                let pc = self.config().provider.get(k.name)?;
                Some(KeyNeed {
                    provider: k.name.to_string(),
                    var: pc.api_key_env.clone()?,
                    base_url: pc.base_url.clone(),
                })
            })
            .collect()
    }

    /// Every provider that takes a key from a variable (`/login` offers them): the first-run
    /// dialog's order (the built-in providers as listed there), then the others.
    pub fn key_providers(&self) -> Vec<KeyNeed> {
        let mut providers: Vec<KeyNeed> = (self.config().provider.iter())
            .filter_map(|(name, pc)| {
                let var = pc.api_key_env.clone().filter(|v| !v.is_empty())?;
                Some(KeyNeed {
                    provider: name.clone(),
                    var,
                    base_url: pc.base_url.clone(),
                })
            })
            .collect();
        let rank = |name: &str| {
            KNOWN_PROVIDERS
                .iter()
                .position(|k| k.name == name)
                .unwrap_or(usize::MAX)
        };
        providers.sort_by_key(|n| rank(&n.provider));
        providers
    }

    /// The model a first run uses once a key for `provider` was stored, with the notice saying
    /// so; `None` when the provider has no first-run model.
    pub fn model_for_key(provider: &str) -> Option<(String, String)> {
        let m = KNOWN_PROVIDERS
            .iter()
            .find(|p| p.name == provider)
            .and_then(|p| p.first_run_model)?;
        Some((
            m.to_string(),
            format!(
                "Stored your {provider} key; using {m}. Set model = \"provider/model\" in the config to choose another."
            ),
        ))
    }

    /// The provider of `model` when it takes a key from a variable that is not set and none is
    /// stored for it: the user may be asked for one.
    pub fn missing_key(&self, model: &str) -> Option<KeyNeed> {
        let (provider, _) = pith_protocol::model_name::split(model)?;
        let pc = self.config().provider.get(provider)?;
        let var = pc.api_key_env.clone()?;
        if pith_secrets::env_var(&var).is_some_and(|v| !v.trim().is_empty()) {
            return None;
        }
        // a key stored for another address is explained by the provider's error, not asked again
        if pith_auth::stored_key(provider, &pc.base_url) != Ok(None) {
            return None;
        }
        Some(KeyNeed {
            provider: provider.to_string(),
            var,
            base_url: pc.base_url.clone(),
        })
    }
}

#[cfg(test)]
#[path = "questions_tests.rs"]
mod tests;
