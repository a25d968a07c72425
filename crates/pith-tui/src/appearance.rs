//! The colour theme in use: chosen at start (config `theme`, else the one `/theme` saved, else
//! dark), and `/theme`, whose picker previews each theme as the selection moves, keeps the one
//! chosen (saved in pith's data dir) and puts the old one back when closed.

use std::path::{Path, PathBuf};

use super::theme::{self, Theme};

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

    pub(crate) fn load(&self, name: &str) -> Result<Theme, theme::ThemeError> {
        theme::load(name, self.themes_dir.as_deref())
    }
}

/// The theme name saved in `file`, if any.
pub(crate) fn saved(file: &Path) -> Option<String> {
    let text = std::fs::read_to_string(file).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    v.get("theme")?
        .as_str()
        .filter(|n| theme::valid_name(n))
        .map(str::to_string)
}

/// Saves `name` as the theme to start with (written whole, then renamed into place).
pub(crate) fn save(file: &Path, name: &str) -> std::io::Result<()> {
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = file.with_extension("json.tmp");
    std::fs::write(&tmp, serde_json::json!({ "theme": name }).to_string())?;
    std::fs::rename(&tmp, file)
}
