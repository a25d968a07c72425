//! Colours: a dark and a light theme built in, user themes from `themes/NAME.toml` beside the
//! global config (any colour of a base theme overridden), chosen with `theme = "NAME"` or
//! `/theme`. Cells render without the app at hand, so the theme in use is process-wide
//! ([`theme`]); in tests it is per thread.

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::RwLock;

use ratatui::style::Color;
use toml::de::{DeTable, DeValue};

/// The colours pith draws with.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Theme {
    /// pith's own marks: the answer bullet, popups' borders, the selection.
    pub accent: Color,
    /// The user's prompts and attachments.
    pub user: Color,
    /// Secondary text: hints, gutters, timings, the prompt's placeholder.
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
    /// Markdown: `inline code`, code without a known language, quotes, links, headings.
    pub code: Color,
    pub code_block: Color,
    pub quote: Color,
    pub link: Color,
    pub heading1: Color,
    pub heading2: Color,
    pub heading3: Color,
    /// The `/context` bar's segments.
    pub ctx_system: Color,
    pub ctx_tools: Color,
    pub ctx_summary: Color,
    pub ctx_messages: Color,
    pub ctx_outputs: Color,
    /// The syntect theme code blocks are highlighted with (one of [`SYNTAX_THEMES`]).
    pub syntax: &'static str,
}

/// The syntax-highlighting themes built in.
pub const SYNTAX_THEMES: &[&str] = &[
    "base16-ocean.dark",
    "base16-eighties.dark",
    "base16-mocha.dark",
    "base16-ocean.light",
    "InspiredGitHub",
    "Solarized (dark)",
    "Solarized (light)",
];

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
        code: Color::Rgb(230, 180, 120),
        code_block: Color::Rgb(192, 197, 206),
        quote: Color::Rgb(120, 160, 120),
        link: Color::Rgb(110, 160, 230),
        heading1: Color::Magenta,
        heading2: Color::Cyan,
        heading3: Color::Blue,
        ctx_system: Color::Rgb(120, 130, 220),
        ctx_tools: Color::Rgb(90, 170, 200),
        ctx_summary: Color::Magenta,
        ctx_messages: Color::Rgb(110, 190, 110),
        ctx_outputs: Color::Rgb(220, 170, 80),
        syntax: "base16-ocean.dark",
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
        code: Color::Rgb(150, 70, 0),
        code_block: Color::Rgb(50, 50, 60),
        quote: Color::Rgb(60, 110, 60),
        link: Color::Rgb(20, 80, 180),
        heading1: Color::Rgb(140, 50, 150),
        heading2: Color::Rgb(0, 110, 150),
        heading3: Color::Rgb(20, 80, 180),
        ctx_system: Color::Rgb(60, 70, 180),
        ctx_tools: Color::Rgb(20, 120, 150),
        ctx_summary: Color::Rgb(140, 50, 150),
        ctx_messages: Color::Rgb(30, 130, 50),
        ctx_outputs: Color::Rgb(170, 100, 0),
        syntax: "InspiredGitHub",
    }
}

impl Theme {
    /// The colour a theme file calls `key`.
    fn slot(&mut self, key: &str) -> Option<&mut Color> {
        Some(match key {
            "accent" => &mut self.accent,
            "user" => &mut self.user,
            "dim" => &mut self.dim,
            "muted" => &mut self.muted,
            "ok" => &mut self.ok,
            "err" | "error" => &mut self.err,
            "warn" | "warning" => &mut self.warn,
            "summary" => &mut self.summary,
            "added" => &mut self.added,
            "removed" => &mut self.removed,
            "on_accent" => &mut self.on_accent,
            "code" => &mut self.code,
            "code_block" => &mut self.code_block,
            "quote" => &mut self.quote,
            "link" => &mut self.link,
            "heading1" => &mut self.heading1,
            "heading2" => &mut self.heading2,
            "heading3" => &mut self.heading3,
            "ctx_system" => &mut self.ctx_system,
            "ctx_tools" => &mut self.ctx_tools,
            "ctx_summary" => &mut self.ctx_summary,
            "ctx_messages" => &mut self.ctx_messages,
            "ctx_outputs" => &mut self.ctx_outputs,
            _ => return None,
        })
    }
}

