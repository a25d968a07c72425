//! `ChatRequest` → Anthropic Messages request body (pure; no I/O).

use serde_json::{Map, Value, json};

use crate::{AssistantContent, ChatMessage, ChatRequest, ToolSpec, UserContent};
use pith_protocol::llm::ReasoningEffort;

/// `max_tokens` when the request does not say (the API requires one).
pub(crate) const DEFAULT_MAX_TOKENS: u32 = 8192;
/// The smallest thinking budget the API accepts.
pub(crate) const MIN_THINKING_BUDGET: u32 = 1024;
/// Room left for the answer when `max_tokens` has to be raised above the thinking budget.
const ANSWER_ROOM: u32 = 8192;
/// The API accepts at most four `cache_control` breakpoints per request.
const MAX_BREAKPOINTS: usize = 4;

/// Builds the JSON body of a streaming `POST /v1/messages` request.
///
/// - `system` is an array of text blocks (empty ones dropped); the first is a cache breakpoint.
/// - Messages alternate user/assistant: consecutive tool results (and user content directly after
///   them) are merged into one user message whose `tool_result` blocks come first.
/// - Assistant blocks are ordered thinking / redacted thinking, then text, then `tool_use`.
///   Thinking without a signature cannot be sent back and is dropped.
/// - Empty text blocks are never sent; a message left with no blocks is dropped.
/// - Cache breakpoints: first system block, last tool, last block of each of the last two
///   messages (at most four in all).
/// - `thinking` is sent when `thinking_budget` or a reasoning effort is set (the effort's budget,
///   [`effort_budget`], wins); `max_tokens` then exceeds the budget and
///   `temperature` is omitted (the API only allows the default with thinking).
pub fn request_body(req: &ChatRequest) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(req.model));
    let budget = thinking_budget(req);
    body.insert("max_tokens".into(), json!(max_tokens(req, budget)));
    body.insert("stream".into(), json!(true));

    let mut breakpoints = 0usize;
    let system = system_blocks(req);
    if !system.is_empty() {
        breakpoints += 1;
        body.insert("system".into(), Value::Array(system));
    }
    let mut messages = wire_messages(req);
    breakpoints += mark_last_messages(&mut messages);
    if !req.tools.is_empty() {
        let tools = tool_definitions(&req.tools, breakpoints < MAX_BREAKPOINTS);
        body.insert("tools".into(), Value::Array(tools));
    }
    body.insert(
        "messages".into(),
        Value::Array(messages.into_iter().map(WireMessage::into_json).collect()),
    );
    insert_thinking_or_temperature(&mut body, req, budget);
    Value::Object(body)
}

/// Searches the model may make in one answer with Anthropic's web search server tool.
const WEB_SEARCH_MAX_USES: u32 = 5;

/// Adds Anthropic's web search server tool (`web_search_20250305`) to a request `body` that
/// offers tools (not to one that offers none: the compaction agent's, a last step).
/// Not when a tool of the request already has its name (an MCP server `web` with a tool
/// `search`): names must be unique.
pub fn add_web_search(body: &mut Value) {
    if let Some(tools) = body.get_mut("tools").and_then(Value::as_array_mut)
        && !tools.iter().any(|t| t["name"] == "web_search")
    {
        tools.push(json!({
            "type": "web_search_20250305",
            "name": "web_search",
            "max_uses": WEB_SEARCH_MAX_USES,
        }));
    }
}

/// The thinking budget: the reasoning effort's, else the configured one, at least the API's
/// minimum; `None` without thinking.
fn thinking_budget(req: &ChatRequest) -> Option<u32> {
    req.reasoning_effort
        .map(effort_budget)
        .or(req.thinking_budget)
        .map(|b| b.max(MIN_THINKING_BUDGET))
}

/// `max_tokens`: the request's (or the default), raised above the thinking budget.
fn max_tokens(req: &ChatRequest, budget: Option<u32>) -> u32 {
    let max_tokens = req.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS).max(1);
    match budget {
        Some(b) if max_tokens <= b => b.saturating_add(ANSWER_ROOM),
        _ => max_tokens,
    }
}

