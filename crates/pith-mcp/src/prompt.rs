//! MCP prompts as slash commands (`/SERVER:PROMPT args`) and resources as attachments: the
//! arguments a command line gives, and the text a prompt or a resource becomes.

use rmcp::model::{
    ContentBlock, GetPromptResult, JsonObject, ReadResourceResult, ResourceContents,
    Role as PromptRole,
};
use serde_json::Value;

use pith_protocol::event::McpPromptArg;
// The command syntax is the protocol's, so front ends read it without this crate.
pub use pith_protocol::mcp_prompt::{parse_command, usage};

/// Why a command line's words do not fit a prompt's arguments.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ArgumentsError {
    #[error("this prompt takes no arguments")]
    NoneTaken,
    /// Required arguments without a value, and the prompt's usage line.
    #[error(
        "missing argument{}: {} (usage: {usage})",
        if missing.len() == 1 { "" } else { "s" },
        missing.join(", ")
    )]
    Missing { missing: Vec<String>, usage: String },
}

/// Splits what follows the command over the prompt's arguments: `name=value` words when every
/// word names an argument, else in order, the last argument taking the rest of the line.
pub fn arguments(spec: &[McpPromptArg], text: &str) -> Result<JsonObject, ArgumentsError> {
    let mut out = JsonObject::new();
    let text = text.trim();
    let words: Vec<&str> = text.split_whitespace().collect();
    let named = !words.is_empty()
        && words.iter().all(|w| {
            w.split_once('=')
                .is_some_and(|(k, _)| spec.iter().any(|a| a.name == k))
        });
    if named {
        for w in words {
            if let Some((k, v)) = w.split_once('=') {
                out.insert(k.to_string(), Value::String(v.to_string()));
            }
        }
    } else if !text.is_empty() {
        if spec.is_empty() {
            return Err(ArgumentsError::NoneTaken);
        }
        let mut rest = text;
        for (i, a) in spec.iter().enumerate() {
            if rest.is_empty() {
                break;
            }
            let value = if i + 1 == spec.len() {
                std::mem::take(&mut rest)
            } else {
                match rest.find(char::is_whitespace) {
                    Some(j) => {
                        let (v, r) = rest.split_at(j);
                        rest = r.trim_start();
                        v
                    }
                    None => std::mem::take(&mut rest),
                }
            };
            out.insert(a.name.clone(), Value::String(value.to_string()));
        }
    }
    let missing: Vec<String> = spec
        .iter()
        .filter(|a| a.required && !out.contains_key(&a.name))
        .map(|a| a.name.clone())
        .collect();
    if !missing.is_empty() {
        return Err(ArgumentsError::Missing {
            missing,
            usage: usage(spec),
        });
    }
    Ok(out)
}

/// The user message a prompt result becomes: its messages' text in order (each labelled with its
/// role when the prompt mixes roles).
pub fn prompt_text(result: &GetPromptResult) -> String {
    let mixed = result
        .messages
        .iter()
        .any(|m| m.role == PromptRole::Assistant);
    let mut parts = Vec::new();
    for m in &result.messages {
        let text = block_text(&m.content);
        if text.trim().is_empty() {
            continue;
        }
        if mixed {
            let role = match m.role {
                PromptRole::Assistant => "assistant",
                _ => "user",
            };
            parts.push(format!("[{role}]\n{text}"));
        } else {
            parts.push(text);
        }
    }
    parts.join("\n\n")
}

fn block_text(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(t) => t.text.clone(),
        ContentBlock::Resource(r) => match &r.resource {
            ResourceContents::TextResourceContents { uri, text, .. } => {
                format!("[resource {uri}]\n{text}")
            }
            ResourceContents::BlobResourceContents { uri, mime_type, .. } => format!(
                "[resource {uri} ({}) not shown]",
                mime_type.as_deref().unwrap_or("binary")
            ),
            #[allow(unreachable_patterns)]
            _ => String::new(),
        },
        ContentBlock::ResourceLink(r) => format!("[resource link: {} <{}>]", r.name, r.uri),
        ContentBlock::Image(i) => format!("[image ({}) not shown]", i.mime_type),
        ContentBlock::Audio(a) => format!("[audio ({}) not shown]", a.mime_type),
        #[allow(unreachable_patterns)]
        _ => String::new(),
    }
}

