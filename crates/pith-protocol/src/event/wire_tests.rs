//! `pith run --format json` prints one `EventMsg` a line: the flat objects earlier builds
//! printed (one `type`, the old field names, `submission` only on the events that answer an
//! op). One event of every group, pinned to the text, and read back.

use super::*;

/// `msg` prints as `text` exactly (field order too), and `text` reads back as `msg`.
fn pinned(msg: EventMsg, text: &str) {
    assert_eq!(serde_json::to_string(&msg).unwrap(), text);
    assert_eq!(serde_json::from_str::<EventMsg>(text).unwrap(), msg);
}

fn answering(event: impl Into<Event>, id: &str) -> EventMsg {
    EventMsg::from(event.into()).answering(&id.to_string())
}

#[test]
fn output_events_print_as_before() {
    pinned(
        OutputEvent::TextDelta {
            message_id: "m1".into(),
            part_id: "p1".into(),
            delta: "hi".into(),
        }
        .into(),
        r#"{"type":"text_delta","message_id":"m1","part_id":"p1","delta":"hi"}"#,
    );
    pinned(
        OutputEvent::ToolFinished {
            call_id: "c1".into(),
            tool: "bash".into(),
            title: "ls".into(),
            error: None,
            duration_ms: 5,
        }
        .into(),
        r#"{"type":"tool_finished","call_id":"c1","tool":"bash","title":"ls","error":null,"duration_ms":5}"#,
    );
}

#[test]
fn context_events_print_as_before() {
    pinned(
        ContextEvent::ContextUsage(ContextUsage {
            used: 10,
            usable: 80,
            window: 100,
            percent: 10.0,
            estimated: true,
            cached: 0,
        })
        .into(),
        r#"{"type":"context_usage","used":10,"usable":80,"window":100,"percent":10.0,"estimated":true,"cached":0}"#,
    );
    pinned(
        answering(
            ContextEvent::ContextBreakdown {
                breakdown: Breakdown {
                    system: 1,
                    window: 9,
                    ..Breakdown::default()
                },
                pins: Vec::new(),
                instructions: Vec::new(),
            },
            "B1",
        ),
        concat!(
            r#"{"type":"context_breakdown","system":1,"tools":0,"summary":0,"messages":0,"#,
            r#""tool_outputs":0,"pruned":0,"free":0,"reserved":0,"window":9,"last_compaction":null,"#,
            r#""subagents":{"runs":0,"tokens":0,"cost":0.0},"pinned":0,"#,
            r#""left":{"user_messages":0,"replies":0,"tool_outputs":0,"pastes":0},"#,
            r#""exact":false,"submission":"B1"}"#
        ),
    );
}

#[test]
fn turn_events_print_as_before() {
    pinned(
        TurnEvent::State {
            state: EngineState::Thinking,
            detail: None,
        }
        .into(),
        r#"{"type":"state","state":"thinking","detail":null}"#,
    );
    pinned(
        answering(Event::info("saved"), "S1"),
        r#"{"type":"info","message":"saved","submission":"S1"}"#,
    );
    // the submission sat between the message and the failed message, and still does
    pinned(
        answering(
            TurnEvent::Error {
                kind: ErrorKind::Provider,
                message: "boom".into(),
                failed_message: Some("m9".into()),
            },
            "U1",
        ),
        r#"{"type":"error","kind":"provider","message":"boom","submission":"U1","failed_message":"m9"}"#,
    );
    pinned(
        TurnEvent::Error {
            kind: ErrorKind::Store,
            message: "full".into(),
            failed_message: None,
        }
        .into(),
        r#"{"type":"error","kind":"store","message":"full"}"#,
    );
}

#[test]
fn session_and_settings_events_print_as_before() {
    pinned(
        answering(
            SessionEvent::Undone {
                message_id: "m1".into(),
                prompt: "do it".into(),
                files: vec!["a.rs".into()],
                redo: 1,
            },
            "X1",
        ),
        r#"{"type":"undone","message_id":"m1","prompt":"do it","files":["a.rs"],"redo":1,"submission":"X1"}"#,
    );
    pinned(
        SessionEvent::PromptRefused {
            id: "P1".into(),
            text: "big".into(),
            tokens: 9,
            usable: 5,
            message: "too big".into(),
        }
        .into(),
        r#"{"type":"prompt_refused","id":"P1","text":"big","tokens":9,"usable":5,"message":"too big"}"#,
    );
    pinned(
        answering(
            SettingsEvent::ModelChanged {
                model: "a/b".into(),
            },
            "M1",
        ),
        r#"{"type":"model_changed","model":"a/b","submission":"M1"}"#,
    );
    pinned(
        SettingsEvent::PermissionModeChanged {
            mode: PermissionMode::Plan,
        }
        .into(),
        r#"{"type":"permission_mode_changed","mode":"plan"}"#,
    );
}

