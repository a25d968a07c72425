//! Key specs and the errors a bad `[keys]` table gives, without a terminal.

use super::*;

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
fn specs_are_checked_and_list_as_written() {
    let k = |s: &str| Key::parse(s).unwrap();
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
