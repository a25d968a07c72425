//! An MCP server's form as the user sees and answers it: typed fields from the schema with
//! their defaults, required marks and inline errors; Tab between fields, Enter submits only
//! what checks, Esc declines, Ctrl+C cancels; one test per field type drives it by keys.

use crossterm::event::KeyCode;
use serde_json::json;

use pith_protocol::elicitation::{ElicitationAction, ElicitationRequest, parse_form};
use pith_protocol::event::{Event, Op, TurnEvent};

use super::tests::*;

fn asked(schema: serde_json::Value, order: &[&str]) -> Event {
    let order: Vec<String> = order.iter().map(|s| s.to_string()).collect();
    let (message, form) = parse_form(
        "Deploy \u{1b}[31mstaging\u{1b}[0m now?\nPick the settings below.",
        &schema,
        &order,
    )
    .unwrap();
    Event::Turn(TurnEvent::ElicitationAsked(ElicitationRequest {
        id: "F1".into(),
        server: "deploy".into(),
        message,
        form,
    }))
}

fn sample() -> Event {
    asked(
        json!({"type": "object", "properties": {
            "name": {"type": "string", "title": "Release name", "description": "shown in the changelog", "minLength": 2, "default": "v1"},
            "replicas": {"type": "integer", "title": "Replicas", "minimum": 1, "maximum": 9, "default": 2},
            "notify": {"type": "boolean", "title": "Notify the team", "default": true},
            "region": {"type": "string", "title": "Region", "oneOf": [{"const": "eu", "title": "Europe"}, {"const": "us", "title": "America"}], "default": "eu"},
            "checks": {"type": "array", "title": "Checks", "items": {"type": "string", "enum": ["lint", "test", "e2e"]}, "default": ["test"]},
            "owner": {"type": "string", "title": "Owner email", "format": "email"}
        }, "required": ["name", "replicas", "owner"]}),
        &["name", "replicas", "notify", "region", "checks", "owner"],
    )
}

/// The reply the app sent, as (action, content).
fn reply(
    rx: &mut tokio::sync::mpsc::UnboundedReceiver<pith_protocol::event::Submission>,
) -> (ElicitationAction, Option<serde_json::Value>) {
    let sent = ops(rx);
    match sent.as_slice() {
        [
            Op::ElicitationReply {
                id,
                action,
                content,
            },
        ] => {
            assert_eq!(id, "F1");
            (*action, content.clone().map(serde_json::Value::Object))
        }
        other => panic!("expected one reply, got {other:?}"),
    }
}

fn tab(app: &mut crate::app::App, n: usize) {
    for _ in 0..n {
        key(app, KeyCode::Tab);
    }
}

#[test]
fn the_form_shows_typed_fields_with_defaults_and_required_marks() {
    let (mut app, _rx) = fresh();
    ev(&mut app, sample());
    let screen = render(&mut app, 100, 34);
    assert!(screen.contains("MCP server deploy asks"), "{screen}");
    assert!(screen.contains("Deploy staging now?"), "{screen}");
    assert!(!screen.contains('\u{1b}'));
    assert!(screen.contains("Release name *"), "{screen}");
    assert!(screen.contains("◀ Europe ▶"), "{screen}");
    assert!(screen.contains("[x] test"), "{screen}");
    insta::assert_snapshot!("elicit_form_100x34", screen);
}

#[test]
fn enter_with_a_required_field_empty_shows_the_error_and_sends_nothing() {
    let (mut app, mut rx) = fresh();
    ev(&mut app, sample());
    key(&mut app, KeyCode::Enter);
    assert!(ops(&mut rx).is_empty(), "sent with a required field empty");
    let screen = render(&mut app, 100, 34);
    assert!(screen.contains("! required"), "{screen}");
    insta::assert_snapshot!("elicit_form_error_100x34", screen);
    // focus went to the empty field: typing fills it; a bad email is refused, a good one sent
    type_str(&mut app, "ops");
    key(&mut app, KeyCode::Enter);
    assert!(ops(&mut rx).is_empty());
    assert!(render(&mut app, 100, 34).contains("! not a valid email"));
    type_str(&mut app, "@example.com");
    key(&mut app, KeyCode::Enter);
    let (action, content) = reply(&mut rx);
    assert_eq!(action, ElicitationAction::Accept);
    assert_eq!(
        content.unwrap(),
        json!({"name": "v1", "replicas": 2, "notify": true, "region": "eu", "checks": ["test"], "owner": "ops@example.com"})
    );
    assert!(render(&mut app, 100, 34).contains("answered MCP server deploy's question"));
}

