//! The chat-completions request body.

use serde_json::{Map, Value, json};

use pith_config::OutputCap;
use pith_protocol::llm::{AssistantContent, ChatMessage, ChatRequest, UserContent};

/// The JSON body of a streaming `POST {base_url}/chat/completions` for `req`.
///
/// One `system` message (the blocks joined by a blank line) comes first; user text is sent as a
/// string, user content with images as parts with `image_url` data URLs; assistant messages carry
/// `content` (string or null) and `tool_calls`; reasoning is not sent back; tool results are
/// `tool` messages. `tools` is omitted when empty, `temperature` when unset. The output cap
/// (`req.max_tokens`) goes in the field `cap` names, or nowhere for [`OutputCap::None`].
pub fn request_body(req: &ChatRequest, cap: OutputCap) -> Value {
    let mut messages = Vec::with_capacity(req.messages.len() + 1);
    let system: Vec<&str> = req
        .system
        .iter()
        .map(String::as_str)
        .filter(|s| !s.trim().is_empty())
        .collect();
    if !system.is_empty() {
        messages.push(json!({ "role": "system", "content": system.join("\n\n") }));
    }
    for msg in &req.messages {
        match msg {
            ChatMessage::User { content } => messages.push(user_message(content)),
            ChatMessage::Assistant { content } => {
                if let Some(m) = assistant_message(content) {
                    messages.push(m);
                }
            }
            ChatMessage::ToolResult {
                call_id, content, ..
            } => messages.push(json!({
                "role": "tool",
                "tool_call_id": call_id,
                "content": content,
            })),
        }
    }

    let mut body = Map::new();
    body.insert("model".into(), json!(req.model));
    body.insert("messages".into(), Value::Array(messages));
    if !req.tools.is_empty() {
        let tools: Vec<Value> = req
            .tools
            .iter()
            .map(|t| {
                json!({
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description,
                        "parameters": t.parameters,
                    }
                })
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    body.insert("stream".into(), Value::Bool(true));
    body.insert("stream_options".into(), json!({ "include_usage": true }));
    if let Some(max) = req.max_tokens {
        match cap {
            OutputCap::MaxTokens => {
                body.insert("max_tokens".into(), json!(max));
            }
            OutputCap::MaxCompletionTokens => {
                body.insert("max_completion_tokens".into(), json!(max));
            }
            OutputCap::None => {}
        }
    }
    if let Some(t) = req.temperature {
        body.insert("temperature".into(), temperature(t));
    }
    Value::Object(body)
}

/// Adds `reasoning_effort` to a chat-completions body when the request sets one and the server
/// takes it (`accepted`: api.openai.com, or `reasoning_effort = true` for the provider).
pub(crate) fn add_effort(body: &mut Value, req: &ChatRequest, accepted: bool) {
    if let (true, Some(e), Value::Object(map)) = (accepted, req.reasoning_effort, body) {
        map.insert("reasoning_effort".into(), json!(e.as_str()));
    }
}

/// An f32 as the decimal the user wrote (0.2, not 0.20000000298023224).
fn temperature(t: f32) -> Value {
    t.to_string()
        .parse::<f64>()
        .ok()
        .and_then(serde_json::Number::from_f64)
        .map(Value::Number)
        .unwrap_or(Value::Null)
}

fn user_message(content: &[UserContent]) -> Value {
    let only_text = content
        .iter()
        .all(|c| matches!(c, UserContent::Text { .. }));
    if only_text {
        let text: Vec<&str> = content
            .iter()
            .filter_map(|c| match c {
                UserContent::Text { text } => Some(text.as_str()),
                UserContent::Image { .. } => None,
            })
            .collect();
        return json!({ "role": "user", "content": text.join("\n\n") });
    }
    let parts: Vec<Value> = content
        .iter()
        .map(|c| match c {
            UserContent::Text { text } => json!({ "type": "text", "text": text }),
            UserContent::Image { mime, data_base64 } => json!({
                "type": "image_url",
                "image_url": { "url": format!("data:{mime};base64,{data_base64}") },
            }),
        })
        .collect();
    json!({ "role": "user", "content": parts })
}

/// `None` for an assistant message with neither text nor tool calls (e.g. only reasoning).
fn assistant_message(content: &[AssistantContent]) -> Option<Value> {
    let mut texts = Vec::new();
    let mut calls = Vec::new();
    for c in content {
        match c {
            AssistantContent::Text { text } if !text.is_empty() => texts.push(text.as_str()),
            AssistantContent::Text { .. } | AssistantContent::Reasoning { .. } => {}
            AssistantContent::ToolCall { id, name, input } => calls.push(json!({
                "id": id,
                "type": "function",
                "function": { "name": name, "arguments": arguments(input) },
            })),
        }
    }
    if texts.is_empty() && calls.is_empty() {
        return None;
    }
    let mut m = Map::new();
    m.insert("role".into(), json!("assistant"));
    m.insert(
        "content".into(),
        if texts.is_empty() {
            Value::Null
        } else {
            Value::String(texts.join("\n\n"))
        },
    );
    if !calls.is_empty() {
        m.insert("tool_calls".into(), Value::Array(calls));
    }
    Some(Value::Object(m))
}

/// Tool-call arguments as a JSON string. An input stored as a string is the raw text the model
/// produced (it did not parse) and is sent back unchanged. The Responses API sends them alike.
pub(crate) fn arguments(input: &Value) -> String {
    match input {
        Value::String(raw) => raw.clone(),
        Value::Null => "{}".to_string(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ToolSpec;

    fn req(messages: Vec<ChatMessage>) -> ChatRequest {
        ChatRequest {
            model: "gpt-test".into(),
            system: vec![],
            messages,
            tools: vec![],
            max_tokens: None,
            temperature: None,
            thinking_budget: None,
            reasoning_effort: None,
        }
    }

    fn request_body_of(r: &ChatRequest) -> Value {
        request_body(r, OutputCap::MaxTokens)
    }

    fn user(text: &str) -> ChatMessage {
        ChatMessage::User {
            content: vec![UserContent::Text { text: text.into() }],
        }
    }

    #[test]
    fn minimal_body_omits_optional_keys() {
        let body = request_body_of(&req(vec![user("hi")]));
        assert_eq!(
            body,
            json!({
                "model": "gpt-test",
                "messages": [{ "role": "user", "content": "hi" }],
                "stream": true,
                "stream_options": { "include_usage": true },
            })
        );
    }

    #[test]
    fn system_blocks_join_and_options_are_set() {
        let mut r = req(vec![user("hi")]);
        r.system = vec!["header".into(), "".into(), "rest".into()];
        r.max_tokens = Some(1000);
        r.temperature = Some(0.2);
        r.tools = vec![ToolSpec {
            name: "read".into(),
            description: "Read a file".into(),
            parameters: json!({"type": "object"}),
        }];
        let body = request_body(&r, OutputCap::MaxTokens);
        assert_eq!(
            body["messages"][0],
            json!({ "role": "system", "content": "header\n\nrest" })
        );
        assert_eq!(body["max_tokens"], json!(1000));
        assert_eq!(body.get("max_completion_tokens"), None);
        assert_eq!(body["temperature"], json!(0.2));
        assert_eq!(
            body["tools"],
            json!([{ "type": "function", "function": {
                "name": "read", "description": "Read a file", "parameters": {"type": "object"}
            }}])
        );
    }

    #[test]
    fn the_cap_goes_in_the_field_the_server_takes() {
        let mut r = req(vec![user("hi")]);
        r.max_tokens = Some(512);
        let b = request_body(&r, OutputCap::MaxCompletionTokens);
        assert_eq!(b["max_completion_tokens"], json!(512));
        assert_eq!(b.get("max_tokens"), None);
        let b = request_body(&r, OutputCap::None);
        assert_eq!(b.get("max_tokens"), None);
        assert_eq!(b.get("max_completion_tokens"), None);
        assert_eq!(
            OutputCap::default_for("https://api.openai.com/v1"),
            OutputCap::MaxCompletionTokens
        );
        for local in [
            "http://127.0.0.1:8080/v1",
            "http://localhost:11434/v1",
            "https://openrouter.ai/api/v1",
            "not a url",
        ] {
            assert_eq!(
                OutputCap::default_for(local),
                OutputCap::MaxTokens,
                "{local}"
            );
        }
    }

    #[test]
    fn images_become_data_url_parts() {
        let body = request_body_of(&req(vec![ChatMessage::User {
            content: vec![
                UserContent::Text {
                    text: "what is this".into(),
                },
                UserContent::Image {
                    mime: "image/png".into(),
                    data_base64: "AAAA".into(),
                },
            ],
        }]));
        assert_eq!(
            body["messages"][0]["content"],
            json!([
                { "type": "text", "text": "what is this" },
                { "type": "image_url", "image_url": { "url": "data:image/png;base64,AAAA" } },
            ])
        );
    }

    #[test]
    fn assistant_tool_calls_results_and_no_reasoning() {
        let body = request_body_of(&req(vec![
            user("go"),
            ChatMessage::Assistant {
                content: vec![
                    AssistantContent::Reasoning {
                        text: "thinking".into(),
                        signature: None,
                        redacted: None,
                    },
                    AssistantContent::ToolCall {
                        id: "call_1".into(),
                        name: "bash".into(),
                        input: json!({"command": "ls"}),
                    },
                    AssistantContent::ToolCall {
                        id: "call_2".into(),
                        name: "read".into(),
                        input: json!("{broken"),
                    },
                ],
            },
            ChatMessage::ToolResult {
                call_id: "call_1".into(),
                content: "a\nb".into(),
                is_error: false,
            },
            ChatMessage::Assistant {
                content: vec![AssistantContent::Reasoning {
                    text: "only thoughts".into(),
                    signature: None,
                    redacted: None,
                }],
            },
            ChatMessage::Assistant {
                content: vec![AssistantContent::Text {
                    text: "done".into(),
                }],
            },
        ]));
        let msgs = body["messages"].as_array().unwrap();
        assert_eq!(msgs.len(), 4, "{msgs:#?}");
        assert_eq!(
            msgs[1],
            json!({
                "role": "assistant",
                "content": null,
                "tool_calls": [
                    { "id": "call_1", "type": "function",
                      "function": { "name": "bash", "arguments": "{\"command\":\"ls\"}" } },
                    { "id": "call_2", "type": "function",
                      "function": { "name": "read", "arguments": "{broken" } },
                ],
            })
        );
        assert_eq!(
            msgs[2],
            json!({ "role": "tool", "tool_call_id": "call_1", "content": "a\nb" })
        );
        assert_eq!(msgs[3], json!({ "role": "assistant", "content": "done" }));
        assert!(!body.to_string().contains("thinking"));
    }
}
