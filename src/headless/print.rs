//! What `pith run` prints for each event: the answer on stdout, progress and faults on stderr.

use std::io::Write;

use crate::event::{EngineState, Event, McpState};

pub(super) fn print_json(out: &mut impl Write, event: &Event) {
    // The whole history is not repeated on every run: the session header is enough.
    let line = match event {
        Event::SessionLoaded {
            session, messages, ..
        } => serde_json::json!({
            "type": "session_loaded",
            "session": session,
            "messages": messages.len(),
        })
        .to_string(),
        other => serde_json::to_string(other).unwrap_or_default(),
    };
    // serde_json escapes C0 only: DEL and C1 too, so no terminal acts on them
    let _ = writeln!(out, "{}", crate::text::escape_json_controls(&line));
    let _ = out.flush();
}

pub(super) fn print_text(out: &mut impl Write, event: &Event, at_line_start: &mut bool) {
    match event {
        Event::TextDelta { delta, .. } => {
            let _ = write!(out, "{delta}");
            let _ = out.flush();
            *at_line_start = delta.ends_with('\n');
        }
        Event::StepFinished { .. } if !*at_line_start => {
            let _ = writeln!(out);
            *at_line_start = true;
        }
        Event::ToolStarted { tool, input, .. } => {
            crate::errln!("· {tool} {}", short_input(input));
        }
        // a sub-agent's progress, indented under its `task` line
        Event::Subagent { agent, event, .. } => {
            if let Event::ToolStarted { tool, input, .. } = &**event {
                crate::errln!("  · {agent}: {tool} {}", short_input(input));
            }
        }
        Event::ToolFinished {
            tool,
            error: Some(e),
            ..
        } => {
            crate::errln!("· {tool} failed: {}", e.lines().next().unwrap_or(""));
        }
        Event::Retrying {
            attempt,
            max,
            delay_ms,
            message,
        } => {
            // Text already printed for the failed attempt is discarded: the retry starts the
            // answer over, on a line of its own.
            let discarded = if *at_line_start {
                ""
            } else {
                let _ = writeln!(out);
                let _ = out.flush();
                *at_line_start = true;
                " (the partial answer above is discarded)"
            };
            crate::errln!("retrying ({attempt}/{max}) in {delay_ms} ms: {message}{discarded}");
        }
        Event::CompactionFinished { before, after, .. } => {
            crate::errln!("compacted the context: {before} → {after} tokens")
        }
        Event::Info { message } => crate::errln!("{message}"),
        // A long wait for the provider: say what pith waits for.
        Event::State {
            state: EngineState::Thinking | EngineState::Compacting,
            detail: Some(d),
        } => crate::errln!("{d}"),
        Event::Error { message, .. } => crate::errln!("error: {message}"),
        _ => {}
    }
}

/// MCP servers that failed or exited, once each time it happens (on stderr: the answer stays
/// clean on stdout).
pub(super) fn report_mcp(
    servers: &[crate::event::McpServerStatus],
    seen: &mut std::collections::HashMap<String, McpState>,
) {
    for s in servers {
        if seen.get(&s.name) == Some(&s.state) {
            continue;
        }
        seen.insert(s.name.clone(), s.state.clone());
        match &s.state {
            McpState::Failed { reason } => {
                crate::errln!("mcp {}: failed to start: {reason}", s.name)
            }
            McpState::Exited { reason } => crate::errln!("mcp {}: exited: {reason}", s.name),
            _ => {}
        }
    }
}

/// One line of a tool's input for the progress lines on stderr.
fn short_input(input: &serde_json::Value) -> String {
    let s = match input {
        serde_json::Value::Object(map) => map
            .get("command")
            .or_else(|| map.get("file_path"))
            .or_else(|| map.get("path"))
            .or_else(|| map.get("pattern"))
            .map(|v| {
                v.as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| v.to_string())
            })
            .unwrap_or_else(|| input.to_string()),
        other => other.to_string(),
    };
    // a key the model wrote into a call is not echoed to the terminal (or a CI log)
    let s = crate::secrets::scrub(&s);
    let line = s.lines().next().unwrap_or("");
    line.chars().take(100).collect()
}
