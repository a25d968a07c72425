//! State snapshots through ratatui's TestBackend and update-function tests. States are built by
//! feeding `Event`s and keys into `App::update`; no terminal is involved.

use crate::theme::theme;
use std::path::PathBuf;

use crossterm::event::{Event as TermEvent, KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

use pith_protocol::event::{
    Breakdown, ContextEvent, ContextUsage, EngineState, Event, EventMsg, Op, OutputEvent,
    PermissionRequest, Submission, TurnEvent,
};
use pith_protocol::message::{
    CompactionPart, Message, Part, PartKind, Role, Session, ToolState, ToolTime,
};

use super::TuiInit;
use super::app::{App, Msg};
use super::view::{self, status};

// ------------------------------------------------------------------ helpers

pub(super) fn session() -> Session {
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
        parent_id: None,
        agent: None,
    }
}

pub(super) fn usage(used: u64) -> ContextUsage {
    ContextUsage {
        used,
        usable: 180_000,
        window: 200_000,
        percent: used as f64 * 100.0 / 200_000.0,
        estimated: false,
        cached: 0,
    }
}

pub(super) fn init(messages: Vec<Message>) -> TuiInit {
    TuiInit {
        session: session(),
        messages,
        more_history: false,
        model: "anthropic/claude-sonnet-4-5".into(),
        models: vec![
            "anthropic/claude-sonnet-4-5".into(),
            "openai/gpt-4.1".into(),
            "openai/gpt-4.1-mini".into(),
        ],
        keys: Default::default(),
        workspace: PathBuf::from("/srv/demo"),
        git_branch: Some("main".into()),
        context: usage(20_000),
        first_run_hint: None,
        keymap: Default::default(),
        appearance: Default::default(),
        custom_commands: Default::default(),
        prompt_log: None,
        notify: Default::default(),
        hooks: Default::default(),
        images: Default::default(),
    }
}

pub(super) fn app_with(messages: Vec<Message>) -> (App, UnboundedReceiver<Submission>) {
    let (tx, rx) = unbounded_channel();
    (App::new(init(messages), tx), rx)
}

pub(super) fn fresh() -> (App, UnboundedReceiver<Submission>) {
    app_with(Vec::new())
}

pub(super) fn render(app: &mut App, w: u16, h: u16) -> String {
    let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
    term.draw(|f| view::draw(f, app)).unwrap();
    if w == 0 {
        return String::new(); // TestBackend cannot print a zero-width buffer
    }
    term.backend().to_string()
}

/// An engine event (or one in its envelope, answering an op) reaches the app.
pub(super) fn ev(app: &mut App, e: impl Into<EventMsg>) {
    app.update(Msg::Engine(e.into()));
}

pub(super) fn key(app: &mut App, code: KeyCode) {
    app.update(Msg::Term(TermEvent::Key(KeyEvent::new(
        code,
        KeyModifiers::NONE,
    ))));
}

pub(super) fn ctrl(app: &mut App, c: char) {
    app.update(Msg::Term(TermEvent::Key(KeyEvent::new(
        KeyCode::Char(c),
        KeyModifiers::CONTROL,
    ))));
}

/// The user has had time to read the permission question on screen (drawn whole: a question
/// is allowed only once its end has been on screen).
pub(super) fn read_question(app: &mut App) {
    render(app, 100, 30);
    app.permissions_mut().shown_at(None);
    app.permissions_mut().typed_at(None);
}

pub(super) fn type_str(app: &mut App, s: &str) {
    for c in s.chars() {
        key(app, KeyCode::Char(c));
    }
}

/// The ops the app submitted, in order.
pub(super) fn ops(rx: &mut UnboundedReceiver<Submission>) -> Vec<Op> {
    let mut out = Vec::new();
    while let Ok(submission) = rx.try_recv() {
        out.push(submission.op);
    }
    out
}

/// The prompts sent (`Op::UserTurn`), as (id, text); panics on any other op.
pub(super) fn prompts(rx: &mut UnboundedReceiver<Submission>) -> Vec<(String, String)> {
    ops(rx)
        .into_iter()
        .map(|op| match op {
            Op::UserTurn { id, text, .. } => (id, text),
            other => panic!("expected a user turn, got {other:?}"),
        })
        .collect()
}

/// The texts of the prompts sent.
pub(super) fn prompt_texts(rx: &mut UnboundedReceiver<Submission>) -> Vec<String> {
    prompts(rx).into_iter().map(|(_, text)| text).collect()
}

pub(super) fn msg(id: &str, role: Role) -> Message {
    let mut m = Message::new("S1", role);
    m.id = id.into();
    m.time_created = 0;
    m
}

pub(super) fn part(mid: &str, pid: &str, kind: PartKind) -> Part {
    Part {
        id: pid.into(),
        message_id: mid.into(),
        kind,
    }
}

