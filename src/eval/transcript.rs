//! A request's messages as plain text: what the presence check searches and what a probe
//! question is asked over.

use pith_protocol::llm::{AssistantContent, ChatMessage, UserContent};
use pith_protocol::message::Message;
use serde_json::Value;

/// Messages already in model order (the view), as the request would carry them, as text.
pub(super) fn of_view(view: &[Message]) -> String {
    let refs: Vec<&Message> = view.iter().collect();
    of_chat(&pith_context::view::convert(&refs, &mut |_, _| None))
}

/// Wire messages as text: one block per message, tool calls with their inputs and results.
pub(super) fn of_chat(messages: &[ChatMessage]) -> String {
    let mut out = String::new();
    for m in messages {
        match m {
            ChatMessage::User { content } => {
                for c in content {
                    if let UserContent::Text { text } = c {
                        block(&mut out, "user", text);
                    }
                }
            }
            ChatMessage::Assistant { content } => {
                for c in content {
                    match c {
                        AssistantContent::Text { text } => block(&mut out, "assistant", text),
                        AssistantContent::ToolCall { name, input, .. } => block(
                            &mut out,
                            &format!("assistant called {name}"),
                            &inputs(input),
                        ),
                        AssistantContent::Reasoning { .. } => {}
                    }
                }
            }
            ChatMessage::ToolResult {
                content, is_error, ..
            } => {
                let who = if *is_error {
                    "tool error"
                } else {
                    "tool result"
                };
                block(&mut out, who, content);
            }
        }
    }
    out
}

fn block(out: &mut String, who: &str, text: &str) {
    if text.trim().is_empty() {
        return;
    }
    out.push_str(&format!("[{who}]\n{}\n\n", text.trim_end()));
}

/// A tool call's input as `key: value` lines, strings unquoted (so `old_string` reads as the
/// code it is, not as escaped JSON).
fn inputs(input: &Value) -> String {
    let Some(map) = input.as_object() else {
        return input.to_string();
    };
    map.iter()
        .map(|(k, v)| match v {
            Value::String(s) => format!("{k}: {s}"),
            other => format!("{k}: {other}"),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn calls_results_and_texts_read_as_written() {
        let chat = vec![
            ChatMessage::User {
                content: vec![UserContent::Text {
                    text: "use port 8443".into(),
                }],
            },
            ChatMessage::Assistant {
                content: vec![AssistantContent::ToolCall {
                    id: "c".into(),
                    name: "edit".into(),
                    input: json!({"file_path": "src/a.rs", "new_string": "let x = \"q\";"}),
                }],
            },
            ChatMessage::ToolResult {
                call_id: "c".into(),
                content: "exit 101".into(),
                is_error: true,
            },
        ];
        let t = of_chat(&chat);
        assert!(t.contains("[user]\nuse port 8443"), "{t}");
        assert!(t.contains("file_path: src/a.rs"), "{t}");
        assert!(t.contains("new_string: let x = \"q\";"), "{t}");
        assert!(t.contains("[tool error]\nexit 101"), "{t}");
    }
}
