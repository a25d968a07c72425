//! API keys from inside the TUI, as Claude Code users expect: `/login [provider]` opens the key
//! dialog in place, and so does `/model` for a provider that has no key — instead of a choice
//! that fails, or an error sending the user out to `pith auth login`. The key is stored as
//! `pith auth login` stores it, and the model asked for is switched to.

use std::collections::BTreeSet;
use std::sync::Arc;

use crossterm::event::KeyEvent;
use ratatui::Frame;
use ratatui::layout::Rect;

use super::component::{Component, Handled};
use super::key_prompt::{KeyAnswer, KeyScreen};
use super::keymap::Keymap;
use pith_protocol::launch::KeyNeed;

/// Stores a key for a provider (`Err`: why it was not stored).
pub type StoreKey = Arc<dyn Fn(&str, &str) -> Result<(), KeyNotStored> + Send + Sync>;

/// Why a key was not stored (said under the key field).
#[derive(Debug, thiserror::Error)]
pub enum KeyNotStored {
    /// This TUI was started without a way to store keys.
    #[error("keys cannot be stored from here; run `pith auth login`")]
    NoStore,
    /// The key or its provider was refused, or the credentials file could not be written (the
    /// reason with its causes, as the binary words it).
    #[error("{0}")]
    Refused(String),
    /// Stored, but the credentials file could not be read back.
    #[error("{0}")]
    Unreadable(String),
}

/// What the TUI knows of API keys.
#[derive(Clone, Default)]
pub struct KeyAccess {
    /// Every configured provider that takes a key, in the config's order.
    pub providers: Vec<KeyNeed>,
    /// Those of them with no key now (neither in the environment nor stored).
    pub missing: BTreeSet<String>,
    /// `None`: keys cannot be stored from here.
    pub store: Option<StoreKey>,
}

impl std::fmt::Debug for KeyAccess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyAccess")
            .field("providers", &self.providers)
            .field("missing", &self.missing)
            .finish_non_exhaustive()
    }
}

impl KeyAccess {
    /// The provider of `model` ("provider/model") when it has no key now.
    pub fn missing_for(&self, model: &str) -> Option<&KeyNeed> {
        let provider = pith_protocol::model_name::provider(model);
        self.providers
            .iter()
            .find(|n| n.provider == provider && self.missing.contains(provider))
    }
}

/// The key dialog on screen, and the model to switch to once a key is stored.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyDialog {
    screen: KeyScreen,
    then_model: Option<String>,
}

impl KeyDialog {
    /// The dialog for `choices` (the first the default), opened from the running TUI.
    pub(crate) fn new(choices: Vec<KeyNeed>, then_model: Option<String>) -> Self {
        let mut screen = KeyScreen::new(choices);
        screen.in_app = true;
        KeyDialog { screen, then_model }
    }

    /// Puts the cursor on choice `i` (ignored past the end).
    pub(crate) fn select(&mut self, i: usize) {
        if i < self.screen.choices.len() {
            self.screen.selected = i;
        }
    }

    /// The providers offered, in order.
    pub fn choices(&self) -> &[KeyNeed] {
        &self.screen.choices
    }

    /// Text pasted into the key field.
    pub(crate) fn paste(&mut self, text: &str) {
        self.screen.paste(text);
    }

    /// The provider chosen.
    pub(crate) fn provider(&self) -> Option<String> {
        self.screen.need().map(|n| n.provider.clone())
    }

    /// The key was stored: the model to switch to now, if one waited for it.
    pub(crate) fn stored(&mut self) -> Option<String> {
        self.then_model.take()
    }

    /// The key was not stored: why, under an emptied field.
    pub(crate) fn refused(&mut self, why: String) {
        self.screen.error = Some(why);
        self.screen.clear_input();
    }
}

impl Component for KeyDialog {
    /// The key typed, to store.
    type Outcome = String;
    type Context<'a> = ();

    fn on_key(&mut self, k: KeyEvent, _keymap: &Keymap) -> Handled<String> {
        match self.screen.key(k.code, k.modifiers) {
            None => Handled::Consumed,
            Some(KeyAnswer::Skip | KeyAnswer::Quit) => Handled::Closed,
            Some(KeyAnswer::Submit(key)) => Handled::Done(key),
        }
    }

    /// The dialog's box, in the middle of the whole frame (the helper the screens before the
    /// TUI use), whatever `area` is.
    fn render(&mut self, frame: &mut Frame, _area: Rect, _: ()) {
        self.screen.draw(frame);
    }
}
