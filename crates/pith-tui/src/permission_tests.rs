//! Update-function tests: permission questions, their keys and their marks on tool cells.

use crossterm::event::KeyCode;
use serde_json::json;

use pith_protocol::event::{Event, Op, OutputEvent, PermissionReply, PermissionRequest, TurnEvent};
use pith_protocol::message::{PartKind, ToolState};

use super::tests::*;

#[test]
fn keys_typed_over_a_new_question_go_to_the_composer() {
    use std::time::{Duration, Instant};
    let (mut app, mut rx) = fresh();
    let long_ago = Instant::now() - Duration::from_secs(5);
    // The user is typing a follow-up while the agent works…
    type_str(&mut app, "and the");
    // …when a question pops up under the cursor.
    ev(&mut app, asked("P1", "rm -rf build"));
    type_str(&mut app, "n then a");
    assert!(ops(&mut rx).is_empty(), "typing answered the question");
    assert_eq!(app.composer().text(), "and then then a");
    assert_eq!(app.permissions().len(), 1);
    // The question has been up a while, but the user kept typing: still the composer's.
    app.permissions_mut().shown_at(Some(long_ago));
    key(&mut app, KeyCode::Char('y'));
    assert!(ops(&mut rx).is_empty());
    assert!(app.composer().text().ends_with('y'));
    // After a pause, keys answer the question, and a quick follow-up (arrow, then Enter) too.
    app.permissions_mut().typed_at(Some(long_ago));
    render(&mut app, 80, 24);
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Enter);
    assert_eq!(
        ops(&mut rx),
        vec![Op::PermissionReply {
            id: "P1".into(),
            reply: PermissionReply::Always,
            message: None
        }]
    );
    assert_eq!(
        app.composer().text(),
        "and then then ay",
        "the prompt is kept"
    );
}

/// A bash permission question.
fn asked(id: &str, title: &str) -> Event {
    Event::Turn(TurnEvent::PermissionAsked(PermissionRequest {
        id: id.into(),
        tool: "bash".into(),
        call_id: "c".into(),
        title: title.into(),
        patterns: vec!["make *".into()],
        agent: None,
    }))
}

#[test]
fn permission_replies() {
    let req = |id: &str| asked(id, "make install");
    let (mut app, mut rx) = fresh();
    ev(&mut app, req("P1"));
    ev(&mut app, req("P2"));
    // a key typed as the question appears (the user was still writing) does not answer it: it
    // goes to the composer
    key(&mut app, KeyCode::Char('a'));
    assert!(ops(&mut rx).is_empty());
    assert_eq!(app.permissions().len(), 2);
    assert_eq!(app.composer().text(), "a");
    app.composer_mut().clear();
    read_question(&mut app);
    key(&mut app, KeyCode::Char('a'));
    assert_eq!(
        ops(&mut rx),
        vec![Op::PermissionReply {
            id: "P1".into(),
            reply: PermissionReply::Always,
            message: None
        }]
    );
    read_question(&mut app);
    key(&mut app, KeyCode::Char('n'));
    type_str(&mut app, "use the Makefile target instead");
    key(&mut app, KeyCode::Enter);
    assert_eq!(
        ops(&mut rx),
        vec![Op::PermissionReply {
            id: "P2".into(),
            reply: PermissionReply::Deny,
            message: Some("use the Makefile target instead".into())
        }]
    );
    assert!(app.permissions().is_empty());
    let screen = render(&mut app, 80, 24);
    assert!(
        screen.contains("always allowed: bash · make install"),
        "{screen}"
    );
    assert!(screen.contains("denied: bash · make install"), "{screen}");
}

#[test]
fn permission_answer_is_marked_on_the_tool_cell() {
    let (mut app, _rx) = fresh();
    let tool = |state: ToolState| {
        Event::Output(OutputEvent::PartUpdated {
            part: super::tests::part(
                "M2",
                "M2-t",
                PartKind::Tool {
                    call_id: "c1".into(),
                    tool: "bash".into(),
                    input: json!({"command": "ls -la"}),
                    state,
                },
            ),
        })
    };
    ev(&mut app, tool(ToolState::Pending));
    ev(
        &mut app,
        Event::Turn(TurnEvent::PermissionAsked(PermissionRequest {
            id: "P1".into(),
            tool: "bash".into(),
            call_id: "c1".into(),
            title: "ls -la".into(),
            patterns: vec!["ls *".into()],
            agent: None,
        })),
    );
    read_question(&mut app);
    key(&mut app, KeyCode::Char('y'));
    ev(
        &mut app,
        tool(ToolState::Completed {
            output: "total 0".into(),
            title: String::new(),
            metadata: json!({}),
            time: pith_protocol::message::ToolTime {
                start: 1_000,
                end: 1_009,
                compacted: None,
            },
        }),
    );
    let screen = render(&mut app, 80, 24);
    let header = screen
        .lines()
        .find(|l| l.contains("bash ls -la"))
        .unwrap_or_default();
    assert!(header.contains("9ms · allowed once"), "{screen}");
    assert!(
        !screen.contains("allowed once: bash"),
        "no second line for the answer: {screen}"
    );
    // the output follows the header, not the answer
    let lines: Vec<&str> = screen.lines().collect();
    let h = lines
        .iter()
        .position(|l| l.contains("bash ls -la"))
        .unwrap();
    assert!(lines[h + 1].contains("⎿ total 0"), "{screen}");
}

