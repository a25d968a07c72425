//! One key as a binding names it (`ctrl+u`, `shift+tab`, `f2`): parsed from the config, matched
//! against what the terminal reports (the TUI turns its key events into a [`Key`]), shown in
//! `/keys`. No terminal types here: config validates bindings without a terminal.

use std::fmt;
use std::ops::{BitOr, BitOrAssign, Sub};

/// A key without its modifiers: the keys a binding can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyCode {
    Char(char),
    F(u8),
    Enter,
    Esc,
    Tab,
    BackTab,
    Backspace,
    Delete,
    Insert,
    Home,
    End,
    PageUp,
    PageDown,
    Up,
    Down,
    Left,
    Right,
    /// A key no binding can name (media keys, caps lock, …).
    Other,
}

/// Modifier keys, as a set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct KeyModifiers(u8);

impl KeyModifiers {
    pub const NONE: KeyModifiers = KeyModifiers(0);
    pub const SHIFT: KeyModifiers = KeyModifiers(1);
    pub const CONTROL: KeyModifiers = KeyModifiers(2);
    pub const ALT: KeyModifiers = KeyModifiers(4);
    pub const SUPER: KeyModifiers = KeyModifiers(8);

    pub const fn union(self, other: KeyModifiers) -> KeyModifiers {
        KeyModifiers(self.0 | other.0)
    }
    pub fn contains(self, other: KeyModifiers) -> bool {
        self.0 & other.0 == other.0
    }
    pub(crate) fn intersects(self, other: KeyModifiers) -> bool {
        self.0 & other.0 != 0
    }
    pub fn insert(&mut self, other: KeyModifiers) {
        self.0 |= other.0;
    }
    pub fn remove(&mut self, other: KeyModifiers) {
        self.0 &= !other.0;
    }
}

impl BitOr for KeyModifiers {
    type Output = KeyModifiers;
    fn bitor(self, other: KeyModifiers) -> KeyModifiers {
        self.union(other)
    }
}

impl BitOrAssign for KeyModifiers {
    fn bitor_assign(&mut self, other: KeyModifiers) {
        self.insert(other);
    }
}

impl Sub for KeyModifiers {
    type Output = KeyModifiers;
    fn sub(self, other: KeyModifiers) -> KeyModifiers {
        KeyModifiers(self.0 & !other.0)
    }
}

/// One key with its modifiers, as a binding names it (`ctrl+u`, `shift+tab`, `f2`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Key {
    pub code: KeyCode,
    pub mods: KeyModifiers,
}

impl Key {
    /// The key as terminals report it normalised: `shift+tab` is `BackTab`, a shifted letter is
    /// the capital without `shift`, a control letter lowercase.
    pub fn new(code: KeyCode, mods: KeyModifiers) -> Key {
        let mut mods = mods;
        let code = match code {
            KeyCode::BackTab => {
                mods.remove(KeyModifiers::SHIFT);
                KeyCode::BackTab
            }
            KeyCode::Tab if mods.contains(KeyModifiers::SHIFT) => {
                mods.remove(KeyModifiers::SHIFT);
                KeyCode::BackTab
            }
            KeyCode::Char(c) => {
                if c.is_alphabetic() && mods.intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) {
                    // `ctrl+shift+a` arrives as `A` or as `a` with shift: one key either way
                    if c.is_uppercase() {
                        mods.insert(KeyModifiers::SHIFT);
                    }
                    KeyCode::Char(c.to_lowercase().next().unwrap_or(c))
                } else if mods.contains(KeyModifiers::SHIFT) && c.is_alphabetic() {
                    mods.remove(KeyModifiers::SHIFT);
                    KeyCode::Char(c.to_uppercase().next().unwrap_or(c))
                } else if !c.is_alphabetic() && c != ' ' {
                    // `?` or `!` arrive with or without shift, depending on the terminal
                    mods.remove(KeyModifiers::SHIFT);
                    KeyCode::Char(c)
                } else {
                    KeyCode::Char(c)
                }
            }
            other => other,
        };
        Key { code, mods }
    }

    /// Parses `ctrl+u`, `alt+enter`, `shift+tab`, `esc`, `f2`, `?`, `ctrl++`.
    pub fn parse(spec: &str) -> Result<Key, KeyParseError> {
        let spec = spec.trim();
        if spec.is_empty() {
            return Err(KeyParseError::Empty);
        }
        let (mods_part, key) = match spec.strip_suffix('+') {
            // `ctrl++` or a lone `+`
            Some(rest) if rest.is_empty() || rest.ends_with('+') => (rest, "+"),
            _ => match spec.rsplit_once('+') {
                Some((m, k)) => (m, k),
                None => ("", spec),
            },
        };
        if key.is_empty() {
            return Err(KeyParseError::NoKey {
                spec: spec.to_string(),
            });
        }
        let mut mods = KeyModifiers::NONE;
        for m in mods_part.split('+').filter(|m| !m.is_empty()) {
            mods |= match m.to_ascii_lowercase().as_str() {
                "ctrl" | "control" | "c" => KeyModifiers::CONTROL,
                "alt" | "meta" | "option" | "m" => KeyModifiers::ALT,
                "shift" | "s" => KeyModifiers::SHIFT,
                "super" | "cmd" | "win" => KeyModifiers::SUPER,
                other => {
                    return Err(KeyParseError::UnknownModifier {
                        modifier: other.to_string(),
                        spec: spec.to_string(),
                    });
                }
            };
        }
        let mut chars = key.chars();
        let code = match (chars.next(), chars.next()) {
            (Some(c), None) => KeyCode::Char(if mods.contains(KeyModifiers::CONTROL) {
                c.to_ascii_lowercase()
            } else {
                c
            }),
            _ => named(&key.to_ascii_lowercase()).ok_or_else(|| KeyParseError::UnknownKey {
                key: key.to_string(),
                spec: spec.to_string(),
            })?,
        };
        Ok(Key::new(code, mods))
    }
}

