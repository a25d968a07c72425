//! The plan the model presents (`exit_plan_mode`), in its own box: the plan as Markdown,
//! scrolled when longer than the screen (accepting waits until its end has been on screen),
//! then the three choices — "Yes, and auto-accept edits", "Yes, and ask for edits", "No, keep
//! planning" — and the note a "keep planning" may carry.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::popups::block;
use crate::format::truncate;
use crate::markdown;
use crate::permission_prompt::Permissions;
use crate::theme::theme;
use crate::transcript::Transcript;
use pith_protocol::event::{PermissionReply, PermissionRequest};

/// The widest the box gets: a plan reads best in a column.
const MAX_WIDTH: u16 = 110;

/// The choices, in the order the keys pick them (1 and `y`: the first).
pub const CHOICES: [&str; 3] = [
    "1. Yes, and auto-accept edits",
    "2. Yes, and ask for edits",
    "3. No, keep planning (with a note)",
];

/// The tool whose question is a plan.
pub fn is_plan(req: &PermissionRequest) -> bool {
    pith_protocol::tool::ToolName::parse(&req.tool).is(pith_protocol::tool::Builtin::ExitPlanMode)
}

/// The reply the engine takes for the choice the question's keys made: the first choice
/// (allow once, `1`, `y`) accepts with edits auto-accepted — the engine's "always" — the second
/// accepts and asks before edits — its "once".
pub fn engine_reply(reply: PermissionReply) -> PermissionReply {
    match reply {
        PermissionReply::Once => PermissionReply::Always,
        // (the exact-command choice is a command's, never offered for a plan)
        PermissionReply::Always | PermissionReply::AlwaysExact => PermissionReply::Once,
        PermissionReply::Deny => PermissionReply::Deny,
    }
}

/// How an answered plan reads in the transcript (the engine's reply), and its colour.
pub fn verdict(reply: PermissionReply) -> (&'static str, ratatui::style::Color) {
    match reply {
        PermissionReply::Always => ("plan accepted · edits auto-accepted", theme().ok),
        PermissionReply::Once | PermissionReply::AlwaysExact => {
            ("plan accepted · edits asked about", theme().ok)
        }
        PermissionReply::Deny => ("kept planning", theme().err),
    }
}

/// The plan's text: the call's `plan` argument, else the question's title.
fn plan_text(req: &PermissionRequest, transcript: &Transcript) -> String {
    transcript
        .tool_call(&req.call_id)
        .and_then(|(_, input)| input.get("plan").and_then(serde_json::Value::as_str))
        .map(str::to_string)
        .unwrap_or_else(|| req.title.clone())
}

/// Draws the plan question in front; records in `p` how far the plan scrolls and whether its
/// end has been on screen.
pub fn draw(frame: &mut Frame, area: Rect, p: &mut Permissions, transcript: &Transcript) {
    let Some(req) = p.front() else { return };
    let w = area.width.saturating_sub(2).min(MAX_WIDTH);
    let inner_w = w.saturating_sub(4) as usize;
    let note_rows: u16 = if p.note().is_some() { 3 } else { 0 };
    let plan = markdown::render(&plan_text(req, transcript), inner_w, Style::default());
    // borders, header, blank, blank, three options, blank, hint, the note
    let fixed = 10 + note_rows as usize;
    let avail = (area.height as usize).saturating_sub(fixed).max(1);
    let (rows, max_scroll) = if plan.len() <= avail {
        (plan.len(), 0)
    } else {
        let rows = avail.saturating_sub(1).max(1);
        (rows, plan.len() - rows)
    };
    let scroll = p.drawn(max_scroll, rows);
    let p = &*p;

    let bold = Style::default().add_modifier(Modifier::BOLD);
    let dim = Style::default().fg(theme().dim);
    let mut lines = vec![
        Line::from(Span::styled("Accept this plan and leave plan mode?", bold)),
        Line::default(),
    ];
    lines.extend(plan.into_iter().skip(scroll).take(rows));
    if max_scroll > 0 {
        let below = max_scroll - scroll;
        lines.push(Line::from(Span::styled(
            if below > 0 {
                format!("  ↓ {below} more lines below · pgdn reads on")
            } else {
                "  ─ end · pgup goes back".into()
            },
            dim,
        )));
    }
    lines.push(Line::default());
    let unread = !p.seen_end();
    for (i, choice) in CHOICES.iter().enumerate() {
        let style = if unread && i < 2 {
            dim
        } else if i == p.selected() {
            Style::default()
                .fg(theme().accent)
                .add_modifier(Modifier::BOLD)
        } else {
            Style::default()
        };
        let mark = if i == p.selected() { "› " } else { "  " };
        lines.push(Line::from(Span::styled(
            format!("{mark}{}", truncate(choice, inner_w.saturating_sub(2))),
            style,
        )));
    }
    lines.push(Line::default());
    let hint = if p.note().is_some() {
        "enter send · esc back"
    } else if unread {
        "read the plan to its end to accept it: pgdn · esc keep planning"
    } else {
        "↑↓ enter choose · n keep planning with a note · esc keep planning"
    };
    lines.push(Line::from(Span::styled(truncate(hint, inner_w), dim)));

    super::permission::draw_question(
        frame,
        area,
        w,
        lines,
        block("plan"),
        (note_rows, p.note(), " what to change "),
    );
}
