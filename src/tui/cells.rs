//! Rendering one transcript cell into wrapped lines.

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use serde_json::Value;

use crate::event::PermissionReply;
use crate::message::{MessageError, PartKind, Role, ToolState};

use super::format::{self, sanitize, truncate};
use super::markdown;
use super::transcript::{Cell, CellBody, CompactionState, MsgMeta, NoticeLevel};
use super::wrap::{wrap, wrap_chars};

pub const DIM: Color = Color::DarkGray;
pub const USER: Color = Color::Cyan;
pub const ACCENT: Color = Color::Rgb(215, 119, 87);
pub const OK: Color = Color::Green;
pub const ERR: Color = Color::Red;
pub const WARN: Color = Color::Rgb(255, 176, 0);

/// Tool output lines shown while a cell is folded.
const PREVIEW_LINES: usize = 2;
/// User messages longer than this are folded.
const USER_FOLD_LINES: usize = 12;
/// Never render more than this many lines of one tool output.
const MAX_EXPANDED_LINES: usize = 5_000;

fn dim() -> Style {
    Style::default().fg(DIM)
}

fn indent(n: usize) -> Vec<Span<'static>> {
    vec![Span::raw(" ".repeat(n))]
}

/// Plain (non-markdown) text wrapped line by line, keeping the author's line breaks.
fn plain_lines(
    text: &str,
    width: usize,
    style: Style,
    first: &[Span<'static>],
    rest: &[Span<'static>],
) -> Vec<Line<'static>> {
    let text = sanitize(text);
    let mut out = Vec::new();
    for (i, l) in text.split('\n').enumerate() {
        let p = if i == 0 { first } else { rest };
        out.extend(wrap(&[Span::styled(l.to_string(), style)], width, p, rest));
    }
    out
}

/// The lines of `cell` at `width`, folded or not.
pub fn render(cell: &Cell, meta: &MsgMeta, width: usize, expand_all: bool) -> Vec<Line<'static>> {
    let width = width.max(4);
    let expanded = cell.expanded || expand_all;
    match &cell.body {
        CellBody::Part(p) => match &p.kind {
            PartKind::Text { text, synthetic } => {
                if meta.role == Some(Role::User) {
                    user_text(text, *synthetic, meta.mid_turn, width, expanded)
                } else if meta.summary {
                    summary_text(text, width, expanded)
                } else {
                    assistant_text(text, width)
                }
            }
            PartKind::Reasoning { text, redacted, .. } => {
                reasoning(text, redacted.is_some(), width, expanded)
            }
            PartKind::Tool {
                tool, input, state, ..
            } => tool_cell(
                tool,
                input,
                state,
                (cell.duration_ms, cell.decision),
                width,
                expanded,
            ),
            PartKind::Compaction(c) => {
                let mut label = String::from("⟳ ");
                match &cell.compaction {
                    CompactionState::Running => label.push_str("compacting context…"),
                    CompactionState::Unknown => label.push_str("context compacted"),
                    CompactionState::Done(s) => {
                        label.push_str("context compacted");
                        if s.before > 0 {
                            label.push_str(&format!(
                                " · {} → {}",
                                format::tokens(s.before),
                                format::tokens(s.after)
                            ));
                        }
                        if s.cost.input > 0 {
                            label.push_str(&format!(
                                " · {} in, {}% cached · {}",
                                format::tokens(s.cost.input),
                                (s.cost.cache_read * 100)
                                    .checked_div(s.cost.input)
                                    .unwrap_or(0),
                                format::cost(s.cost.cost)
                            ));
                        }
                    }
                }
                label.push_str(if c.auto { " · auto" } else { " · /compact" });
                if c.overflow {
                    label.push_str(" · overflow");
                }
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
        },
        CellBody::MessageError(MessageError::Interrupted) => {
            vec![Line::from(Span::styled("· interrupted", dim()))]
        }
        CellBody::MessageError(MessageError::Failed(e)) => plain_lines(
            e,
            width,
            Style::default().fg(ERR),
            &[Span::styled(
                "✗ error: ",
                Style::default().fg(ERR).add_modifier(Modifier::BOLD),
            )],
            &indent(2),
        ),
        CellBody::Notice(level, text) => {
            let (mark, style) = match level {
                NoticeLevel::Info => ("· ", dim()),
                NoticeLevel::Warn => ("! ", Style::default().fg(WARN)),
                NoticeLevel::Error => ("✗ ", Style::default().fg(ERR)),
            };
            plain_lines(text, width, style, &[Span::styled(mark, style)], &indent(2))
        }
        CellBody::Permission { req, reply, note } => {
            let (mark, what, color) = match reply {
                PermissionReply::Once => ("✓ ", "allowed once", OK),
                PermissionReply::Always => ("✓ ", "always allowed", OK),
                PermissionReply::Deny => ("✗ ", "denied", ERR),
            };
            let mut text = format!("{what}: {} · {}", req.tool, req.title);
            if let Some(n) = note.as_deref().filter(|n| !n.is_empty()) {
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
    }
}

fn divider(label: &str, width: usize) -> Line<'static> {
    let label = truncate(label, width.saturating_sub(6));
    let lw = format::width(&label) + 2;
    let left = (width.saturating_sub(lw)) / 2;
    let right = width.saturating_sub(lw + left);
    let st = Style::default().fg(Color::Magenta);
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
        let first = text.lines().next().unwrap_or("");
        return vec![Line::from(Span::styled(
            truncate(&format!("↻ {first}"), width),
            dim().add_modifier(Modifier::ITALIC),
        ))];
    }
    let marker = [Span::styled(
        "› ",
        Style::default().fg(USER).add_modifier(Modifier::BOLD),
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
            format!("  … +{more} lines (click or ctrl+o to expand)"),
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
            Span::styled("● ", Style::default().fg(ACCENT))
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
            format!("  ▸ summary · {n} lines (click or ctrl+o to expand)"),
            dim(),
        ))];
    }
    let mut out = vec![Line::from(Span::styled("  ▾ summary", dim()))];
    let bar = Span::styled("  │ ", Style::default().fg(Color::Magenta));
    for mut l in markdown::render(text, width.saturating_sub(4), Style::default()) {
        l.spans.insert(0, bar.clone());
        out.push(l);
    }
    out
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