pub(super) fn text(mid: &str, pid: &str, t: &str) -> Part {
    part(
        mid,
        pid,
        PartKind::Text {
            text: t.into(),
            synthetic: false,
        },
    )
}

pub(super) fn user(id: &str, t: &str) -> Message {
    let mut m = msg(id, Role::User);
    m.parts.push(text(id, &format!("{id}-t"), t));
    m
}

pub(super) fn completed_tool(
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

pub(super) fn stream(app: &mut App, mid: &str, pid: &str, chunks: &[&str]) {
    for c in chunks {
        ev(
            app,
            Event::Output(OutputEvent::TextDelta {
                message_id: mid.into(),
                part_id: pid.into(),
                delta: (*c).into(),
            }),
        );
    }
}

/// A short conversation with a tool call.
pub(super) fn conversation() -> Vec<Message> {
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
        Event::Output(OutputEvent::Message {
            message: user("M1", "Write hello world in Rust"),
        }),
    );
    ev(
        &mut app,
        Event::Turn(TurnEvent::State {
            state: EngineState::Thinking,
            detail: None,
        }),
    );
    ev(
        &mut app,
        Event::Output(OutputEvent::Message {
            message: msg("M2", Role::Assistant),
        }),
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
    assert!(folded.contains("+3 lines (ctrl+o)"), "{folded}");
    insta::assert_snapshot!("tool_folded", folded);
    let i = app
        .transcript()
        .cells()
        .iter()
        .position(|c| c.key == "M2-tool")
        .unwrap();
    app.transcript_mut().toggle_cell(i);
    let expanded = render(&mut app, 80, 24);
    assert!(expanded.contains("test result: FAILED"), "{expanded}");
    insta::assert_snapshot!("tool_expanded", expanded);
}

#[test]
fn snapshot_permission_modal() {
    let (mut app, _rx) = app_with(conversation());
    ev(
        &mut app,
        Event::Turn(TurnEvent::PermissionAsked(PermissionRequest {
            id: "P1".into(),
            tool: "bash".into(),
            call_id: "c9".into(),
            title: "rm -rf target/debug/incremental".into(),
            patterns: vec!["rm *".into()],
            agent: None,
        })),
    );
    insta::assert_snapshot!(render(&mut app, 80, 24));
}

#[test]
fn snapshot_edit_permission_shows_the_change() {
    let (mut app, _rx) = app_with(conversation());
    ev(
        &mut app,
        Event::Output(OutputEvent::PartUpdated {
            part: part(
                "M2",
                "M2-edit",
                PartKind::Tool {
                    call_id: "c-edit".into(),
                    tool: "edit".into(),
                    input: json!({
                        "file_path": "src/lib.rs",
                        "old_string": "fn b() -> u32 {\n    1\n}",
                        "new_string": "fn b() -> u32 {\n    2\n}",
                    }),
                    state: ToolState::Pending,
                },
            ),
        }),
    );
    ev(
        &mut app,
        Event::Turn(TurnEvent::PermissionAsked(PermissionRequest {
            id: "P2".into(),
            tool: "edit".into(),
            call_id: "c-edit".into(),
            title: "src/lib.rs".into(),
            patterns: vec!["src/lib.rs".into()],
            agent: None,
        })),
    );
    let screen = render(&mut app, 80, 24);
    assert!(screen.contains("- fn b() -> u32 {"), "{screen}");
    assert!(screen.contains("+     2"), "{screen}");
    assert!(
        screen.contains("? permission · edit"),
        "the status bar says why the agent waits: {screen}"
    );
    insta::assert_snapshot!(screen);
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
        Event::Context(ContextEvent::ContextBreakdown {
            breakdown: Breakdown {
                system: 3_100,
                tools: 8_200,
                summary: 2_000,
                messages: 12_400,
                tool_outputs: 16_300,
                pruned: 41_000,
                free: 138_000,
                reserved: 20_000,
                window: 200_000,
                last_compaction: Some(pith_compaction_cost()),
                subagents: Default::default(),
                pinned: 0,
                left: Default::default(),
                exact: true,
            },
            pins: Vec::new(),
            instructions: Vec::new(),
        }),
    );
    let screen = render(&mut app, 80, 24);
    assert!(
        screen.contains("tool outputs") && screen.contains("16.3k"),
        "{screen}"
    );
    insta::assert_snapshot!(screen);
}

