//! One key as a binding names it (`ctrl+u`, `shift+tab`, `f2`): parsed from the config, matched
//! against what the terminal reports, shown in `/keys`.

use std::fmt;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// One key with its modifiers, as a binding names it (`ctrl+u`, `shift+tab`, `f2`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Key {
    pub code: KeyCode,
    pub mods: KeyModifiers,
}

const MODS: KeyModifiers = KeyModifiers::CONTROL
    .union(KeyModifiers::ALT)
    .union(KeyModifiers::SHIFT)
    .union(KeyModifiers::SUPER);

impl Key {
    /// The key as terminals report it normalised: `shift+tab` is `BackTab`, a shifted letter is
    /// the capital without `shift`, a control letter lowercase.
    pub fn new(code: KeyCode, mods: KeyModifiers) -> Key {
        let mut mods = mods & MODS;
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

    pub fn of(ev: &KeyEvent) -> Key {
        Key::new(ev.code, ev.modifiers)
    }

    /// Parses `ctrl+u`, `alt+enter`, `shift+tab`, `esc`, `f2`, `?`, `ctrl++`.
    pub fn parse(spec: &str) -> Result<Key, String> {
        let spec = spec.trim();
        if spec.is_empty() {
            return Err("an empty key".into());
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
            return Err(format!("\"{spec}\" names no key after its modifiers"));
        }
        let mut mods = KeyModifiers::NONE;
        for m in mods_part.split('+').filter(|m| !m.is_empty()) {
            mods |= match m.to_ascii_lowercase().as_str() {
                "ctrl" | "control" | "c" => KeyModifiers::CONTROL,
                "alt" | "meta" | "option" | "m" => KeyModifiers::ALT,
                "shift" | "s" => KeyModifiers::SHIFT,
                "super" | "cmd" | "win" => KeyModifiers::SUPER,
                other => {
                    return Err(format!(
                        "unknown modifier \"{other}\" in \"{spec}\" (ctrl, alt, shift, super)"
                    ));
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
            _ => named(&key.to_ascii_lowercase())
                .ok_or_else(|| format!("unknown key \"{key}\" in \"{spec}\""))?,
        };
        Ok(Key::new(code, mods))
    }
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
            other => f.write_str(&format!("{other:?}").to_ascii_lowercase()),
        }
    }
}