/// The one-line gist of a tool call's input.
pub fn short_input(tool: &str, input: &Value) -> String {
    let s = |k: &str| input.get(k).and_then(Value::as_str).map(str::to_string);
    let first_of = |keys: &[&str]| keys.iter().find_map(|k| s(k));
    let out = match tool {
        "bash" | "shell" => first_of(&["command", "cmd"]),
        "read" | "write" | "edit" | "multiedit" | "patch" | "ls" | "list" => {
            first_of(&["path", "file_path", "filePath", "file"])
        }
        "grep" | "glob" | "search" => {
            first_of(&["pattern", "query"]).map(|p| match first_of(&["path", "include", "glob"]) {
                Some(path) => format!("{p}  in {path}"),
                None => p,
            })
        }
        "webfetch" | "fetch" => first_of(&["url"]),
        _ => None,
    };
    let out = out.or_else(|| {
        // the first string field, else compact JSON
        input
            .as_object()
            .and_then(|o| o.values().find_map(|v| v.as_str().map(str::to_string)))
    });
    let out = out.unwrap_or_else(|| match input {
        Value::Null => String::new(),
        Value::Object(o) if o.is_empty() => String::new(),
        v => v.to_string(),
    });
    sanitize(&out).replace('\n', " ⏎ ")
}

