//! The permission question: what the call will do, whole — wrapped, never cut, scrolled when
//! it is longer than the screen (allowing waits until its end has been on screen) — the part a
//! rule would match highlighted, then the choices and the deny note.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Paragraph};
use serde_json::Value;

use super::popups::{block, centered};
use crate::keymap::Keymap;
use crate::permission_prompt::Permissions;
use crate::transcript::Transcript;
use pith_protocol::event::PermissionRequest;
use pith_protocol::tool::{Builtin, ToolInput, ToolName};

use crate::format::{self, truncate};
use crate::theme::theme;
use crate::wrap::wrap;

/// The widest the box gets on a very wide terminal.
const MAX_WIDTH: u16 = 160;
/// The most lines of an edit's or a write's change shown (the path itself is always whole).
const PREVIEW_ROWS: usize = 16;
/// What a question shows of a call beyond its title, by tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Beyond {
    /// The command, unless the title holds it.
    Command,
    /// The whole URL, when the title cut it.
    Url,
    /// Nothing: the title (the path or pattern) says all a rule matches.
    Nothing,
    /// The call's arguments.
    Arguments,
}

fn beyond(tool: &ToolName) -> Beyond {
    let Some(b) = tool.builtin() else {
        return Beyond::Arguments;
    };
    match b {
        Builtin::Bash => Beyond::Command,
        Builtin::WebFetch => Beyond::Url,
        Builtin::Edit
        | Builtin::Write
        | Builtin::Read
        | Builtin::List
        | Builtin::Glob
        | Builtin::Grep => Beyond::Nothing,
        Builtin::TodoWrite
        | Builtin::Recall
        | Builtin::Task
        | Builtin::ToolSearch
        | Builtin::ExitPlanMode
        | Builtin::Remember
        | Builtin::Skill
        | Builtin::JobOutput
        | Builtin::JobKill
        // the whole query: it is what leaves the machine
        | Builtin::WebSearch => Beyond::Arguments,
    }
}

/// What one draw of the question needs to know about its text.
struct Body {
    lines: Vec<Line<'static>>,
    /// Rows of it on screen at once.
    rows: usize,
    max_scroll: usize,
}

/// Draws the question in front; records in `p` how far its text can scroll and whether its end
/// has been on screen.
pub fn draw(
    frame: &mut Frame,
    area: Rect,
    p: &mut Permissions,
    transcript: &Transcript,
    keymap: &Keymap,
) {
    let Some(req) = p.front() else {
        return;
    };
    if super::plan_box::is_plan(req) {
        return super::plan_box::draw(frame, area, p, transcript);
    }
    let w = area.width.saturating_sub(2).min(MAX_WIDTH);
    let inner_w = w.saturating_sub(4) as usize;
    let note_rows: u16 = if p.note().is_some() { 3 } else { 0 };
    let (always, grants) = always_option(req, inner_w.saturating_sub(2));
    // borders, header, blank, three or four options, blank, hint, the note
    let fixed = 6 + p.option_count() + note_rows as usize;
    let avail = (area.height as usize).saturating_sub(fixed).max(1);
    let input = transcript.tool_call(&req.call_id);
    let body = body(req, input, grants.as_deref(), inner_w, avail);
    let scroll = p.drawn(body.max_scroll, body.rows);
    let p = &*p;
    let Some(req) = p.front() else { return };

    let mut lines = vec![header(req)];
    lines.extend(body.lines.iter().skip(scroll).take(body.rows).cloned());
    if body.max_scroll > 0 {
        lines.push(marker(body.max_scroll - scroll, inner_w));
    }
    lines.push(Line::default());
    let exact = super::super::permission_prompt::offers_exact(req);
    let always = super::super::permission_prompt::offers_always(req).then_some(always);
    lines.extend(options(always, exact, p.selected(), !p.seen_end(), inner_w));
    lines.push(Line::default());
    lines.push(hint(p, keymap, body.max_scroll > 0, inner_w));
    let b = block(&format!("permission · {}", req.tool))
        .border_style(Style::default().fg(theme().warn));
    draw_question(frame, area, w, lines, b, (note_rows, p.note(), " note "));
}

