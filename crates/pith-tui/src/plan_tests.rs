//! Plan mode like a plan (issue 38): the plan the model presents shows as Markdown in its own
//! box with the plan's three choices, each answered as the engine takes it; `/plan` enters
//! plan mode and `/help` lists it with Shift+Tab.

use crossterm::event::KeyCode;
use serde_json::json;

use pith_protocol::event::{
    Event, Op, OutputEvent, PermissionMode, PermissionReply, PermissionRequest, TurnEvent,
};
use pith_protocol::message::{PartKind, ToolState};

use super::tests::*;

const PLAN: &str =
    "## Plan\n\n1. Read `src/lib.rs`\n2. Change **`b()`** to return 2\n3. Run `cargo test`";

/// A conversation in plan mode whose model just presented `PLAN`.
fn asked() -> (
    crate::app::App,
    tokio::sync::mpsc::UnboundedReceiver<pith_protocol::event::Submission>,
) {
    let (mut app, rx) = app_with(conversation());
    ev(
        &mut app,
        Event::Output(OutputEvent::PartUpdated {
            part: part(
                "M2",
                "M2-plan",
                PartKind::Tool {
                    call_id: "c-plan".into(),
                    tool: "exit_plan_mode".into(),
                    input: json!({ "plan": PLAN }),
                    state: ToolState::Pending,
                },
            ),
        }),
    );
    ev(
        &mut app,
        Event::Turn(TurnEvent::PermissionAsked(PermissionRequest {
            id: "P1".into(),
            tool: "exit_plan_mode".into(),
            call_id: "c-plan".into(),
            title: "Accept this plan and leave plan mode?".into(),
            patterns: Vec::new(),
            agent: None,
        })),
    );
    (app, rx)
}

#[test]
fn a_plan_shows_as_markdown_in_its_own_box_with_the_plan_choices() {
    let (mut app, _rx) = asked();
    let screen = render(&mut app, 80, 24);
    assert!(screen.contains("╭ plan "), "{screen}");
    assert!(screen.contains("1. Yes, and auto-accept edits"), "{screen}");
    assert!(screen.contains("2. Yes, and ask for edits"), "{screen}");
    assert!(screen.contains("3. No, keep planning"), "{screen}");
    assert!(!screen.contains("Always allow"), "{screen}");
    // Markdown, not its source
    assert!(screen.contains("Change b() to return 2"), "{screen}");
    let in_box = |l: &&str| l.starts_with("\" │");
    assert!(
        screen.lines().filter(in_box).all(|l| !l.contains("**")),
        "{screen}"
    );
    insta::assert_snapshot!("plan_box_80x24", screen);
}

#[test]
fn each_plan_choice_is_answered_as_the_engine_takes_it() {
    // first choice: accept, edits auto-accepted (the engine's "always")
    let (mut app, mut rx) = asked();
    read_question(&mut app);
    key(&mut app, KeyCode::Enter);
    assert_eq!(
        ops(&mut rx),
        vec![Op::PermissionReply {
            id: "P1".into(),
            reply: PermissionReply::Always,
            message: None
        }]
    );
    let screen = render(&mut app, 80, 24);
    assert!(
        screen.contains("plan accepted · edits auto-accepted"),
        "{screen}"
    );

    // second: accept, edits asked about (the engine's "once")
    let (mut app, mut rx) = asked();
    read_question(&mut app);
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Enter);
    assert_eq!(
        ops(&mut rx),
        vec![Op::PermissionReply {
            id: "P1".into(),
            reply: PermissionReply::Once,
            message: None
        }]
    );

    // third: keep planning, with what to change
    let (mut app, mut rx) = asked();
    read_question(&mut app);
    key(&mut app, KeyCode::Up);
    key(&mut app, KeyCode::Enter);
    type_str(&mut app, "test first");
    key(&mut app, KeyCode::Enter);
    assert_eq!(
        ops(&mut rx),
        vec![Op::PermissionReply {
            id: "P1".into(),
            reply: PermissionReply::Deny,
            message: Some("test first".into())
        }]
    );
    let screen = render(&mut app, 80, 24);
    assert!(screen.contains("kept planning"), "{screen}");
}

#[test]
fn slash_plan_enters_plan_mode_and_help_names_shift_tab() {
    let (mut app, mut rx) = fresh();
    type_str(&mut app, "/pl");
    let popup = render(&mut app, 100, 24);
    assert!(popup.contains("/plan"), "{popup}");
    key(&mut app, KeyCode::Esc);
    app.composer_mut().clear();
    type_str(&mut app, "/plan");
    key(&mut app, KeyCode::Enter);
    assert_eq!(
        ops(&mut rx),
        vec![Op::SetPermissionMode {
            mode: PermissionMode::Plan
        }]
    );
    type_str(&mut app, "/help");
    key(&mut app, KeyCode::Enter);
    let help = render(&mut app, 100, 40);
    assert!(help.contains("/plan"), "{help}");
    assert!(help.contains("accept a plan (shift+tab)"), "{help}");
}
