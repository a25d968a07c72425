//! Persistence and convenience: the project's prompt history across sessions, `/copy`, the
//! external editor and notifications — keys and engine events in, effects and screens out.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crossterm::event::{Event as TermEvent, KeyCode};

use pith_protocol::event::{
    Event, OutputEvent, PermissionRequest, SessionEvent, TurnEnd, TurnEvent,
};
use pith_protocol::message::Role;
use pith_store::Store;

use super::app::{App, Msg};
use super::clipboard::osc52;
use super::effects::Effect;
use super::prompt_log::PromptLog;
use super::tests::*;

fn app_logged(log: &PromptLog) -> App {
    let mut init = init(Vec::new());
    init.prompt_log = Some(log.clone());
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    // the receiver lives as long as the test: the app's ops go nowhere
    std::mem::forget(rx);
    App::new(init, tx)
}

fn send(app: &mut App, s: &str) {
    type_str(app, s);
    key(app, KeyCode::Enter);
}

/// A new session in the same directory walks up through the prompts of earlier ones, newest
/// first, each once — `!` commands and slash commands as typed; another directory has its own.
#[test]
fn prompt_history_survives_a_restart_per_project() {
    let store = Arc::new(Store::open_in_memory().unwrap());
    let here = PromptLog::new(store.clone(), "/srv/demo".into());
    let mut first = app_logged(&here);
    send(&mut first, "explain the parser");
    send(&mut first, "!ls src");
    send(&mut first, "/context");
    first.close_popup();
    send(&mut first, "explain the parser");
    drop(first);

    let mut second = app_logged(&here);
    let mut seen = Vec::new();
    for _ in 0..4 {
        key(&mut second, KeyCode::Up);
        seen.push(second.composer().text());
    }
    assert_eq!(
        seen,
        ["explain the parser", "/context", "!ls src", "!ls src"],
        "newest first, de-duplicated, stops at the oldest"
    );
    let screen = render(&mut second, 80, 12);
    insta::assert_snapshot!("history_from_an_earlier_session", screen);

    let elsewhere = PromptLog::new(store, "/srv/other".into());
    let mut other = app_logged(&elsewhere);
    key(&mut other, KeyCode::Up);
    assert_eq!(other.composer().text(), "");
}

/// A pasted key is not written to the history on disk.
#[test]
fn a_pasted_key_does_not_reach_the_history() {
    let store = Arc::new(Store::open_in_memory().unwrap());
    let log = PromptLog::new(store.clone(), "/srv/demo".into());
    let mut app = app_logged(&log);
    app.update(Msg::Term(TermEvent::Paste(
        "my key is sk-proj-abcdefghijklmnopqrstuvwx123".into(),
    )));
    key(&mut app, KeyCode::Enter);
    assert_eq!(
        store.project_prompts("/srv/demo").unwrap(),
        ["my key is [REDACTED]"]
    );
}

fn answered() -> App {
    let (mut app, _rx) = fresh();
    let mut a = msg("A1", Role::Assistant);
    a.parts.push(text(
        "A1",
        "A1-t",
        "Two ways:\n\n```sh\ncargo test\n```\n\nor\n\n```rust\nfn main() {}\n```\n",
    ));
    ev(
        &mut app,
        Event::Output(OutputEvent::Message {
            message: user("U1", "how?"),
        }),
    );
    ev(&mut app, Event::Output(OutputEvent::Message { message: a }));
    app
}

#[test]
fn copy_puts_the_last_answer_or_a_code_block_on_the_clipboard() {
    let mut app = answered();
    let tmux = super::clipboard::in_tmux();
    send(&mut app, "/copy 2");
    assert_eq!(
        app.effects(),
        [Effect::Write(osc52("fn main() {}\n", tmux))],
        "the second code block"
    );
    app.take_effects();
    send(&mut app, "/copy");
    let Some(Effect::Write(bytes)) = app.effects().first() else {
        panic!("nothing copied: {:?}", app.effects())
    };
    assert_eq!(
        bytes,
        &osc52(
            "Two ways:\n\n```sh\ncargo test\n```\n\nor\n\n```rust\nfn main() {}\n```\n",
            tmux
        )
    );
    app.take_effects();
    send(&mut app, "/copy 3");
    assert!(app.effects().is_empty());
    let screen = render(&mut app, 80, 24);
    insta::assert_snapshot!("copy_notices", screen);
}

#[test]
fn copy_without_an_answer_says_so() {
    let (mut app, _rx) = fresh();
    send(&mut app, "/copy");
    assert!(app.effects().is_empty());
    let screen = render(&mut app, 80, 12);
    assert!(screen.contains("no answer to copy yet"), "{screen}");
}