/// What the screen shows of a question: its box, or the status bar's `? permission`.
fn question_shown(screen: &str) -> bool {
    screen.contains("permission · bash") || screen.contains("? permission")
}

#[test]
fn ctrl_c_at_a_question_denies_it_and_ends_the_turn() {
    let (mut app, mut rx) = fresh();
    ev(&mut app, asked("P1", "make install"));
    ev(&mut app, asked("P2", "make clean"));
    read_question(&mut app);
    assert!(question_shown(&render(&mut app, 80, 24)));
    ctrl(&mut app, 'c');
    // no reply the model would go on from: the turn is interrupted, every question with it
    assert_eq!(ops(&mut rx), vec![Op::Interrupt]);
    assert!(app.permissions().is_empty());
    assert!(!app.should_quit() && !app.quit_armed(), "not a quit");
    let screen = render(&mut app, 80, 24);
    assert!(!question_shown(&screen), "{screen}");
    assert!(screen.contains("denied: bash · make install"), "{screen}");
    type_str(&mut app, "next question");
    assert!(ops(&mut rx).is_empty(), "typing answered something");
    assert_eq!(app.composer().text(), "next question");
}

#[test]
fn ctrl_c_with_the_note_open_stops_too() {
    let (mut app, mut rx) = fresh();
    ev(&mut app, asked("P1", "make install"));
    read_question(&mut app);
    key(&mut app, KeyCode::Char('n'));
    assert!(app.permissions().note().is_some());
    ctrl(&mut app, 'c');
    assert!(app.permissions().is_empty() && app.permissions().note().is_none());
    assert_eq!(ops(&mut rx), vec![Op::Interrupt]);
    type_str(&mut app, "n");
    assert_eq!(app.composer().text(), "n");
}

#[test]
fn esc_stops_the_turn_even_before_the_question_takes_keys() {
    let (mut app, mut rx) = fresh();
    ev(&mut app, asked("P1", "make install"));
    // just shown: letters would go to the composer, but esc stops at once
    key(&mut app, KeyCode::Esc);
    assert_eq!(ops(&mut rx), vec![Op::Interrupt]);
    assert!(!question_shown(&render(&mut app, 80, 24)));
    type_str(&mut app, "next question");
    assert_eq!(app.composer().text(), "next question");
}

#[test]
fn n_denies_with_a_note_and_the_turn_goes_on() {
    let (mut app, mut rx) = fresh();
    ev(&mut app, asked("P1", "make install"));
    read_question(&mut app);
    key(&mut app, KeyCode::Char('n'));
    type_str(&mut app, "use make build");
    key(&mut app, KeyCode::Enter);
    assert_eq!(
        ops(&mut rx),
        vec![Op::PermissionReply {
            id: "P1".into(),
            reply: PermissionReply::Deny,
            message: Some("use make build".into())
        }]
    );
    // an empty note denies without stopping too
    ev(&mut app, asked("P2", "make clean"));
    read_question(&mut app);
    key(&mut app, KeyCode::Char('n'));
    key(&mut app, KeyCode::Enter);
    assert!(matches!(
        ops(&mut rx).as_slice(),
        [Op::PermissionReply {
            reply: PermissionReply::Deny,
            message: None,
            ..
        }]
    ));
}

#[test]
fn a_turn_that_ends_takes_its_questions_with_it() {
    use pith_protocol::event::{EngineState, TurnEnd};
    let (mut app, mut rx) = fresh();
    ev(
        &mut app,
        Event::Turn(TurnEvent::State {
            state: EngineState::Running,
            detail: None,
        }),
    );
    ev(&mut app, asked("P1", "make install"));
    ev(&mut app, asked("P2", "make clean"));
    ev(
        &mut app,
        Event::Turn(TurnEvent::TurnFinished {
            reason: TurnEnd::Interrupted,
        }),
    );
    let screen = render(&mut app, 80, 24);
    assert!(!question_shown(&screen), "{screen}");
    assert!(screen.contains("interrupted"), "{screen}");
    // a late `y` is a letter of the next prompt, not an answer to an ended call
    read_question(&mut app);
    type_str(&mut app, "yes next");
    assert!(ops(&mut rx).is_empty(), "a late answer was sent");
    assert_eq!(app.composer().text(), "yes next");
    assert!(!render(&mut app, 80, 24).contains("allowed once"));
}

#[test]
fn a_command_can_be_allowed_for_the_session_only_as_written() {
    let (mut app, mut rx) = fresh();
    ev(&mut app, asked("P1", "make install"));
    read_question(&mut app);
    render(&mut app, 80, 24);
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Enter);
    assert_eq!(
        ops(&mut rx),
        vec![Op::PermissionReply {
            id: "P1".into(),
            reply: PermissionReply::AlwaysExact,
            message: None
        }]
    );
    // the fourth option is the denial with a note
    ev(&mut app, asked("P2", "make clean"));
    read_question(&mut app);
    render(&mut app, 80, 24);
    key(&mut app, KeyCode::Up);
    key(&mut app, KeyCode::Enter);
    assert!(app.permissions().note().is_some());
}
