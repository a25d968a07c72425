//! Key bindings in the terminal: a key event becomes a [`Key`] of the config's keymap spec
//! (`config::keys`), which says what it does; the fold hints name the key in use; editing actions
//! apply to text fields.

use crossterm::event::{KeyCode as TermCode, KeyEvent, KeyModifiers as TermMods};

pub use pith_config::keys::{Action, Context, Key, KeyCode, KeyModifiers, Keymap, KeymapError};

/// The key a terminal event is, as bindings name it.
pub fn key_of(ev: &KeyEvent) -> Key {
    let code = match ev.code {
        TermCode::Char(c) => KeyCode::Char(c),
        TermCode::F(n) => KeyCode::F(n),
        TermCode::Enter => KeyCode::Enter,
        TermCode::Esc => KeyCode::Esc,
        TermCode::Tab => KeyCode::Tab,
        TermCode::BackTab => KeyCode::BackTab,
        TermCode::Backspace => KeyCode::Backspace,
        TermCode::Delete => KeyCode::Delete,
        TermCode::Insert => KeyCode::Insert,
        TermCode::Home => KeyCode::Home,
        TermCode::End => KeyCode::End,
        TermCode::PageUp => KeyCode::PageUp,
        TermCode::PageDown => KeyCode::PageDown,
        TermCode::Up => KeyCode::Up,
        TermCode::Down => KeyCode::Down,
        TermCode::Left => KeyCode::Left,
        TermCode::Right => KeyCode::Right,
        _ => KeyCode::Other,
    };
    let mut mods = KeyModifiers::NONE;
    for (term, m) in [
        (TermMods::SHIFT, KeyModifiers::SHIFT),
        (TermMods::CONTROL, KeyModifiers::CONTROL),
        (TermMods::ALT, KeyModifiers::ALT),
        (TermMods::SUPER, KeyModifiers::SUPER),
    ] {
        if ev.modifiers.contains(term) {
            mods.insert(m);
        }
    }
    Key::new(code, mods)
}

/// The key of `expand_all` as fold hints show it: cells render without the app at hand, so the
/// keymap in use publishes it at start (`None`: the default, `Some("")`: unbound).
static EXPAND_KEY: std::sync::RwLock<Option<String>> = std::sync::RwLock::new(None);

/// The key of `left_list` as the compaction divider names it (`None`: the default).
static LEFT_KEY: std::sync::RwLock<Option<String>> = std::sync::RwLock::new(None);

/// Makes the fold hints name `map`'s keys (called once at start).
pub fn publish(map: &Keymap) {
    if let Ok(mut k) = EXPAND_KEY.write() {
        *k = Some(map.hint(Action::ExpandAll, &["ctrl+o"]).unwrap_or_default());
    }
    if let Ok(mut k) = LEFT_KEY.write() {
        *k = Some(map.hint(Action::LeftList, &["ctrl+l"]).unwrap_or_default());
    }
}

/// The key that lists what left the view (`ctrl+l`), empty when it has none.
pub fn left_key() -> String {
    LEFT_KEY
        .read()
        .ok()
        .and_then(|k| k.clone())
        .unwrap_or_else(|| "ctrl+l".into())
}

/// `ctrl+o`, or `click` when `expand_all` has no key.
pub fn expand_key() -> String {
    match EXPAND_KEY.read().ok().and_then(|k| k.clone()) {
        None => "ctrl+o".into(),
        Some(k) if k.is_empty() => "click".into(),
        Some(k) => k,
    }
}

/// `click or ctrl+o to expand`.
pub fn expand_hint() -> String {
    match expand_key().as_str() {
        "click" => "click to expand".into(),
        k => format!("click or {k} to expand"),
    }
}

/// Applies an editing action to a text field (the prompt, a permission note).
pub fn edit(ta: &mut ratatui_textarea::TextArea<'_>, action: Action) {
    match action {
        Action::KillLineStart => {
            ta.delete_line_by_head();
        }
        Action::KillLineEnd => {
            ta.delete_line_by_end();
        }
        Action::DeleteWord => {
            ta.delete_word();
        }
        Action::Undo => {
            ta.undo();
        }
        Action::Redo => {
            ta.redo();
        }
        Action::Yank => {
            ta.paste();
        }
        _ => {}
    }
}

/// Whether a key no action claimed may go to the text field's own handling. Not the keys it
/// would treat as one of the editing actions above (its `ctrl+u` is undo): those do what the
/// keymap says or nothing.
pub fn to_textarea(ev: &KeyEvent) -> bool {
    let key = key_of(ev);
    let ctrl = key.mods == KeyModifiers::CONTROL;
    let alt = key.mods == KeyModifiers::ALT;
    !matches!(
        (key.code, ctrl, alt),
        (
            KeyCode::Char('u' | 'r' | 'k' | 'w' | 'y' | 'j' | 'z'),
            true,
            _
        ) | (KeyCode::Backspace | KeyCode::Char('h'), _, true)
    )
}

#[cfg(test)]
#[path = "keymap_tests.rs"]
mod tests;
