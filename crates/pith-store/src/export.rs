//! Session exports: JSON (the whole stored history) and readable Markdown.
//!
//! Exports hold the stored session only: pruned tool outputs and compaction summaries included,
//! the configuration (and so any API key or header) never; any secret pith knows that reached
//! the history anyway (a session stored by an older version) is scrubbed.

use std::fmt::Write as _;

use serde_json::{Value, json};

use pith_protocol::message::{CompactionPart, Message, PartKind, Role, Session, ToolState};
use pith_protocol::text::one_line;

/// Format marker of the JSON export.
pub(crate) const EXPORT_FORMAT: &str = "pith-session";
/// Version of the JSON export layout.
pub(crate) const EXPORT_VERSION: u32 = 1;

/// The whole history as JSON: `{format, version, session, messages: [{…header, parts: […]}]}`.
pub fn export_json(session: &Session, messages: &[Message]) -> Value {
    let mut value = json!({
        "format": EXPORT_FORMAT,
        "version": EXPORT_VERSION,
        "session": session,
        "messages": messages,
    });
    pith_secrets::scrub_json(&mut value);
    value
}

/// A readable Markdown transcript: a heading per message, tool calls with input and output in
/// fenced blocks, pruned outputs and compaction summaries marked.
pub fn export_markdown(session: &Session, messages: &[Message]) -> String {
    let mut out = String::new();
    let title = if session.title.trim().is_empty() {
        "Untitled session"
    } else {
        session.title.trim()
    };
    let _ = writeln!(out, "# {title}\n");
    let _ = writeln!(out, "- Session: `{}`", session.id);
    let _ = writeln!(out, "- Directory: `{}`", session.directory);
    let _ = writeln!(out, "- Model: `{}`", session.model);
    let _ = writeln!(out, "- Created: {}", format_time(session.time_created));
    let _ = writeln!(out, "- Updated: {}", format_time(session.time_updated));
    let _ = writeln!(out, "- Cost: ${:.4}", session.cost);
    let _ = writeln!(out, "- Context tokens: {}", session.tokens);

    for message in messages {
        out.push('\n');
        write_message(&mut out, message);
    }
    pith_secrets::scrub(&out).into_owned()
}

fn write_message(out: &mut String, message: &Message) {
    write_message_header(out, message);
    for part in &message.parts {
        write_part(out, &part.kind);
    }
}

/// The heading (who, when) and the notes about the whole message: a compaction summary, an
/// error, sent mid-turn.
fn write_message_header(out: &mut String, message: &Message) {
    let who = match message.role {
        Role::User => "User".to_string(),
        Role::Assistant => match &message.model {
            Some(model) => format!("Assistant ({model})"),
            None => "Assistant".to_string(),
        },
    };
    let _ = writeln!(out, "## {who} · {}\n", format_time(message.time_created));
    if message.summary {
        let _ = writeln!(
            out,
            "> **Compaction summary** — this message replaced the history before it in the model's context.\n"
        );
    }
    if let Some(error) = &message.error {
        let _ = writeln!(out, "> **Error:** {}\n", one_line(&error.to_string()));
    }
    if message.mid_turn {
        let _ = writeln!(out, "*(sent while the agent worked)*\n");
    }
}

fn write_part(out: &mut String, kind: &PartKind) {
    match kind {
        PartKind::Text { text, synthetic } => {
            if *synthetic {
                let _ = writeln!(out, "*(synthetic)*\n");
            }
            if !text.trim().is_empty() {
                let _ = writeln!(out, "{}\n", text.trim_end());
            }
        }
        PartKind::Reasoning { text, redacted, .. } => {
            if !text.trim().is_empty() {
                out.push_str("<details><summary>Reasoning</summary>\n\n");
                let _ = writeln!(out, "{}\n\n</details>\n", text.trim_end());
            } else if redacted.is_some() {
                out.push_str("*(redacted reasoning)*\n\n");
            }
        }
        PartKind::Tool {
            call_id,
            tool,
            input,
            state,
        } => write_tool(out, call_id, tool, input, state),
        PartKind::Compaction(c) => write_compaction(out, c),
        PartKind::StepStart => {}
        PartKind::StepFinish {
            usage,
            finish,
            cost,
        } => {
            let _ = writeln!(
                out,
                "*step finished: {finish}; tokens in {} / out {} / cache read {} / cache write {}; ${cost:.4}*\n",
                usage.input, usage.output, usage.cache_read, usage.cache_write
            );
        }
        PartKind::File { path, mime } => {
            let _ = writeln!(out, "*Attached file:* `{path}` ({mime})\n");
        }
        PartKind::Patch { files } => {
            if !files.is_empty() {
                let list: Vec<String> = files.iter().map(|f| format!("`{f}`")).collect();
                let _ = writeln!(out, "*Changed files:* {}\n", list.join(", "));
            }
        }
        // Which spans were pasted: bookkeeping for compaction, not part of the transcript.
        PartKind::Pasted { .. } => {}
    }
}

fn write_compaction(out: &mut String, c: &CompactionPart) {
    let mut kind = vec![if c.auto { "automatic" } else { "manual" }];
    if c.overflow {
        kind.push("context overflow");
    }
    let _ = write!(out, "> **Compaction requested** ({})", kind.join(", "));
    if let Some(focus) = c.focus.as_deref().filter(|f| !f.trim().is_empty()) {
        let _ = write!(out, " — focus: {}", one_line(focus));
    }
    out.push_str("\n\n");
}

fn write_tool(out: &mut String, call_id: &str, tool: &str, input: &Value, state: &ToolState) {
    let status = match state {
        ToolState::Pending => "pending",
        ToolState::Running { .. } => "running (interrupted)",
        ToolState::Completed { .. } => "completed",
        ToolState::Error { .. } => "error",
    };
    let title = match state {
        ToolState::Completed { title, .. } if !title.is_empty() => format!(": {}", one_line(title)),
        ToolState::Running { title: Some(t), .. } => format!(": {}", one_line(t)),
        _ => String::new(),
    };
    let _ = writeln!(out, "### Tool `{tool}` — {status}{title}\n");
    let _ = writeln!(out, "Call id: `{call_id}`\n");
    let input_text = serde_json::to_string_pretty(input).unwrap_or_else(|_| input.to_string());
    out.push_str("Input:\n\n");
    fenced(out, "json", &input_text);
    match state {
        ToolState::Completed { output, time, .. } => {
            if let Some(at) = time.compacted {
                let _ = writeln!(
                    out,
                    "Output *(pruned from the model's context at {}; kept here in full)*:\n",
                    format_time(at)
                );
            } else {
                out.push_str("Output:\n\n");
            }
            fenced(out, "", output);
        }
        ToolState::Error { message, .. } => {
            out.push_str("Error:\n\n");
            fenced(out, "", message);
        }
        ToolState::Pending | ToolState::Running { .. } => {}
    }
}

/// A fenced block whose fence is longer than any backtick run inside `body`.
fn fenced(out: &mut String, lang: &str, body: &str) {
    let mut longest = 0;
    let mut run = 0;
    for c in body.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    let fence = "`".repeat(longest.max(2) + 1);
    let _ = writeln!(out, "{fence}{lang}");
    out.push_str(body);
    if !body.ends_with('\n') {
        out.push('\n');
    }
    let _ = writeln!(out, "{fence}\n");
}

fn format_time(ms: i64) -> String {
    match chrono::DateTime::from_timestamp_millis(ms) {
        Some(t) => t.format("%Y-%m-%d %H:%M:%S UTC").to_string(),
        None => ms.to_string(),
    }
}