/// A key spec that names no key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyParseError {
    #[error("an empty key")]
    Empty,
    #[error("\"{spec}\" names no key after its modifiers")]
    NoKey { spec: String },
    #[error("unknown modifier \"{modifier}\" in \"{spec}\" (ctrl, alt, shift, super)")]
    UnknownModifier { modifier: String, spec: String },
    #[error("unknown key \"{key}\" in \"{spec}\"")]
    UnknownKey { key: String, spec: String },
}

fn named(name: &str) -> Option<KeyCode> {
    Some(match name {
        "enter" | "return" | "ret" | "cr" => KeyCode::Enter,
        "esc" | "escape" => KeyCode::Esc,
        "tab" => KeyCode::Tab,
        "backtab" => KeyCode::BackTab,
        "backspace" | "bs" => KeyCode::Backspace,
        "delete" | "del" => KeyCode::Delete,
        "insert" | "ins" => KeyCode::Insert,
        "home" => KeyCode::Home,
        "end" => KeyCode::End,
        "pageup" | "pgup" => KeyCode::PageUp,
        "pagedown" | "pgdn" | "pgdown" => KeyCode::PageDown,
        "up" => KeyCode::Up,
        "down" => KeyCode::Down,
        "left" => KeyCode::Left,
        "right" => KeyCode::Right,
        "space" => KeyCode::Char(' '),
        "plus" => KeyCode::Char('+'),
        "minus" => KeyCode::Char('-'),
        f if f.starts_with('f') => match f[1..].parse::<u8>() {
            Ok(n @ 1..=24) => KeyCode::F(n),
            _ => return None,
        },
        _ => return None,
    })
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (m, name) in [
            (KeyModifiers::CONTROL, "ctrl+"),
            (KeyModifiers::ALT, "alt+"),
            (KeyModifiers::SUPER, "super+"),
            (KeyModifiers::SHIFT, "shift+"),
        ] {
            if self.mods.contains(m) {
                f.write_str(name)?;
            }
        }
        match self.code {
            KeyCode::BackTab => f.write_str("shift+tab"),
            KeyCode::Char(' ') => f.write_str("space"),
            KeyCode::Char(c) => write!(f, "{c}"),
            KeyCode::F(n) => write!(f, "f{n}"),
            KeyCode::PageUp => f.write_str("pageup"),
            KeyCode::PageDown => f.write_str("pagedown"),
            KeyCode::Other => f.write_str("unknown"),
            other => f.write_str(&format!("{other:?}").to_ascii_lowercase()),
        }
    }
}
