use serde_json::json;

use super::*;
use pith_protocol::message::{CompactionPart, ToolState, ToolTime};
use pith_protocol::message::{PartKind, Role, Session, Usage};
use rusqlite::params;

mod database;
mod earlier_builds;
mod exports;
mod history;
mod parts;
mod session_rows;

/// One part of every kind (a tool call in each state), in this order.
fn every_part_kind() -> Vec<PartKind> {
    [text_parts(), tool_parts(), bookkeeping_parts()].concat()
}

/// Text (typed and synthetic) and reasoning (signed and redacted).
fn text_parts() -> Vec<PartKind> {
    vec![
        PartKind::Text {
            text: "hello «世界»\nline two".into(),
            synthetic: false,
        },
        PartKind::Text {
            text: "Continue if you have next steps".into(),
            synthetic: true,
        },
        PartKind::Reasoning {
            text: "thinking".into(),
            signature: Some("sig".into()),
            redacted: None,
        },
        PartKind::Reasoning {
            text: String::new(),
            signature: None,
            redacted: Some("opaque".into()),
        },
    ]
}

/// A tool call in each state.
fn tool_parts() -> Vec<PartKind> {
    vec![
        PartKind::Tool {
            call_id: "c1".into(),
            tool: "bash".into(),
            input: json!({"command": "ls"}),
            state: ToolState::Pending,
        },
        PartKind::Tool {
            call_id: "c2".into(),
            tool: "bash".into(),
            input: json!({"command": "sleep 9"}),
            state: ToolState::Running {
                start: 5,
                title: Some("sleep".into()),
            },
        },
        PartKind::Tool {
            call_id: "c3".into(),
            tool: "read".into(),
            input: json!({"path": "a.rs"}),
            state: ToolState::Completed {
                output: "fn main() {}".into(),
                title: "a.rs".into(),
                metadata: json!({"lines": 1}),
                time: ToolTime {
                    start: 1,
                    end: 2,
                    compacted: Some(3),
                },
            },
        },
        PartKind::Tool {
            call_id: "c4".into(),
            tool: "read".into(),
            input: json!({}),
            state: ToolState::Error {
                message: "no such file".into(),
                start: Some(1),
                end: None,
            },
        },
    ]
}

/// A compaction request, step marks, an attached file and a patch.
fn bookkeeping_parts() -> Vec<PartKind> {
    vec![
        PartKind::Compaction(CompactionPart {
            auto: true,
            overflow: true,
            focus: Some("the parser".into()),
            tail_start: Some("01TAIL".into()),
            ..Default::default()
        }),
        PartKind::StepStart,
        PartKind::StepFinish {
            usage: Usage {
                input: 10,
                output: 20,
                reasoning: 3,
                cache_read: 4,
                cache_write: 5,
            },
            finish: "tool_calls".into(),
            cost: 0.25,
        },
        PartKind::File {
            path: "img.png".into(),
            mime: "image/png".into(),
        },
        PartKind::Patch {
            files: vec!["src/a.rs".into(), "src/b.rs".into()],
        },
    ]
}

/// Stores a message with the given parts (header first, then each part) and returns it.
fn add_message(store: &Store, session: &str, role: Role, kinds: Vec<PartKind>) -> Message {
    let mut m = Message::new(session, role);
    store.upsert_message(&m).unwrap();
    for kind in kinds {
        let part = m.push(kind).clone();
        store.upsert_part(session, &part).unwrap();
    }
    m
}

/// A completed compaction: its message (keeping the tail from `tail_start`) and its summary.
fn add_compaction(store: &Store, session: &str, tail_start: Option<&str>) -> (Message, Message) {
    let c = add_message(
        store,
        session,
        Role::User,
        vec![PartKind::Compaction(CompactionPart {
            auto: true,
            overflow: false,
            focus: None,
            tail_start: tail_start.map(str::to_string),
            carried: Default::default(),
        })],
    );
    let mut s = Message::new(session, Role::Assistant);
    s.summary = true;
    s.parent_id = Some(c.id.clone());
    s.finish = Some("stop".into());
    s.time_completed = Some(1);
    s.push(text("the summary"));
    store.save_message(&s).unwrap();
    (c, s)
}

fn text(s: &str) -> PartKind {
    PartKind::Text {
        text: s.into(),
        synthetic: false,
    }
}
