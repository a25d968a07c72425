//! Rendering one transcript cell into wrapped lines.

use crate::theme::theme;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use pith_protocol::event::{PermissionReply, PermissionRequest};
use pith_protocol::message::{CompactionPart, MessageError, PartKind, Role};

use super::cell_text::{dim, indent, is_bare_url, plain_lines, url_lines};
use super::format::{self, truncate};
use super::markdown;
use super::tool_cell;
use super::transcript::{Cell, CellBody, CompactionState, MsgMeta, NoticeLevel};

/// User messages longer than this are folded.
const USER_FOLD_LINES: usize = 12;

/// The lines of `cell` at `width`, folded or not.
pub fn render(cell: &Cell, meta: &MsgMeta, width: usize, expand_all: bool) -> Vec<Line<'static>> {
    let width = width.max(4);
    match &cell.body {
        CellBody::Part(p) => part_lines(cell, &p.kind, meta, width, expand_all),
        CellBody::MessageError(MessageError::Interrupted) => {
            vec![Line::from(Span::styled("· interrupted", dim()))]
        }
        CellBody::MessageError(MessageError::Failed(e)) => plain_lines(
            e,
            width,
            Style::default().fg(theme().err),
            &[Span::styled(
                "✗ error: ",
                Style::default()
                    .fg(theme().err)
                    .add_modifier(Modifier::BOLD),
            )],
            &indent(2),
        ),
        CellBody::Notice(level, text) => {
            let (mark, style) = match level {
                NoticeLevel::Info => ("· ", dim()),
                NoticeLevel::Warn => ("! ", Style::default().fg(theme().warn)),
                NoticeLevel::Error => ("✗ ", Style::default().fg(theme().err)),
            };
            notice_lines(text, width, style, mark)
        }
        CellBody::Permission { req, reply, note } => {
            permission_lines(req, reply, note.as_deref(), width)
        }
    }
}

/// A notice: its mark, then its text wrapped under an indent; a line that is a bare web address
/// (a sign-in URL) goes on rows of its own, unindented (`cell_text::url_lines`).
fn notice_lines(text: &str, width: usize, style: Style, mark: &'static str) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    let mut prose: Vec<&str> = Vec::new();
    let flush = |prose: &mut Vec<&str>, out: &mut Vec<Line<'static>>| {
        if prose.is_empty() {
            return;
        }
        let first = if out.is_empty() {
            vec![Span::styled(mark, style)]
        } else {
            indent(2)
        };
        out.extend(plain_lines(
            &prose.join("\n"),
            width,
            style,
            &first,
            &indent(2),
        ));
        prose.clear();
    };
    for line in text.split('\n') {
        if is_bare_url(line) {
            flush(&mut prose, &mut out);
            out.extend(url_lines(line, width, style));
        } else {
            prose.push(line);
        }
    }
    flush(&mut prose, &mut out);
    out
}

/// The lines of a cell showing a message part.
fn part_lines(
    cell: &Cell,
    kind: &PartKind,
    meta: &MsgMeta,
    width: usize,
    expand_all: bool,
) -> Vec<Line<'static>> {
    let expanded = cell.expanded || expand_all;
    match kind {
        PartKind::Text { text, synthetic } => text_lines(text, *synthetic, meta, width, expanded),
        PartKind::Reasoning { text, redacted, .. } => {
            reasoning(text, redacted.is_some(), width, expanded)
        }
        PartKind::Tool {
            tool, input, state, ..
        } => {
            let call = tool_cell::Call {
                tool,
                name: pith_protocol::tool::ToolName::parse(tool),
                input,
                state,
                reported_ms: cell.duration_ms,
                decision: cell.decision,
                live: cell.live_output.as_deref(),
                elapsed_secs: cell.elapsed_secs,
            };
            if meta.role == Some(Role::User) {
                tool_cell::by_user(&call, width, expanded)
            } else {
                tool_cell::render(&call, width, expanded)
            }
        }
        PartKind::Compaction(c) => {
            let mut out = compaction_lines(&cell.compaction, c, width);
            if expanded {
                out.extend(super::left_view::unfolded(c, width));
            }
            out
        }
        PartKind::StepStart => Vec::new(),
        PartKind::StepFinish { usage, cost, .. } => {
            if !expand_all {
                return Vec::new();
            }
            vec![Line::from(Span::styled(
                format!(
                    "  · step: {} in · {} out · {} cached · {}",
                    format::tokens(usage.input),
                    format::tokens(usage.output),
                    format::tokens(usage.cache_read),
                    format::cost(*cost)
                ),
                dim(),
            ))]
        }
        PartKind::File { path, mime } => plain_lines(
            &format!("◇ file: {path} ({mime})"),
            width,
            dim(),
            &indent(2),
            &indent(4),
        ),
        PartKind::Patch { files } => {
            if files.is_empty() {
                return Vec::new();
            }
            plain_lines(
                &format!("± changed: {}", files.join(", ")),
                width,
                dim(),
                &indent(2),
                &indent(4),
            )
        }
        PartKind::Pasted { .. } => Vec::new(),
    }
}