#[test]
fn text_field_typed_and_erased() {
    let (mut app, mut rx) = fresh();
    ev(
        &mut app,
        asked(
            json!({"type": "object", "properties": {"t": {"type": "string", "maxLength": 4}}}),
            &["t"],
        ),
    );
    type_str(&mut app, "abcde");
    key(&mut app, KeyCode::Enter);
    assert!(ops(&mut rx).is_empty(), "too long was sent");
    key(&mut app, KeyCode::Backspace);
    key(&mut app, KeyCode::Backspace);
    key(&mut app, KeyCode::Enter);
    assert_eq!(reply(&mut rx).1.unwrap(), json!({"t": "abc"}));
}

#[test]
fn number_field_takes_numbers_in_range() {
    let (mut app, mut rx) = fresh();
    ev(
        &mut app,
        asked(
            json!({"type": "object", "properties": {"n": {"type": "number", "minimum": 0, "maximum": 1}}, "required": ["n"]}),
            &["n"],
        ),
    );
    type_str(&mut app, "x");
    key(&mut app, KeyCode::Enter);
    assert!(render(&mut app, 80, 20).contains("! must be a number"));
    key(&mut app, KeyCode::Backspace);
    type_str(&mut app, "0.5");
    key(&mut app, KeyCode::Enter);
    assert_eq!(reply(&mut rx).1.unwrap(), json!({"n": 0.5}));
}

#[test]
fn boolean_field_toggles() {
    let (mut app, mut rx) = fresh();
    ev(
        &mut app,
        asked(
            json!({"type": "object", "properties": {"b": {"type": "boolean", "default": false}}}),
            &["b"],
        ),
    );
    assert!(render(&mut app, 80, 20).contains("[ ] no"));
    key(&mut app, KeyCode::Char(' '));
    assert!(render(&mut app, 80, 20).contains("[x] yes"));
    key(&mut app, KeyCode::Enter);
    assert_eq!(reply(&mut rx).1.unwrap(), json!({"b": true}));
}

#[test]
fn choice_field_cycles_its_options() {
    let (mut app, mut rx) = fresh();
    ev(
        &mut app,
        asked(
            json!({"type": "object", "properties": {"c": {"type": "string", "enum": ["a", "b", "c"], "enumNames": ["Alpha", "Beta", "Gamma"]}}, "required": ["c"]}),
            &["c"],
        ),
    );
    assert!(render(&mut app, 80, 20).contains("(none)"));
    key(&mut app, KeyCode::Right);
    key(&mut app, KeyCode::Right);
    assert!(render(&mut app, 80, 20).contains("◀ Beta ▶"));
    key(&mut app, KeyCode::Left);
    key(&mut app, KeyCode::Left);
    assert!(
        render(&mut app, 80, 20).contains("◀ Gamma ▶"),
        "wraps around"
    );
    key(&mut app, KeyCode::Enter);
    assert_eq!(reply(&mut rx).1.unwrap(), json!({"c": "c"}));
}

#[test]
fn multi_select_field_toggles_the_option_under_the_cursor() {
    let (mut app, mut rx) = fresh();
    ev(
        &mut app,
        asked(
            json!({"type": "object", "properties": {"m": {"type": "array", "items": {"anyOf": [{"const": "x", "title": "X"}, {"const": "y", "title": "Y"}]}, "minItems": 1}}}),
            &["m"],
        ),
    );
    key(&mut app, KeyCode::Enter);
    assert!(render(&mut app, 80, 20).contains("! pick at least 1"));
    key(&mut app, KeyCode::Right);
    key(&mut app, KeyCode::Char(' '));
    assert!(render(&mut app, 80, 20).contains("[x] Y"));
    key(&mut app, KeyCode::Enter);
    assert_eq!(reply(&mut rx).1.unwrap(), json!({"m": ["y"]}));
}

#[test]
fn esc_declines_ctrl_c_cancels_and_the_next_form_follows() {
    let (mut app, mut rx) = fresh();
    ev(&mut app, sample());
    ev(&mut app, sample());
    tab(&mut app, 2);
    key(&mut app, KeyCode::BackTab);
    key(&mut app, KeyCode::Esc);
    assert_eq!(reply(&mut rx), (ElicitationAction::Decline, None));
    assert!(
        render(&mut app, 100, 34).contains("MCP server deploy asks"),
        "the second form"
    );
    ctrl(&mut app, 'c');
    assert_eq!(reply(&mut rx), (ElicitationAction::Cancel, None));
    assert!(app.forms().front().is_none());
    assert!(!app.quit_armed(), "ctrl+c at a form does not arm quitting");
}

