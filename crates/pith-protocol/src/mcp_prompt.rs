//! MCP prompts as slash commands: the syntax every front end reads (`/SERVER:PROMPT args`) and a
//! prompt's usage line. Pure text; the MCP client (`pith-mcp`) re-exports both.

use crate::event::McpPromptArg;

/// `/SERVER:PROMPT rest` → (server, prompt, rest). `None` when the text is not of that shape.
pub fn parse_command(text: &str) -> Option<(String, String, String)> {
    let rest = text.trim_start().strip_prefix('/')?;
    let (head, args) = match rest.find(char::is_whitespace) {
        Some(i) => (&rest[..i], rest[i..].trim()),
        None => (rest, ""),
    };
    let (server, prompt) = head.split_once(':')?;
    let ok = |s: &str| !s.is_empty() && !s.contains('/');
    (ok(server) && ok(prompt)).then(|| (server.to_string(), prompt.to_string(), args.to_string()))
}

/// `<a> <b> [c]`: the arguments in order, optional ones bracketed.
pub fn usage(spec: &[McpPromptArg]) -> String {
    spec.iter()
        .map(|a| {
            if a.required {
                format!("<{}>", a.name)
            } else {
                format!("[{}]", a.name)
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}
