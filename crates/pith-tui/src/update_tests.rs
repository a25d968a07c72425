//! Update-function tests: keys, mouse, paste and scrolling change state and send `Op`s.

use crossterm::event::{Event as TermEvent, KeyCode, KeyEvent, KeyModifiers};

use pith_protocol::event::{
    ContextEvent, ContextUsage, EngineState, Event, Op, OutputEvent, SettingsEvent, TurnEvent,
};
use pith_protocol::message::Role;

use super::app::{Msg, Popup};
use super::tests::*;

#[test]
fn enter_sends_user_turn_and_shows_it_pending() {
    let (mut app, mut rx) = fresh();
    type_str(&mut app, "hello there");
    key(&mut app, KeyCode::Enter);
    let sent = prompts(&mut rx);
    assert_eq!(sent.len(), 1);
    let (id, text) = &sent[0];
    assert_eq!(text, "hello there");
    assert!(app.composer().is_empty());
    assert_eq!(app.transcript().pending().len(), 1);
    assert!(!app.transcript().pending()[0].queued);
    // a message with the same text that is not the echo of this prompt leaves it pending
    ev(
        &mut app,
        Event::Output(OutputEvent::Message {
            message: user("M0", "hello there"),
        }),
    );
    assert_eq!(
        app.transcript().pending().len(),
        1,
        "paired by id, not by text"
    );
    // the engine echoes the message with the prompt's id: the pending copy goes
    let mut echo = user("M1", "hello there");
    echo.submission_id = Some(id.clone());
    ev(
        &mut app,
        Event::Output(OutputEvent::Message { message: echo }),
    );
    assert!(app.transcript().pending().is_empty());
    // empty prompt: nothing sent
    key(&mut app, KeyCode::Enter);
    assert!(ops(&mut rx).is_empty());
}

#[test]
fn typing_while_busy_queues() {
    let (mut app, mut rx) = fresh();
    ev(
        &mut app,
        Event::Turn(TurnEvent::State {
            state: EngineState::Thinking,
            detail: None,
        }),
    );
    type_str(&mut app, "and tests too");
    key(&mut app, KeyCode::Enter);
    assert_eq!(prompt_texts(&mut rx), vec!["and tests too"]);
    assert!(app.transcript().pending()[0].queued);
}

#[test]
fn newline_keys_do_not_send() {
    let (mut app, mut rx) = fresh();
    type_str(&mut app, "a");
    app.update(Msg::Term(TermEvent::Key(KeyEvent::new(
        KeyCode::Enter,
        KeyModifiers::SHIFT,
    ))));
    type_str(&mut app, "b");
    ctrl(&mut app, 'j');
    type_str(&mut app, "c");
    assert_eq!(app.composer().text(), "a\nb\nc");
    assert!(ops(&mut rx).is_empty());
}

#[test]
fn esc_interrupts_only_while_busy() {
    let (mut app, mut rx) = fresh();
    key(&mut app, KeyCode::Esc);
    assert!(ops(&mut rx).is_empty());
    ev(
        &mut app,
        Event::Turn(TurnEvent::State {
            state: EngineState::Running,
            detail: Some("bash".into()),
        }),
    );
    key(&mut app, KeyCode::Esc);
    assert_eq!(ops(&mut rx), vec![Op::Interrupt]);
}

#[test]
fn ctrl_c_clears_then_twice_quits() {
    let (mut app, mut rx) = fresh();
    type_str(&mut app, "draft");
    ctrl(&mut app, 'c');
    assert!(app.composer().is_empty());
    assert!(!app.should_quit());
    ctrl(&mut app, 'c');
    assert!(!app.should_quit(), "one press on an empty prompt only arms");
    assert!(render(&mut app, 80, 24).contains("press ctrl+c again to quit"));
    assert_eq!(app.exit_code(), 0);
    ctrl(&mut app, 'c');
    assert!(app.should_quit());
    // Left with Ctrl-C: the shell sees 130, as for `pith run`.
    assert_eq!(app.exit_code(), 130);
    assert_eq!(ops(&mut rx), vec![Op::Shutdown]);
}

#[test]
fn ctrl_c_arm_is_cancelled_by_other_keys() {
    let (mut app, _rx) = fresh();
    ctrl(&mut app, 'c');
    type_str(&mut app, "x");
    ctrl(&mut app, 'c'); // clears "x"
    ctrl(&mut app, 'c'); // arms
    assert!(!app.should_quit());
}