#[test]
fn a_paste_goes_into_the_focused_text_field_without_controls() {
    let (mut app, mut rx) = fresh();
    ev(
        &mut app,
        asked(
            json!({"type": "object", "properties": {"t": {"type": "string"}}}),
            &["t"],
        ),
    );
    app.update(crate::app::Msg::Term(crossterm::event::Event::Paste(
        "he\u{1b}[2Jllo\nworld".into(),
    )));
    key(&mut app, KeyCode::Enter);
    let sent = reply(&mut rx).1.unwrap();
    let t = sent["t"].as_str().unwrap();
    assert!(!t.chars().any(char::is_control), "{t:?}");
    assert!(t.starts_with("he") && t.contains("world"), "{t:?}");
}

#[test]
fn a_form_taller_than_the_screen_keeps_the_focused_field_in_view() {
    let (mut app, _rx) = fresh();
    ev(&mut app, sample());
    let top = render(&mut app, 100, 16);
    assert!(top.contains("Release name"), "{top}");
    assert!(!top.contains("Owner email"), "{top}");
    tab(&mut app, 5);
    let bottom = render(&mut app, 100, 16);
    assert!(bottom.contains("› Owner email"), "{bottom}");
    assert!(
        bottom.contains("enter submit"),
        "the keys stay on screen: {bottom}"
    );
}

#[test]
fn the_turns_end_closes_its_forms() {
    let (mut app, mut rx) = fresh();
    ev(&mut app, sample());
    ev(
        &mut app,
        Event::Turn(TurnEvent::TurnFinished {
            reason: pith_protocol::event::TurnEnd::Interrupted,
        }),
    );
    assert!(app.forms().front().is_none());
    assert!(!render(&mut app, 100, 34).contains("MCP server deploy asks"));
    // keys go to the composer again, and nothing was answered
    type_str(&mut app, "hi");
    assert!(ops(&mut rx).is_empty());
    assert_eq!(app.composer().text(), "hi");
}

#[test]
fn text_is_edited_at_the_cursor_and_a_letter_jumps_to_a_choice() {
    let (mut app, mut rx) = fresh();
    ev(
        &mut app,
        asked(
            json!({"type": "object", "properties": {
                "t": {"type": "string", "default": "helo"},
                "c": {"type": "string", "enum": ["a", "b", "c"], "enumNames": ["Apple", "Banana", "Cherry"]}
            }}),
            &["t", "c"],
        ),
    );
    key(&mut app, KeyCode::Left);
    type_str(&mut app, "l");
    key(&mut app, KeyCode::Home);
    key(&mut app, KeyCode::Delete);
    type_str(&mut app, "H");
    key(&mut app, KeyCode::End);
    type_str(&mut app, "!");
    assert!(render(&mut app, 80, 20).contains("[ Hello!▏ ]"));
    key(&mut app, KeyCode::Tab);
    type_str(&mut app, "c");
    assert!(render(&mut app, 80, 20).contains("◀ Cherry ▶"));
    key(&mut app, KeyCode::Enter);
    assert_eq!(reply(&mut rx).1.unwrap(), json!({"t": "Hello!", "c": "c"}));
}

#[test]
fn a_tiny_terminal_still_draws_the_form_without_panicking() {
    let (mut app, _rx) = fresh();
    ev(&mut app, sample());
    for (w, h) in [(12, 4), (20, 6), (30, 8), (200, 60)] {
        let _ = render(&mut app, w, h);
    }
    tab(&mut app, 5);
    let _ = render(&mut app, 20, 6);
}

#[test]
fn an_optional_choice_can_be_left_unanswered_again() {
    let (mut app, mut rx) = fresh();
    ev(
        &mut app,
        asked(
            json!({"type": "object", "properties": {
                "c": {"type": "string", "enum": ["a", "b"], "default": "a"},
                "b": {"type": "boolean", "default": true}
            }}),
            &["c", "b"],
        ),
    );
    key(&mut app, KeyCode::Backspace);
    assert!(render(&mut app, 80, 20).contains("(none)"));
    key(&mut app, KeyCode::Tab);
    key(&mut app, KeyCode::Delete);
    assert!(render(&mut app, 80, 20).contains("[?] not set"));
    key(&mut app, KeyCode::Enter);
    assert_eq!(reply(&mut rx).1.unwrap(), json!({}));
}