/// Draws a question's `lines` in the box `b`, `w` wide and centred in `area` (the margins
/// beside it cleared), with its note editor (`rows` tall, titled) at the bottom when one is open.
pub(super) fn draw_question(
    frame: &mut Frame,
    area: Rect,
    w: u16,
    lines: Vec<Line<'static>>,
    b: Block<'_>,
    (note_rows, note, title): (u16, Option<&ratatui_textarea::TextArea<'static>>, &str),
) {
    let h = (lines.len() as u16 + 2 + note_rows).min(area.height);
    let r = centered(area, w, h);
    // the margins beside the box too: nothing underneath shows against its border
    frame.render_widget(
        Clear,
        Rect {
            x: area.x,
            width: area.width,
            ..r
        },
    );
    let inner = b.inner(r);
    frame.render_widget(b, r);
    let text_area = Rect {
        x: inner.x + 1,
        width: inner.width.saturating_sub(1),
        height: inner.height.saturating_sub(note_rows),
        ..inner
    };
    frame.render_widget(Paragraph::new(lines), text_area);
    if let Some(note) = note
        && inner.height > note_rows
    {
        let nr = Rect {
            x: inner.x + 1,
            y: inner.y + inner.height - note_rows,
            width: inner.width.saturating_sub(2),
            height: note_rows,
        };
        let mut ta = note.clone();
        ta.set_block(
            Block::bordered()
                .border_type(BorderType::Rounded)
                .border_style(Style::default().fg(theme().dim))
                .title(title.to_string()),
        );
        frame.render_widget(&ta, nr);
    }
}

fn header(req: &PermissionRequest) -> Line<'static> {
    Line::from(Span::styled(
        match &req.agent {
            Some(agent) => format!(
                "sub-agent {} wants to run {}:",
                format::sanitize(agent),
                format::sanitize(&req.tool)
            ),
            None => format!("pith wants to run {}:", format::sanitize(&req.tool)),
        },
        Style::default().add_modifier(Modifier::BOLD),
    ))
}

/// The question's text, wrapped to `width`: the subject whole, then as much of the change as
/// fits in `avail` rows; and how it scrolls when the subject alone does not fit.
fn body(
    req: &PermissionRequest,
    input: Option<(&str, &Value)>,
    grants: Option<&str>,
    width: usize,
    avail: usize,
) -> Body {
    let mut lines = subject(req, input, width);
    if let Some(g) = grants {
        let dim = Style::default().fg(theme().dim);
        lines.extend(text_lines(&format!("always allows: {g}"), &[], dim, width));
    }
    let room = avail.saturating_sub(lines.len()).min(PREVIEW_ROWS);
    if let Some((tool, input)) = input {
        lines.extend(call_preview(tool, input, width.saturating_sub(2), room));
    }
    if lines.len() <= avail {
        let rows = lines.len();
        return Body {
            lines,
            rows,
            max_scroll: 0,
        };
    }
    // one row goes to the "more below" marker
    let rows = avail.saturating_sub(1).max(1);
    let max_scroll = lines.len() - rows;
    Body {
        lines,
        rows,
        max_scroll,
    }
}

/// What the call is: the request's title (a command, a path), every line of it; for a command
/// the title does not hold whole, the command; for other tools (MCP ones), their arguments.
fn subject(
    req: &PermissionRequest,
    input: Option<(&str, &Value)>,
    width: usize,
) -> Vec<Line<'static>> {
    let muted = Style::default().fg(theme().muted);
    let needles = matched_parts(&req.patterns);
    let mut out = text_lines(&req.title, &needles, muted, width);
    let Some((tool, input)) = input else {
        return out;
    };
    let label = |out: &mut Vec<Line<'static>>, s: &str| {
        out.push(Line::from(Span::styled(
            format!("  {s}"),
            Style::default().fg(theme().dim),
        )));
    };
    let name = ToolName::parse(tool);
    match beyond(&name) {
        Beyond::Command => {
            let cmd = ToolInput::of(&name, input).command().unwrap_or("");
            if !cmd.is_empty() && !req.title.contains(cmd) {
                label(&mut out, "command:");
                out.extend(text_lines(cmd, &needles, muted, width));
            }
        }
        Beyond::Url => {
            // the title is the URL, cut in the middle when long: then the whole of it too
            let url = input
                .get("url")
                .and_then(Value::as_str)
                .unwrap_or("")
                .trim();
            if !url.is_empty() && url != req.title {
                label(&mut out, "whole URL:");
                out.extend(text_lines(url, &needles, muted, width));
            }
        }
        Beyond::Nothing => {}
        Beyond::Arguments => {
            label(&mut out, "arguments:");
            out.extend(arguments(input, &needles, width));
        }
    }
    out
}