/// The system prompt as text blocks (empty ones dropped), the first a cache breakpoint.
fn system_blocks(req: &ChatRequest) -> Vec<Value> {
    let mut system: Vec<Value> = req
        .system
        .iter()
        .filter(|s| !s.trim().is_empty())
        .map(|s| json!({"type": "text", "text": s}))
        .collect();
    if let Some(first) = system.first_mut() {
        mark_cache(first);
    }
    system
}

/// The messages on the wire. The API rejects tool blocks in a request that defines no tools
/// (the last step, a summary): there, calls and results go as text.
fn wire_messages(req: &ChatRequest) -> Vec<WireMessage> {
    if req.tools.is_empty() && pith_protocol::llm::has_tool_blocks(&req.messages) {
        convert_messages(&pith_protocol::llm::flatten_tools(req.messages.clone()))
    } else {
        convert_messages(&req.messages)
    }
}

/// Marks the last cacheable block of the last two messages: the newest one and the one before
/// it, so the next step (which adds one or two messages) still finds the previous breakpoint in
/// the cache. Returns how many it marked.
fn mark_last_messages(messages: &mut [WireMessage]) -> usize {
    let mut marked = 0usize;
    for msg in messages.iter_mut().rev() {
        if marked == 2 {
            break;
        }
        if let Some(block) = msg.content.iter_mut().rev().find(|b| is_cacheable(b)) {
            mark_cache(block);
            marked += 1;
        }
    }
    marked
}

/// The tools' definitions, the last one a cache breakpoint when `breakpoint_left`.
fn tool_definitions(tools: &[ToolSpec], breakpoint_left: bool) -> Vec<Value> {
    let mut tools: Vec<Value> = tools.iter().map(tool_definition).collect();
    if breakpoint_left && let Some(last) = tools.last_mut() {
        mark_cache(last);
    }
    tools
}

/// `thinking` with its budget, or else the request's temperature (the API only allows the
/// default temperature with thinking).
fn insert_thinking_or_temperature(
    body: &mut Map<String, Value>,
    req: &ChatRequest,
    budget: Option<u32>,
) {
    match budget {
        Some(b) => {
            body.insert(
                "thinking".into(),
                json!({"type": "enabled", "budget_tokens": b}),
            );
        }
        None => {
            if let Some(t) = req.temperature.filter(|t| t.is_finite()) {
                // Via the shortest decimal form, so 0.2f32 goes out as 0.2, not 0.200000003.
                let t: f64 = t.to_string().parse().unwrap_or(f64::from(t));
                body.insert("temperature".into(), json!(t));
            }
        }
    }
}

/// The thinking budget a reasoning effort stands for; it replaces a configured
/// `thinking_budget`.
pub(crate) fn effort_budget(effort: ReasoningEffort) -> u32 {
    match effort {
        ReasoningEffort::Minimal => MIN_THINKING_BUDGET,
        ReasoningEffort::Low => 4_000,
        ReasoningEffort::Medium => 10_000,
        ReasoningEffort::High => 32_000,
    }
}

struct WireMessage {
    role: &'static str,
    content: Vec<Value>,
}

impl WireMessage {
    fn into_json(self) -> Value {
        json!({"role": self.role, "content": self.content})
    }
}

