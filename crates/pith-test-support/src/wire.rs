//! The rules a request body must keep to be accepted by the real APIs, checked by the mock on
//! every request it receives (so every integration test guards them):
//!
//! - every tool call has its result, and every result answers a call;
//! - OpenAI chat completions: the results follow their assistant message directly, one `tool`
//!   message per call, before any other message;
//! - Anthropic messages: the first message is the user's, roles alternate, the results of an
//!   assistant's `tool_use` blocks are `tool_result` blocks at the start of the next user message,
//!   no tool block is sent in a request that defines no tools, no text block is empty;
//! - OpenAI Responses: `max_output_tokens` is set, every `input` item is well formed, every
//!   `function_call_output` follows a `function_call` with its `call_id` (and every call has its
//!   output), no function call in a request that defines no tools, a reasoning item is followed
//!   by what it led to.

use std::collections::HashSet;

use serde_json::Value;

/// What is wrong with a request body sent to `path` (empty: nothing). Paths that are not model
/// endpoints, and bodies without `messages` (tests of the mock itself), are not checked.
pub fn violations(path: &str, body: &Value) -> Vec<String> {
    if path.ends_with("/responses") && body.get("input").is_some() {
        return super::wire_responses::responses(body);
    }
    if body.get("messages").is_none() {
        Vec::new()
    } else if path.ends_with("/chat/completions") {
        openai(body)
    } else if path.ends_with("/messages") {
        anthropic(body)
    } else {
        Vec::new()
    }
}

/// What a body without a `messages` array breaks.
const NO_MESSAGES: &str = "the body has no `messages` array";

/// OpenAI chat completions.
pub fn openai(body: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let Some(msgs) = body["messages"].as_array() else {
        return vec![NO_MESSAGES.into()];
    };
    // Calls of the last assistant message still waiting for their result.
    let mut open: Vec<String> = Vec::new();
    let mut answered: HashSet<String> = HashSet::new();
    for (i, m) in msgs.iter().enumerate() {
        let role = m["role"].as_str().unwrap_or("");
        if role != "tool" && !open.is_empty() {
            out.push(format!(
                "message {i} ({role}) comes before the results of calls {open:?}"
            ));
            open.clear();
        }
        match role {
            "assistant" => {
                for call in m["tool_calls"].as_array().into_iter().flatten() {
                    let id = call["id"].as_str().unwrap_or("").to_string();
                    if id.is_empty() {
                        out.push(format!("message {i}: a tool call without an id"));
                    }
                    open.push(id);
                }
                let empty = match &m["content"] {
                    Value::String(s) => s.is_empty(),
                    Value::Array(a) => a.is_empty(),
                    _ => true,
                };
                if empty && open.is_empty() {
                    out.push(format!(
                        "message {i}: an assistant message with nothing in it"
                    ));
                }
            }
            "tool" => {
                let id = m["tool_call_id"].as_str().unwrap_or("");
                if let Some(k) = open.iter().position(|c| c == id) {
                    open.remove(k);
                    answered.insert(id.to_string());
                } else if answered.contains(id) {
                    out.push(format!("message {i}: a second result for call {id:?}"));
                } else {
                    out.push(format!(
                        "message {i}: a result for call {id:?}, which the assistant message before it did not make"
                    ));
                }
            }
            "system" | "user" | "developer" => {}
            other => out.push(format!("message {i}: unknown role {other:?}")),
        }
    }
    if !open.is_empty() {
        out.push(format!("calls {open:?} have no result"));
    }
    out
}

fn blocks(m: &Value) -> Vec<&Value> {
    match &m["content"] {
        Value::Array(b) => b.iter().collect(),
        _ => Vec::new(),
    }
}

/// Anthropic messages.
pub fn anthropic(body: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let Some(msgs) = body["messages"].as_array() else {
        return vec![NO_MESSAGES.into()];
    };
    let has_tools = body["tools"].as_array().is_some_and(|t| !t.is_empty());
    if msgs.first().is_some_and(|m| m["role"] != "user") {
        out.push("the first message is not the user's".into());
    }
    // The tool_use ids of the previous (assistant) message.
    let mut calls: Vec<String> = Vec::new();
    let mut previous_role = "";
    for (i, m) in msgs.iter().enumerate() {
        let role = m["role"].as_str().unwrap_or("");
        if role == previous_role {
            out.push(format!("messages {} and {i} are both {role}", i - 1));
        }
        anthropic_content(i, m, has_tools, &mut out);
        match role {
            "user" => {
                anthropic_results(i, m, &calls, &mut out);
                calls.clear();
            }
            "assistant" => {
                if !calls.is_empty() {
                    out.push(format!("calls {calls:?} are followed by no user message"));
                }
                calls = blocks(m)
                    .into_iter()
                    .filter(|b| b["type"] == "tool_use")
                    .map(|b| b["id"].as_str().unwrap_or("").to_string())
                    .collect();
            }
            other => out.push(format!("message {i}: unknown role {other:?}")),
        }
        previous_role = role;
    }
    if !calls.is_empty() {
        out.push(format!("calls {calls:?} have no result"));
    }
    out
}

/// Message `i`'s content: nothing empty, no tool block in a request that defines no tools.
fn anthropic_content(i: usize, m: &Value, has_tools: bool, out: &mut Vec<String>) {
    if let Value::String(s) = &m["content"]
        && s.is_empty()
    {
        out.push(format!("message {i}: empty content"));
    }
    for b in blocks(m) {
        let kind = b["type"].as_str().unwrap_or("");
        if kind == "text" && b["text"].as_str().is_none_or(str::is_empty) {
            out.push(format!("message {i}: an empty text block"));
        }
        if matches!(kind, "tool_use" | "tool_result") && !has_tools {
            out.push(format!(
                "message {i}: a {kind} block in a request that defines no tools"
            ));
        }
    }
}

/// User message `i` after an assistant message that made `calls`: a `tool_result` for each of
/// them, and for nothing else, ahead of any other content.
fn anthropic_results(i: usize, m: &Value, calls: &[String], out: &mut Vec<String>) {
    let mut seen_other = false;
    let mut results = Vec::new();
    for b in blocks(m) {
        if b["type"] == "tool_result" {
            if seen_other {
                out.push(format!(
                    "message {i}: a tool_result after other content (results come first)"
                ));
            }
            results.push(b["tool_use_id"].as_str().unwrap_or("").to_string());
        } else {
            seen_other = true;
        }
    }
    for id in &results {
        if !calls.contains(id) {
            out.push(format!(
                "message {i}: a tool_result for {id:?}, which the message before it did not call"
            ));
        }
    }
    let missing: Vec<&String> = calls.iter().filter(|c| !results.contains(c)).collect();
    if !missing.is_empty() {
        out.push(format!(
            "message {i}: no tool_result for {missing:?} called just before"
        ));
    }
}