/// A tool's arguments, one `name: value` per argument (a string as it is, line by line).
fn arguments(input: &Value, needles: &[String], width: usize) -> Vec<Line<'static>> {
    let style = Style::default().fg(theme().muted);
    let Some(map) = input.as_object() else {
        return text_lines(&input.to_string(), needles, style, width);
    };
    let mut out = Vec::new();
    for (k, v) in map {
        let v = match v {
            Value::String(s) => s.clone(),
            v => v.to_string(),
        };
        out.extend(text_lines(&format!("{k}: {v}"), needles, style, width));
    }
    out
}

/// `text` line by line (its newlines kept), made visible and wrapped to `width` under a
/// two-column indent, with the parts in `needles` highlighted.
fn text_lines(text: &str, needles: &[String], style: Style, width: usize) -> Vec<Line<'static>> {
    let indent = [Span::raw("  ")];
    let hi = Style::default()
        .fg(theme().warn)
        .add_modifier(Modifier::BOLD);
    text.split('\n')
        .flat_map(|l| {
            let l = format::visible(l.strip_suffix('\r').unwrap_or(l));
            wrap(&highlight(&l, needles, style, hi), width, &indent, &indent)
        })
        .collect()
}

/// What a rule granting `patterns` matches literally: each pattern up to its first wildcard.
fn matched_parts(patterns: &[String]) -> Vec<String> {
    patterns
        .iter()
        .map(|p| {
            let end = p.find(['*', '?', '[', '\\', '{']).unwrap_or(p.len());
            p[..end].trim_end().to_string()
        })
        .filter(|p| p.chars().count() >= 2)
        .collect()
}

/// `s` in `base`, the first occurrence of each of `needles` (leftmost first) in `hi`.
fn highlight(s: &str, needles: &[String], base: Style, hi: Style) -> Vec<Span<'static>> {
    let mut spans = Vec::new();
    let mut rest = s;
    let mut left: Vec<&str> = needles.iter().map(String::as_str).collect();
    loop {
        let next = left
            .iter()
            .enumerate()
            .filter_map(|(n, needle)| rest.find(needle).map(|i| (i, n, needle.len())))
            .min_by_key(|&(i, _, len)| (i, usize::MAX - len));
        let Some((i, n, len)) = next else { break };
        if i > 0 {
            spans.push(Span::styled(rest[..i].to_string(), base));
        }
        spans.push(Span::styled(rest[i..i + len].to_string(), hi));
        rest = &rest[i + len..];
        left.remove(n);
    }
    if !rest.is_empty() || spans.is_empty() {
        spans.push(Span::styled(rest.to_string(), base));
    }
    spans
}

/// The "always" option, naming what it grants when that fits on its line; otherwise the
/// grants, to go whole with the question's text (unless the title shows each of them whole,
/// highlighted).
fn always_option(req: &PermissionRequest, width: usize) -> (String, Option<String>) {
    let patterns = &req.patterns;
    if patterns.is_empty() {
        return ("2. Always allow this session".into(), None);
    }
    let joined = patterns
        .iter()
        .map(|p| format::visible(p))
        .collect::<Vec<_>>()
        .join(", ");
    let full = format!("2. Always allow this session ({joined})");
    if format::width(&full) <= width {
        (full, None)
    } else if matched_parts(patterns).len() == patterns.len()
        && patterns.iter().all(|p| req.title.contains(p.as_str()))
    {
        (
            "2. Always allow this session (what is highlighted)".into(),
            None,
        )
    } else {
        (
            "2. Always allow this session (see above)".into(),
            Some(joined),
        )
    }
}

