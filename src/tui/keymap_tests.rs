//! Key specs, defaults, `[keys]` over them, and the errors a bad table gives.

use super::*;

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
        Key::of(&ev(KeyCode::Char('u'), KeyModifiers::CONTROL))
    );
    assert_eq!(k("Ctrl+U"), k("ctrl+u"), "control letters ignore case");
    assert_eq!(
        k("alt+enter"),
        Key::of(&ev(KeyCode::Enter, KeyModifiers::ALT))
    );
    // shift+tab arrives as BackTab, with or without SHIFT
    assert_eq!(
        k("shift+tab"),
        Key::of(&ev(KeyCode::BackTab, KeyModifiers::SHIFT))
    );
    assert_eq!(
        k("shift+tab"),
        Key::of(&ev(KeyCode::BackTab, KeyModifiers::NONE))
    );
    assert_eq!(k("esc"), Key::of(&ev(KeyCode::Esc, KeyModifiers::NONE)));
    assert_eq!(k("f2"), Key::of(&ev(KeyCode::F(2), KeyModifiers::NONE)));
    assert_eq!(
        k("shift+a"),
        Key::of(&ev(KeyCode::Char('A'), KeyModifiers::SHIFT))
    );
    assert_eq!(
        k("?"),
        Key::of(&ev(KeyCode::Char('?'), KeyModifiers::SHIFT))
    );
    assert_eq!(
        k("ctrl++"),
        Key::of(&ev(KeyCode::Char('+'), KeyModifiers::CONTROL))
    );
    assert_ne!(k("ctrl+u"), k("u"));
    // ctrl/alt with a shifted letter, however the terminal reports it
    assert_eq!(
        k("ctrl+shift+a"),
        Key::of(&ev(KeyCode::Char('A'), KeyModifiers::CONTROL))
    );
    assert_eq!(
        k("alt+A"),
        Key::of(&ev(
            KeyCode::Char('a'),
            KeyModifiers::ALT | KeyModifiers::SHIFT
        ))
    );
    assert_ne!(k("ctrl+shift+a"), k("ctrl+a"));
    assert_ne!(k("enter"), k("shift+enter"));
    for bad in [
        "",
        "ctrl+",
        "hyper+x",
        "f0",
        "f25",
        "pagesideways",
        "ctrl+xy",
    ] {
        assert!(Key::parse(bad).is_err(), "{bad:?} parsed");
    }
    // round trip through the listing
    for s in [
        "ctrl+u",
        "alt+backspace",
        "shift+tab",
        "f2",
        "pageup",
        "ctrl+alt+x",
        "space",
    ] {
        assert_eq!(k(s).to_string(), s);
        assert_eq!(k(&k(s).to_string()), k(s));
    }
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
        map.action(Context::Chat, &ctrl_u),
        Some(Action::KillLineStart)
    );
    // ctrl+c is global: it wins in every context
    let ctrl_c = ev(KeyCode::Char('c'), KeyModifiers::CONTROL);
    for c in [Context::Chat, Context::List, Context::Permission] {
        assert_eq!(map.action(c, &ctrl_c), Some(Action::Cancel));
    }
    let ctrl_shift_c = ev(
        KeyCode::Char('C'),
        KeyModifiers::CONTROL | KeyModifiers::SHIFT,
    );
    assert_eq!(
        map.action(Context::Chat, &ctrl_shift_c),
        Some(Action::Cancel)
    );
    let shift_enter = ev(KeyCode::Enter, KeyModifiers::SHIFT);
    assert_eq!(
        map.action(Context::Chat, &shift_enter),
        Some(Action::Newline)
    );
    let up = ev(KeyCode::Up, KeyModifiers::NONE);
    assert_eq!(map.action(Context::List, &up), Some(Action::ListUp));
    assert_eq!(map.action(Context::Chat, &up), Some(Action::HistoryPrev));
    assert_eq!(
        map.action(Context::Permission, &up),
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
    assert_eq!(map.action(Context::Chat, &ctrl_u), Some(Action::Undo));
    assert_eq!(
        map.action(Context::Chat, &ctrl_z),
        None,
        "replaced, not added"
    );
    assert_eq!(map.action(Context::Chat, &tab), None, "[] unbinds");
    assert!(map.is(
        Action::KillLineStart,
        &ev(KeyCode::Char('x'), KeyModifiers::CONTROL)
    ));
    assert_eq!(map.describe(Action::KillLineStart), "alt+u · ctrl+x");
    assert_eq!(map.describe(Action::Indent), "(unbound)");
    // a configured key taken from another action's defaults is reported
    let map = Keymap::from_config(&cfg(&[("expand_all", &["ctrl+k"])])).unwrap();
    assert_eq!(
        map.action(
            Context::Chat,
            &ev(KeyCode::Char('k'), KeyModifiers::CONTROL)
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

#[test]
fn bad_entries_are_errors() {
    let err = Keymap::from_config(&cfg(&[("teleport", &["f1"])])).unwrap_err();
    assert_eq!(
        err,
        KeymapError::UnknownAction {
            name: "teleport".into()
        }
    );
    let err = Keymap::from_config(&cfg(&[("undo", &["ctrl+z", "ctrl+hyper"])])).unwrap_err();
    assert!(
        matches!(err, KeymapError::BadKey { index: 1, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("unknown key \"hyper\""), "{err}");
    let err = Keymap::from_config(&cfg(&[("undo", &["f5"]), ("redo", &["f6", "f5"])])).unwrap_err();
    assert_eq!(
        err.to_string(),
        "keys: \"f5\" is bound to both undo and redo (prompt and transcript); unbind one (e.g. redo = [])"
    );
    // a global key may not be reused anywhere
    let err = Keymap::from_config(&cfg(&[("cancel", &["q"]), ("list_close", &["q"])]));
    assert!(matches!(err, Err(KeymapError::Conflict { .. })), "{err:?}");
}