#[test]
fn up_recalls_history() {
    let (mut app, _rx) = app_with(conversation());
    key(&mut app, KeyCode::Up);
    assert_eq!(app.composer().text(), "Why does `cargo test` fail?");
    type_str(&mut app, "");
    key(&mut app, KeyCode::Down);
    assert_eq!(app.composer().text(), "");
}

#[test]
fn tab_completes_slash_command() {
    let (mut app, _rx) = fresh();
    type_str(&mut app, "/comp");
    key(&mut app, KeyCode::Tab);
    assert_eq!(app.composer().text(), "/compact ");
    let (mut app, _rx) = fresh();
    type_str(&mut app, "/co");
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Tab);
    assert_eq!(app.composer().text(), "/context");
}

#[test]
fn compact_with_focus() {
    let (mut app, mut rx) = fresh();
    type_str(&mut app, "/compact keep the API decisions");
    key(&mut app, KeyCode::Enter);
    assert_eq!(
        ops(&mut rx),
        vec![Op::Compact {
            focus: Some("keep the API decisions".into())
        }]
    );
    type_str(&mut app, "/compact");
    key(&mut app, KeyCode::Enter);
    assert_eq!(ops(&mut rx), vec![Op::Compact { focus: None }]);
}

#[test]
fn unknown_command_is_an_error_not_a_prompt() {
    let (mut app, mut rx) = fresh();
    type_str(&mut app, "/frobnicate now");
    key(&mut app, KeyCode::Enter);
    assert!(ops(&mut rx).is_empty());
    assert!(render(&mut app, 80, 24).contains("unknown command /frobnicate"));
    // a path is a prompt
    type_str(&mut app, "/usr/bin/env is missing");
    key(&mut app, KeyCode::Enter);
    assert_eq!(prompt_texts(&mut rx), vec!["/usr/bin/env is missing"]);
}

#[test]
fn paste_collapses_and_expands_on_send() {
    let (mut app, mut rx) = fresh();
    let big: String = (0..30).map(|i| format!("log line {i}\n")).collect();
    app.update(Msg::Term(TermEvent::Paste(big.clone())));
    assert!(render(&mut app, 80, 24).contains("[pasted 30 lines]"));
    type_str(&mut app, " what broke?");
    key(&mut app, KeyCode::Enter);
    match ops(&mut rx).as_slice() {
        [Op::UserTurn { text, pasted, .. }] => {
            assert_eq!(*text, format!("{big} what broke?"));
            assert_eq!(
                *pasted,
                vec![(0, big.len())],
                "the engine is told what was pasted"
            );
        }
        other => panic!("expected one user turn, got {other:?}"),
    }
}

#[test]
fn scrolling_holds_position_while_output_streams() {
    let (mut app, _rx) = fresh();
    ev(
        &mut app,
        Event::Output(OutputEvent::Message {
            message: msg("M1", Role::Assistant),
        }),
    );
    let long: String = (0..100).map(|i| format!("line {i}\n\n")).collect();
    stream(&mut app, "M1", "M1-t", &[&long]);
    render(&mut app, 80, 24);
    assert_eq!(app.transcript().scroll_top(), None);
    key(&mut app, KeyCode::PageUp);
    let top = app.transcript().scroll_top().expect("scrolled");
    stream(&mut app, "M1", "M1-t", &["more\n\nand more"]);
    let screen = render(&mut app, 80, 24);
    assert_eq!(
        app.transcript().scroll_top(),
        Some(top),
        "position kept while new output arrives"
    );
    // the hint is on the composer's border, not over the transcript's last line
    let hint_row = screen
        .lines()
        .position(|l| l.contains("more lines · end follows"))
        .unwrap_or_else(|| panic!("{screen}"));
    assert!(
        screen.lines().nth(hint_row).unwrap().contains('╭'),
        "{screen}"
    );
    key(&mut app, KeyCode::End);
    let screen = render(&mut app, 80, 24);
    assert!(screen.contains("and more"), "{screen}");
    key(&mut app, KeyCode::Home);
    assert!(render(&mut app, 80, 24).contains("line 0"));
}

