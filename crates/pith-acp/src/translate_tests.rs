use pith_protocol::event::{ContextEvent, OutputEvent, TurnEvent};
use serde_json::json;

use super::*;
use pith_protocol::event::CompactionCost;
use pith_protocol::message::{Part, ToolTime};

fn kind_of(u: &SessionUpdate) -> String {
    serde_json::to_value(u).unwrap()["sessionUpdate"]
        .as_str()
        .unwrap()
        .to_string()
}

fn tool_part(state: ToolState, input: serde_json::Value) -> Event {
    Event::Output(OutputEvent::PartUpdated {
        part: Part {
            id: "p1".into(),
            message_id: "m1".into(),
            kind: PartKind::Tool {
                call_id: "c1".into(),
                tool: "edit".into(),
                input,
                state,
            },
        },
    })
}

#[test]
fn a_tool_call_is_announced_once_then_updated() {
    let mut t = Translator::new("/ws".into(), 0.0);
    let first = t.updates(&tool_part(ToolState::Pending, serde_json::Value::Null));
    assert_eq!(first.iter().map(kind_of).collect::<Vec<_>>(), ["tool_call"]);
    let input = json!({"file_path": "a.rs", "old_string": "x", "new_string": "y"});
    let second = t.updates(&tool_part(ToolState::Pending, input.clone()));
    let v = serde_json::to_value(&second[0]).unwrap();
    assert_eq!(v["sessionUpdate"], "tool_call_update");
    assert_eq!(v["title"], "Edit a.rs");
    assert_eq!(v["content"][0]["type"], "diff");
    assert_eq!(v["locations"][0]["path"], "/ws/a.rs");
    let done = ToolState::Completed {
        output: "Edited".into(),
        title: "a.rs".into(),
        metadata: serde_json::Value::Null,
        time: ToolTime {
            start: 0,
            end: 1,
            compacted: None,
        },
    };
    let last = t.updates(&tool_part(done, input));
    assert_eq!(last.len(), 1, "the input did not change: only the state");
    let v = serde_json::to_value(&last[0]).unwrap();
    assert_eq!(v["status"], "completed");
}

#[test]
fn usage_and_compaction() {
    let mut t = Translator::new("/ws".into(), 0.5);
    let usage = ContextUsage {
        used: 1200,
        window: 8000,
        ..ContextUsage::default()
    };
    let u = t.updates(&Event::Context(ContextEvent::ContextUsage(usage)));
    let v = serde_json::to_value(&u[0]).unwrap();
    assert_eq!(
        v,
        json!({"sessionUpdate": "usage_update", "used": 1200, "size": 8000, "cost": {"amount": 0.5, "currency": "USD"}})
    );
    assert!(
        t.updates(&Event::Context(ContextEvent::ContextUsage(usage)))
            .is_empty(),
        "unchanged: not sent again"
    );
    let started = t.updates(&Event::Context(ContextEvent::CompactionStarted {
        auto: false,
        overflow: false,
        focus: Some("tests".into()),
    }));
    let v = serde_json::to_value(&started[0]).unwrap();
    assert_eq!(
        (v["title"].as_str(), v["kind"].as_str()),
        (Some(COMPACTION_TITLE), Some("think"))
    );
    let ended = t.updates(&Event::Context(ContextEvent::CompactionFinished {
        summary_message_id: "s".into(),
        before: 9000,
        after: 2000,
        model_calls: 1,
        cost: CompactionCost::default(),
        kept: pith_protocol::carried::Kept {
            user_messages: 3,
            anchors: 5,
            ..Default::default()
        },
        left: pith_protocol::carried::LeftCounts {
            tool_outputs: 4,
            replies: 2,
            ..Default::default()
        },
    }));
    let v = serde_json::to_value(&ended[0]).unwrap();
    assert_eq!(v["toolCallId"], "pith-compaction-1");
    assert_eq!(
        v["title"],
        "Context compacted 9k → 2k · kept: your 3 messages, 5 anchors · left: 4 tool outputs, 2 replies"
    );
    let text = v["content"][0]["content"]["text"].as_str().unwrap();
    assert!(
        text.starts_with("Context compacted 9k → 2k · kept:"),
        "{text}"
    );
    assert!(text.contains("recall"), "{text}");
    assert_eq!(v["rawOutput"]["left"]["tool_outputs"], 4);
    assert_eq!(v["rawOutput"]["kept"]["anchors"], 5);
    assert!(
        t.updates(&Event::Turn(TurnEvent::TurnFinished {
            reason: pith_protocol::event::TurnEnd::Compacted
        }))
        .is_empty()
    );
}

#[test]
fn the_continue_message_is_pith_s_thought_not_the_user_s() {
    let mut t = Translator::new("/ws".into(), 0.0);
    let part = |text: &str, synthetic| {
        Event::Output(OutputEvent::PartUpdated {
            part: Part {
                id: "p2".into(),
                message_id: "m2".into(),
                kind: PartKind::Text {
                    text: text.into(),
                    synthetic,
                },
            },
        })
    };
    let u = t.updates(&part(
        pith_protocol::compaction_note::CONTINUE_MESSAGE,
        true,
    ));
    assert_eq!(
        u.iter().map(kind_of).collect::<Vec<_>>(),
        ["agent_thought_chunk"]
    );
    let v = serde_json::to_value(&u[0]).unwrap();
    assert_eq!(
        v["content"]["text"],
        "pith: continuing after the compaction"
    );
    // another synthetic text (a hook's note, the carried record) is not announced
    assert!(t.updates(&part("note", true)).is_empty());
}
