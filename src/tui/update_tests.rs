//! Update-function tests: keys, mouse, paste and engine events change state and send `Op`s.

use crossterm::event::{Event as TermEvent, KeyCode, KeyEvent, KeyModifiers};
use serde_json::json;
use tokio::sync::mpsc::unbounded_channel;

use crate::event::{
    ContextUsage, EngineState, ErrorKind, Event, Op, PermissionReply, PermissionRequest, TurnEnd,
};
use crate::message::{CompactionPart, PartKind, Role, ToolState, Usage};

use super::app::{App, Msg, Popup};
use super::tests::*;
use super::view::status;

#[test]
fn enter_sends_user_turn_and_shows_it_pending() {
    let (mut app, mut rx) = fresh();
    type_str(&mut app, "hello there");
    key(&mut app, KeyCode::Enter);
    let sent = prompts(&mut rx);
    assert_eq!(sent.len(), 1);
    let (id, text) = &sent[0];
    assert_eq!(text, "hello there");
    assert!(app.composer.is_empty());
    assert_eq!(app.pending.len(), 1);
    assert!(!app.pending[0].queued);
    // a message with the same text that is not the echo of this prompt leaves it pending
    ev(
        &mut app,
        Event::Message {
            message: user("M0", "hello there"),
        },
    );
    assert_eq!(app.pending.len(), 1, "paired by id, not by text");
    // the engine echoes the message with the prompt's id: the pending copy goes
    let mut echo = user("M1", "hello there");
    echo.submission_id = Some(id.clone());
    ev(&mut app, Event::Message { message: echo });
    assert!(app.pending.is_empty());
    // empty prompt: nothing sent
    key(&mut app, KeyCode::Enter);
    assert!(ops(&mut rx).is_empty());
}

#[test]
fn typing_while_busy_queues() {
    let (mut app, mut rx) = fresh();
    ev(
        &mut app,
        Event::State {
            state: EngineState::Thinking,
            detail: None,
        },
    );
    type_str(&mut app, "and tests too");
    key(&mut app, KeyCode::Enter);
    assert_eq!(prompt_texts(&mut rx), vec!["and tests too"]);
    assert!(app.pending[0].queued);
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
    assert_eq!(app.composer.text(), "a\nb\nc");
    assert!(ops(&mut rx).is_empty());
}

#[test]
fn esc_interrupts_only_while_busy() {
    let (mut app, mut rx) = fresh();
    key(&mut app, KeyCode::Esc);
    assert!(ops(&mut rx).is_empty());
    ev(
        &mut app,
        Event::State {
            state: EngineState::Running,
            detail: Some("bash".into()),
        },
    );
    key(&mut app, KeyCode::Esc);
    assert_eq!(ops(&mut rx), vec![Op::Interrupt]);
}

#[test]
fn ctrl_c_clears_then_twice_quits() {
    let (mut app, mut rx) = fresh();
    type_str(&mut app, "draft");
    ctrl(&mut app, 'c');
    assert!(app.composer.is_empty());
    assert!(!app.should_quit);
    ctrl(&mut app, 'c');
    assert!(!app.should_quit, "one press on an empty prompt only arms");
    assert!(render(&mut app, 80, 24).contains("press ctrl+c again to quit"));
    assert_eq!(app.exit_code, 0);
    ctrl(&mut app, 'c');
    assert!(app.should_quit);
    // Left with Ctrl-C: the shell sees 130, as for `pith run`.
    assert_eq!(app.exit_code, 130);
    assert_eq!(ops(&mut rx), vec![Op::Shutdown]);
}

#[test]
fn ctrl_c_arm_is_cancelled_by_other_keys() {
    let (mut app, _rx) = fresh();
    ctrl(&mut app, 'c');
    type_str(&mut app, "x");
    ctrl(&mut app, 'c'); // clears "x"
    ctrl(&mut app, 'c'); // arms
    assert!(!app.should_quit);
}

