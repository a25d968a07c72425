//! State snapshots through ratatui's TestBackend and update-function tests. States are built by
//! feeding `Event`s and keys into `App::update`; no terminal is involved.

use std::path::PathBuf;

use crossterm::event::{Event as TermEvent, KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

use crate::event::{
    Breakdown, ContextUsage, EngineState, Event, Op, PermissionReply, PermissionRequest,
};
use crate::message::{
    CompactionPart, Message, Part, PartKind, Role, Session, ToolState, ToolTime, Usage,
};

use super::app::{App, Msg, Popup};
use super::view::{self, status};
use super::{TuiInit, detect_first_run};

// ------------------------------------------------------------------ helpers

fn session() -> Session {
    Session {
        id: "S1".into(),
        title: "demo".into(),
        directory: "/srv/demo".into(),
        model: "anthropic/claude-sonnet-4-5".into(),
        time_created: 0,
        time_updated: 0,
        compaction_point: None,
        cost: 0.0,
        tokens: 0,
    }
}

fn usage(used: u64) -> ContextUsage {
    ContextUsage {
        used,
        usable: 180_000,
        window: 200_000,
        percent: used as f64 * 100.0 / 200_000.0,
        estimated: false,
        cached: 0,
    }
}

fn init(messages: Vec<Message>) -> TuiInit {
    TuiInit {
        session: session(),
        messages,
        model: "anthropic/claude-sonnet-4-5".into(),
        models: vec![
            "anthropic/claude-sonnet-4-5".into(),
            "openai/gpt-4.1".into(),
            "openai/gpt-4.1-mini".into(),
        ],
        workspace: PathBuf::from("/srv/demo"),
        git_branch: Some("main".into()),
        context: usage(20_000),
        first_run_hint: None,
    }
}

fn app_with(messages: Vec<Message>) -> (App, UnboundedReceiver<Op>) {
    let (tx, rx) = unbounded_channel();
    (App::new(init(messages), tx), rx)
}

fn fresh() -> (App, UnboundedReceiver<Op>) {
    app_with(Vec::new())
}

fn render(app: &mut App, w: u16, h: u16) -> String {
    let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
    term.draw(|f| view::draw(f, app)).unwrap();
    if w == 0 {
        return String::new(); // TestBackend cannot print a zero-width buffer
    }
    term.backend().to_string()
}

fn ev(app: &mut App, e: Event) {
    app.update(Msg::Engine(e));
}

fn key(app: &mut App, code: KeyCode) {
    app.update(Msg::Term(TermEvent::Key(KeyEvent::new(
        code,
        KeyModifiers::NONE,
    ))));
}

fn ctrl(app: &mut App, c: char) {
    app.update(Msg::Term(TermEvent::Key(KeyEvent::new(
        KeyCode::Char(c),
        KeyModifiers::CONTROL,
    ))));
}

fn type_str(app: &mut App, s: &str) {
    for c in s.chars() {
        key(app, KeyCode::Char(c));
    }
}

fn ops(rx: &mut UnboundedReceiver<Op>) -> Vec<Op> {
    let mut out = Vec::new();
    while let Ok(op) = rx.try_recv() {
        out.push(op);
    }
    out
}

fn msg(id: &str, role: Role) -> Message {
    let mut m = Message::new("S1", role);
    m.id = id.into();
    m.time_created = 0;
    m
}

fn part(mid: &str, pid: &str, kind: PartKind) -> Part {
    Part {
        id: pid.into(),
        message_id: mid.into(),
        kind,
    }
}

fn text(mid: &str, pid: &str, t: &str) -> Part {
    part(
        mid,
        pid,
        PartKind::Text {
            text: t.into(),
            synthetic: false,
        },
    )
}

fn user(id: &str, t: &str) -> Message {
    let mut m = msg(id, Role::User);
    m.parts.push(text(id, &format!("{id}-t"), t));
    m
}

fn completed_tool(
    mid: &str,
    pid: &str,
    tool: &str,
    input: serde_json::Value,
    output: &str,
    pruned: bool,
) -> Part {
    part(
        mid,
        pid,
        PartKind::Tool {
            call_id: format!("call-{pid}"),
            tool: tool.into(),
            input,
            state: ToolState::Completed {
                output: output.into(),
                title: String::new(),
                metadata: json!({}),
                time: ToolTime {
                    start: 1_000,
                    end: 2_250,
                    compacted: pruned.then_some(5_000),
                },
            },
        },
    )
}

fn stream(app: &mut App, mid: &str, pid: &str, chunks: &[&str]) {
    for c in chunks {
        ev(
            app,
            Event::TextDelta {
                message_id: mid.into(),
                part_id: pid.into(),
                delta: (*c).into(),
            },
        );
    }
}

/// A short conversation with a tool call.
fn conversation() -> Vec<Message> {
    let u = user("M1", "Why does `cargo test` fail?");
    let mut a = msg("M2", Role::Assistant);
    a.parts.push(part(
        "M2",
        "M2-r",
        PartKind::Reasoning {
            text: "The user wants the failing test.\nRun the tests first.".into(),
            signature: None,
            redacted: None,
        },
    ));
    a.parts.push(completed_tool(
        "M2",
        "M2-tool",
        "bash",
        json!({"command": "cargo test --lib"}),
        "running 12 tests\ntest a ... ok\ntest b ... FAILED\nfailures:\n  b: assertion failed\ntest result: FAILED. 11 passed; 1 failed",
        false,
    ));
    a.parts.push(text(
        "M2",
        "M2-t",
        "Test **b** fails: the assertion in `b` expects `2`.\n\n- fix the constant\n- rerun",
    ));
    a.cost = 0.25;
    vec![u, a]
}

// ------------------------------------------------------------------ snapshots

#[test]
fn snapshot_empty() {
    let (mut app, _rx) = fresh();
    insta::assert_snapshot!(render(&mut app, 80, 24));
}

#[test]
fn snapshot_streaming_markdown_with_code() {
    let (mut app, _rx) = fresh();
    ev(
        &mut app,
        Event::Message {
            message: user("M1", "Write hello world in Rust"),
        },
    );
    ev(
        &mut app,
        Event::State {
            state: EngineState::Thinking,
            detail: None,
        },
    );
    ev(
        &mut app,
        Event::Message {
            message: msg("M2", Role::Assistant),
        },
    );
    stream(
        &mut app,
        "M2",
        "M2-t",
        &[
            "## Hello\n\nHere is the **program**",
            " with `main`:\n\n```rust\nfn main() {\n",
            "    println!(\"hello\");\n",
        ],
    );
    let screen = render(&mut app, 80, 24);
    assert!(screen.contains("▏     println!(\"hello\");"), "{screen}");
    insta::assert_snapshot!(screen);
}

#[test]
fn snapshot_tool_cell_folded_and_expanded() {
    let (mut app, _rx) = app_with(conversation());
    let folded = render(&mut app, 80, 24);
    assert!(folded.contains("+4 lines"), "{folded}");
    insta::assert_snapshot!("tool_folded", folded);
    let i = app
        .transcript
        .cells
        .iter()
        .position(|c| c.key == "M2-tool")
        .unwrap();
    app.toggle_cell(i);
    let expanded = render(&mut app, 80, 24);
    assert!(expanded.contains("test result: FAILED"), "{expanded}");
    insta::assert_snapshot!("tool_expanded", expanded);
}

#[test]
fn snapshot_permission_modal() {
    let (mut app, _rx) = app_with(conversation());
    ev(
        &mut app,
        Event::PermissionAsked(PermissionRequest {
            id: "P1".into(),
            tool: "bash".into(),
            call_id: "c9".into(),
            title: "rm -rf target/debug/incremental".into(),
            patterns: vec!["rm *".into()],
        }),
    );
    insta::assert_snapshot!(render(&mut app, 80, 24));
}

#[test]
fn snapshot_slash_popup_filtered() {
    let (mut app, _rx) = app_with(conversation());
    type_str(&mut app, "/co");
    let screen = render(&mut app, 80, 24);
    assert!(screen.contains("/compact [focus]") && screen.contains("/context"));
    assert!(!screen.contains("/sessions"), "filtered out: {screen}");
    insta::assert_snapshot!(screen);
}

#[test]
fn snapshot_context_breakdown() {
    let (mut app, mut rx) = app_with(conversation());
    type_str(&mut app, "/context");
    key(&mut app, KeyCode::Enter);
    assert_eq!(ops(&mut rx), vec![Op::ContextBreakdown]);
    ev(
        &mut app,
        Event::ContextBreakdown(Breakdown {
            system: 3_100,
            tools: 8_200,
            summary: 2_000,
            messages: 12_400,
            tool_outputs: 16_300,
            pruned: 41_000,
            free: 138_000,
            reserved: 20_000,
            window: 200_000,
        }),
    );
    let screen = render(&mut app, 80, 24);
    assert!(
        screen.contains("tool outputs") && screen.contains("16.3k"),
        "{screen}"
    );
    insta::assert_snapshot!(screen);
}

fn compacted_history() -> Vec<Message> {
    let mut msgs = conversation();
    let mut c = msg("M3", Role::User);
    c.parts.push(part(
        "M3",
        "M3-c",
        PartKind::Compaction(CompactionPart {
            auto: false,
            overflow: false,
            focus: Some("the failing test".into()),
        }),
    ));
    let mut s = msg("M4", Role::Assistant);
    s.summary = true;
    s.parts.push(text(
        "M4",
        "M4-t",
        "## Goal\nFix the failing test `b`.\n\n## Progress\n- Done: ran `cargo test --lib`\n- Next: fix the constant in `src/b.rs`",
    ));
    msgs.push(c);
    msgs.push(s);
    msgs
}

#[test]
fn snapshot_compaction_divider() {
    let (mut app, _rx) = app_with(Vec::new());
    for m in compacted_history() {
        ev(&mut app, Event::Message { message: m });
    }
    ev(
        &mut app,
        Event::CompactionFinished {
            summary_message_id: "M4".into(),
            before: 142_000,
            after: 12_300,
            model_calls: 1,
        },
    );
    let folded = render(&mut app, 80, 24);
    assert!(
        folded.contains("context compacted · 142k → 12.3k · /compact"),
        "{folded}"
    );
    assert!(folded.contains("▸ summary · 6 lines"), "{folded}");
    insta::assert_snapshot!("compaction_folded", folded);
    let divider = app
        .transcript
        .cells
        .iter()
        .position(|c| c.key == "M3-c")
        .unwrap();
    app.toggle_cell(divider);
    let expanded = render(&mut app, 80, 24);
    assert!(expanded.contains("Fix the failing test b."), "{expanded}");
    insta::assert_snapshot!("compaction_expanded", expanded);
}

fn status_of(app: &App, width: usize) -> (String, ratatui::style::Color) {
    let line = status::status_line(app, width);
    let fig = line
        .spans
        .iter()
        .find(|s| s.content.contains(" / 200k"))
        .expect("context figure");
    (line.to_string(), fig.style.fg.unwrap())
}

#[test]
fn snapshot_status_bar_levels() {
    use super::cells::{ERR, OK, WARN};
    let (mut app, _rx) = fresh();
    let mut out = String::new();
    for (used, colour) in [(20_000, OK), (170_000, WARN), (200_000, ERR)] {
        ev(&mut app, Event::ContextUsage(usage(used)));
        let (line, c) = status_of(&app, 100);
        assert_eq!(c, colour, "{line}");
        out.push_str(&line);
        out.push('\n');
    }
    let mut est = usage(84_000);
    est.estimated = true;
    ev(&mut app, Event::ContextUsage(est));
    out.push_str(&status_of(&app, 100).0);
    out.push('\n');
    assert!(out.contains("~84k / 200k (42%)"));
    insta::assert_snapshot!(out);
}

#[test]
fn snapshot_narrow_80x24_busy_conversation() {
    let (mut app, _rx) = app_with(conversation());
    ev(&mut app, Event::ContextUsage(usage(170_000)));
    ev(
        &mut app,
        Event::State {
            state: EngineState::Running,
            detail: Some("bash".into()),
        },
    );
    let mut m = msg("M5", Role::Assistant);
    m.parts.push(part(
        "M5",
        "M5-tool",
        PartKind::Tool {
            call_id: "c5".into(),
            tool: "bash".into(),
            input: json!({"command": "cargo test --lib -- b"}),
            state: ToolState::Running {
                start: 0,
                title: None,
            },
        },
    ));
    ev(&mut app, Event::Message { message: m });
    type_str(&mut app, "also check clippy");
    key(&mut app, KeyCode::Enter);
    let screen = render(&mut app, 80, 24);
    assert!(screen.contains("queued"), "{screen}");
    insta::assert_snapshot!(screen);
}

#[test]
fn snapshot_wide_200x30_pruned_tool() {
    let mut msgs = conversation();
    if let PartKind::Tool {
        state: ToolState::Completed { time, .. },
        ..
    } = &mut msgs[1].parts[1].kind
    {
        time.compacted = Some(9);
    }
    let (mut app, _rx) = app_with(msgs);
    let screen = render(&mut app, 200, 30);
    assert!(screen.contains("· pruned"), "{screen}");
    insta::assert_snapshot!(screen);
}

// ------------------------------------------------------------------ keys and update

#[test]
fn enter_sends_user_turn_and_shows_it_pending() {
    let (mut app, mut rx) = fresh();
    type_str(&mut app, "hello there");
    key(&mut app, KeyCode::Enter);
    assert_eq!(
        ops(&mut rx),
        vec![Op::UserTurn {
            text: "hello there".into()
        }]
    );
    assert!(app.composer.is_empty());
    assert_eq!(app.pending.len(), 1);
    assert!(!app.pending[0].queued);
    // the engine echoes the message: the pending copy goes
    ev(
        &mut app,
        Event::Message {
            message: user("M1", "hello there"),
        },
    );
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
    assert_eq!(
        ops(&mut rx),
        vec![Op::UserTurn {
            text: "and tests too".into()
        }]
    );
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
    ctrl(&mut app, 'c');
    assert!(app.should_quit);
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
    assert_eq!(
        ops(&mut rx),
        vec![Op::UserTurn {
            text: "/usr/bin/env is missing".into()
        }]
    );
}

#[test]
fn permission_replies() {
    let req = |id: &str| {
        Event::PermissionAsked(PermissionRequest {
            id: id.into(),
            tool: "bash".into(),
            call_id: "c".into(),
            title: "make install".into(),
            patterns: vec!["make *".into()],
        })
    };
    let (mut app, mut rx) = fresh();
    ev(&mut app, req("P1"));
    ev(&mut app, req("P2"));
    key(&mut app, KeyCode::Char('a'));
    assert_eq!(
        ops(&mut rx),
        vec![Op::PermissionReply {
            id: "P1".into(),
            reply: PermissionReply::Always,
            message: None
        }]
    );
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
    assert_eq!(app.model, "openai/gpt-4.1-mini");
    assert!(
        status::status_line(&app, 120)
            .to_string()
            .contains("openai/gpt-4.1-mini")
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
    assert_eq!(ops(&mut rx), vec![Op::UserTurn { text: big }]);
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
    assert!(screen.contains("more lines · end to follow"), "{screen}");
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
    let start = std::time::Instant::now();
    render(&mut app, 120, 40);
    let first = app.transcript.renders;
    assert_eq!(first, 1_000);
    stream(&mut app, "A499", "A499-t", &[" more"]);
    render(&mut app, 120, 40);
    assert_eq!(
        app.transcript.renders,
        first + 1,
        "only the streaming cell re-rendered"
    );
    render(&mut app, 100, 40);
    assert_eq!(
        app.transcript.renders,
        first + 1 + 1_000,
        "a resize reflows everything"
    );
    assert!(
        start.elapsed().as_secs() < 20,
        "1,000 cells lay out quickly"
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
            auto: true,
            overflow: true,
            focus: None,
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
    let none = |_: &str| None;
    let hint = detect_first_run(none).unwrap();
    assert!(hint.contains("11434") && hint.contains("8080"), "{hint}");
    let openai = |k: &str| (k == "OPENAI_API_KEY").then(|| "sk-x".to_string());
    assert!(
        detect_first_run(openai)
            .unwrap()
            .contains("model = \"openai/")
    );
    let anthropic = |k: &str| (k == "ANTHROPIC_API_KEY").then(|| "sk-ant".to_string());
    assert!(
        detect_first_run(anthropic)
            .unwrap()
            .contains("model = \"anthropic/")
    );
    let router = |k: &str| (k == "OPENROUTER_API_KEY").then(|| "or".to_string());
    assert!(detect_first_run(router).unwrap().contains("openrouter.ai"));
    let blank = |k: &str| (k == "OPENAI_API_KEY").then(String::new);
    assert!(detect_first_run(blank).unwrap().contains("no API key"));

    let (tx, _rx) = unbounded_channel();
    let mut i = init(Vec::new());
    i.first_run_hint = detect_first_run(none);
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
