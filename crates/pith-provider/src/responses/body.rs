//! The Responses API request body (pure; no I/O).

use serde_json::{Map, Value, json};

use pith_protocol::llm::{AssistantContent, ChatMessage, ChatRequest, UserContent};

/// `max_output_tokens` when the request does not say (the field is always sent).
pub(crate) const DEFAULT_MAX_OUTPUT: u32 = 8192;

/// Marks a reasoning item's `encrypted_content` as stored in a reasoning part (its `signature`,
/// or `redacted` when the item had no summary), so that no other API is sent it as its own
/// signature, and no other API's signature is sent to this one.
pub(crate) const ENCRYPTED_PREFIX: &str = "openai-responses:";

/// What the server takes beyond the basic fields.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Dialect {
    /// OpenAI itself: `store: false`, `include: ["reasoning.encrypted_content"]`, reasoning
    /// items carried back, reasoning summaries asked for.
    pub openai: bool,
    /// The server takes `reasoning.effort` (OpenAI, or a provider configured so).
    pub effort: bool,
}

/// The JSON body of a streaming `POST {base_url}/responses` for `req`.
///
/// The system blocks are `instructions`; messages are `input` items: user and assistant messages
/// with `input_text` / `input_image` / `output_text` parts, `function_call` and
/// `function_call_output` items, and (OpenAI only) the encrypted reasoning items pith received.
/// `max_output_tokens` is always set; `temperature` only without a reasoning effort.
pub fn request_body(req: &ChatRequest, dialect: Dialect) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(req.model));
    let system: Vec<&str> = req
        .system
        .iter()
        .map(String::as_str)
        .filter(|s| !s.trim().is_empty())
        .collect();
    if !system.is_empty() {
        body.insert("instructions".into(), json!(system.join("\n\n")));
    }
    // A request without tools (the compaction agent's, a last step) carries calls as text.
    let messages = if req.tools.is_empty() && pith_protocol::llm::has_tool_blocks(&req.messages) {
        pith_protocol::llm::flatten_tools(req.messages.clone())
    } else {
        req.messages.clone()
    };
    body.insert("input".into(), Value::Array(input(&messages, dialect)));
    if !req.tools.is_empty() {
        let tools: Vec<Value> = req
            .tools
            .iter()
            .map(|t| {
                json!({
                    "type": "function",
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.parameters,
                })
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    body.insert("stream".into(), json!(true));
    body.insert(
        "max_output_tokens".into(),
        json!(req.max_tokens.unwrap_or(DEFAULT_MAX_OUTPUT).max(1)),
    );
    if dialect.openai {
        body.insert("store".into(), json!(false));
        body.insert("include".into(), json!(["reasoning.encrypted_content"]));
    }
    let effort = req.reasoning_effort.filter(|_| dialect.effort);
    if let Some(e) = effort {
        let mut reasoning = json!({ "effort": e.as_str() });
        if dialect.openai {
            reasoning["summary"] = json!("auto");
        }
        body.insert("reasoning".into(), reasoning);
    } else if let Some(t) = req.temperature {
        body.insert("temperature".into(), decimal(t));
    }
    Value::Object(body)
}

/// Adds OpenAI's hosted web search to a request `body` that offers tools (not to one that
/// offers none: the compaction agent's, a last step), asking for the pages it found
/// (`web_search_call.action.sources`) where the body asks for other extras already.
pub fn add_web_search(body: &mut Value) {
    let Some(tools) = body.get_mut("tools").and_then(Value::as_array_mut) else {
        return;
    };
    tools.push(json!({ "type": "web_search" }));
    if let Some(include) = body.get_mut("include").and_then(Value::as_array_mut) {
        include.push(json!("web_search_call.action.sources"));
    }
}

/// An f32 as the decimal the user wrote (0.2, not 0.20000000298023224).
fn decimal(t: f32) -> Value {
    t.to_string()
        .parse::<f64>()
        .ok()
        .and_then(serde_json::Number::from_f64)
        .map(Value::Number)
        .unwrap_or(Value::Null)
}

fn input(messages: &[ChatMessage], dialect: Dialect) -> Vec<Value> {
    let mut items = Vec::with_capacity(messages.len());
    for msg in messages {
        match msg {
            ChatMessage::User { content } => {
                let parts: Vec<Value> = content.iter().map(user_part).collect();
                if !parts.is_empty() {
                    items.push(json!({ "type": "message", "role": "user", "content": parts }));
                }
            }
            ChatMessage::Assistant { content } => assistant_items(content, dialect, &mut items),
            ChatMessage::ToolResult {
                call_id, content, ..
            } => items.push(json!({
                "type": "function_call_output",
                "call_id": call_id,
                "output": content,
            })),
        }
    }
    items
}

fn user_part(c: &UserContent) -> Value {
    match c {
        UserContent::Text { text } => json!({ "type": "input_text", "text": text }),
        UserContent::Image { mime, data_base64 } => json!({
            "type": "input_image",
            "image_url": format!("data:{mime};base64,{data_base64}"),
        }),
    }
}

/// An assistant message as items, in the order the model produced them: reasoning (OpenAI,
/// encrypted only), one message with the text parts, then the function calls.
fn assistant_items(content: &[AssistantContent], dialect: Dialect, items: &mut Vec<Value>) {
    let mut reasoning = Vec::new();
    let mut texts = Vec::new();
    let mut calls = Vec::new();
    for c in content {
        match c {
            AssistantContent::Reasoning {
                text,
                signature,
                redacted,
            } => {
                if dialect.openai
                    && let Some(item) = reasoning_item(text, signature, redacted)
                {
                    reasoning.push(item);
                }
            }
            AssistantContent::Text { text } if !text.is_empty() => {
                texts.push(json!({ "type": "output_text", "text": text }));
            }
            AssistantContent::Text { .. } => {}
            AssistantContent::ToolCall { id, name, input } => calls.push(json!({
                "type": "function_call",
                "call_id": id,
                "name": name,
                "arguments": crate::openai::arguments(input),
            })),
        }
    }
    // A reasoning item must be followed by what it led to: alone (an interrupted step) it is
    // rejected.
    if texts.is_empty() && calls.is_empty() {
        return;
    }
    items.extend(reasoning);
    if !texts.is_empty() {
        // `type` is optional for OpenAI but llama.cpp takes an assistant message only with it.
        items.push(json!({ "type": "message", "role": "assistant", "content": texts }));
    }
    items.extend(calls);
}

/// A reasoning item to send back: only one this API produced (its encrypted content).
fn reasoning_item(
    text: &str,
    signature: &Option<String>,
    redacted: &Option<String>,
) -> Option<Value> {
    let encrypted = signature
        .as_deref()
        .or(redacted.as_deref())?
        .strip_prefix(ENCRYPTED_PREFIX)?;
    let summary = if text.is_empty() {
        json!([])
    } else {
        json!([{ "type": "summary_text", "text": text }])
    };
    Some(json!({
        "type": "reasoning",
        "summary": summary,
        "encrypted_content": encrypted,
    }))
}

/// Whether a stored reasoning signature came from this API (and so means nothing elsewhere).
pub(crate) fn is_responses_reasoning(value: &str) -> bool {
    value.starts_with(ENCRYPTED_PREFIX)
}

#[cfg(test)]
#[path = "body_tests.rs"]
mod tests;
