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
            },
            "B1",
        ),
        concat!(
            r#"{"type":"context_breakdown","system":1,"tools":0,"summary":0,"messages":0,"#,
            r#""tool_outputs":0,"pruned":0,"free":0,"reserved":0,"window":9,"last_compaction":null,"#,
            r#""subagents":{"runs":0,"tokens":0,"cost":0.0},"exact":false,"submission":"B1"}"#
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