/// A text part: the user's prompt (or the command that sent it), a summary, the model's reply.
fn text_lines(
    text: &str,
    synthetic: bool,
    meta: &MsgMeta,
    width: usize,
    expanded: bool,
) -> Vec<Line<'static>> {
    if meta.role == Some(Role::User) {
        match &meta.command {
            Some(label) if !synthetic => command_text(label, text, width, expanded),
            _ => user_text(text, synthetic, meta.mid_turn, width, expanded),
        }
    } else if meta.summary && synthetic {
        carried_text(text, width, expanded)
    } else if meta.summary {
        summary_text(text, width, expanded)
    } else {
        assistant_text(text, width)
    }
}

/// The compaction divider: its state, figures and cause, and the focus asked for.
fn compaction_lines(
    state: &CompactionState,
    c: &CompactionPart,
    width: usize,
) -> Vec<Line<'static>> {
    let label = super::divider_line::label(state, c, width.saturating_sub(6));
    let mut out = vec![divider(&label, width)];
    if let Some(f) = &c.focus
        && !f.is_empty()
    {
        out.extend(plain_lines(
            &format!("focus: {f}"),
            width,
            dim(),
            &indent(2),
            &indent(9),
        ));
    }
    out
}

/// A question answered: what was decided, about which tool, with the note given.
fn permission_lines(
    req: &PermissionRequest,
    reply: &PermissionReply,
    note: Option<&str>,
    width: usize,
) -> Vec<Line<'static>> {
    if crate::view::plan_box::is_plan(req) {
        let (what, color) = crate::view::plan_box::verdict(*reply);
        let mark = if *reply == PermissionReply::Deny {
            "✗ "
        } else {
            "✓ "
        };
        let mut text = what.to_string();
        if let Some(n) = note.filter(|n| !n.is_empty()) {
            text.push_str(&format!(" — “{n}”"));
        }
        let style = Style::default().fg(color);
        return plain_lines(
            &text,
            width,
            style,
            &[Span::styled(mark, style)],
            &indent(2),
        );
    }
    let (mark, what, color) = match reply {
        PermissionReply::Once => ("✓ ", "allowed once", theme().ok),
        PermissionReply::Always => ("✓ ", "always allowed", theme().ok),
        PermissionReply::AlwaysExact => ("✓ ", "always allowed as written", theme().ok),
        PermissionReply::Deny => ("✗ ", "denied", theme().err),
    };
    let mut text = format!("{what}: {} · {}", req.tool, req.title);
    if let Some(n) = note.filter(|n| !n.is_empty()) {
        text.push_str(&format!(" — “{n}”"));
    }
    plain_lines(
        &text,
        width,
        Style::default().fg(color),
        &[Span::styled(mark, Style::default().fg(color))],
        &indent(2),
    )
}

fn divider(label: &str, width: usize) -> Line<'static> {
    let label = truncate(label, width.saturating_sub(6));
    let lw = format::width(&label) + 2;
    let left = (width.saturating_sub(lw)) / 2;
    let right = width.saturating_sub(lw + left);
    let st = Style::default().fg(theme().summary);
    Line::from(vec![
        Span::styled("─".repeat(left), st),
        Span::styled(format!(" {label} "), st.add_modifier(Modifier::BOLD)),
        Span::styled("─".repeat(right), st),
    ])
}

fn user_text(
    text: &str,
    synthetic: bool,
    mid_turn: bool,
    width: usize,
    expanded: bool,
) -> Vec<Line<'static>> {
    if synthetic {
        if let Some((event, body)) = super::hook_note::parse(text) {
            return super::hook_note::lines(&event, body, width, expanded);
        }
        // pith's own note after an automatic compaction, never shown as the user's words
        let first = if pith_protocol::compaction_note::is_continue(text) {
            pith_protocol::compaction_note::CONTINUE_NOTE
        } else {
            text.lines().next().unwrap_or("")
        };
        return vec![Line::from(Span::styled(
            truncate(&format!("↻ {first}"), width),
            dim().add_modifier(Modifier::ITALIC),
        ))];
    }
    let marker = [Span::styled(
        "› ",
        Style::default()
            .fg(theme().user)
            .add_modifier(Modifier::BOLD),
    )];
    let mut out = plain_lines(
        text,
        width,
        Style::default().add_modifier(Modifier::BOLD),
        &marker,
        &indent(2),
    );
    if !expanded && out.len() > USER_FOLD_LINES {
        let more = out.len() - (USER_FOLD_LINES - 2);
        out.truncate(USER_FOLD_LINES - 2);
        out.push(Line::from(Span::styled(
            format!("  … +{more} lines ({})", super::keymap::expand_hint()),
            dim(),
        )));
    }
    if mid_turn {
        out.push(Line::from(Span::styled(
            "  sent while the agent worked",
            dim().add_modifier(Modifier::ITALIC),
        )));
    }
    out
}

