//! The colour theme in use: chosen at start (config `theme`, else the one `/theme` saved, else
//! dark), and `/theme`, whose picker previews each theme as the selection moves, keeps the one
//! chosen (saved in pith's data dir) and puts the old one back when closed.

use std::path::{Path, PathBuf};

use super::app::{App, PickItem, Picker, PickerKind, Popup};
use super::theme::{self, Theme};
use super::transcript::NoticeLevel;

/// The file in pith's data dir that remembers the theme `/theme` chose.
const STATE_FILE: &str = "tui.json";

#[derive(Debug, Clone, Default)]
pub struct Appearance {
    /// The theme's name.
    pub theme: String,
    /// Where user themes live (`<config dir>/themes`).
    pub themes_dir: Option<PathBuf>,
    /// Where `/theme` saves its choice.
    pub state_file: Option<PathBuf>,
    /// `theme` as the config sets it, and the file that sets it.
    pub config_theme: Option<(String, String)>,
    /// The theme in use when the picker opened (put back when it closes unchosen).
    pub previewing: Option<String>,
    /// Why the configured theme could not be used (shown once at start).
    pub error: Option<String>,
}

impl Appearance {
    /// The theme to start with, applied: the config's, else the saved one, else dark. One that
    /// cannot be loaded leaves dark in use and says why in `error`.
    pub fn start(
        config_theme: Option<(String, String)>,
        themes_dir: Option<PathBuf>,
        data_dir: &Path,
    ) -> Appearance {
        let state_file = data_dir.join(STATE_FILE);
        let name = config_theme
            .as_ref()
            .map(|(n, _)| n.clone())
            .or_else(|| saved(&state_file))
            .unwrap_or_else(|| "dark".into());
        let mut a = Appearance {
            theme: "dark".into(),
            themes_dir,
            state_file: Some(state_file),
            config_theme,
            previewing: None,
            error: None,
        };
        match theme::load(&name, a.themes_dir.as_deref()) {
            Ok(t) => {
                theme::set_theme(t);
                a.theme = name;
            }
            Err(e) => {
                theme::set_theme(theme::dark());
                a.error = Some(format!("{e}; using the dark theme"));
            }
        }
        a
    }

    fn load(&self, name: &str) -> Result<Theme, theme::ThemeError> {
        theme::load(name, self.themes_dir.as_deref())
    }
}

/// The theme name saved in `file`, if any.
fn saved(file: &Path) -> Option<String> {
    let text = std::fs::read_to_string(file).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    v.get("theme")?
        .as_str()
        .filter(|n| theme::valid_name(n))
        .map(str::to_string)
}

/// Saves `name` as the theme to start with (written whole, then renamed into place).
fn save(file: &Path, name: &str) -> std::io::Result<()> {
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = file.with_extension("json.tmp");
    std::fs::write(&tmp, serde_json::json!({ "theme": name }).to_string())?;
    std::fs::rename(&tmp, file)
}

impl App {
    /// `/theme [name]`: switch to `name`, or pick one with a live preview.
    pub(super) fn theme_command(&mut self, arg: Option<String>) {
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
    pub(super) fn choose_theme(&mut self, name: &str) {
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
            (_, Err(e)) => format!("theme {name} (not saved: {})", crate::text::one_line(&e)),
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
    pub(super) fn picker_moved(&mut self) {
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
    pub(super) fn picker_closed(&mut self) {
        if self.appearance.previewing.take().is_some()
            && let Ok(t) = self.appearance.load(&self.appearance.theme.clone())
        {
            self.apply_theme(t);
        }
    }
}