#[test]
fn subagent_events_print_as_before() {
    pinned(
        SubagentEvent {
            session_id: "s2".into(),
            parent_session_id: "s1".into(),
            agent: "explore".into(),
            call_id: "c1".into(),
            event: Box::new(
                TurnEvent::TurnFinished {
                    reason: TurnEnd::Stop,
                }
                .into(),
            ),
        }
        .into(),
        concat!(
            r#"{"type":"subagent","session_id":"s2","parent_session_id":"s1","agent":"explore","#,
            r#""call_id":"c1","event":{"type":"turn_finished","reason":"stop"}}"#
        ),
    );
}

/// Only the events that answer an op take the submission being handled; one already named
/// keeps its own.
#[test]
fn answering_names_only_the_answers() {
    let id = "U1".to_string();
    let delta = EventMsg::from(OutputEvent::ToolOutput {
        call_id: "c".into(),
        output: "x".into(),
    });
    assert_eq!(delta.answering(&id).submission(), None);
    let listed = EventMsg::from(SessionEvent::Sessions { sessions: vec![] });
    assert_eq!(listed.answering(&id).submission(), Some(&id));
    let named = EventMsg {
        submission: Some("other".into()),
        event: Event::info("x"),
    };
    assert_eq!(
        named.answering(&id).submission().map(String::as_str),
        Some("other")
    );
    assert!(
        !Event::from(TurnEvent::TurnFinished {
            reason: TurnEnd::Stop
        })
        .answers_op()
    );
}

fn text(s: &str) -> String {
    s.to_string()
}

fn ends() -> TurnEvent {
    TurnEvent::TurnFinished {
        reason: TurnEnd::Stop,
    }
}

/// One event of every kind there is, each with whether it answers an op: the twelve that
/// carried a `submission` field before the envelope (and only they) still take one.
fn every_event() -> Vec<(Event, bool)> {
    [
        output_events(),
        stream_events(),
        context_events(),
        turn_events(),
        session_events(),
        settings_events(),
    ]
    .concat()
}

fn output_events() -> Vec<(Event, bool)> {
    use crate::message::{Message, Role};
    let message = Message::new("s", Role::User);
    let mut with_part = message.clone();
    let part = with_part
        .push(crate::message::PartKind::Text {
            text: "t".into(),
            synthetic: false,
        })
        .clone();
    vec![
        (OutputEvent::Message { message }.into(), false),
        (OutputEvent::PartUpdated { part }.into(), false),
        (
            OutputEvent::MessageRemoved {
                message_id: text("m"),
            }
            .into(),
            false,
        ),
        (
            OutputEvent::PartsRemoved {
                message_id: text("m"),
                part_ids: vec![],
            }
            .into(),
            false,
        ),
    ]
}

/// Streamed output and tools.
fn stream_events() -> Vec<(Event, bool)> {
    use crate::message::Usage;
    vec![
        (
            OutputEvent::TextDelta {
                message_id: text("m"),
                part_id: text("p"),
                delta: text("d"),
            }
            .into(),
            false,
        ),
        (
            OutputEvent::ReasoningDelta {
                message_id: text("m"),
                part_id: text("p"),
                delta: text("d"),
            }
            .into(),
            false,
        ),
        (
            OutputEvent::ToolStarted {
                call_id: text("c"),
                tool: text("bash"),
                input: serde_json::Value::Null,
            }
            .into(),
            false,
        ),
        (
            OutputEvent::ToolOutput {
                call_id: text("c"),
                output: text("o"),
            }
            .into(),
            false,
        ),
        (
            OutputEvent::ToolFinished {
                call_id: text("c"),
                tool: text("bash"),
                title: text(""),
                error: None,
                duration_ms: 0,
            }
            .into(),
            false,
        ),
        (
            OutputEvent::StepFinished {
                usage: Usage::default(),
                finish: crate::message::FinishReason::Stop,
                cost: 0.0,
            }
            .into(),
            false,
        ),
    ]
}

fn context_events() -> Vec<(Event, bool)> {
    vec![
        (
            ContextEvent::ContextUsage(ContextUsage::default()).into(),
            false,
        ),
        (
            ContextEvent::CompactionStarted {
                auto: true,
                overflow: false,
                focus: None,
            }
            .into(),
            false,
        ),
        (
            ContextEvent::CompactionFinished {
                summary_message_id: text("m"),
                before: 2,
                after: 1,
                model_calls: 1,
                cost: CompactionCost::default(),
                kept: Default::default(),
                left: Default::default(),
            }
            .into(),
            false,
        ),
        (
            ContextEvent::CompactionAhead {
                notice: Some(crate::event::CompactionNotice::Writing),
            }
            .into(),
            false,
        ),
        (
            ContextEvent::Pruned {
                parts: 1,
                tokens: 1,
            }
            .into(),
            false,
        ),
        (
            ContextEvent::ContextWindow {
                model: text("a/b"),
                window: 1,
                previous: 0,
                source: WindowSource::ServerError,
            }
            .into(),
            false,
        ),
        (
            ContextEvent::ContextBreakdown {
                breakdown: Breakdown::default(),
                pins: Vec::new(),
                instructions: Vec::new(),
            }
            .into(),
            true,
        ),
        (
            ContextEvent::InstructionsLoaded {
                file: crate::event::InstructionFile {
                    path: text("sub/AGENTS.md"),
                    origin: crate::event::InstructionOrigin::Nested,
                    tokens: 3,
                },
            }
            .into(),
            false,
        ),
    ]
}