/// Every key a theme file may set.
pub const KEYS: &[&str] = &[
    "base",
    "syntax",
    "accent",
    "user",
    "dim",
    "muted",
    "ok",
    "err",
    "warn",
    "summary",
    "added",
    "removed",
    "on_accent",
    "code",
    "code_block",
    "quote",
    "link",
    "heading1",
    "heading2",
    "heading3",
    "ctx_system",
    "ctx_tools",
    "ctx_summary",
    "ctx_messages",
    "ctx_outputs",
];

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
/// In tests, for the calling thread only.
pub fn set_theme(t: Theme) {
    #[cfg(test)]
    {
        TEST_THEME.with(|c| c.set(Some(t)));
    }
    #[cfg(not(test))]
    if let Ok(mut g) = THEME.write() {
        *g = Some(t);
    }
}

/// Sets the theme for the current test thread only (`None`: back to dark).
#[cfg(test)]
pub fn set_test_theme(t: Option<Theme>) {
    TEST_THEME.with(|c| c.set(t));
}

/// A theme that cannot be used. Its `Display` is one line.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ThemeError {
    #[error("no theme \"{name}\" (themes: {known})")]
    Unknown { name: String, known: String },
    #[error("{}:{line}:{column}: {message}", path.display())]
    At {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{}: {message}", path.display())]
    File { path: PathBuf, message: String },
}

pub use pith_config::ui::valid_theme_name as valid_name;

/// Where user themes live: `<config dir>/themes/`.
pub fn user_dir(config_dir: &Path) -> PathBuf {
    config_dir.join("themes")
}

/// `dark`, `light`, then the user themes in `dir` (sorted).
pub fn names(dir: Option<&Path>) -> Vec<String> {
    let mut user: Vec<String> = dir
        .and_then(|d| std::fs::read_dir(d).ok())
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let stem = name.strip_suffix(".toml")?;
            (valid_name(stem) && stem != "dark" && stem != "light").then(|| stem.to_string())
        })
        .collect();
    user.sort();
    let mut out = vec!["dark".to_string(), "light".to_string()];
    out.extend(user);
    out
}

/// The theme called `name`: `dark`, `light`, or `dir/NAME.toml`.
pub fn load(name: &str, dir: Option<&Path>) -> Result<Theme, ThemeError> {
    match name {
        "dark" => return Ok(dark()),
        "light" => return Ok(light()),
        _ => {}
    }
    let unknown = || ThemeError::Unknown {
        name: name.to_string(),
        known: names(dir).join(", "),
    };
    let (Some(dir), true) = (dir, valid_name(name)) else {
        return Err(unknown());
    };
    let path = dir.join(format!("{name}.toml"));
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(unknown()),
        Err(e) => {
            return Err(ThemeError::File {
                path,
                message: pith_protocol::text::one_line(&e.to_string()),
            });
        }
    };
    parse(&path, &text)
}