#[test]
fn up_recalls_history() {
    let (mut app, _rx) = app_with(conversation());
    key(&mut app, KeyCode::Up);
    assert_eq!(app.composer.text(), "Why does `cargo test` fail?");
    type_str(&mut app, "");
    key(&mut app, KeyCode::Down);
    assert_eq!(app.composer.text(), "");
}

#[test]
fn tab_completes_slash_command() {
    let (mut app, _rx) = fresh();
    type_str(&mut app, "/comp");
    key(&mut app, KeyCode::Tab);
    assert_eq!(app.composer.text(), "/compact ");
    let (mut app, _rx) = fresh();
    type_str(&mut app, "/co");
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Tab);
    assert_eq!(app.composer.text(), "/context");
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
    assert_eq!(app.composer.text(), "and then then a");
    assert_eq!(app.permissions.queue.len(), 1);
    // The question has been up a while, but the user kept typing: still the composer's.
    app.permissions.shown_at = Some(long_ago);
    key(&mut app, KeyCode::Char('y'));
    assert!(ops(&mut rx).is_empty());
    assert!(app.composer.text().ends_with('y'));
    // After a pause, keys answer the question, and a quick follow-up (arrow, then Enter) too.
    app.permissions.typed_at = Some(long_ago);
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
        app.composer.text(),
        "and then then ay",
        "the prompt is kept"
    );
}