/// Ctrl+G and `/editor` hand the composer (chips expanded) to the editor; what it returns
/// replaces the composer's text, an editor that fails leaves it and says why.
#[test]
fn the_editor_gets_the_composer_and_gives_it_back() {
    let (mut app, _rx) = fresh();
    type_str(&mut app, "draft ");
    app.update(Msg::Term(TermEvent::Paste(
        "l1\nl2\nl3\nl4\nl5\nl6\n".into(),
    )));
    ctrl(&mut app, 'g');
    assert_eq!(app.effects(), [Effect::Editor]);
    assert_eq!(app.editor_text(), "draft l1\nl2\nl3\nl4\nl5\nl6\n");
    app.take_effects();
    app.editor_done(Ok::<_, &str>("edited\ntwo lines".into()));
    assert_eq!(app.composer().text(), "edited\ntwo lines");
    app.editor_done(Err::<String, _>(
        "the editor \"vi\" exited with exit status: 1",
    ));
    assert_eq!(app.composer().text(), "edited\ntwo lines");
    let screen = render(&mut app, 80, 12);
    insta::assert_snapshot!("editor_failed", screen);
    app.composer_mut().clear();
    send(&mut app, "/editor");
    assert_eq!(app.effects(), [Effect::Editor]);
}

fn turn_finished(app: &mut App, ran: Duration) {
    ev(
        app,
        Event::Turn(TurnEvent::State {
            state: pith_protocol::event::EngineState::Thinking,
            detail: None,
        }),
    );
    app.status_mut().started_at(Instant::now() - ran);
    ev(
        app,
        Event::Turn(TurnEvent::TurnFinished {
            reason: TurnEnd::Stop,
        }),
    );
}

/// The bell rings when a turn that ran past `after_secs` ends, not for a short one.
#[test]
fn a_long_turn_rings_the_bell_a_short_one_does_not() {
    let (mut app, _rx) = fresh();
    app.notifier_mut().tmux = false;
    turn_finished(&mut app, Duration::from_secs(2));
    assert!(app.effects().is_empty(), "{:?}", app.effects());
    turn_finished(&mut app, Duration::from_secs(30));
    assert_eq!(app.effects(), [Effect::Write(b"\x07".to_vec())]);
    // desktop notifications on
    app.take_effects();
    app.notifier_mut().config.desktop = true;
    app.notifier_mut().term = "xterm-256color".into();
    turn_finished(&mut app, Duration::from_secs(30));
    assert_eq!(
        app.effects(),
        [Effect::Write(
            b"\x07\x1b]9;pith: done after 30s\x1b\\".to_vec()
        )]
    );
    // the user is looking at it: nothing
    app.take_effects();
    app.update(Msg::Term(TermEvent::FocusGained));
    turn_finished(&mut app, Duration::from_secs(30));
    assert!(app.effects().is_empty());
}

/// A permission question rings only when the terminal said it lost focus.
#[test]
fn a_question_waiting_unfocused_rings() {
    let (mut app, _rx) = fresh();
    let ask = |app: &mut App, id: &str| {
        ev(
            app,
            Event::Turn(TurnEvent::PermissionAsked(PermissionRequest {
                id: id.into(),
                tool: "bash".into(),
                call_id: format!("c-{id}"),
                title: "rm -rf build".into(),
                patterns: vec![],
                agent: None,
            })),
        )
    };
    ask(&mut app, "p1");
    assert!(app.effects().is_empty());
    app.update(Msg::Term(TermEvent::FocusLost));
    ask(&mut app, "p2");
    assert_eq!(app.effects(), [Effect::Write(b"\x07".to_vec())]);
}

/// A session resumed from another directory walks that project's history and adds to it.
#[test]
fn a_session_from_another_directory_brings_its_projects_history() {
    let store = Arc::new(Store::open_in_memory().unwrap());
    let other = tempfile::tempdir().unwrap();
    let other_dir = other.path().to_string_lossy().into_owned();
    store
        .record_prompt(&other_dir, "from the other project")
        .unwrap();
    let mut app = app_logged(&PromptLog::new(store.clone(), "/srv/demo".into()));
    let mut session = session();
    session.id = "S2".into();
    session.directory = other_dir.clone();
    ev(
        &mut app,
        Event::Session(SessionEvent::SessionLoaded {
            session,
            messages: vec![user("U9", "resumed prompt")],
            more_history: false,
        }),
    );
    key(&mut app, KeyCode::Up);
    assert_eq!(app.composer().text(), "resumed prompt");
    key(&mut app, KeyCode::Up);
    assert_eq!(app.composer().text(), "from the other project");
    app.composer_mut().clear();
    send(&mut app, "new one there");
    assert_eq!(
        store.project_prompts(&other_dir).unwrap(),
        ["from the other project", "new one there"]
    );
    assert!(store.project_prompts("/srv/demo").unwrap().is_empty());
}