#[test]
fn only_changed_cells_relayout() {
    let mut msgs = Vec::new();
    for i in 0..500 {
        msgs.push(user(
            &format!("U{i}"),
            &format!("question {i} with `code` and words"),
        ));
        let mut a = msg(&format!("A{i}"), Role::Assistant);
        a.parts.push(text(
            &format!("A{i}"),
            &format!("A{i}-t"),
            "Answer with **bold** and a list:\n\n- one\n- two\n\n```rust\nfn x() {}\n```",
        ));
        msgs.push(a);
    }
    let (mut app, _rx) = app_with(msgs);
    render(&mut app, 120, 40);
    let first = app.transcript().renders();
    assert_eq!(first, 1_000);
    // only what is on screen (40 rows) had its code highlighted
    let revealed = app.transcript().reveals();
    assert!((1..=40).contains(&revealed), "{revealed} cells revealed");
    stream(&mut app, "A499", "A499-t", &[" more"]);
    render(&mut app, 120, 40);
    assert_eq!(
        app.transcript().renders(),
        first + 1,
        "only the streaming cell re-rendered"
    );
    assert_eq!(
        app.transcript().reveals(),
        revealed,
        "the streaming cell is highlighted as it is laid out"
    );
    render(&mut app, 100, 40);
    assert_eq!(
        app.transcript().renders(),
        first + 1 + 1_000,
        "a resize reflows everything"
    );
}

#[test]
fn odd_sizes_and_empty_state_do_not_panic() {
    let (mut app, _rx) = app_with(conversation());
    ev(
        &mut app,
        Event::Context(ContextEvent::ContextUsage(ContextUsage::default())),
    );
    for (w, h) in [
        (0, 0),
        (1, 1),
        (5, 3),
        (12, 4),
        (20, 6),
        (80, 24),
        (300, 80),
    ] {
        render(&mut app, w, h);
    }
    key(&mut app, KeyCode::PageUp);
    key(&mut app, KeyCode::PageDown);
    let (mut empty, _rx) = fresh();
    render(&mut empty, 0, 0);
    key(&mut empty, KeyCode::PageUp);
    render(&mut empty, 80, 24);
}

#[test]
fn click_folds_and_wheel_scrolls() {
    use crossterm::event::{MouseButton, MouseEvent, MouseEventKind};
    let mouse = |kind, row| {
        Msg::Term(TermEvent::Mouse(MouseEvent {
            kind,
            column: 5,
            row,
            modifiers: KeyModifiers::NONE,
        }))
    };
    let (mut app, _rx) = app_with(conversation());
    let screen = render(&mut app, 80, 24);
    let row = screen
        .lines()
        .position(|l| l.contains("✓ bash cargo test"))
        .unwrap() as u16;
    app.update(mouse(MouseEventKind::Down(MouseButton::Left), row));
    let screen = render(&mut app, 80, 24);
    assert!(
        screen.contains("test result: FAILED"),
        "click unfolds: {screen}"
    );
    app.update(mouse(MouseEventKind::Down(MouseButton::Left), row));
    assert!(
        !render(&mut app, 80, 24).contains("test result: FAILED"),
        "click folds again"
    );
    // motion alone does not ask for a redraw
    app.drawn();
    app.update(mouse(MouseEventKind::Moved, 3));
    assert!(!app.needs_draw());

    let (mut app, _rx) = fresh();
    ev(
        &mut app,
        Event::Output(OutputEvent::Message {
            message: msg("M1", Role::Assistant),
        }),
    );
    let long: String = (0..60).map(|i| format!("para {i}\n\n")).collect();
    stream(&mut app, "M1", "M1-t", &[&long]);
    render(&mut app, 80, 24);
    app.update(mouse(MouseEventKind::ScrollUp, 3));
    let top = app.transcript().scroll_top().expect("wheel scrolled up");
    app.update(mouse(MouseEventKind::ScrollDown, 3));
    assert_eq!(
        app.transcript().scroll_top(),
        None,
        "back at the bottom: following again (from {top})"
    );
}

#[test]
fn ctrl_o_expands_everything() {
    let (mut app, _rx) = app_with(compacted_history());
    let before = render(&mut app, 80, 40);
    assert!(!before.contains("Run the tests first."));
    ctrl(&mut app, 'o');
    let after = render(&mut app, 80, 40);
    assert!(
        after.contains("Run the tests first."),
        "reasoning unfolded: {after}"
    );
    assert!(
        after.contains("test result: FAILED"),
        "tool output unfolded"
    );
    assert!(
        after.contains("Fix the failing test b."),
        "summary unfolded"
    );
}

