//! A scenario as the messages pith would have stored for it: one user message per user turn,
//! one assistant message per step (its text, then its tool calls with their outputs).

use pith_protocol::message::{
    Agent, FinishReason, Message, PartKind, Role, ToolState, ToolTime, Usage,
};

use super::scenario::{Scenario, ToolCall, Turn};

/// The scenario's messages in session `session_id`, with fresh ids in order and `model` named on
/// the assistant's.
pub(super) fn messages(s: &Scenario, session_id: &str, model: &str) -> Vec<Message> {
    let mut out: Vec<Message> = Vec::with_capacity(s.messages.len());
    let mut parent = String::new();
    let start = pith_protocol::message::now_ms() - 60_000 * s.messages.len() as i64;
    for (i, turn) in s.messages.iter().enumerate() {
        let time = start + 60_000 * i as i64;
        let m = match turn {
            Turn::User { text, paste } => {
                let m = user(session_id, text, paste.as_deref());
                parent = m.id.clone();
                m
            }
            Turn::Assistant { text, tools } => {
                assistant(session_id, &parent, model, text, tools, i)
            }
        };
        out.push(Message {
            time_created: time,
            time_completed: Some(time + 1_000),
            ..m
        });
    }
    out
}

/// A user message: `text`, then `paste` as a pasted block (as `pith run` appends piped input).
fn user(session_id: &str, text: &str, paste: Option<&str>) -> Message {
    let mut m = Message::new(session_id, Role::User);
    let Some(paste) = paste else {
        m.push(PartKind::Text {
            text: text.to_string(),
            synthetic: false,
        });
        return m;
    };
    let start = text.len() + 2;
    let whole = format!("{text}\n\n{paste}");
    let end = whole.len();
    m.push(PartKind::Text {
        text: whole,
        synthetic: false,
    });
    m.push(PartKind::Pasted {
        spans: vec![(start, end)],
    });
    m
}

fn assistant(
    session_id: &str,
    parent: &str,
    model: &str,
    text: &str,
    tools: &[ToolCall],
    step: usize,
) -> Message {
    let mut m = Message::new(session_id, Role::Assistant);
    m.parent_id = Some(parent.to_string());
    m.model = Some(model.to_string());
    m.agent = Some(Agent::Build);
    m.push(PartKind::StepStart);
    if !text.is_empty() {
        m.push(PartKind::Text {
            text: text.to_string(),
            synthetic: false,
        });
    }
    for (n, t) in tools.iter().enumerate() {
        m.push(PartKind::Tool {
            call_id: format!("call_{step}_{n}"),
            tool: t.tool.clone(),
            input: t.input.clone(),
            state: state(t),
        });
    }
    let finish = if tools.is_empty() {
        FinishReason::Stop
    } else {
        FinishReason::ToolCalls
    };
    m.push(PartKind::StepFinish {
        usage: Usage::default(),
        finish: finish.clone(),
        cost: 0.0,
    });
    m.finish = Some(finish);
    m
}

fn state(t: &ToolCall) -> ToolState {
    if t.error {
        return ToolState::Error {
            message: t.output.clone(),
            start: None,
            end: None,
        };
    }
    // `todowrite` records the list it set, as the tool does
    let metadata = match t.input.get("todos") {
        Some(todos) if t.tool == "todowrite" => serde_json::json!({ "todos": todos }),
        _ => serde_json::json!({}),
    };
    ToolState::Completed {
        output: t.output.clone(),
        title: title(t),
        metadata,
        time: ToolTime {
            start: 1,
            end: 2,
            compacted: None,
        },
    }
}

/// What the TUI would show as the call's title: its path or command.
fn title(t: &ToolCall) -> String {
    ["file_path", "path", "command", "pattern"]
        .iter()
        .find_map(|k| t.input.get(*k).and_then(|v| v.as_str()))
        .unwrap_or(&t.tool)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_step_is_an_assistant_message_answering_the_last_user_message() {
        let s: Scenario = serde_json::from_value(serde_json::json!({
            "name": "x",
            "messages": [
                {"role": "user", "text": "fix it", "paste": "E0308 at a.rs:3"},
                {"role": "assistant", "text": "reading", "tools": [
                    {"tool": "read", "input": {"file_path": "a.rs"}, "output": "fn a() {}"}]},
                {"role": "assistant", "text": "done"}
            ],
            "probes": [{"kind": "artifact", "question": "q", "all_of": ["a.rs"]}]
        }))
        .unwrap();
        let ms = messages(&s, "ses", "p/m");
        assert_eq!(ms.len(), 3);
        assert_eq!(ms[0].text(), "fix it\n\nE0308 at a.rs:3");
        let spans = pith_context::carry::pasted_spans(&ms[0]);
        assert_eq!(&ms[0].text()[spans[0].0..spans[0].1], "E0308 at a.rs:3");
        assert!(ms.windows(2).all(|w| w[0].id < w[1].id));
        assert_eq!(ms[1].parent_id.as_deref(), Some(ms[0].id.as_str()));
        assert_eq!(ms[2].parent_id.as_deref(), Some(ms[0].id.as_str()));
        assert_eq!(ms[1].finish, Some(FinishReason::ToolCalls));
        let chat = pith_context::view::to_chat(&ms);
        // user, assistant with the call, its result, the closing text
        assert_eq!(chat.len(), 4, "{chat:?}");
    }
}
