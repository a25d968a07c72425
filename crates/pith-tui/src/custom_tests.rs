use std::path::PathBuf;

use crossterm::event::KeyCode;

use super::super::tests::{ev, fresh, key, ops, render, type_str};
use pith_commands::custom_commands::{Commands, CustomCommand, Source};
use pith_protocol::event::{ErrorKind, Event, EventMsg, Op, OutputEvent, TurnEvent};
use pith_protocol::message::{Message, PartKind, Role};

fn command(name: &str, description: &str, hint: &str, body: &str, source: Source) -> CustomCommand {
    CustomCommand {
        name: name.into(),
        description: description.into(),
        argument_hint: hint.into(),
        model: None,
        agent: None,
        body: body.into(),
        source,
        path: PathBuf::from(format!("/x/{name}.md")),
    }
}

fn with_commands() -> (
    crate::app::App,
    tokio::sync::mpsc::UnboundedReceiver<pith_protocol::event::Submission>,
) {
    let (mut app, rx) = fresh();
    let mut review = command(
        "review",
        "Review a change for bugs",
        "[files]",
        "Review $ARGUMENTS for bugs.",
        Source::Project,
    );
    review.model = Some("openai/gpt-4.1-mini".into());
    app.set_custom_commands(Commands {
        list: vec![
            command(
                "frontend:lint",
                "Lint the frontend",
                "",
                "Run the linter.",
                Source::Project,
            ),
            review,
            command(
                "standup",
                "",
                "",
                "Summarise what I did today.",
                Source::User,
            ),
        ],
        warnings: Vec::new(),
        origin: None,
        skills: Default::default(),
    });
    (app, rx)
}

#[test]
fn custom_commands_are_listed_with_the_built_ins() {
    let (mut app, _rx) = with_commands();
    type_str(&mut app, "/re");
    let screen = render(&mut app, 90, 20);
    assert!(
        screen.contains("/review [files]") && screen.contains("Review a change for bugs (project)"),
        "{screen}"
    );
    insta::assert_snapshot!(screen);
    // a user command with no description shows its first line and where it comes from
    app.composer_mut().take();
    type_str(&mut app, "/stand");
    let screen = render(&mut app, 90, 20);
    assert!(
        screen.contains("Summarise what I did today. (user)"),
        "{screen}"
    );
}

#[test]
fn running_one_sends_its_expansion_and_shows_its_label() {
    let (mut app, mut rx) = with_commands();
    // Enter on a command that takes arguments completes it
    type_str(&mut app, "/revi");
    key(&mut app, KeyCode::Enter);
    assert_eq!(app.composer().text(), "/review ");
    assert!(ops(&mut rx).is_empty());
    type_str(&mut app, "src/a.rs");
    key(&mut app, KeyCode::Enter);
    let sent = ops(&mut rx);
    let [
        Op::RunCommand {
            id,
            label,
            text,
            model,
            agent,
        },
    ] = &sent[..]
    else {
        panic!("{sent:?}")
    };
    assert_eq!(label, "/review src/a.rs");
    assert_eq!(text, "Review src/a.rs for bugs.");
    assert_eq!(model.as_deref(), Some("openai/gpt-4.1-mini"));
    assert_eq!(*agent, None);
    // the engine stores the expansion with the label: the transcript shows the label as a chip
    let mut m = Message::new("S1", Role::User);
    m.submission_id = Some(id.clone());
    m.command = Some(label.clone());
    m.push(PartKind::Text {
        text: text.clone(),
        synthetic: false,
    });
    ev(&mut app, Event::Output(OutputEvent::Message { message: m }));
    let screen = render(&mut app, 80, 14);
    assert!(screen.contains("/review src/a.rs"), "{screen}");
    assert!(screen.contains("sent as 1 line"), "{screen}");
    assert!(!screen.contains("for bugs."), "folded: {screen}");
    insta::assert_snapshot!(screen);
    // a namespaced one without arguments runs at once from the popup
    type_str(&mut app, "/frontend:l");
    key(&mut app, KeyCode::Enter);
    let sent = ops(&mut rx);
    assert!(
        matches!(&sent[..], [Op::RunCommand { label, text, .. }]
            if label == "/frontend:lint" && text == "Run the linter."),
        "{sent:?}"
    );
}

#[test]
fn a_refused_command_leaves_no_pending_prompt() {
    let (mut app, mut rx) = with_commands();
    type_str(&mut app, "/standup");
    key(&mut app, KeyCode::Enter);
    assert_eq!(ops(&mut rx).len(), 1);
    assert_eq!(app.transcript().pending().len(), 1);
    let id = app.transcript().pending()[0].id.clone();
    let refused = EventMsg::from(TurnEvent::Error {
        kind: ErrorKind::Command,
        message: "/standup: no agent named ghost (known: none)".into(),
        failed_message: None,
    });
    ev(&mut app, refused.answering(&id));
    assert!(app.transcript().pending().is_empty());
}

#[test]
fn help_lists_the_custom_commands() {
    let (mut app, _rx) = with_commands();
    type_str(&mut app, "/help");
    key(&mut app, KeyCode::Enter);
    let screen = render(&mut app, 100, 50);
    assert!(screen.contains("Custom commands"), "{screen}");
    assert!(
        screen.contains("/frontend:lint") && screen.contains("Lint the frontend (project)"),
        "{screen}"
    );
    insta::assert_snapshot!(screen);
}

#[test]
fn init_asks_for_agents_md() {
    let (mut app, mut rx) = fresh();
    let ws = tempfile::tempdir().unwrap();
    app.set_workspace(ws.path().to_path_buf());
    type_str(&mut app, "/init");
    key(&mut app, KeyCode::Enter);
    let sent = ops(&mut rx);
    assert!(
        matches!(&sent[..], [Op::RunCommand { label, text, .. }]
            if label == "/init" && text.contains("AGENTS.md") && !text.contains("already exists")),
        "{sent:?}"
    );
}

/// A command file added while pith runs shows up when the slash popup opens, no restart.
#[test]
fn a_command_added_while_running_appears_when_the_popup_opens() {
    let ws = tempfile::tempdir().expect("tempdir");
    let (mut app, _rx) = fresh();
    app.set_custom_commands(Commands::load(None, ws.path(), true));
    assert!(app.custom_commands().get("hello").is_none());
    let dir = ws.path().join(".pith").join("commands");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(
        dir.join("hello.md"),
        "---\ndescription: Say hello\n---\nSay hello.",
    )
    .expect("write");
    type_str(&mut app, "/");
    assert!(app.custom_commands().get("hello").is_some(), "reloaded");
    type_str(&mut app, "hel");
    let screen = render(&mut app, 80, 24);
    assert!(screen.contains("/hello"), "{screen}");
}
