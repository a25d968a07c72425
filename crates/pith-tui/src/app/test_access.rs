//! What the tests read and set on the router directly, and nothing else may: the components'
//! state behind `App`'s private fields.

use std::path::PathBuf;

use crate::appearance::Appearance;
use crate::composer::Composer;
use crate::effects::Effect;
use crate::keymap::Keymap;
use crate::login::KeyAccess;
use crate::notify::Notifier;
use crate::status_bar::StatusBar;
use crate::subagents::Subagents;
use pith_commands::custom_commands::Commands;
use pith_protocol::message::Session;

use super::{App, Permissions, Popup};

impl App {
    pub(crate) fn composer(&self) -> &Composer {
        &self.composer
    }

    pub(crate) fn composer_mut(&mut self) -> &mut Composer {
        &mut self.composer
    }

    pub(crate) fn popup(&self) -> Option<&Popup> {
        self.popup.as_ref()
    }

    pub(crate) fn close_popup(&mut self) {
        self.popup = None;
    }

    pub(crate) fn effects(&self) -> &[Effect] {
        &self.effects
    }

    pub(crate) fn status(&self) -> &StatusBar {
        &self.status
    }

    pub(crate) fn status_mut(&mut self) -> &mut StatusBar {
        &mut self.status
    }

    pub(crate) fn forms(&self) -> &crate::elicit_form::Forms {
        &self.forms
    }

    pub(crate) fn permissions(&self) -> &Permissions {
        &self.permissions
    }

    pub(crate) fn permissions_mut(&mut self) -> &mut Permissions {
        &mut self.permissions
    }

    pub(crate) fn quit_armed(&self) -> bool {
        self.quit.armed()
    }

    pub(crate) fn exit_code(&self) -> i32 {
        self.quit.code()
    }

    pub(crate) fn session(&self) -> &Session {
        self.session.session()
    }

    pub(crate) fn subagents(&self) -> &Subagents {
        &self.subagents
    }

    pub(crate) fn appearance(&self) -> &Appearance {
        &self.appearance
    }

    pub(crate) fn set_appearance(&mut self, appearance: Appearance) {
        self.appearance = appearance;
    }

    pub(crate) fn set_keymap(&mut self, keymap: Keymap) {
        self.keymap = keymap;
    }

    pub(crate) fn custom_commands(&self) -> &Commands {
        &self.custom_commands
    }

    pub(crate) fn set_custom_commands(&mut self, commands: Commands) {
        self.custom_commands = commands;
    }

    pub(crate) fn set_workspace(&mut self, workspace: PathBuf) {
        self.session.set_workspace(workspace);
    }

    pub(crate) fn notifier_mut(&mut self) -> &mut Notifier {
        &mut self.notifier
    }

    pub(crate) fn keys(&self) -> &KeyAccess {
        &self.keys
    }

    pub(crate) fn set_keys(&mut self, keys: KeyAccess) {
        self.keys = keys;
    }
}