fn tool_cell(
    tool: &str,
    input: &Value,
    state: &ToolState,
    (reported_ms, decision): (Option<u64>, Option<PermissionReply>),
    width: usize,
    expanded: bool,
) -> Vec<Line<'static>> {
    let (icon, icon_style) = match state {
        ToolState::Pending => ("○", dim()),
        ToolState::Running { .. } => ("◐", Style::default().fg(WARN)),
        ToolState::Completed { .. } => ("✓", Style::default().fg(OK)),
        ToolState::Error { .. } => ("✗", Style::default().fg(ERR)),
    };
    let duration = match state {
        ToolState::Completed { time, .. } if time.end > time.start => {
            Some((time.end - time.start) as u64)
        }
        ToolState::Error {
            start: Some(s),
            end: Some(e),
            ..
        } if e > s => Some((e - s) as u64),
        _ => None,
    }
    .or(reported_ms);
    let pruned = matches!(state, ToolState::Completed { time, .. } if time.compacted.is_some());
    let mut status = match state {
        ToolState::Pending => "pending".to_string(),
        ToolState::Running { title, .. } => match title {
            Some(t) if !t.is_empty() => format!("running · {t}"),
            _ => "running…".to_string(),
        },
        ToolState::Completed { .. } | ToolState::Error { .. } => String::new(),
    };
    if let Some(d) = duration {
        if !status.is_empty() {
            status.push_str(" · ");
        }
        status.push_str(&format::duration_ms(d));
    }
    let denied = matches!(decision, Some(PermissionReply::Deny));
    // a denied call never ran: its duration means nothing
    if denied && matches!(state, ToolState::Error { .. }) {
        status.clear();
    }
    let verdict = match decision {
        Some(PermissionReply::Once) => Some(("allowed once", OK)),
        Some(PermissionReply::Always) => Some(("always allowed", OK)),
        Some(PermissionReply::Deny) => Some(("denied", ERR)),
        None => None,
    };
    let gist = short_input(tool, input);
    let tail_w = format::width(&status)
        + if pruned { 9 } else { 0 }
        + verdict.map_or(0, |(v, _)| format::width(v) + 3)
        + 2;
    let head_w = 2 + format::width(tool) + 1;
    let room = width.saturating_sub(head_w + tail_w);
    let mut header = vec![
        Span::styled(format!("{icon} "), icon_style),
        Span::styled(
            tool.to_string(),
            Style::default().add_modifier(Modifier::BOLD),
        ),
        Span::raw(" "),
        Span::styled(truncate(&gist, room), Style::default().fg(Color::Gray)),
    ];
    if !status.is_empty() {
        header.push(Span::styled(format!("  {status}"), dim()));
    }
    if let Some((v, color)) = verdict {
        let sep = if status.is_empty() { "  " } else { " · " };
        header.push(Span::styled(sep, dim()));
        header.push(Span::styled(v, Style::default().fg(color)));
    }
    if pruned {
        header.push(Span::styled(
            " · pruned",
            Style::default().fg(Color::Magenta),
        ));
    }
    let mut out = vec![Line::from(header)];

    let gutter_first = [Span::styled("  ⎿ ", dim())];
    let gutter = [Span::styled("    ", dim())];
    let (body, body_style) = match state {
        ToolState::Completed { output, title, .. } => {
            let mut text = String::new();
            if expanded && !title.is_empty() && title != &gist {
                text.push_str(title);
                text.push('\n');
            }
            text.push_str(output.trim_end());
            let st = if pruned {
                dim()
            } else {
                Style::default().fg(Color::Gray)
            };
            (text, st)
        }
        ToolState::Error { message, .. } => {
            (message.trim_end().to_string(), Style::default().fg(ERR))
        }
        _ => (String::new(), dim()),
    };
    if expanded {
        let input_text = match input {
            Value::Object(o) if !o.is_empty() => {
                serde_json::to_string_pretty(input).unwrap_or_default()
            }
            _ => String::new(),
        };
        let cut = format::width(&gist) > room;
        let several = input.as_object().is_some_and(|o| o.len() > 1);
        if !input_text.is_empty() && (cut || several) {
            for (i, l) in sanitize(&input_text).lines().enumerate() {
                let p: &[Span<'static>] = if i == 0 { &gutter_first } else { &gutter };
                out.extend(wrap_chars(
                    &[Span::styled(l.to_string(), dim())],
                    width,
                    p,
                    &gutter,
                ));
            }
        }
    }
    let body = sanitize(&body);
    if body.trim().is_empty() {
        if matches!(state, ToolState::Completed { .. }) && expanded {
            out.push(Line::from(Span::styled("  ⎿ (no output)", dim())));
        }
        return out;
    }
    let lines: Vec<&str> = body.lines().collect();
    let shown = if expanded {
        lines.len().min(MAX_EXPANDED_LINES)
    } else {
        lines.len().min(PREVIEW_LINES)
    };
    let first_gutter = if expanded && out.len() > 1 {
        &gutter[..]
    } else {
        &gutter_first[..]
    };
    for (i, l) in lines.iter().take(shown).enumerate() {
        let p: &[Span<'static>] = if i == 0 { first_gutter } else { &gutter };
        if expanded {
            out.extend(wrap_chars(
                &[Span::styled(l.to_string(), body_style)],
                width,
                p,
                &gutter,
            ));
        } else {
            let room = width.saturating_sub(4);
            out.push(Line::from(vec![
                p[0].clone(),
                Span::styled(truncate(l, room), body_style),
            ]));
        }
    }
    if lines.len() > shown {
        let hint = if expanded {
            format!("    … {} more lines not shown", lines.len() - shown)
        } else {
            format!(
                "    … +{} lines (click or ctrl+o to expand)",
                lines.len() - shown
            )
        };
        out.push(Line::from(Span::styled(truncate(&hint, width), dim())));
    }
    if pruned && expanded {
        out.push(Line::from(Span::styled(
            "    (pruned: cleared from the model's context, kept here)",
            dim(),
        )));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn short_inputs() {
        assert_eq!(
            short_input("bash", &json!({"command": "cargo test\n--lib"})),
            "cargo test ⏎ --lib"
        );
        assert_eq!(
            short_input("read", &json!({"file_path": "src/a.rs", "offset": 3})),
            "src/a.rs"
        );
        assert_eq!(
            short_input("grep", &json!({"pattern": "fn main", "path": "src"})),
            "fn main  in src"
        );
        assert_eq!(short_input("custom", &json!({"n": 1})), "{\"n\":1}");
        assert_eq!(short_input("custom", &json!({})), "");
    }
}