/// A bash permission question.
fn asked(id: &str, title: &str) -> Event {
    Event::PermissionAsked(PermissionRequest {
        id: id.into(),
        tool: "bash".into(),
        call_id: "c".into(),
        title: title.into(),
        patterns: vec!["make *".into()],
        agent: None,
    })
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
    assert_eq!(app.permissions.queue.len(), 2);
    assert_eq!(app.composer.text(), "a");
    app.composer.clear();
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
    assert!(app.permissions.queue.is_empty());
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
    let tool = |state: ToolState| Event::PartUpdated {
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
    };
    ev(&mut app, tool(ToolState::Pending));
    ev(
        &mut app,
        Event::PermissionAsked(PermissionRequest {
            id: "P1".into(),
            tool: "bash".into(),
            call_id: "c1".into(),
            title: "ls -la".into(),
            patterns: vec!["ls *".into()],
            agent: None,
        }),
    );
    read_question(&mut app);
    key(&mut app, KeyCode::Char('y'));
    ev(
        &mut app,
        tool(ToolState::Completed {
            output: "total 0".into(),
            title: String::new(),
            metadata: json!({}),
            time: crate::message::ToolTime {
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

#[test]
fn model_picker_switches_model() {
    let (mut app, mut rx) = fresh();
    type_str(&mut app, "/model");
    key(&mut app, KeyCode::Enter);
    assert!(matches!(app.popup, Some(Popup::Picker(_))));
    type_str(&mut app, "mini");
    key(&mut app, KeyCode::Enter);
    assert_eq!(
        ops(&mut rx),
        vec![Op::SetModel {
            model: "openai/gpt-4.1-mini".into()
        }]
    );
    // the status bar changes when the engine confirms, not before
    assert_eq!(app.model, "anthropic/claude-sonnet-4-5");
    // a notice that merely reads like a switch is not one
    ev(
        &mut app,
        Event::Info {
            message: "model: openai/gpt-4.1-mini".into(),
        },
    );
    assert_eq!(app.model, "anthropic/claude-sonnet-4-5");
    ev(
        &mut app,
        Event::ModelChanged {
            model: "openai/gpt-4.1-mini".into(),
        },
    );
    assert_eq!(app.model, "openai/gpt-4.1-mini");
    assert!(app.pending_model.is_none());
    assert!(
        status::status_line(&app, 120)
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
        Event::Error {
            kind: ErrorKind::Export,
            message: "cannot write x.md".into(),
        },
    );
    assert_eq!(app.pending_model.as_deref(), Some("openai/gpt-4.1"));
    ev(
        &mut app,
        Event::Error {
            kind: ErrorKind::Model,
            message: "the key is missing".into(),
        },
    );
    assert_eq!(app.model, "anthropic/claude-sonnet-4-5");
    assert!(app.pending_model.is_none());
    assert!(
        status::status_line(&app, 120)
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
        Event::Sessions {
            sessions: vec![session(), other.clone()],
        },
    );
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Enter);
    assert_eq!(ops(&mut rx), vec![Op::ResumeSession { id: "S2".into() }]);
    ev(
        &mut app,
        Event::SessionLoaded {
            session: other,
            messages: conversation(),
            more_history: false,
        },
    );
    assert_eq!(app.session.id, "S2");
    assert!((app.cost - 0.25).abs() < 1e-9);
    assert!(render(&mut app, 80, 24).contains("Test b fails"));
}

#[test]
fn cost_and_context_update_at_once() {
    let (mut app, _rx) = app_with(conversation());
    ev(
        &mut app,
        Event::StepFinished {
            usage: Usage::default(),
            finish: "stop".into(),
            cost: 0.5,
        },
    );
    assert!(status::status_line(&app, 120).to_string().contains("$0.75"));
    ev(&mut app, Event::ContextUsage(usage(41_200)));
    assert!(render(&mut app, 120, 30).contains("41.2k / 200k (21%)"));
}

#[test]
fn paste_collapses_and_expands_on_send() {
    let (mut app, mut rx) = fresh();
    let big: String = (0..30).map(|i| format!("log line {i}\n")).collect();
    app.update(Msg::Term(TermEvent::Paste(big.clone())));
    assert!(render(&mut app, 80, 24).contains("[pasted 30 lines]"));
    key(&mut app, KeyCode::Enter);
    assert_eq!(prompt_texts(&mut rx), vec![big]);
}

#[test]
fn scrolling_holds_position_while_output_streams() {
    let (mut app, _rx) = fresh();
    ev(
        &mut app,
        Event::Message {
            message: msg("M1", Role::Assistant),
        },
    );
    let long: String = (0..100).map(|i| format!("line {i}\n\n")).collect();
    stream(&mut app, "M1", "M1-t", &[&long]);
    render(&mut app, 80, 24);
    assert_eq!(app.scroll_top, None);
    key(&mut app, KeyCode::PageUp);
    let top = app.scroll_top.expect("scrolled");
    stream(&mut app, "M1", "M1-t", &["more\n\nand more"]);
    let screen = render(&mut app, 80, 24);
    assert_eq!(
        app.scroll_top,
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
    let first = app.transcript.renders;
    assert_eq!(first, 1_000);
    // only what is on screen (40 rows) had its code highlighted
    let revealed = app.transcript.reveals;
    assert!((1..=40).contains(&revealed), "{revealed} cells revealed");
    stream(&mut app, "A499", "A499-t", &[" more"]);
    render(&mut app, 120, 40);
    assert_eq!(
        app.transcript.renders,
        first + 1,
        "only the streaming cell re-rendered"
    );
    assert_eq!(
        app.transcript.reveals, revealed,
        "the streaming cell is highlighted as it is laid out"
    );
    render(&mut app, 100, 40);
    assert_eq!(
        app.transcript.renders,
        first + 1 + 1_000,
        "a resize reflows everything"
    );
}

#[test]
fn odd_sizes_and_empty_state_do_not_panic() {
    let (mut app, _rx) = app_with(conversation());
    ev(&mut app, Event::ContextUsage(ContextUsage::default()));
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
fn compaction_running_then_done() {
    let (mut app, _rx) = fresh();
    ev(
        &mut app,
        Event::CompactionStarted {
            auto: true,
            overflow: true,
            focus: None,
        },
    );
    let mut c = msg("M3", Role::User);
    c.parts.push(part(
        "M3",
        "M3-c",
        PartKind::Compaction(CompactionPart {
            tail_start: None,
            auto: true,
            overflow: true,
            focus: None,
            ..Default::default()
        }),
    ));
    ev(&mut app, Event::Message { message: c });
    let screen = render(&mut app, 80, 24);
    assert!(screen.contains("compacting context…"), "{screen}");
    assert!(screen.contains("compacting"), "status shows it: {screen}");
    ev(
        &mut app,
        Event::CompactionFinished {
            summary_message_id: "M4".into(),
            before: 190_000,
            after: 21_000,
            model_calls: 2,
            cost: Default::default(),
        },
    );
    ev(
        &mut app,
        Event::ContextUsage({
            let mut u = usage(21_000);
            u.estimated = true;
            u
        }),
    );
    let screen = render(&mut app, 80, 24);
    assert!(
        screen.contains("context compacted · 190k → 21k · auto · overflow"),
        "{screen}"
    );
    assert!(screen.contains("~21k / 200k (10%)"), "{screen}");
}

/// A failed step: its message carries the error, then the engine reports the same error. The
/// screen says it once.
#[test]
fn a_provider_error_is_shown_once() {
    let (mut app, _rx) = fresh();
    let mut a = msg("M1", Role::Assistant);
    a.error = Some("HTTP 401 unauthorized: bad key; check OPENAI_API_KEY".into());
    ev(&mut app, Event::Message { message: a });
    ev(
        &mut app,
        Event::Error {
            kind: crate::event::ErrorKind::Provider,
            message: "HTTP 401 unauthorized: bad key; check OPENAI_API_KEY".into(),
        },
    );
    let screen = render(&mut app, 100, 24);
    assert_eq!(
        screen.matches("HTTP 401 unauthorized").count(),
        1,
        "{screen}"
    );
    // A different error still shows.
    ev(
        &mut app,
        Event::Error {
            kind: crate::event::ErrorKind::Store,
            message: "cannot save the session".into(),
        },
    );
    let screen = render(&mut app, 100, 24);
    assert!(screen.contains("cannot save the session"), "{screen}");
}

#[test]
fn tool_events_and_errors_render() {
    let (mut app, _rx) = fresh();
    let mut a = msg("M1", Role::Assistant);
    a.parts.push(part(
        "M1",
        "M1-tool",
        PartKind::Tool {
            call_id: "c1".into(),
            tool: "read".into(),
            input: json!({"file_path": "src/missing.rs"}),
            state: ToolState::Error {
                message: "no such file".into(),
                start: None,
                end: None,
            },
        },
    ));
    a.error = Some("provider returned 500".into());
    ev(&mut app, Event::Message { message: a });
    ev(
        &mut app,
        Event::ToolFinished {
            call_id: "c1".into(),
            tool: "read".into(),
            title: String::new(),
            error: Some("no such file".into()),
            duration_ms: 40,
        },
    );
    ev(
        &mut app,
        Event::Error {
            kind: ErrorKind::Provider,
            message: "rate limited".into(),
        },
    );
    let screen = render(&mut app, 80, 24);
    assert!(screen.contains("✗ read src/missing.rs  40ms"), "{screen}");
    assert!(screen.contains("no such file"));
    assert!(screen.contains("error: provider returned 500"));
    assert!(screen.contains("✗ rate limited"));
}

#[test]
fn first_run_detection() {
    use crate::first_run::hint as detect_first_run;
    let none = |_: &str| None;
    let hint = detect_first_run(none);
    assert!(hint.contains("11434") && hint.contains("8080"), "{hint}");
    let openai = |k: &str| (k == "OPENAI_API_KEY").then(|| "sk-x".to_string());
    assert!(detect_first_run(openai).contains("model = \"openai/"));
    let anthropic = |k: &str| (k == "ANTHROPIC_API_KEY").then(|| "sk-ant".to_string());
    assert!(detect_first_run(anthropic).contains("model = \"anthropic/"));
    let router = |k: &str| (k == "OPENROUTER_API_KEY").then(|| "or".to_string());
    assert!(detect_first_run(router).contains("openrouter.ai"));
    let blank = |k: &str| (k == "OPENAI_API_KEY").then(String::new);
    assert!(detect_first_run(blank).contains("no API key"));

    let (tx, _rx) = unbounded_channel();
    let mut i = init(Vec::new());
    i.first_run_hint = Some(detect_first_run(none));
    let mut app = App::new(i, tx);
    assert!(render(&mut app, 80, 24).contains("No model is configured"));
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
    app.dirty = false;
    app.update(mouse(MouseEventKind::Moved, 3));
    assert!(!app.dirty);

    let (mut app, _rx) = fresh();
    ev(
        &mut app,
        Event::Message {
            message: msg("M1", Role::Assistant),
        },
    );
    let long: String = (0..60).map(|i| format!("para {i}\n\n")).collect();
    stream(&mut app, "M1", "M1-t", &[&long]);
    render(&mut app, 80, 24);
    app.update(mouse(MouseEventKind::ScrollUp, 3));
    let top = app.scroll_top.expect("wheel scrolled up");
    app.update(mouse(MouseEventKind::ScrollDown, 3));
    assert_eq!(
        app.scroll_top, None,
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
fn the_engine_announcing_the_start_session_keeps_the_screen() {
    let mut i = super::tests::init(Vec::new());
    i.first_run_hint = Some("No model is configured; using openai/gpt-4.1".into());
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let mut app = App::new(i, tx);
    ev(
        &mut app,
        Event::SessionLoaded {
            session: super::tests::session(),
            messages: Vec::new(),
            more_history: false,
        },
    );
    let screen = render(&mut app, 80, 24);
    assert!(screen.contains("No model is configured"), "{screen}");
    assert!(!screen.contains("new session"), "{screen}");

    // a fresh app shows the welcome screen after the same announcement
    let (mut app, _rx) = fresh();
    ev(
        &mut app,
        Event::SessionLoaded {
            session: super::tests::session(),
            messages: Vec::new(),
            more_history: false,
        },
    );
    assert!(render(&mut app, 80, 24).contains("/help for commands"));
}

#[test]
fn an_interrupted_answer_is_marked_once() {
    let (mut app, _rx) = fresh();
    let mut a = super::tests::msg("M2", Role::Assistant);
    ev(&mut app, Event::Message { message: a.clone() });
    stream(&mut app, "M2", "M2-t", &["Half an ans"]);
    a.parts
        .push(super::tests::text("M2", "M2-t", "Half an ans"));
    a.error = Some("interrupted".into());
    ev(&mut app, Event::Message { message: a });
    ev(
        &mut app,
        Event::TurnFinished {
            reason: TurnEnd::Interrupted,
        },
    );
    let screen = render(&mut app, 80, 24);
    assert!(
        screen.contains("Half an ans"),
        "partial answer kept: {screen}"
    );
    assert_eq!(screen.matches("interrupted").count(), 1, "{screen}");
    assert!(!screen.contains("error"), "{screen}");
}

#[test]
fn a_mid_turn_message_shows_what_the_user_typed() {
    let (mut app, _rx) = fresh();
    ev(
        &mut app,
        Event::State {
            state: EngineState::Thinking,
            detail: None,
        },
    );
    type_str(&mut app, "also mention cats");
    key(&mut app, KeyCode::Enter);
    assert!(app.pending[0].queued);
    let id = app.pending[0].id.clone();
    let mut echo = user("M3", "also mention cats");
    echo.submission_id = Some(id);
    echo.mid_turn = true;
    ev(
        &mut app,
        Event::Message {
            message: echo.clone(),
        },
    );
    assert!(app.pending.is_empty(), "the queued copy is acknowledged");
    let screen = render(&mut app, 80, 24);
    assert!(screen.contains("› also mention cats"), "{screen}");
    assert!(screen.contains("sent while the agent worked"), "{screen}");
    // and history recalls the text
    let (mut app, _rx) = app_with(vec![echo]);
    key(&mut app, KeyCode::Up);
    assert_eq!(app.composer.text(), "also mention cats");
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
        Event::Sessions {
            sessions: vec![elsewhere, session(), here],
        },
    );
    let Some(Popup::Picker(p)) = &app.popup else {
        panic!("no picker")
    };
    let ids: Vec<&str> = p.items.iter().map(|i| i.id.as_str()).collect();
    assert_eq!(ids, ["S1", "S2", "S0"], "this directory first");
    assert!(
        p.items[2]
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

/// A command that changes the session, typed while the agent works, says it will wait; a
/// read-only one runs at once.
#[test]
fn commands_during_a_turn_say_when_they_run() {
    let (mut app, mut rx) = fresh();
    ev(
        &mut app,
        Event::State {
            state: EngineState::Thinking,
            detail: None,
        },
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
    assert!(matches!(app.popup, Some(Popup::Context(None))));
    // closed before the answer: a late answer does not open it again
    key(&mut app, KeyCode::Esc);
    ev(&mut app, Event::ContextBreakdown(Default::default()));
    assert!(app.popup.is_none());
}

/// The retry status: attempt, when, why — once, and gone as soon as the answer streams.
#[test]
fn retry_status_gives_the_reason_and_clears_when_the_answer_streams() {
    let (mut app, _rx) = fresh();
    ev(
        &mut app,
        Event::State {
            state: EngineState::Thinking,
            detail: None,
        },
    );
    ev(
        &mut app,
        Event::Retrying {
            attempt: 1,
            max: 4,
            delay_ms: 8_000,
            message: "overloaded_error: Overloaded".into(),
        },
    );
    ev(
        &mut app,
        Event::State {
            state: EngineState::Retrying,
            detail: None,
        },
    );
    let line = status::status_line(&app, 160).to_string();
    assert!(line.contains("retry 1/4 in "), "{line}");
    assert!(line.contains("overloaded_error: Overloaded"), "{line}");
    assert_eq!(line.matches("1/4").count(), 1, "{line}");
    ev(
        &mut app,
        Event::Message {
            message: msg("M1", Role::Assistant),
        },
    );
    stream(&mut app, "M1", "M1-t", &["Here"]);
    let line = status::status_line(&app, 160).to_string();
    assert!(!line.contains("retry"), "{line}");
    assert!(line.contains("responding"), "{line}");
}

/// An interrupted /compact leaves no "context compacted" behind.
#[test]
fn an_interrupted_compaction_is_not_shown_as_done() {
    let (mut app, _rx) = app_with(conversation());
    ev(
        &mut app,
        Event::CompactionStarted {
            auto: false,
            overflow: false,
            focus: None,
        },
    );
    ev(
        &mut app,
        Event::TurnFinished {
            reason: TurnEnd::Interrupted,
        },
    );
    let screen = render(&mut app, 80, 30);
    assert!(!screen.contains("context compacted"), "{screen}");
    assert!(screen.contains("interrupted"), "{screen}");
}

/// A retried step's partial output and a dropped message leave the screen.
#[test]
fn removed_parts_and_messages_leave_the_screen() {
    let (mut app, _rx) = fresh();
    ev(
        &mut app,
        Event::Message {
            message: msg("M1", Role::Assistant),
        },
    );
    stream(&mut app, "M1", "M1-t", &["a partial answer that broke off"]);
    assert!(render(&mut app, 80, 24).contains("partial answer"));
    ev(
        &mut app,
        Event::PartsRemoved {
            message_id: "M1".into(),
            part_ids: vec!["M1-t".into()],
        },
    );
    assert!(!render(&mut app, 80, 24).contains("partial answer"));
    stream(&mut app, "M1", "M1-u", &["the retried answer"]);
    assert!(render(&mut app, 80, 24).contains("the retried answer"));
    ev(
        &mut app,
        Event::MessageRemoved {
            message_id: "M1".into(),
        },
    );
    assert!(!render(&mut app, 80, 24).contains("retried answer"));
}
