//! Colours: a dark and a light theme built in, user themes from the config (`[themes.NAME]`),
//! chosen with `[tui] theme = "NAME"`. Cells render without the app at hand, so the theme in use
//! is process-wide ([`theme`]); tests set their own per thread.

use std::collections::BTreeMap;
use std::str::FromStr;
use std::sync::RwLock;

use ratatui::style::Color;

/// The colours pith draws with.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Theme {
    /// pith's own marks: the answer bullet, popups' borders, the selection.
    pub accent: Color,
    /// The user's prompts and attachments.
    pub user: Color,
    /// Secondary text: hints, gutters, timings.
    pub dim: Color,
    /// Tool output and other quoted text.
    pub muted: Color,
    pub ok: Color,
    pub err: Color,
    pub warn: Color,
    /// Compaction dividers, summaries, pruned marks.
    pub summary: Color,
    /// Lines a diff adds.
    pub added: Color,
    /// Lines a diff removes.
    pub removed: Color,
    /// Text on the selected row of a list (drawn on `accent`).
    pub on_accent: Color,
}

pub fn dark() -> Theme {
    Theme {
        accent: Color::Rgb(215, 119, 87),
        user: Color::Cyan,
        dim: Color::DarkGray,
        muted: Color::Gray,
        ok: Color::Green,
        err: Color::Red,
        warn: Color::Rgb(255, 176, 0),
        summary: Color::Magenta,
        added: Color::Rgb(110, 200, 110),
        removed: Color::Rgb(230, 100, 100),
        on_accent: Color::Black,
    }
}

/// For terminals with a light background: darker, saturated colours.
pub fn light() -> Theme {
    Theme {
        accent: Color::Rgb(176, 74, 40),
        user: Color::Rgb(0, 110, 150),
        dim: Color::Rgb(120, 120, 120),
        muted: Color::Rgb(70, 70, 70),
        ok: Color::Rgb(20, 130, 40),
        err: Color::Rgb(190, 30, 30),
        warn: Color::Rgb(170, 100, 0),
        summary: Color::Rgb(140, 50, 150),
        added: Color::Rgb(20, 130, 40),
        removed: Color::Rgb(190, 30, 30),
        on_accent: Color::White,
    }
}

static THEME: RwLock<Option<Theme>> = RwLock::new(None);

#[cfg(test)]
thread_local! {
    static TEST_THEME: std::cell::Cell<Option<Theme>> = const { std::cell::Cell::new(None) };
}

/// The theme in use (dark unless one was set).
pub fn theme() -> Theme {
    #[cfg(test)]
    if let Some(t) = TEST_THEME.with(|t| t.get()) {
        return t;
    }
    THEME.read().ok().and_then(|t| *t).unwrap_or_else(dark)
}

/// Uses `t` from now on (cells laid out before keep their colours until they render again).
pub fn set_theme(t: Theme) {
    if let Ok(mut g) = THEME.write() {
        *g = Some(t);
    }
}

/// Sets the theme for the current test thread only.
#[cfg(test)]
pub fn set_test_theme(t: Option<Theme>) {
    TEST_THEME.with(|c| c.set(t));
}

/// The theme called `name`: `dark`, `light`, or one of `user` (colour name → value, over the
/// dark theme, or over the light one when the table sets `base = "light"`). Values are colour
/// names (`red`, `darkgray`), `#rrggbb` or a 256-colour index.
pub fn by_name(
    name: &str,
    user: &BTreeMap<String, BTreeMap<String, String>>,
) -> Result<Theme, String> {
    match name {
        "dark" => return Ok(dark()),
        "light" => return Ok(light()),
        _ => {}
    }
    let Some(table) = user.get(name) else {
        let mut names = vec!["dark".to_string(), "light".to_string()];
        names.extend(user.keys().cloned());
        return Err(format!(
            "no theme \"{name}\" (themes: {})",
            names.join(", ")
        ));
    };
    let mut t = match table.get("base").map(String::as_str) {
        None | Some("dark") => dark(),
        Some("light") => light(),
        Some(other) => {
            return Err(format!(
                "themes.{name}.base must be \"dark\" or \"light\", got \"{other}\""
            ));
        }
    };
    for (key, value) in table {
        if key == "base" {
            continue;
        }
        let color = Color::from_str(value.trim())
            .map_err(|_| format!("themes.{name}.{key}: \"{value}\" is not a colour"))?;
        let slot = match key.as_str() {
            "accent" => &mut t.accent,
            "user" => &mut t.user,
            "dim" => &mut t.dim,
            "muted" => &mut t.muted,
            "ok" => &mut t.ok,
            "err" | "error" => &mut t.err,
            "warn" | "warning" => &mut t.warn,
            "summary" => &mut t.summary,
            "added" => &mut t.added,
            "removed" => &mut t.removed,
            "on_accent" => &mut t.on_accent,
            other => {
                return Err(format!(
                    "themes.{name}: unknown colour \"{other}\" (accent, user, dim, muted, ok, err, warn, summary, added, removed, on_accent, base)"
                ));
            }
        };
        *slot = color;
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_themes_override_a_base() {
        let mut user = BTreeMap::new();
        user.insert(
            "mine".to_string(),
            BTreeMap::from([
                ("base".to_string(), "light".to_string()),
                ("accent".to_string(), "#112233".to_string()),
                ("ok".to_string(), "blue".to_string()),
            ]),
        );
        let t = by_name("mine", &user).unwrap();
        assert_eq!(t.accent, Color::Rgb(0x11, 0x22, 0x33));
        assert_eq!(t.ok, Color::Blue);
        assert_eq!(t.err, light().err);
        assert_eq!(by_name("dark", &user).unwrap(), dark());
        let err = by_name("nope", &user).unwrap_err();
        assert!(err.contains("dark, light, mine"), "{err}");
        user.get_mut("mine")
            .unwrap()
            .insert("accent".into(), "not-a-colour".into());
        assert!(
            by_name("mine", &user)
                .unwrap_err()
                .contains("themes.mine.accent")
        );
    }
}
