//! `/login` in the router: opening the key dialog (also for `/model` with a provider that has no
//! key) and storing the key it returns.

use crate::login::{KeyDialog, KeyNotStored};
use crate::transcript::NoticeLevel;
use pith_protocol::launch::KeyNeed;

use super::{App, Popup};

impl App {
    /// `/login [provider]`: the dialog for that provider, else for every provider that takes a
    /// key, in the first-run dialog's order, the first without one selected.
    pub(crate) fn login(&mut self, provider: Option<String>) {
        let mut choices: Vec<KeyNeed> = self.keys.providers.clone();
        if let Some(p) = provider.as_deref() {
            choices.retain(|n| n.provider == p);
            if choices.is_empty() {
                let known: Vec<&str> = self
                    .keys
                    .providers
                    .iter()
                    .map(|n| n.provider.as_str())
                    .collect();
                self.transcript.notice(
                    NoticeLevel::Error,
                    format!(
                        "/login: no provider \"{p}\" takes a key here (known: {})",
                        known.join(", ")
                    ),
                );
                return;
            }
        }
        if choices.is_empty() {
            self.transcript.notice(
                NoticeLevel::Info,
                "/login: no configured provider takes an API key".to_string(),
            );
            return;
        }
        // the order of the first-run dialog (one order everywhere); the cursor on the first
        // provider that has no key
        let missing = &self.keys.missing;
        let first_missing = choices
            .iter()
            .position(|n| missing.contains(&n.provider))
            .unwrap_or(0);
        self.open_key_dialog(choices, None);
        if let Some(Popup::Key(dialog)) = &mut self.popup {
            dialog.select(first_missing);
        }
    }

    /// Asks for the key `model` needs before switching to it; true when it asked.
    pub(crate) fn ask_key_for(&mut self, model: &str) -> bool {
        let Some(need) = self.keys.missing_for(model).cloned() else {
            return false;
        };
        self.open_key_dialog(vec![need], Some(model.to_string()));
        true
    }

    fn open_key_dialog(&mut self, choices: Vec<KeyNeed>, then_model: Option<String>) {
        self.popup = Some(Popup::Key(KeyDialog::new(choices, then_model)));
    }

    /// The key typed in the dialog: stored, or refused with the reason in the dialog.
    pub(crate) fn store_key(&mut self, key: &str) {
        let Some(Popup::Key(dialog)) = &mut self.popup else {
            return;
        };
        let Some(provider) = dialog.provider() else {
            return;
        };
        let stored = match &self.keys.store {
            Some(store) => store(&provider, key),
            None => Err(KeyNotStored::NoStore),
        };
        if let Err(e) = stored {
            dialog.refused(e.to_string());
            return;
        }
        let then_model = dialog.stored();
        self.popup = None;
        self.keys.missing.remove(&provider);
        self.transcript.notice(
            NoticeLevel::Info,
            format!("Stored your {provider} key (pith auth list shows it)."),
        );
        if let Some(model) = then_model {
            self.set_model(model);
        }
    }
}
