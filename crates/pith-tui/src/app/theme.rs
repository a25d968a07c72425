//! `/theme` in the router: its picker previews each theme as the selection moves, keeps the one
//! chosen and puts the old one back when closed.

use crate::appearance::save;
use crate::theme::{self, Theme};
use crate::transcript::NoticeLevel;

use super::{App, PickItem, Picker, PickerKind, Popup};

impl App {
    /// `/theme [name]`: switch to `name`, or pick one with a live preview.
    pub(crate) fn theme_command(&mut self, arg: Option<String>) {
        if let Some(name) = arg {
            return self.choose_theme(name.trim());
        }
        let current = self.appearance.theme.clone();
        let names = theme::names(self.appearance.themes_dir.as_deref());
        let selected = names.iter().position(|n| *n == current).unwrap_or(0);
        let items = names
            .into_iter()
            .map(|n| PickItem {
                detail: if n == current {
                    "current".into()
                } else if n == "dark" || n == "light" {
                    "built in".into()
                } else {
                    "themes/".to_string() + &n + ".toml"
                },
                label: n.clone(),
                id: n,
            })
            .collect();
        self.appearance.previewing = Some(current);
        self.popup = Some(Popup::Picker(Picker::new(
            PickerKind::Theme,
            items,
            selected,
        )));
    }

    /// Uses theme `name` from now on and saves it as the one to start with.
    pub(crate) fn choose_theme(&mut self, name: &str) {
        self.appearance.previewing = None;
        let t = match self.appearance.load(name) {
            Ok(t) => t,
            Err(e) => {
                // the preview may have changed the colours: back to the theme in use
                if let Ok(t) = self.appearance.load(&self.appearance.theme.clone()) {
                    self.apply_theme(t);
                }
                return self.transcript.notice(NoticeLevel::Error, e.to_string());
            }
        };
        self.apply_theme(t);
        self.appearance.theme = name.to_string();
        let saved = match &self.appearance.state_file {
            Some(file) => save(file, name).map_err(|e| e.to_string()),
            None => Ok(()),
        };
        let note = match (&self.appearance.config_theme, saved) {
            (_, Err(e)) => format!(
                "theme {name} (not saved: {})",
                pith_protocol::text::one_line(&e)
            ),
            (Some((configured, file)), Ok(())) if configured != name => format!(
                "theme {name}; {file} sets theme = \"{configured}\", which wins at the next start"
            ),
            _ => format!("theme {name}"),
        };
        self.transcript.notice(NoticeLevel::Info, note);
    }

    fn apply_theme(&mut self, t: Theme) {
        theme::set_theme(t);
        self.transcript.restyle();
    }

    /// A picker's selection may have moved: the theme picker previews the selected theme.
    pub(crate) fn picker_moved(&mut self) {
        let Some(Popup::Picker(p)) = &self.popup else {
            return;
        };
        if *p.kind() != PickerKind::Theme {
            return;
        }
        let Some(name) = p.selected_item().map(|i| i.id.clone()) else {
            return;
        };
        if let Ok(t) = self.appearance.load(&name) {
            self.apply_theme(t);
        }
    }

    /// A picker closed without a choice: a previewed theme gives way to the one in use.
    pub(crate) fn picker_closed(&mut self) {
        if self.appearance.previewing.take().is_some()
            && let Ok(t) = self.appearance.load(&self.appearance.theme.clone())
        {
            self.apply_theme(t);
        }
    }
}
