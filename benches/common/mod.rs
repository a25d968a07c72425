//! Synthetic sessions shared by the resume and TUI benches: turns of a user prompt and three
//! assistant steps (step markers, a markdown text, a completed tool call), a completed compaction
//! every `COMPACT_EVERY` turns, old tool outputs pruned. About 13 parts (and 9 transcript cells)
//! a turn.
#![allow(dead_code)]

use serde_json::json;

use pith_protocol::message::{CompactionPart, Message, PartKind, Role, ToolState, ToolTime};

pub const COMPACT_EVERY: usize = 20;
/// Turns whose tool outputs are still unpruned at the end.
pub const UNPRUNED_TURNS: usize = 6;

pub fn prose(n: usize, seed: usize) -> String {
    const W: [&str; 16] = [
        "the",
        "parser",
        "returns",
        "an",
        "error",
        "when",
        "`src/lib.rs`",
        "config",
        "value",
        "is",
        "missing",
        "so",
        "we",
        "check",
        "**fn**",
        "Option<u64>",
    ];
    (0..n)
        .map(|i| W[(i * 7 + seed) % W.len()])
        .collect::<Vec<_>>()
        .join(" ")
}

pub fn code(lines: usize) -> String {
    (0..lines)
        .map(|i| {
            format!(
                "    let value_{i} = config.get(\"key_{i}\").and_then(|v| v.as_u64()).unwrap_or({i});\n"
            )
        })
        .collect()
}

fn markdown(seed: usize) -> String {
    format!(
        "{}\n\n- {}\n- {}\n\n```rust\nfn f_{seed}() -> u64 {{\n    {seed}\n}}\n```\n\n{}",
        prose(30, seed),
        prose(8, seed + 1),
        prose(8, seed + 2),
        prose(12, seed + 3)
    )
}

pub fn user_msg(session: &str, text: String) -> Message {
    let mut m = Message::new(session, Role::User);
    m.push(PartKind::Text {
        text,
        synthetic: false,
    });
    m
}

/// One step: StepStart, Text, Tool (completed), StepFinish — four parts, two visible cells.
pub fn step_msg(session: &str, parent: &str, seed: usize, compacted: bool) -> Message {
    let mut m = Message::new(session, Role::Assistant);
    m.parent_id = Some(parent.to_string());
    m.model = Some("anthropic/claude-sonnet-4-5".into());
    m.finish = Some("tool_calls".into());
    m.push(PartKind::StepStart);
    m.push(PartKind::Text {
        text: markdown(seed),
        synthetic: false,
    });
    let (tool, input, output) = if seed.is_multiple_of(2) {
        (
            "read",
            json!({"path": format!("src/module_{seed}.rs")}),
            code(12),
        )
    } else {
        (
            "bash",
            json!({"command": "cargo test --quiet", "description": "run the tests"}),
            format!(
                "running 12 tests\n{}test result: ok. 12 passed\n",
                "test x ... ok\n".repeat(12)
            ),
        )
    };
    m.push(PartKind::Tool {
        call_id: format!("call_{seed}"),
        tool: tool.into(),
        input,
        state: ToolState::Completed {
            output,
            title: tool.into(),
            metadata: json!({}),
            time: ToolTime {
                start: 0,
                end: 12,
                compacted: compacted.then_some(1),
            },
        },
    });
    m.push(PartKind::StepFinish {
        usage: Default::default(),
        finish: "tool_calls".into(),
        cost: 0.001,
    });
    m
}

/// A session of about `parts` stored parts.
pub fn session(session: &str, parts: usize) -> Vec<Message> {
    let turns = (parts / 13).max(1);
    let mut out = Vec::new();
    for t in 0..turns {
        let left = turns - t;
        if t > 0 && t.is_multiple_of(COMPACT_EVERY) {
            let mut c = Message::new(session, Role::User);
            c.push(PartKind::Compaction(CompactionPart {
                auto: true,
                overflow: false,
                focus: None,
                tail_start: None,
                ..Default::default()
            }));
            let mut s = Message::new(session, Role::Assistant);
            s.parent_id = Some(c.id.clone());
            s.summary = true;
            s.finish = Some("stop".into());
            s.push(PartKind::Text {
                text: format!(
                    "## Goal\n{}\n\n## Progress\n{}",
                    prose(100, t),
                    prose(300, t)
                ),
                synthetic: false,
            });
            out.push(c);
            out.push(s);
        }
        let u = user_msg(session, prose(30, t));
        let uid = u.id.clone();
        out.push(u);
        for k in 0..3 {
            out.push(step_msg(session, &uid, t * 3 + k, left > UNPRUNED_TURNS));
        }
    }
    out
}

pub fn part_count(messages: &[Message]) -> usize {
    messages.iter().map(|m| m.parts.len()).sum()
}

/// Writes a session of about `parts` parts (see [`session`]) into a store under `data_dir`, for
/// the workspace `directory`, with its compaction point and a reported size set as the engine
/// leaves them; returns its id.
pub fn build_store(data_dir: &std::path::Path, directory: &str, parts: usize) -> String {
    use pith_context::view;
    let store = pith_store::Store::open(data_dir).expect("store");
    let mut session = store
        .create_session(directory, "anthropic/claude-sonnet-4-5")
        .expect("session");
    let messages: Vec<Message> = self::session("x", parts)
        .into_iter()
        .map(|mut m| {
            m.session_id = session.id.clone();
            m
        })
        .collect();
    for m in &messages {
        store.save_message(m).expect("save");
    }
    session.compaction_point =
        view::compaction_point(&messages).map(|p| messages[p.compaction].id.clone());
    session.tokens = 60_000;
    store.update_session(&session).expect("update");
    session.id
}