fn turn_events() -> Vec<(Event, bool)> {
    vec![
        (
            TurnEvent::PermissionAsked(PermissionRequest {
                id: text("q"),
                tool: text("bash"),
                call_id: text("c"),
                title: text("ls"),
                patterns: vec![],
                agent: None,
            })
            .into(),
            false,
        ),
        (
            TurnEvent::Retrying {
                attempt: 1,
                max: 2,
                delay_ms: 0,
                message: text("x"),
            }
            .into(),
            false,
        ),
        (
            TurnEvent::State {
                state: EngineState::Idle,
                detail: None,
            }
            .into(),
            false,
        ),
        (Event::info("i"), true),
        (
            TurnEvent::Error {
                kind: ErrorKind::Internal,
                message: text("x"),
                failed_message: None,
            }
            .into(),
            true,
        ),
        (ends().into(), false),
        (
            TurnEvent::GoalChecked {
                met: false,
                by: GoalCheckBy::Command,
                detail: text("exit 1"),
            }
            .into(),
            false,
        ),
        (TurnEvent::ElicitationAsked(<_>::default()).into(), false),
    ]
}

fn session_events() -> Vec<(Event, bool)> {
    let session: crate::message::Session = serde_json::from_value(serde_json::json!({
        "id": "s", "title": "", "directory": "/w", "model": "a/b",
        "time_created": 0, "time_updated": 0,
    }))
    .unwrap();
    vec![
        (
            SessionEvent::SessionLoaded {
                session: session.clone(),
                messages: vec![],
                more_history: false,
            }
            .into(),
            true,
        ),
        (
            SessionEvent::History {
                session_id: text("s"),
                messages: vec![],
                more: false,
            }
            .into(),
            true,
        ),
        (
            SessionEvent::Sessions {
                sessions: vec![session],
            }
            .into(),
            true,
        ),
        (
            SessionEvent::PinsChanged {
                pins: vec![crate::event::Pin {
                    text: text("port 8443"),
                    tokens: 3,
                }],
                budget: 100,
            }
            .into(),
            true,
        ),
        (
            SessionEvent::PromptRefused {
                id: text("P"),
                text: text("t"),
                tokens: 0,
                usable: 0,
                message: text("x"),
            }
            .into(),
            false,
        ),
        (
            SessionEvent::Undone {
                message_id: text("m"),
                prompt: text("p"),
                files: vec![],
                redo: 1,
            }
            .into(),
            true,
        ),
        (
            SessionEvent::Redone {
                messages: vec![],
                files: vec![],
                redo: 0,
            }
            .into(),
            true,
        ),
        (
            SessionEvent::GoalChanged {
                goal: Some(super::goal_wire_tests::a_goal()),
            }
            .into(),
            true,
        ),
        (
            SessionEvent::MemoryFiles {
                files: vec![crate::event::MemoryFile {
                    scope: crate::event::MemoryScope::User,
                    path: text("/h/AGENTS.md"),
                    exists: false,
                    bytes: 0,
                    tokens: 0,
                }],
            }
            .into(),
            true,
        ),
    ]
}

/// The settings' and a sub-agent's.
fn settings_events() -> Vec<(Event, bool)> {
    vec![
        (SettingsEvent::McpStatus { servers: vec![] }.into(), false),
        (
            SettingsEvent::McpResources { resources: vec![] }.into(),
            true,
        ),
        (
            SettingsEvent::ModelChanged { model: text("a/b") }.into(),
            true,
        ),
        (SettingsEvent::EffortChanged { effort: None }.into(), true),
        (
            SettingsEvent::PermissionModeChanged {
                mode: PermissionMode::Default,
            }
            .into(),
            true,
        ),
        (
            SubagentEvent {
                session_id: text("c"),
                parent_session_id: text("s"),
                agent: text("explore"),
                call_id: text("t"),
                event: Box::new(ends().into()),
            }
            .into(),
            false,
        ),
    ]
}

#[test]
fn the_answers_are_the_fifteen_they_are_and_every_event_reads_back() {
    let events = every_event();
    assert_eq!(events.len(), 41, "one of each kind");
    assert_eq!(events.iter().filter(|(_, answers)| *answers).count(), 15);
    for (event, answers) in events {
        assert_eq!(event.answers_op(), answers, "{event:?}");
        let msg = EventMsg::from(event).answering(&"A1".to_string());
        let json = serde_json::to_value(&msg).unwrap();
        assert_eq!(json.get("submission").is_some(), answers, "{json}");
        assert_eq!(serde_json::from_value::<EventMsg>(json).unwrap(), msg);
    }
}
