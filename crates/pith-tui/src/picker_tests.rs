//! Update-function tests: the /model and /sessions pickers.

use crossterm::event::KeyCode;

use pith_protocol::event::{ErrorKind, Event, Op, SessionEvent, SettingsEvent, TurnEvent};

use super::app::Popup;
use super::tests::*;
use super::view::status;

#[test]
fn model_picker_switches_model() {
    let (mut app, mut rx) = fresh();
    type_str(&mut app, "/model");
    key(&mut app, KeyCode::Enter);
    assert!(matches!(app.popup(), Some(Popup::Picker(_))));
    type_str(&mut app, "mini");
    key(&mut app, KeyCode::Enter);
    assert_eq!(
        ops(&mut rx),
        vec![Op::SetModel {
            model: "openai/gpt-4.1-mini".into()
        }]
    );
    // the status bar changes when the engine confirms, not before
    assert_eq!(app.status().model(), "anthropic/claude-sonnet-4-5");
    // a notice that merely reads like a switch is not one
    ev(&mut app, Event::info("model: openai/gpt-4.1-mini"));
    assert_eq!(app.status().model(), "anthropic/claude-sonnet-4-5");
    ev(
        &mut app,
        Event::Settings(SettingsEvent::ModelChanged {
            model: "openai/gpt-4.1-mini".into(),
        }),
    );
    assert_eq!(app.status().model(), "openai/gpt-4.1-mini");
    assert!(app.status().pending_model().is_none());
    assert!(
        status::status_line(&app.status_view(), 120)
            .to_string()
            .contains("openai/gpt-4.1-mini")
    );
}

#[test]
fn refused_model_switch_keeps_the_model() {
    let (mut app, mut rx) = fresh();
    type_str(&mut app, "/model openai/gpt-4.1");
    key(&mut app, KeyCode::Enter);
    assert_eq!(
        ops(&mut rx),
        vec![Op::SetModel {
            model: "openai/gpt-4.1".into()
        }]
    );
    // an error about something else leaves the switch pending
    ev(
        &mut app,
        Event::Turn(TurnEvent::Error {
            kind: ErrorKind::Export,
            message: "cannot write x.md".into(),
            failed_message: None,
        }),
    );
    assert_eq!(app.status().pending_model(), Some("openai/gpt-4.1"));
    ev(
        &mut app,
        Event::Turn(TurnEvent::Error {
            kind: ErrorKind::Model,
            message: "the key is missing".into(),
            failed_message: None,
        }),
    );
    assert_eq!(app.status().model(), "anthropic/claude-sonnet-4-5");
    assert!(app.status().pending_model().is_none());
    assert!(
        status::status_line(&app.status_view(), 120)
            .to_string()
            .contains("anthropic/claude-sonnet-4-5")
    );
}

#[test]
fn sessions_picker_resumes() {
    let (mut app, mut rx) = fresh();
    type_str(&mut app, "/sessions");
    key(&mut app, KeyCode::Enter);
    assert_eq!(ops(&mut rx), vec![Op::ListSessions]);
    let mut other = session();
    other.id = "S2".into();
    other.title = "refactor the store".into();
    ev(
        &mut app,
        Event::Session(SessionEvent::Sessions {
            sessions: vec![session(), other.clone()],
        }),
    );
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Enter);
    assert_eq!(ops(&mut rx), vec![Op::ResumeSession { id: "S2".into() }]);
    ev(
        &mut app,
        Event::Session(SessionEvent::SessionLoaded {
            session: other,
            messages: conversation(),
            more_history: false,
        }),
    );
    assert_eq!(app.session().id, "S2");
    assert!((app.status().cost() - 0.25).abs() < 1e-9);
    assert!(render(&mut app, 80, 24).contains("Test b fails"));
}