fn convert_messages(messages: &[ChatMessage]) -> Vec<WireMessage> {
    let mut out: Vec<WireMessage> = Vec::new();
    for msg in messages {
        let (role, blocks) = match msg {
            ChatMessage::User { content } => {
                ("user", content.iter().filter_map(user_block).collect())
            }
            ChatMessage::Assistant { content } => ("assistant", assistant_blocks(content)),
            ChatMessage::ToolResult {
                call_id,
                content,
                is_error,
            } => ("user", vec![tool_result_block(call_id, content, *is_error)]),
        };
        if blocks.is_empty() {
            continue;
        }
        match out.last_mut() {
            Some(prev) if prev.role == role => prev.content.extend(blocks),
            _ => out.push(WireMessage {
                role,
                content: blocks,
            }),
        }
    }
    for msg in &mut out {
        if msg.role == "user" {
            // The API wants tool results before any other content of the user message.
            let (mut results, rest): (Vec<Value>, Vec<Value>) = std::mem::take(&mut msg.content)
                .into_iter()
                .partition(|b| block_type(b) == "tool_result");
            results.extend(rest);
            msg.content = results;
        } else {
            // Merged assistant messages: thinking first, then text, then tool_use (stable).
            msg.content.sort_by_key(|b| match block_type(b) {
                "thinking" | "redacted_thinking" => 0,
                "tool_use" => 2,
                _ => 1,
            });
        }
    }
    // A final assistant message (a prefill) must not end with whitespace.
    if let Some(last) = out.last_mut()
        && last.role == "assistant"
        && let Some(Value::Object(block)) = last.content.last_mut()
        && block.get("type").and_then(Value::as_str) == Some("text")
        && let Some(Value::String(text)) = block.get_mut("text")
    {
        let trimmed = text.trim_end().to_string();
        *text = trimmed;
        if text.is_empty() {
            last.content.pop();
            if last.content.is_empty() {
                out.pop();
            }
        }
    }
    out
}

fn user_block(content: &UserContent) -> Option<Value> {
    match content {
        UserContent::Text { text } if text.is_empty() => None,
        UserContent::Text { text } => Some(json!({"type": "text", "text": text})),
        UserContent::Image { mime, data_base64 } => Some(json!({
            "type": "image",
            "source": {"type": "base64", "media_type": mime, "data": data_base64},
        })),
    }
}

fn assistant_blocks(content: &[AssistantContent]) -> Vec<Value> {
    let mut thinking = Vec::new();
    let mut text = Vec::new();
    let mut tools = Vec::new();
    for c in content {
        match c {
            // The Responses API's encrypted reasoning (a session that switched models) means
            // nothing here.
            AssistantContent::Reasoning {
                signature,
                redacted,
                ..
            } if signature
                .iter()
                .chain(redacted)
                .any(|s| crate::responses::is_responses_reasoning(s)) => {}
            AssistantContent::Reasoning {
                redacted: Some(data),
                ..
            } => thinking.push(json!({"type": "redacted_thinking", "data": data})),
            AssistantContent::Reasoning {
                text,
                signature: Some(signature),
                redacted: None,
            } => thinking.push(json!({
                "type": "thinking",
                "thinking": text,
                "signature": signature,
            })),
            // Unsigned thinking (interrupted, or from another provider) is rejected by the API.
            AssistantContent::Reasoning { .. } => {}
            AssistantContent::Text { text: t } if t.is_empty() => {}
            AssistantContent::Text { text: t } => text.push(json!({"type": "text", "text": t})),
            AssistantContent::ToolCall { id, name, input } => {
                let input = if input.is_object() {
                    input.clone()
                } else {
                    json!({})
                };
                tools.push(json!({"type": "tool_use", "id": id, "name": name, "input": input}));
            }
        }
    }
    thinking.extend(text);
    thinking.extend(tools);
    thinking
}

fn tool_result_block(call_id: &str, content: &str, is_error: bool) -> Value {
    let mut block = Map::new();
    block.insert("type".into(), json!("tool_result"));
    block.insert("tool_use_id".into(), json!(call_id));
    if !content.is_empty() {
        block.insert("content".into(), json!(content));
    }
    if is_error {
        block.insert("is_error".into(), json!(true));
    }
    Value::Object(block)
}

fn tool_definition(tool: &ToolSpec) -> Value {
    let schema = if tool.parameters.is_object() {
        tool.parameters.clone()
    } else {
        json!({"type": "object", "properties": {}})
    };
    json!({"name": tool.name, "description": tool.description, "input_schema": schema})
}

fn block_type(block: &Value) -> &str {
    block.get("type").and_then(Value::as_str).unwrap_or("")
}

/// Thinking blocks cannot carry `cache_control`.
fn is_cacheable(block: &Value) -> bool {
    !matches!(block_type(block), "thinking" | "redacted_thinking")
}

fn mark_cache(block: &mut Value) {
    if let Value::Object(map) = block {
        map.insert("cache_control".into(), json!({"type": "ephemeral"}));
    }
}