pub(super) fn compacted_history() -> Vec<Message> {
    let mut msgs = conversation();
    let mut c = msg("M3", Role::User);
    c.parts.push(part(
        "M3",
        "M3-c",
        PartKind::Compaction(CompactionPart {
            tail_start: None,
            auto: false,
            overflow: false,
            focus: Some("the failing test".into()),
            ..Default::default()
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
        ev(&mut app, Event::Output(OutputEvent::Message { message: m }));
    }
    ev(
        &mut app,
        Event::Context(ContextEvent::CompactionFinished {
            summary_message_id: "M4".into(),
            before: 142_000,
            after: 12_300,
            model_calls: 1,
            cost: Default::default(),
            kept: Default::default(),
            left: Default::default(),
        }),
    );
    let folded = render(&mut app, 80, 24);
    assert!(
        folded.contains("compacted 142k → 12.3k · /compact"),
        "{folded}"
    );
    assert!(folded.contains("▸ summary · 6 lines"), "{folded}");
    insta::assert_snapshot!("compaction_folded", folded);
    let divider = app
        .transcript()
        .cells()
        .iter()
        .position(|c| c.key == "M3-c")
        .unwrap();
    app.transcript_mut().toggle_cell(divider);
    let expanded = render(&mut app, 80, 24);
    assert!(expanded.contains("Fix the failing test b."), "{expanded}");
    insta::assert_snapshot!("compaction_expanded", expanded);
}

fn status_of(app: &App, width: usize) -> (String, ratatui::style::Color) {
    let line = status::status_line(&app.status_view(), width);
    let fig = line
        .spans
        .iter()
        .find(|s| s.content.contains(" / 200k"))
        .expect("context figure");
    (line.to_string(), fig.style.fg.unwrap())
}

#[test]
fn snapshot_status_bar_levels() {
    let (mut app, _rx) = fresh();
    let mut out = String::new();
    for (used, colour) in [
        (20_000, theme().ok),
        (170_000, theme().warn),
        (200_000, theme().err),
    ] {
        ev(
            &mut app,
            Event::Context(ContextEvent::ContextUsage(usage(used))),
        );
        let (line, c) = status_of(&app, 100);
        assert_eq!(c, colour, "{line}");
        out.push_str(&line);
        out.push('\n');
    }
    let mut est = usage(84_000);
    est.estimated = true;
    ev(&mut app, Event::Context(ContextEvent::ContextUsage(est)));
    out.push_str(&status_of(&app, 100).0);
    out.push('\n');
    assert!(out.contains("~84k / 200k (42%)"));
    insta::assert_snapshot!(out);
}

#[test]
fn snapshot_narrow_80x24_busy_conversation() {
    let (mut app, _rx) = app_with(conversation());
    ev(
        &mut app,
        Event::Context(ContextEvent::ContextUsage(usage(170_000))),
    );
    ev(
        &mut app,
        Event::Turn(TurnEvent::State {
            state: EngineState::Running,
            detail: Some("bash".into()),
        }),
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
    ev(&mut app, Event::Output(OutputEvent::Message { message: m }));
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

/// A running command: its latest output lines under the header, which counts the seconds.
#[test]
fn snapshot_running_command_streams_its_output() {
    let (mut app, _rx) = app_with(vec![user("U1", "build it")]);
    ev(
        &mut app,
        Event::Output(OutputEvent::Message {
            message: msg("M1", Role::Assistant),
        }),
    );
    let start = pith_protocol::message::now_ms() - 42_000;
    ev(
        &mut app,
        Event::Output(OutputEvent::PartUpdated {
            part: part(
                "M1",
                "M1-tool",
                PartKind::Tool {
                    call_id: "c1".into(),
                    tool: "bash".into(),
                    input: json!({"command": "cargo build --release"}),
                    state: ToolState::Running { start, title: None },
                },
            ),
        }),
    );
    for i in 1..=8 {
        ev(
            &mut app,
            Event::Output(OutputEvent::ToolOutput {
                call_id: "c1".into(),
                output: format!("   Compiling crate{i} v0.1.{i}\n"),
            }),
        );
    }
    app.update(Msg::Tick);
    let screen = render(&mut app, 80, 24);
    assert!(screen.contains("running · 42s"), "{screen}");
    assert!(screen.contains("Compiling crate8"), "{screen}");
    assert!(!screen.contains("Compiling crate3 "), "{screen}");
    insta::assert_snapshot!(screen);
    // finished: the stored output replaces the live one
    ev(
        &mut app,
        Event::Output(OutputEvent::PartUpdated {
            part: completed_tool(
                "M1",
                "M1-tool",
                "bash",
                json!({"command": "cargo build --release"}),
                "Finished\n\nExit code: 0",
                false,
            ),
        }),
    );
    let screen = render(&mut app, 80, 24);
    assert!(
        screen.contains("⎿ Finished") && !screen.contains("Compiling"),
        "{screen}"
    );
}

/// A cache-friendly compaction that read 90% of its input from the cache.
fn pith_compaction_cost() -> pith_protocol::event::CompactionCost {
    pith_protocol::event::CompactionCost {
        input: 40_000,
        cache_read: 36_000,
        cost: 0.021,
        cache_friendly: true,
        background: false,
    }
}