/// A custom command's message: its `/name args` as a chip; what it expanded to, folded.
fn command_text(label: &str, text: &str, width: usize, expanded: bool) -> Vec<Line<'static>> {
    let chip = Style::default()
        .fg(theme().on_accent)
        .bg(theme().accent)
        .add_modifier(Modifier::BOLD);
    let mut out = vec![Line::from(vec![
        Span::styled(
            "› ",
            Style::default()
                .fg(theme().user)
                .add_modifier(Modifier::BOLD),
        ),
        Span::styled(
            format!(" {} ", truncate(label, width.saturating_sub(4))),
            chip,
        ),
    ])];
    if expanded {
        out.extend(plain_lines(text, width, dim(), &indent(2), &indent(2)));
    } else {
        let n = text.lines().count();
        out.push(Line::from(Span::styled(
            format!(
                "  ▸ sent as {n} line{} (click or ctrl+o to show)",
                if n == 1 { "" } else { "s" }
            ),
            dim(),
        )));
    }
    out
}

fn assistant_text(text: &str, width: usize) -> Vec<Line<'static>> {
    if text.trim().is_empty() {
        return Vec::new();
    }
    let mut lines = markdown::render(
        text.trim_start_matches('\n'),
        width.saturating_sub(2),
        Style::default(),
    );
    for (i, l) in lines.iter_mut().enumerate() {
        let p = if i == 0 {
            Span::styled("● ", Style::default().fg(theme().accent))
        } else {
            Span::raw("  ")
        };
        l.spans.insert(0, p);
    }
    lines
}

fn summary_text(text: &str, width: usize, expanded: bool) -> Vec<Line<'static>> {
    let n = text.lines().count();
    if !expanded {
        return vec![Line::from(Span::styled(
            format!("  ▸ summary · {n} lines ({})", super::keymap::expand_hint()),
            dim(),
        ))];
    }
    let mut out = vec![Line::from(Span::styled("  ▾ summary", dim()))];
    let bar = Span::styled("  │ ", Style::default().fg(theme().summary));
    for mut l in markdown::render(text, width.saturating_sub(4), Style::default()) {
        l.spans.insert(0, bar.clone());
        out.push(l);
    }
    out
}

/// What pith carried through the compaction after the summary (the user's words, the todo
/// list, the ledger): part of the one summary fold, so nothing while it is folded; expanded, the
/// user's messages read as quotes, not as the `<user_message>` tags the model gets.
fn carried_text(text: &str, width: usize, expanded: bool) -> Vec<Line<'static>> {
    if !expanded {
        return Vec::new();
    }
    let bar = Span::styled("  │ ", Style::default().fg(theme().summary));
    markdown::render(
        &readable_carried(text),
        width.saturating_sub(4),
        Style::default(),
    )
    .into_iter()
    .map(|mut l| {
        l.spans.insert(0, bar.clone());
        l
    })
    .collect()
}

/// The carried record for people: each `<user_message>` becomes a quoted block (the current
/// request named), the tags go.
pub(super) fn readable_carried(text: &str) -> String {
    let mut out = Vec::new();
    let mut quoting = false;
    for line in text.lines() {
        let tag = line.trim();
        if tag.starts_with("<user_message") && tag.ends_with('>') {
            quoting = true;
            out.push(String::new());
            if tag.contains("current=\"true\"") {
                out.push("*the request being worked on:*".to_string());
            }
        } else if tag == "</user_message>" {
            quoting = false;
            out.push(String::new());
        } else if quoting {
            out.push(format!("> {line}"));
        } else {
            out.push(line.to_string());
        }
    }
    out.join("\n")
}

fn reasoning(text: &str, redacted: bool, width: usize, expanded: bool) -> Vec<Line<'static>> {
    let style = dim().add_modifier(Modifier::ITALIC);
    let text = text.trim();
    if text.is_empty() {
        let label = if redacted {
            "∴ thinking (redacted)"
        } else {
            "∴ thinking…"
        };
        return vec![Line::from(Span::styled(format!("  {label}"), style))];
    }
    if !expanded {
        let n = text.lines().count();
        let first = text.lines().next().unwrap_or("").trim();
        let head = format!(
            "  ∴ thinking · {n} line{} · ",
            if n == 1 { "" } else { "s" }
        );
        let room = width.saturating_sub(format::width(&head));
        return vec![Line::from(vec![
            Span::styled(head, style),
            Span::styled(truncate(first, room), style),
        ])];
    }
    let mut out = vec![Line::from(Span::styled("  ∴ thinking", style))];
    out.extend(plain_lines(text, width, style, &indent(4), &indent(4)));
    out
}

#[cfg(test)]
mod tests {
    use super::tool_cell::short_input;
    use serde_json::json;

    #[test]
    fn short_inputs() {
        assert_eq!(
            short_input(&"bash".into(), &json!({"command": "cargo test\n--lib"})),
            "cargo test ⏎ --lib"
        );
        assert_eq!(
            short_input(
                &"read".into(),
                &json!({"file_path": "src/a.rs", "offset": 3})
            ),
            "src/a.rs"
        );
        assert_eq!(
            short_input(
                &"grep".into(),
                &json!({"pattern": "fn main", "path": "src"})
            ),
            "fn main  in src"
        );
        assert_eq!(short_input(&"custom".into(), &json!({"n": 1})), "{\"n\":1}");
        assert_eq!(short_input(&"custom".into(), &json!({})), "");
    }
}
