//! Terminal key events against the keymap spec: what each event is as a binding names it, and
//! what it does with the defaults and with `[keys]` over them.

use std::collections::BTreeMap;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use strum::EnumProperty;

use super::*;
use pith_config::ui::KeyList;

fn ev(code: KeyCode, mods: KeyModifiers) -> KeyEvent {
    KeyEvent::new(code, mods)
}

fn cfg(entries: &[(&str, &[&str])]) -> BTreeMap<String, KeyList> {
    entries
        .iter()
        .map(|(a, k)| {
            let keys = k.iter().map(|s| s.to_string()).collect();
            (a.to_string(), KeyList(keys))
        })
        .collect()
}

#[test]
fn specs_parse_to_what_terminals_send() {
    let k = |s: &str| Key::parse(s).unwrap();
    assert_eq!(
        k("ctrl+u"),
        key_of(&ev(KeyCode::Char('u'), KeyModifiers::CONTROL))
    );
    assert_eq!(k("Ctrl+U"), k("ctrl+u"), "control letters ignore case");
    assert_eq!(
        k("alt+enter"),
        key_of(&ev(KeyCode::Enter, KeyModifiers::ALT))
    );
    // shift+tab arrives as BackTab, with or without SHIFT
    assert_eq!(
        k("shift+tab"),
        key_of(&ev(KeyCode::BackTab, KeyModifiers::SHIFT))
    );
    assert_eq!(
        k("shift+tab"),
        key_of(&ev(KeyCode::BackTab, KeyModifiers::NONE))
    );
    assert_eq!(k("esc"), key_of(&ev(KeyCode::Esc, KeyModifiers::NONE)));
    assert_eq!(k("f2"), key_of(&ev(KeyCode::F(2), KeyModifiers::NONE)));
    assert_eq!(
        k("shift+a"),
        key_of(&ev(KeyCode::Char('A'), KeyModifiers::SHIFT))
    );
    assert_eq!(k("?"), key_of(&ev(KeyCode::Char('?'), KeyModifiers::SHIFT)));
    assert_eq!(
        k("ctrl++"),
        key_of(&ev(KeyCode::Char('+'), KeyModifiers::CONTROL))
    );
    assert_ne!(k("ctrl+u"), k("u"));
    // ctrl/alt with a shifted letter, however the terminal reports it
    assert_eq!(
        k("ctrl+shift+a"),
        key_of(&ev(KeyCode::Char('A'), KeyModifiers::CONTROL))
    );
    assert_eq!(
        k("alt+A"),
        key_of(&ev(
            KeyCode::Char('a'),
            KeyModifiers::ALT | KeyModifiers::SHIFT
        ))
    );
    assert_ne!(k("ctrl+shift+a"), k("ctrl+a"));
    assert_ne!(k("enter"), k("shift+enter"));
}

#[test]
fn defaults_cover_every_action_without_conflicts() {
    let map = Keymap::default();
    assert!(map.overridden.is_empty());
    for a in Action::all() {
        assert!(!map.keys(a).is_empty(), "{} has no default key", a.name());
        assert_eq!(
            a.default_keys().len(),
            a.get_str("keys").unwrap().split_whitespace().count(),
            "{}: a default key does not parse",
            a.name()
        );
    }
    let ctrl_u = ev(KeyCode::Char('u'), KeyModifiers::CONTROL);
    assert_eq!(
        map.action(Context::Chat, key_of(&ctrl_u)),
        Some(Action::KillLineStart)
    );
    // ctrl+c is global: it wins in every context
    let ctrl_c = ev(KeyCode::Char('c'), KeyModifiers::CONTROL);
    for c in [Context::Chat, Context::List, Context::Permission] {
        assert_eq!(map.action(c, key_of(&ctrl_c)), Some(Action::Cancel));
    }
    let ctrl_shift_c = ev(
        KeyCode::Char('C'),
        KeyModifiers::CONTROL | KeyModifiers::SHIFT,
    );
    assert_eq!(
        map.action(Context::Chat, key_of(&ctrl_shift_c)),
        Some(Action::Cancel)
    );
    let shift_enter = ev(KeyCode::Enter, KeyModifiers::SHIFT);
    assert_eq!(
        map.action(Context::Chat, key_of(&shift_enter)),
        Some(Action::Newline)
    );
    let up = ev(KeyCode::Up, KeyModifiers::NONE);
    assert_eq!(map.action(Context::List, key_of(&up)), Some(Action::ListUp));
    assert_eq!(
        map.action(Context::Chat, key_of(&up)),
        Some(Action::HistoryPrev)
    );
    assert_eq!(
        map.action(Context::Permission, key_of(&up)),
        Some(Action::OptionPrev)
    );
}

#[test]
fn config_replaces_and_takes_keys() {
    let map = Keymap::from_config(&cfg(&[
        ("undo", &["ctrl+u"]),
        ("kill_line_start", &["alt+u", "ctrl+x"]),
        ("indent", &[]),
    ]))
    .unwrap();
    let ctrl_u = ev(KeyCode::Char('u'), KeyModifiers::CONTROL);
    let ctrl_z = ev(KeyCode::Char('z'), KeyModifiers::CONTROL);
    let tab = ev(KeyCode::Tab, KeyModifiers::NONE);
    assert_eq!(
        map.action(Context::Chat, key_of(&ctrl_u)),
        Some(Action::Undo)
    );
    assert_eq!(
        map.action(Context::Chat, key_of(&ctrl_z)),
        None,
        "replaced, not added"
    );
    assert_eq!(map.action(Context::Chat, key_of(&tab)), None, "[] unbinds");
    assert!(map.is(
        Action::KillLineStart,
        key_of(&ev(KeyCode::Char('x'), KeyModifiers::CONTROL))
    ));
    assert_eq!(map.describe(Action::KillLineStart), "alt+u · ctrl+x");
    assert_eq!(map.describe(Action::Indent), "(unbound)");
    // a configured key taken from another action's defaults is reported
    let map = Keymap::from_config(&cfg(&[("expand_all", &["ctrl+k"])])).unwrap();
    assert_eq!(
        map.action(
            Context::Chat,
            key_of(&ev(KeyCode::Char('k'), KeyModifiers::CONTROL))
        ),
        Some(Action::ExpandAll)
    );
    assert!(map.keys(Action::KillLineEnd).is_empty());
    assert_eq!(
        map.warnings(),
        vec!["keys: \"ctrl+k\" now does expand_all; kill_line_end no longer has it"]
    );
    // the same key in different contexts is fine
    assert!(Keymap::from_config(&cfg(&[("list_close", &["q"]), ("submit", &["q"])])).is_ok());
}
