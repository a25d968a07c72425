//! Reading what a run produced: the text of its output, its events of one type, the last tool
//! result the model was sent, and request bodies with the machine-specific parts replaced for
//! snapshots. The runner of the built binary itself is `tests/support/pith.rs`.

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use crate::MockServer;

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).to_string()
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).to_string()
}

/// What the model was sent as the result of the last tool call, in the last request `server`
/// received ("" when there was none).
pub fn last_tool_result(server: &MockServer) -> String {
    server
        .requests()
        .last()
        .and_then(|r| {
            r.body["messages"]
                .as_array()?
                .iter()
                .rfind(|m| m["role"] == "tool")
                .and_then(|m| m["content"].as_str().map(str::to_string))
        })
        .unwrap_or_default()
}

/// The events of one type.
pub fn of_type<'a>(events: &'a [Value], ty: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == ty).collect()
}

/// Every ULID in backticks (a stored message's id, as the left-the-view note names it for
/// `recall`) replaced by `[ULID]`: 26 characters of Crockford base32 starting with `0`.
pub fn without_ulids(text: &str) -> String {
    const LEN: usize = 26;
    let crockford = |b: u8| b.is_ascii_digit() || (b.is_ascii_uppercase() && !b"ILOU".contains(&b));
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut copied = 0;
    while i + LEN <= bytes.len() {
        let alone_before = i > 0 && bytes[i - 1] == b'`';
        let alone_after = bytes.get(i + LEN) == Some(&b'`');
        if bytes[i] == b'0'
            && alone_before
            && alone_after
            && bytes[i..i + LEN].iter().all(|&b| crockford(b))
        {
            out.push_str(&text[copied..i]);
            out.push_str("[ULID]");
            i += LEN;
            copied = i;
        } else {
            i += 1;
        }
    }
    out.push_str(&text[copied..]);
    out
}

/// A request body with the machine-specific parts of the system prompt replaced, for snapshots.
pub fn normalized(body: &Value, workspace: &Path) -> Value {
    let ws = workspace
        .canonicalize()
        .unwrap_or_else(|_| workspace.to_path_buf());
    let mut text = body.to_string();
    text = text.replace(&ws.display().to_string(), "[WORKSPACE]");
    text = text.replace(&workspace.display().to_string(), "[WORKSPACE]");
    let today = chrono::Local::now().format("%Y-%m-%d").to_string();
    text = text.replace(&today, "[DATE]");
    text = without_ulids(&text);
    let mut v: Value = serde_json::from_str(&text).expect("still JSON");
    // The agent prompt is long and stable; snapshots keep its first line only.
    if let Some(sys) = v["messages"][0]["content"].as_str() {
        let first = sys.lines().next().unwrap_or("").to_string();
        let rest = sys
            .find("<env>")
            .map(|i| sys[i..].to_string())
            .unwrap_or_default();
        v["messages"][0]["content"] = Value::String(format!("{first}\n[…agent prompt…]\n{rest}"));
    }
    // What the bash tool says about the OS sandbox depends on the kernel the tests run on.
    if let Some(tools) = v.get_mut("tools").and_then(Value::as_array_mut) {
        for tool in tools.iter_mut().filter(|t| t["function"]["name"] == "bash") {
            let f = &mut tool["function"];
            if let Some(d) = f["description"].as_str()
                && let Some(i) = d.find("\n- Commands run in an OS sandbox")
            {
                f["description"] = Value::String(format!("{}\n[…sandbox…]", &d[..i]));
            }
            if let Some(props) = f["parameters"]["properties"].as_object_mut() {
                props.remove("unsandboxed");
            }
        }
    }
    v
}

#[cfg(test)]
mod ulid_tests {
    #[test]
    fn ulids_in_backticks_are_replaced() {
        assert_eq!(
            super::without_ulids("`01M8E89B5FG0K57C3N6YH6AKEC` and 01M8E89B5FG0K57C3N6YH6AKEC"),
            "`[ULID]` and 01M8E89B5FG0K57C3N6YH6AKEC"
        );
        assert_eq!(
            super::without_ulids("`01M8E89B5FG0K57C3N6YH6AKE`"),
            "`01M8E89B5FG0K57C3N6YH6AKE`",
            "25 characters are no ULID"
        );
    }
}