/// A theme file: `base = "dark" | "light"`, `syntax = "…"`, and colours (`red`, `darkgray`,
/// `#rrggbb`, a 256-colour index) for any of [`KEYS`].
pub fn parse(path: &Path, text: &str) -> Result<Theme, ThemeError> {
    let at = |offset: usize, message: String| {
        let (line, column) = pith_config::load::line_col(text, offset);
        ThemeError::At {
            path: path.to_path_buf(),
            line,
            column,
            message: pith_protocol::text::one_line(&message),
        }
    };
    let root = DeTable::parse(text)
        .map_err(|e| at(e.span().map_or(0, |s| s.start), e.message().to_string()))?;
    let table = root.get_ref();
    let string = |key: &str| -> Result<Option<(String, usize)>, ThemeError> {
        match table.get(key) {
            None => Ok(None),
            Some(v) => match v.get_ref() {
                DeValue::String(s) => Ok(Some((s.to_string(), v.span().start))),
                _ => Err(at(v.span().start, format!("{key} must be a string"))),
            },
        }
    };
    let mut theme = match string("base")? {
        None => dark(),
        Some((b, _)) if b == "dark" => dark(),
        Some((b, _)) if b == "light" => light(),
        Some((b, offset)) => {
            return Err(at(
                offset,
                format!("base must be \"dark\" or \"light\", got \"{b}\""),
            ));
        }
    };
    if let Some((s, offset)) = string("syntax")? {
        theme.syntax = SYNTAX_THEMES
            .iter()
            .find(|t| t.eq_ignore_ascii_case(&s))
            .ok_or_else(|| {
                at(
                    offset,
                    format!(
                        "syntax: no highlighting theme \"{s}\" (known: {})",
                        SYNTAX_THEMES.join(", ")
                    ),
                )
            })?;
    }
    for (key, value) in table {
        let key_name = key.get_ref().as_ref();
        if key_name == "base" || key_name == "syntax" {
            continue;
        }
        let Some(slot) = theme.slot(key_name) else {
            return Err(at(
                key.span().start,
                format!("unknown colour \"{key_name}\" (known: {})", KEYS.join(", ")),
            ));
        };
        let DeValue::String(s) = value.get_ref() else {
            return Err(at(
                value.span().start,
                format!("{key_name} must be a colour in quotes, like \"#336699\" or \"blue\""),
            ));
        };
        *slot = Color::from_str(s.trim()).map_err(|_| {
            at(
                value.span().start,
                format!("{key_name}: \"{s}\" is not a colour (a name, \"#rrggbb\" or 0-255)"),
            )
        })?;
    }
    Ok(theme)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join(format!("{name}.toml")), text).unwrap();
    }

    #[test]
    fn user_themes_override_a_base() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        write(
            dir,
            "mine",
            "base = \"light\"\naccent = \"#112233\"\nok = \"blue\"\nsyntax = \"solarized (light)\"\n",
        );
        let t = load("mine", Some(dir)).unwrap();
        assert_eq!(t.accent, Color::Rgb(0x11, 0x22, 0x33));
        assert_eq!(t.ok, Color::Blue);
        assert_eq!(t.err, light().err, "the rest comes from the base");
        assert_eq!(t.syntax, "Solarized (light)");
        assert_eq!(load("dark", Some(dir)).unwrap(), dark());
        assert_eq!(names(Some(dir)), ["dark", "light", "mine"]);
        let err = load("nope", Some(dir)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "no theme \"nope\" (themes: dark, light, mine)"
        );
        // a name that is not a file name never reaches the file system
        assert!(matches!(
            load("../mine", Some(dir)),
            Err(ThemeError::Unknown { .. })
        ));
    }

    #[test]
    fn bad_theme_files_name_file_line_and_column() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let path = dir.join("bad.toml");
        let cases = [
            (
                "accent = \"#12\"\n",
                "1:10: accent: \"#12\" is not a colour",
            ),
            (
                "ok = \"green\"\nshiny = \"red\"\n",
                "2:1: unknown colour \"shiny\"",
            ),
            (
                "base = \"sepia\"\n",
                "1:8: base must be \"dark\" or \"light\"",
            ),
            ("user = 3\n", "1:8: user must be a colour in quotes"),
            (
                "syntax = \"monokai\"\n",
                "1:10: syntax: no highlighting theme \"monokai\"",
            ),
            ("accent = \n", "1:10:"),
        ];
        for (text, want) in cases {
            write(dir, "bad", text);
            let err = load("bad", Some(dir)).unwrap_err().to_string();
            assert!(
                err.starts_with(&format!("{}:{want}", path.display())),
                "{text:?}: {err}"
            );
            assert!(!err.contains('\n'), "{err}");
        }
    }
}