#[test]
fn an_enter_typed_ahead_of_raw_mode_sends() {
    // before raw mode the terminal turns Enter into a line feed, read later as Ctrl+J
    let (mut app, mut rx) = fresh();
    type_str(&mut app, "hi");
    let lf = TermEvent::Key(KeyEvent::new(KeyCode::Char('j'), KeyModifiers::CONTROL));
    app.update(Msg::Term(super::typeahead_key(lf)));
    assert_eq!(prompt_texts(&mut rx), vec!["hi"]);
    // other keys pass through untouched
    let a = TermEvent::Key(KeyEvent::new(KeyCode::Char('a'), KeyModifiers::NONE));
    assert_eq!(super::typeahead_key(a.clone()), a);
}

/// A command that changes the session, typed while the agent works, says it will wait; a
/// read-only one runs at once.
#[test]
fn commands_during_a_turn_say_when_they_run() {
    let (mut app, mut rx) = fresh();
    ev(
        &mut app,
        Event::Turn(TurnEvent::State {
            state: EngineState::Thinking,
            detail: None,
        }),
    );
    type_str(&mut app, "/new");
    key(&mut app, KeyCode::Enter);
    assert_eq!(ops(&mut rx), vec![Op::NewSession]);
    let screen = render(&mut app, 80, 24);
    assert!(
        screen.contains("/new runs when the agent finishes this turn"),
        "{screen}"
    );
    type_str(&mut app, "/context");
    key(&mut app, KeyCode::Enter);
    assert_eq!(ops(&mut rx), vec![Op::ContextBreakdown]);
    assert!(!render(&mut app, 80, 24).contains("/context runs when"));
    assert!(matches!(app.popup(), Some(Popup::Context(c)) if c.breakdown().is_none()));
    // closed before the answer: a late answer does not open it again
    key(&mut app, KeyCode::Esc);
    ev(
        &mut app,
        Event::Context(ContextEvent::ContextBreakdown {
            breakdown: Default::default(),
            pins: Vec::new(),
            instructions: Vec::new(),
        }),
    );
    assert!(app.popup().is_none());
}

/// At 80 columns `/help` wraps a long description under itself instead of cutting it.
#[test]
fn help_at_80_columns_shows_every_command_description_whole() {
    let (mut app, _rx) = fresh();
    type_str(&mut app, "/help");
    key(&mut app, KeyCode::Enter);
    let screen = render(&mut app, 80, 60);
    let flat: String = screen
        .lines()
        .map(|l| l.replace(['│', '╭', '╮', '╰', '╯', '─', '"'], " "))
        .collect::<Vec<_>>()
        .join(" ");
    let flat = flat.split_whitespace().collect::<Vec<_>>().join(" ");
    for c in pith_commands::commands::Command::all() {
        assert!(flat.contains(c.about()), "/{} cut: {screen}", c.name());
    }
}

/// Shift+Tab asks for the next permission mode; the status bar shows the mode the engine
/// reports.
#[test]
fn shift_tab_cycles_the_permission_mode() {
    use pith_protocol::event::PermissionMode;
    let (mut app, mut rx) = fresh();
    key(&mut app, KeyCode::BackTab);
    match ops(&mut rx).as_slice() {
        [Op::SetPermissionMode { mode }] => assert_eq!(*mode, PermissionMode::AcceptEdits),
        other => panic!("expected a mode change, got {other:?}"),
    }
    assert!(
        !render(&mut app, 100, 24).contains("accept-edits"),
        "not before the engine says"
    );
    ev(
        &mut app,
        Event::Settings(SettingsEvent::PermissionModeChanged {
            mode: PermissionMode::AcceptEdits,
        }),
    );
    assert!(render(&mut app, 100, 24).contains("⏵ accept-edits"));
    key(&mut app, KeyCode::BackTab);
    match ops(&mut rx).as_slice() {
        [Op::SetPermissionMode { mode }] => assert_eq!(*mode, PermissionMode::Plan),
        other => panic!("expected a mode change, got {other:?}"),
    }
}
