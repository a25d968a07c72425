//! The rules of the OpenAI Responses API a request body must keep (see `super::wire`).

use std::collections::HashSet;

use serde_json::Value;

/// What is wrong with a `POST …/responses` body (empty: nothing).
pub fn responses(body: &Value) -> Vec<String> {
    let mut out = header(body);
    let Some(items) = body["input"].as_array() else {
        return vec!["`input` is not an array".into()];
    };
    let has_tools = body["tools"].as_array().is_some_and(|t| !t.is_empty());
    for t in body["tools"].as_array().into_iter().flatten() {
        // OpenAI's hosted web search (`[websearch] hosted`) is a tool with a type and no name
        if t["type"] == "web_search" {
            continue;
        }
        if t["type"] != "function" || t["name"].as_str().is_none_or(str::is_empty) {
            out.push(format!("a tool that is not a named function tool: {t}"));
        }
    }
    let mut calls = Calls::default();
    for (i, item) in items.iter().enumerate() {
        let kind = item["type"].as_str().unwrap_or("message");
        match kind {
            "message" => message(i, item, &mut out),
            "function_call" => calls.call(i, item, has_tools, &mut out),
            "function_call_output" => calls.output(i, item, &mut out),
            "reasoning" => reasoning(i, items, &mut out),
            other => out.push(format!("item {i}: unknown item type {other:?}")),
        }
    }
    let open: Vec<&String> = calls.open().collect();
    if !open.is_empty() {
        out.push(format!("calls {open:?} have no function_call_output"));
    }
    out
}

/// What is wrong with the top-level fields: the output limit and the model.
fn header(body: &Value) -> Vec<String> {
    let mut out = Vec::new();
    match body["max_output_tokens"].as_u64() {
        Some(n) if n > 0 => {}
        _ => out.push("max_output_tokens is not set to a positive number".into()),
    }
    if body["model"].as_str().is_none_or(str::is_empty) {
        out.push("no model".into());
    }
    out
}

/// The function calls made so far in `input`, and those already given their output.
#[derive(Default)]
struct Calls {
    made: Vec<String>,
    answered: HashSet<String>,
}

impl Calls {
    /// Item `i` is a `function_call`.
    fn call(&mut self, i: usize, item: &Value, has_tools: bool, out: &mut Vec<String>) {
        if !has_tools {
            out.push(format!(
                "item {i}: a function_call in a request without tools"
            ));
        }
        let id = item["call_id"].as_str().unwrap_or("");
        if id.is_empty() || item["name"].as_str().is_none_or(str::is_empty) {
            out.push(format!("item {i}: a function_call without call_id or name"));
        }
        if item["arguments"].as_str().is_none() {
            out.push(format!(
                "item {i}: function_call arguments are not a string"
            ));
        }
        self.made.push(id.to_string());
    }

    /// Item `i` is a `function_call_output`.
    fn output(&mut self, i: usize, item: &Value, out: &mut Vec<String>) {
        let id = item["call_id"].as_str().unwrap_or("");
        if item["output"].as_str().is_none() {
            out.push(format!(
                "item {i}: function_call_output without a string output"
            ));
        }
        if !self.made.iter().any(|c| c == id) {
            out.push(format!(
                "item {i}: an output for call {id:?}, which no function_call before it made"
            ));
        } else if !self.answered.insert(id.to_string()) {
            out.push(format!("item {i}: a second output for call {id:?}"));
        }
    }

    /// The calls still without an output.
    fn open(&self) -> impl Iterator<Item = &String> {
        self.made.iter().filter(|c| !self.answered.contains(*c))
    }
}

/// Item `i` of `items` is a reasoning item: it carries its encrypted content and summary and is
/// followed by what it led to.
fn reasoning(i: usize, items: &[Value], out: &mut Vec<String>) {
    let item = &items[i];
    if item["encrypted_content"].as_str().is_none_or(str::is_empty) {
        out.push(format!(
            "item {i}: a reasoning item without encrypted_content"
        ));
    }
    if !item["summary"].is_array() {
        out.push(format!(
            "item {i}: a reasoning item without a summary array"
        ));
    }
    let next = items.get(i + 1);
    let led_to = next.is_some_and(|n| {
        n["role"] == "assistant"
            || matches!(n["type"].as_str(), Some("function_call" | "reasoning"))
    });
    if !led_to {
        out.push(format!(
            "item {i}: a reasoning item not followed by its output"
        ));
    }
}

fn message(i: usize, item: &Value, out: &mut Vec<String>) {
    let role = item["role"].as_str().unwrap_or("");
    if role == "assistant" && item["type"] != "message" {
        // llama.cpp's /v1/responses rejects it: "Cannot determine type of 'item'".
        out.push(format!(
            "item {i}: an assistant message without type \"message\""
        ));
    }
    let allowed: &[&str] = match role {
        "user" | "system" | "developer" => &["input_text", "input_image"],
        "assistant" => &["output_text", "refusal"],
        other => {
            out.push(format!("item {i}: a message with role {other:?}"));
            return;
        }
    };
    let parts: Vec<&Value> = match &item["content"] {
        Value::String(s) if !s.is_empty() => return,
        Value::Array(parts) if !parts.is_empty() => parts.iter().collect(),
        _ => {
            out.push(format!("item {i}: a {role} message with no content"));
            return;
        }
    };
    for p in parts {
        let t = p["type"].as_str().unwrap_or("");
        if !allowed.contains(&t) {
            out.push(format!("item {i}: a {t:?} part in a {role} message"));
        }
        if t.ends_with("_text") && p["text"].as_str().is_none_or(str::is_empty) {
            out.push(format!("item {i}: an empty {t} part"));
        }
    }
}
