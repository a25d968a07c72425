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
    let (output, metadata) = match t.tool.as_str() {
        "bash" => bash(t),
        // `todowrite` records the list it set, as the tool does
        "todowrite" => (
            t.output.clone(),
            serde_json::json!({ "todos": t.input.get("todos") }),
        ),
        _ => (t.output.clone(), serde_json::json!({})),
    };
    ToolState::Completed {
        output,
        title: title(t),
        metadata,
        time: ToolTime {
            start: 1,
            end: 2,
            compacted: None,
        },
    }
}

/// A command's output and metadata as pith's `bash` tool stores them: the output ending in
/// `Exit code: N`, the code in the metadata.
fn bash(t: &ToolCall) -> (String, serde_json::Value) {
    let text = t.output.trim_end();
    let (last_start, last) = text
        .rfind('\n')
        .map_or((0, text), |i| (i + 1, &text[i + 1..]));
    let said = ["exit status ", "Exit code: "]
        .iter()
        .find_map(|p| last.trim().strip_prefix(p)?.trim().parse::<i32>().ok());
    let body = if said.is_some() {
        text[..last_start].trim_end()
    } else {
        text
    };
    let code = t.exit.or(said);
    let mut output = if body.is_empty() {
        "(no output)".to_string()
    } else {
        body.to_string()
    };
    if let Some(code) = code {
        output.push_str("\n\n");
        output.push_str(&pith_protocol::tool::exit_line(code.into()));
    }
    let metadata = pith_protocol::tool::BashMetadata {
        command: t.input["command"].as_str().unwrap_or_default().to_string(),
        exit_code: code,
        ..Default::default()
    };
    (output, serde_json::to_value(metadata).unwrap_or_default())
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
                    {"tool": "read", "input": {"file_path": "a.rs"}, "output": "fn a() {}"},
                    {"tool": "bash", "input": {"command": "cargo test"},
                     "output": "test result: FAILED\nexit status 101\n"}]},
                {"role": "assistant", "text": "done"}
            ],
            "probes": [{"kind": "artifact", "question": "q", "all_of": ["a.rs"]}]
        }))
        .unwrap();
        let ms = messages(&s, "ses", "p/m");
        assert_eq!(ms.len(), 3);
        assert_eq!(ms[0].text(), "fix it\n\nE0308 at a.rs:3");
        let spans = pith_context::paste::pasted_spans(&ms[0]);
        assert_eq!(&ms[0].text()[spans[0].0..spans[0].1], "E0308 at a.rs:3");
        assert!(ms.windows(2).all(|w| w[0].id < w[1].id));
        assert_eq!(ms[1].parent_id.as_deref(), Some(ms[0].id.as_str()));
        assert_eq!(ms[2].parent_id.as_deref(), Some(ms[0].id.as_str()));
        assert_eq!(ms[1].finish, Some(FinishReason::ToolCalls));
        let PartKind::Tool {
            state: ToolState::Completed {
                output, metadata, ..
            },
            ..
        } = &ms[1].parts[3].kind
        else {
            panic!("{:?}", ms[1].parts);
        };
        assert_eq!(output, "test result: FAILED\n\nExit code: 101");
        assert_eq!(metadata["exit_code"], 101);
        assert_eq!(metadata["command"], "cargo test");
        let chat = pith_context::view::to_chat(&ms);
        // user, assistant with the calls, their results, the closing text
        assert_eq!(chat.len(), 5, "{chat:?}");
    }
}
