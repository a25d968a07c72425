//! Builders for context tests: messages with fixed ids so snapshots are stable.

use serde_json::json;

use pith_protocol::message::{
    Agent, CompactionPart, FinishReason, Message, Part, PartKind, Role, ToolState, ToolTime,
};

pub(crate) fn msg(id: &str, role: Role) -> Message {
    Message {
        id: id.to_string(),
        time_created: 0,
        ..Message::new("s", role)
    }
}

pub(crate) fn add(m: &mut Message, kind: PartKind) {
    let id = format!("{}.{}", m.id, m.parts.len());
    m.parts.push(Part {
        id,
        message_id: m.id.clone(),
        kind,
    });
}

pub(crate) fn text(t: &str) -> PartKind {
    PartKind::Text {
        text: t.to_string(),
        synthetic: false,
    }
}

pub(crate) fn user(id: &str, t: &str) -> Message {
    let mut m = msg(id, Role::User);
    add(&mut m, text(t));
    m
}

pub(crate) fn synthetic_user(id: &str, t: &str) -> Message {
    let mut m = msg(id, Role::User);
    add(
        &mut m,
        PartKind::Text {
            text: t.to_string(),
            synthetic: true,
        },
    );
    m
}

pub(crate) fn assistant(id: &str, parent: &str) -> Message {
    let mut m = msg(id, Role::Assistant);
    m.parent_id = Some(parent.to_string());
    m.finish = Some(FinishReason::Stop);
    m
}

pub(crate) fn completed(output: &str) -> ToolState {
    ToolState::Completed {
        output: output.to_string(),
        title: "t".to_string(),
        metadata: json!({}),
        time: ToolTime {
            start: 1,
            end: 2,
            compacted: None,
        },
    }
}

pub(crate) fn pruned(output: &str) -> ToolState {
    ToolState::Completed {
        output: output.to_string(),
        title: "t".to_string(),
        metadata: json!({}),
        time: ToolTime {
            start: 1,
            end: 2,
            compacted: Some(5),
        },
    }
}

pub(crate) fn tool(name: &str, call: &str, state: ToolState) -> PartKind {
    PartKind::Tool {
        call_id: call.to_string(),
        tool: name.to_string(),
        input: json!({"path": format!("src/{call}.rs")}),
        state,
    }
}

/// An assistant message with one completed tool call.
pub(crate) fn tool_msg(id: &str, parent: &str, name: &str, output: &str) -> Message {
    let mut m = assistant(id, parent);
    add(&mut m, PartKind::StepStart);
    add(&mut m, tool(name, &format!("call_{id}"), completed(output)));
    m
}

pub(crate) fn compaction_msg(id: &str, tail_start: Option<&str>) -> Message {
    let mut m = msg(id, Role::User);
    add(
        &mut m,
        PartKind::Compaction(CompactionPart {
            auto: true,
            overflow: false,
            focus: None,
            tail_start: tail_start.map(str::to_string),
            ..Default::default()
        }),
    );
    m
}

pub(crate) fn summary_msg(id: &str, parent: &str, t: &str) -> Message {
    let mut m = assistant(id, parent);
    m.summary = true;
    m.agent = Some(Agent::Compaction);
    add(&mut m, text(t));
    m
}

pub(crate) fn ids(v: &[&Message]) -> Vec<String> {
    v.iter().map(|m| m.id.clone()).collect()
}

/// `n` words of distinct filler, about `n` tokens.
pub(crate) fn words(n: usize) -> String {
    (0..n).map(|i| format!("w{} ", i % 97)).collect()
}
