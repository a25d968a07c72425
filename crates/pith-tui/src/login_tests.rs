//! `/login` and `/model` for a provider with no key: the key dialog in place.

use std::sync::{Arc, Mutex};

use crossterm::event::KeyCode;

use pith_protocol::event::Op;

use super::app::{App, Popup};
use super::login::{KeyAccess, KeyNotStored};
use super::tests::*;
use pith_protocol::launch::KeyNeed;

/// Keys for openai and anthropic; openai has none. Returns what was stored.
fn with_keys(app: &mut App, refuse: bool) -> Arc<Mutex<Vec<(String, String)>>> {
    let stored = Arc::new(Mutex::new(Vec::new()));
    let seen = stored.clone();
    let need = |p: &str, var: &str| KeyNeed {
        provider: p.into(),
        var: var.into(),
        base_url: format!("https://{p}.example/v1"),
    };
    app.set_keys(KeyAccess {
        providers: vec![
            need("anthropic", "ANTHROPIC_API_KEY"),
            need("openai", "OPENAI_API_KEY"),
        ],
        missing: ["openai".to_string()].into(),
        store: Some(Arc::new(move |p: &str, k: &str| {
            if refuse {
                return Err(KeyNotStored::Refused("that key was refused".into()));
            }
            seen.lock().unwrap().push((p.into(), k.into()));
            Ok(())
        })),
    });
    stored
}

#[test]
fn model_without_a_key_asks_for_it_in_place_then_switches() {
    let (mut app, mut rx) = fresh();
    let stored = with_keys(&mut app, false);
    type_str(&mut app, "/model openai/gpt-4.1");
    key(&mut app, KeyCode::Enter);
    assert!(
        matches!(app.popup(), Some(Popup::Key(_))),
        "{:?}",
        app.popup()
    );
    assert!(ops(&mut rx).is_empty(), "a switch that would fail was sent");
    let screen = render(&mut app, 80, 24);
    assert!(screen.contains("openai needs an API key"), "{screen}");
    assert!(screen.contains("esc cancel"), "{screen}");
    app.on_term(crossterm::event::Event::Paste("sk-pasted-123".into()));
    key(&mut app, KeyCode::Enter);
    assert_eq!(
        *stored.lock().unwrap(),
        [("openai".to_string(), "sk-pasted-123".to_string())]
    );
    assert!(app.popup().is_none());
    assert_eq!(
        ops(&mut rx),
        vec![Op::SetModel {
            model: "openai/gpt-4.1".into()
        }]
    );
    assert!(app.keys().missing.is_empty());
    // A model whose provider has a key switches at once.
    type_str(&mut app, "/model anthropic/claude-sonnet-4-5");
    key(&mut app, KeyCode::Enter);
    assert!(app.popup().is_none());
    assert_eq!(ops(&mut rx).len(), 1);
}

#[test]
fn the_model_picker_says_which_models_need_a_key() {
    let (mut app, _rx) = fresh();
    with_keys(&mut app, false);
    type_str(&mut app, "/model");
    key(&mut app, KeyCode::Enter);
    let screen = render(&mut app, 100, 30);
    let line = screen
        .lines()
        .find(|l| l.contains("openai/gpt-4.1-mini"))
        .unwrap_or_else(|| panic!("{screen}"));
    assert!(line.contains("needs a key (OPENAI_API_KEY)"), "{line}");
    let line = screen
        .lines()
        .find(|l| l.contains("anthropic/claude-sonnet-4-5"))
        .unwrap();
    assert!(!line.contains("needs a key"), "{line}");
}

#[test]
fn a_refused_key_keeps_the_dialog_open_with_the_reason() {
    let (mut app, mut rx) = fresh();
    with_keys(&mut app, true);
    type_str(&mut app, "/login openai");
    key(&mut app, KeyCode::Enter);
    type_str(&mut app, "bad");
    key(&mut app, KeyCode::Enter);
    assert!(matches!(app.popup(), Some(Popup::Key(_))));
    assert!(render(&mut app, 80, 24).contains("that key was refused"));
    key(&mut app, KeyCode::Esc);
    assert!(app.popup().is_none());
    assert!(ops(&mut rx).is_empty());
    assert_eq!(
        app.composer().text(),
        "",
        "keys typed in the dialog stay there"
    );
}

#[test]
fn login_offers_every_provider_in_the_first_run_order_a_missing_one_selected() {
    let (mut app, _rx) = fresh();
    with_keys(&mut app, false);
    type_str(&mut app, "/login");
    key(&mut app, KeyCode::Enter);
    let Some(Popup::Key(dialog)) = app.popup() else {
        panic!("{:?}", app.popup())
    };
    let names: Vec<&str> = dialog
        .choices()
        .iter()
        .map(|c| c.provider.as_str())
        .collect();
    // the order of the first-run dialog, whichever keys are missing; the cursor on a missing one
    assert_eq!(names, ["anthropic", "openai"]);
    assert_eq!(dialog.provider().as_deref(), Some("openai"));
    insta::assert_snapshot!(render(&mut app, 80, 24));
    type_str(&mut app, "/login nosuch");
    key(&mut app, KeyCode::Esc);
    type_str(&mut app, "/login nosuch");
    key(&mut app, KeyCode::Enter);
    assert!(app.popup().is_none());
    assert!(render(&mut app, 100, 30).contains("no provider \"nosuch\""));
}