/// The text of a resource read, and its MIME type: text contents as they are, binary contents
/// named (a binary resource cannot be attached as text).
pub fn resource_text(uri: &str, result: &ReadResourceResult) -> (String, String) {
    let mut mime = None;
    let mut parts = Vec::new();
    for c in &result.contents {
        match c {
            ResourceContents::TextResourceContents {
                text, mime_type, ..
            } => {
                mime = mime.or(mime_type.clone());
                parts.push(text.clone());
            }
            ResourceContents::BlobResourceContents {
                uri: u, mime_type, ..
            } => {
                mime = mime.or(mime_type.clone());
                parts.push(format!(
                    "[binary contents of {u} ({}) not attached]",
                    mime_type.as_deref().unwrap_or("unknown type")
                ));
            }
            #[allow(unreachable_patterns)]
            _ => {}
        }
    }
    let _ = uri;
    (
        parts.join("\n"),
        mime.unwrap_or_else(|| "text/plain".to_string()),
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn arg(name: &str, required: bool) -> McpPromptArg {
        McpPromptArg {
            name: name.into(),
            required,
            description: None,
        }
    }

    #[test]
    fn commands_name_a_server_and_a_prompt() {
        assert_eq!(
            parse_command("/gh:review 12 main"),
            Some(("gh".into(), "review".into(), "12 main".into()))
        );
        assert_eq!(parse_command("/compact"), None);
        assert_eq!(parse_command("/usr/bin:x"), None);
        assert_eq!(parse_command("/:x"), None);
        assert_eq!(parse_command("hello"), None);
    }

    #[test]
    fn arguments_by_position_or_by_name() {
        let spec = [arg("pr", true), arg("focus", false)];
        let a = arguments(&spec, "12 the error handling please").unwrap();
        assert_eq!(a["pr"], json!("12"));
        assert_eq!(a["focus"], json!("the error handling please"));
        let a = arguments(&spec, "focus=tests pr=7").unwrap();
        assert_eq!(a["pr"], json!("7"));
        assert_eq!(a["focus"], json!("tests"));
        let e = arguments(&spec, "").unwrap_err().to_string();
        assert!(
            e.contains("missing argument: pr") && e.contains("<pr> [focus]"),
            "{e}"
        );
        assert_eq!(arguments(&[], "x"), Err(ArgumentsError::NoneTaken));
        assert_eq!(
            arguments(&[arg("a", true), arg("b", true)], "")
                .unwrap_err()
                .to_string(),
            "missing arguments: a, b (usage: <a> <b>)"
        );
        assert!(arguments(&[], "").unwrap().is_empty());
        // A word with `=` that names no argument is a value.
        let a = arguments(&[arg("q", true)], "a=b c").unwrap();
        assert_eq!(a["q"], json!("a=b c"));
    }

    #[test]
    fn prompt_results_become_one_message() {
        let r: GetPromptResult = serde_json::from_value(json!({
            "messages": [
                {"role": "user", "content": {"type": "text", "text": "Review PR 12"}},
                {"role": "user", "content": {"type": "resource", "resource": {"uri": "mem://diff", "text": "+a"}}}
            ]
        }))
        .unwrap();
        assert_eq!(prompt_text(&r), "Review PR 12\n\n[resource mem://diff]\n+a");
        let mixed: GetPromptResult = serde_json::from_value(json!({
            "messages": [
                {"role": "user", "content": {"type": "text", "text": "q"}},
                {"role": "assistant", "content": {"type": "text", "text": "a"}}
            ]
        }))
        .unwrap();
        assert_eq!(prompt_text(&mixed), "[user]\nq\n\n[assistant]\na");
    }
}