fn options(
    always: Option<String>,
    exact: bool,
    selected: usize,
    unread: bool,
    width: usize,
) -> Vec<Line<'static>> {
    let mut options = vec!["1. Allow once".to_string()];
    options.extend(always);
    if exact {
        options.push("3. Always allow this exact command (no prefix)".to_string());
    }
    options.push(format!(
        "{}. Deny, with a note for the agent",
        options.len() + 1
    ));
    let allows = options.len() - 1;
    let mut out = Vec::new();
    for (i, o) in options.iter().enumerate() {
        let text = truncate(o, width.saturating_sub(2));
        let style = if unread && i < allows {
            Style::default().fg(theme().dim)
        } else if i == selected {
            Style::default()
                .fg(theme().accent)
                .add_modifier(Modifier::BOLD)
        } else {
            Style::default()
        };
        let mark = if i == selected { "› " } else { "  " };
        out.push(Line::from(Span::styled(format!("{mark}{text}"), style)));
    }
    out
}

/// The line under a text that scrolls: how much is below, or that this is all.
fn marker(below: usize, width: usize) -> Line<'static> {
    let (text, style) = if below > 0 {
        (
            format!(
                "  ↓ {below} more line{} below · pgdn reads on",
                if below == 1 { "" } else { "s" }
            ),
            Style::default().fg(theme().warn),
        )
    } else {
        (
            "  ─ end · pgup goes back".to_string(),
            Style::default().fg(theme().dim),
        )
    };
    Line::from(Span::styled(truncate(&text, width), style))
}

fn hint(p: &Permissions, keymap: &Keymap, scrolls: bool, width: usize) -> Line<'static> {
    let more = if p.len() > 1 {
        "  (+ more waiting)"
    } else {
        ""
    };
    // the keys as the keymap has them (`n` denies with a note and the turn goes on; esc
    // denies and stops the turn)
    use super::super::keymap::Action;
    let key = |a: Action, prefer: &[&str]| keymap.hint(a, prefer);
    let opt =
        |k: Option<String>, what: &str| k.map(|k| format!("{k} {what} · ")).unwrap_or_default();
    let note = opt(key(Action::DenyWithNote, &["n"]), "deny + note");
    let deny = key(Action::Deny, &["esc"])
        .map(|k| format!(" · {k} stop"))
        .unwrap_or_default();
    let hint = if p.note().is_some() {
        "enter send denial · esc back".to_string()
    } else if !p.seen_end() {
        format!("read to the end to allow: pgdn · {note}{deny}{more}").replace(" ·  · ", " · ")
    } else {
        let once = opt(key(Action::AllowOnce, &["y"]), "once");
        let always = if p.option_count() > 2 {
            opt(key(Action::AllowAlways, &["a"]), "always")
        } else {
            String::new()
        };
        let pgup = if scrolls { " · pgup" } else { "" };
        format!("{once}{always}{note}↑↓ enter{pgup}{deny}{more}")
    };
    Line::from(Span::styled(
        truncate(&hint, width),
        Style::default().fg(theme().dim),
    ))
}

/// The change an `edit` or `write` call would make (`-`/`+` lines); at most `rows` lines of
/// `width` columns.
pub fn call_preview(tool: &str, input: &Value, width: usize, rows: usize) -> Vec<Line<'static>> {
    let del = Style::default().fg(theme().removed);
    let add = Style::default().fg(theme().added);
    let mut diff: Vec<(&str, Style, String)> = Vec::new();
    let name = ToolName::parse(tool);
    match ToolInput::of(&name, input) {
        ToolInput::Edit { old, new, .. } => {
            for l in old.unwrap_or("").lines() {
                diff.push(("- ", del, l.to_string()));
            }
            for l in new.unwrap_or("").lines() {
                diff.push(("+ ", add, l.to_string()));
            }
        }
        ToolInput::Write { content, .. } => {
            for l in content.unwrap_or("").lines() {
                diff.push(("+ ", add, l.to_string()));
            }
        }
        _ => {}
    }
    if diff.is_empty() || rows < 2 {
        return Vec::new();
    }
    let mut out = vec![Line::default()];
    let shown = if diff.len() > rows - 1 {
        rows - 2
    } else {
        diff.len()
    };
    for (sign, style, text) in diff.iter().take(shown) {
        let text = format::visible(text);
        out.push(Line::from(vec![
            Span::styled(format!("  {sign}"), *style),
            Span::styled(truncate(&text, width.saturating_sub(4)), *style),
        ]));
    }
    if diff.len() > shown {
        out.push(Line::from(Span::styled(
            format!("    … {} more lines", diff.len() - shown),
            Style::default().fg(theme().dim),
        )));
    }
    out
}