/// This directory's sessions come first; one from elsewhere says where it belongs, and the
/// picker leaves room for it (a snapshot of the picker).
#[test]
fn sessions_of_this_directory_first_and_others_say_where() {
    let (mut app, _rx) = fresh();
    type_str(&mut app, "/sessions");
    key(&mut app, KeyCode::Enter);
    let mut elsewhere = session();
    elsewhere.id = "S0".into();
    elsewhere.title = "a session from another project".into();
    elsewhere.directory = "/srv/other-project/with/a/long/path".into();
    elsewhere.time_updated = 2_000_000_000_000;
    let mut here = session();
    here.id = "S2".into();
    here.title = "refactor the store".into();
    ev(
        &mut app,
        Event::Session(SessionEvent::Sessions {
            sessions: vec![elsewhere, session(), here],
        }),
    );
    let Some(Popup::Picker(p)) = app.popup() else {
        panic!("no picker")
    };
    let ids: Vec<&str> = p.items().iter().map(|i| i.id.as_str()).collect();
    assert_eq!(ids, ["S1", "S2", "S0"], "this directory first");
    assert!(
        p.items()[2]
            .detail
            .ends_with("in /srv/other-project/with/a/long/path")
    );
    let screen = render(&mut app, 120, 24);
    assert!(
        screen.contains("in /srv/other-project/with/a/long/path"),
        "the directory is not cut off: {screen}"
    );
    insta::assert_snapshot!(screen);
}

/// `/rewind` offers only what the engine can go back to: prompts after the latest compaction.
#[test]
fn rewind_offers_only_prompts_after_the_latest_compaction() {
    let mut history = compacted_history();
    history.push(user("M5", "rename the helper"));
    let (mut app, _rx) = app_with(history);
    type_str(&mut app, "/rewind");
    key(&mut app, KeyCode::Enter);
    let Some(Popup::Picker(p)) = app.popup() else {
        panic!("no picker: {:?}", app.popup().is_some());
    };
    let ids: Vec<&str> = p.items().iter().map(|i| i.id.as_str()).collect();
    assert_eq!(
        ids,
        vec!["M5"],
        "prompts before the compaction are not offered"
    );

    // nothing after the compaction: said plainly, no picker
    let (mut app, _rx) = app_with(compacted_history());
    type_str(&mut app, "/rewind");
    key(&mut app, KeyCode::Enter);
    assert!(app.popup().is_none());
    let screen = render(&mut app, 80, 24);
    assert!(
        screen.contains("no prompt since the last compaction"),
        "{screen}"
    );
}

#[test]
fn effort_command_sets_the_level_and_the_status_bar_shows_it() {
    use pith_protocol::llm::ReasoningEffort;
    let (mut app, mut rx) = fresh();
    type_str(&mut app, "/effort HIGH");
    key(&mut app, KeyCode::Enter);
    assert_eq!(
        ops(&mut rx),
        vec![Op::SetEffort {
            effort: Some(ReasoningEffort::High)
        }]
    );
    // shown once the engine confirms it
    assert!(app.status().effort().is_none());
    ev(
        &mut app,
        Event::Settings(SettingsEvent::EffortChanged {
            effort: Some(ReasoningEffort::High),
        }),
    );
    assert_eq!(app.status().effort(), Some(ReasoningEffort::High));
    let line = status::status_line(&app.status_view(), 120).to_string();
    insta::assert_snapshot!("status_bar_with_effort", line);
    assert!(line.contains("anthropic/claude-sonnet-4-5 high"), "{line}");

    // `default` goes back to the model's own; the bar drops the level
    type_str(&mut app, "/effort default");
    key(&mut app, KeyCode::Enter);
    assert_eq!(ops(&mut rx), vec![Op::SetEffort { effort: None }]);
    ev(
        &mut app,
        Event::Settings(SettingsEvent::EffortChanged { effort: None }),
    );
    let line = status::status_line(&app.status_view(), 120).to_string();
    assert!(!line.contains("high"), "{line}");
}

#[test]
fn effort_command_without_a_level_says_it_and_a_bad_level_sends_nothing() {
    let (mut app, mut rx) = fresh();
    type_str(&mut app, "/effort");
    key(&mut app, KeyCode::Enter);
    type_str(&mut app, "/effort extreme");
    key(&mut app, KeyCode::Enter);
    assert!(ops(&mut rx).is_empty());
    let shown = render(&mut app, 100, 24);
    assert!(
        shown.contains("reasoning effort: the model's default"),
        "{shown}"
    );
    assert!(shown.contains("unknown level \"extreme\""), "{shown}");
}
