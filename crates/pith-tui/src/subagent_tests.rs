//! Sub-agents on screen: a live cell per running `task` call, their questions naming the agent,
//! their tokens and cost apart from the main context.

use serde_json::json;

use pith_protocol::event::{
    Event, OutputEvent, PermissionRequest, SessionEvent, SubagentEvent, TurnEvent,
};
use pith_protocol::llm::FinishReason;
use pith_protocol::message::{PartKind, Role, ToolState, Usage};

use super::app::Msg;
use super::tests::*;

fn sub(call_id: &str, event: Event) -> Event {
    Event::Subagent(SubagentEvent {
        session_id: format!("CHILD-{call_id}"),
        parent_session_id: "S1".into(),
        agent: "explore".into(),
        call_id: call_id.into(),
        event: Box::new(event),
    })
}

/// A `task` call running for 7 s under an assistant message, as call `t1`.
fn start_task(app: &mut super::app::App) {
    ev(
        app,
        Event::Output(OutputEvent::Message {
            message: msg("M1", Role::Assistant),
        }),
    );
    let start = pith_protocol::message::now_ms() - 7_000;
    ev(
        app,
        Event::Output(OutputEvent::PartUpdated {
            part: part(
                "M1",
                "M1-task",
                PartKind::Tool {
                    call_id: "t1".into(),
                    tool: "task".into(),
                    input: json!({"description": "find flag parsing", "prompt": "…", "agent": "explore"}),
                    state: ToolState::Running { start, title: None },
                },
            ),
        }),
    );
}

/// One step of the sub-agent under `t1`: `tool` starts (as `c{i}`), the step costs 4k tokens,
/// and the tool finishes unless it is a `read`.
fn sub_agent_step(app: &mut super::app::App, i: usize, tool: &str, input: serde_json::Value) {
    let call_id = format!("c{i}");
    ev(
        app,
        sub(
            "t1",
            Event::Output(OutputEvent::ToolStarted {
                call_id: call_id.clone(),
                tool: tool.into(),
                input,
            }),
        ),
    );
    ev(
        app,
        sub(
            "t1",
            Event::Output(OutputEvent::StepFinished {
                usage: Usage {
                    input: 4_000,
                    output: 100,
                    ..Usage::default()
                },
                finish: FinishReason::ToolCalls,
                cost: 0.01,
            }),
        ),
    );
    if tool != "read" {
        ev(
            app,
            sub(
                "t1",
                Event::Output(OutputEvent::ToolFinished {
                    call_id,
                    tool: tool.into(),
                    title: format!("{tool} done"),
                    error: None,
                    duration_ms: 5,
                }),
            ),
        );
    }
}

#[test]
fn snapshot_a_running_sub_agent_cell() {
    let (mut app, _rx) = app_with(vec![user("U1", "where is the flag parsed?")]);
    start_task(&mut app);
    for (i, (tool, input)) in [
        ("glob", json!({"pattern": "src/**/*.rs"})),
        ("grep", json!({"pattern": "--zebra"})),
        ("read", json!({"file_path": "src/cli.rs"})),
    ]
    .into_iter()
    .enumerate()
    {
        sub_agent_step(&mut app, i, tool, input);
    }
    // a sub-agent's own events never move the main context figure or the main cost
    assert_eq!(app.status().context(), &usage(20_000));
    assert_eq!(app.status().cost(), 0.0);
    app.update(Msg::Tick);
    let screen = render(&mut app, 100, 20);
    assert!(
        screen.contains("task explore: find flag parsing"),
        "{screen}"
    );
    assert!(
        screen.contains("explore · running read · 12.3k tokens"),
        "{screen}"
    );
    assert!(screen.contains("✓ grep grep done"), "{screen}");
    assert!(screen.contains("agents 12.3k $0.03"), "{screen}");
    insta::assert_snapshot!(screen);
    // finished: the live view goes, the totals stay
    ev(
        &mut app,
        Event::Output(OutputEvent::ToolFinished {
            call_id: "t1".into(),
            tool: "task".into(),
            title: "explore: find flag parsing".into(),
            error: None,
            duration_ms: 9_000,
        }),
    );
    assert!(app.subagents().live.is_empty());
    assert_eq!(app.subagents().tokens, 12_300);
}

#[test]
fn a_sub_agents_question_names_the_agent() {
    let (mut app, _rx) = fresh();
    ev(
        &mut app,
        Event::Turn(TurnEvent::PermissionAsked(PermissionRequest {
            id: "p1".into(),
            tool: "bash".into(),
            call_id: "c9".into(),
            title: "cargo test".into(),
            patterns: vec!["cargo test *".into()],
            agent: Some("general".into()),
        })),
    );
    read_question(&mut app);
    let screen = render(&mut app, 100, 30);
    assert!(
        screen.contains("sub-agent general wants to run bash:"),
        "{screen}"
    );
}

#[test]
fn agents_lists_this_sessions_sub_agents_and_opens_one() {
    let (mut app, mut rx) = fresh();
    type_str(&mut app, "/agents");
    key(&mut app, crossterm::event::KeyCode::Enter);
    assert_eq!(
        ops(&mut rx),
        vec![pith_protocol::event::Op::ListSubagents {
            session_id: "S1".into()
        }]
    );
    let mut child = session();
    child.id = "C1".into();
    child.title = "find flag parsing".into();
    child.parent_id = Some("S1".into());
    child.agent = Some("explore".into());
    ev(
        &mut app,
        Event::Session(SessionEvent::Sessions {
            sessions: vec![child],
        }),
    );
    let screen = render(&mut app, 100, 30);
    assert!(screen.contains("find flag parsing"), "{screen}");
    assert!(screen.contains("explore · "), "{screen}");
    key(&mut app, crossterm::event::KeyCode::Enter);
    assert_eq!(
        ops(&mut rx),
        vec![pith_protocol::event::Op::ResumeSession { id: "C1".into() }]
    );
}
