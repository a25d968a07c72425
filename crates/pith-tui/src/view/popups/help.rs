//! The help: the commands, the custom commands, the keys by context, the mouse, the keymap's
//! warnings.

use super::{block, centered};
use crate::format;
use crate::keymap::{Action, Keymap};
use crate::theme::theme;
use pith_commands::commands::Command;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Padding, Paragraph};

/// The mouse's part in the help.
const MOUSE_HELP: &[(&str, &str)] = &[
    ("wheel", "scroll the transcript"),
    ("click", "fold / unfold one cell"),
    ("shift+drag", "select text with the mouse"),
];

/// The keys of an MCP server's form (MCP elicitation: `elicit_form.rs`), fixed.
const FORM_HELP: &[(&str, &str)] = &[
    ("tab / ↓, shift+tab / ↑", "next / previous field"),
    (
        "space, ← →",
        "toggle yes/no, pick a choice, tick a multi-select option; move in text",
    ),
    ("a letter", "in a choice: the next option starting with it"),
    ("backspace", "an optional choice or yes/no back to not set"),
    ("enter", "send the answers (once every field checks)"),
    ("esc", "decline the server's question"),
    ("ctrl+c", "cancel it"),
];

/// Draws the help; returns the scroll position actually used (clamped to the content).
pub fn help(
    frame: &mut Frame,
    area: Rect,
    scroll: usize,
    keymap: &Keymap,
    custom: &pith_commands::custom_commands::Commands,
) -> usize {
    let custom_rows = if custom.list.is_empty() {
        0
    } else {
        custom.list.len() + 2
    };
    // As wide as the longest description needs (a wide terminal shows them whole), 84 at least.
    let longest = Command::all()
        .map(|c| format::width(c.about()))
        .chain(custom.list.iter().map(|c| format::width(&c.about())))
        .chain(Action::all().map(|a| format::width(a.about()) + 3 + a.name().len()))
        .max()
        .unwrap_or(0);
    let width = (longest + 30).clamp(84, 140) as u16;
    let r = centered(
        area,
        width,
        (Command::all().count()
            + custom_rows
            + Action::all().count()
            + MOUSE_HELP.len()
            + FORM_HELP.len()
            + 15) as u16,
    );
    let lines = help_lines(keymap, custom, r.width.saturating_sub(4) as usize);
    let visible = r.height.saturating_sub(2) as usize;
    let max_scroll = lines.len().saturating_sub(visible);
    let scroll = scroll.min(max_scroll);
    let title = if max_scroll > 0 {
        "help · ↑↓ scroll · esc closes"
    } else {
        "help · any key closes"
    };
    let mut b = block(title).padding(Padding::horizontal(1));
    if scroll < max_scroll {
        b = b.title_bottom(
            Line::from(Span::styled(
                format!(" ↓ {} more ", max_scroll - scroll),
                Style::default().fg(theme().dim),
            ))
            .right_aligned(),
        );
    }
    frame.render_widget(Clear, r);
    frame.render_widget(Paragraph::new(lines).scroll((scroll as u16, 0)).block(b), r);
    scroll
}

/// The help's lines at `inner_w` columns: the commands, the custom commands, the keys by
/// context, the mouse, the keymap's warnings.
fn help_lines(
    keymap: &Keymap,
    custom: &pith_commands::custom_commands::Commands,
    inner_w: usize,
) -> Vec<Line<'static>> {
    let key_w = 24.min(inner_w / 2);
    let row = |k: String, v: &str| help_row(k, v, key_w, inner_w);
    let mut lines = vec![Line::from(Span::styled(
        "Commands",
        Style::default().add_modifier(Modifier::BOLD),
    ))];
    for c in Command::all() {
        lines.extend(row(format!("/{} {}", c.name(), c.args()), c.about()));
    }
    if !custom.list.is_empty() {
        lines.push(Line::default());
        lines.push(Line::from(Span::styled(
            "Custom commands",
            Style::default().add_modifier(Modifier::BOLD),
        )));
        for c in &custom.list {
            lines.extend(row(format!("/{} {}", c.name, c.argument_hint), &c.about()));
        }
    }
    lines.push(Line::default());
    lines.push(Line::from(Span::styled(
        "Keys  ([keys] in the config rebinds them: action = \"key\")",
        Style::default().add_modifier(Modifier::BOLD),
    )));
    let mut context = None;
    for a in Action::all() {
        if context != Some(a.context()) {
            context = Some(a.context());
            lines.push(Line::from(Span::styled(
                a.context().title(),
                Style::default().fg(theme().dim),
            )));
        }
        lines.extend(row(
            keymap.describe(a),
            &format!("{} · {}", a.about(), a.name()),
        ));
    }
    for (k, v) in MOUSE_HELP {
        lines.extend(row(k.to_string(), v));
    }
    for w in keymap.warnings() {
        let warning = [Span::styled(
            w.to_string(),
            Style::default().fg(theme().warn),
        )];
        lines.extend(crate::wrap::wrap(&warning, inner_w, &[], &[]));
    }
    lines.push(Line::default());
    lines.push(Line::from(Span::styled(
        "An MCP server's form",
        Style::default().fg(theme().dim),
    )));
    for (k, v) in FORM_HELP {
        lines.extend(row(k.to_string(), v));
    }
    lines
}

/// One row of the help: a key (or command) in its column, what it does beside it.
///
/// A description too long for the line wraps under itself (an 80-column terminal shows it
/// whole), never cut; so does a key list too long for its column: it gets a line of its own.
fn help_row(k: String, v: &str, key_w: usize, inner_w: usize) -> Vec<Line<'static>> {
    let style = Style::default().fg(theme().accent);
    let indent = Span::raw(" ".repeat(key_w + 2));
    let text = [Span::raw(v.to_string())];
    if format::width(&k) < key_w {
        let key = Span::styled(format!("  {k:<key_w$}"), style);
        return crate::wrap::wrap(&text, inner_w, &[key], &[indent]);
    }
    let two = Span::raw("  ");
    let mut lines = crate::wrap::wrap(
        &[Span::styled(k, style)],
        inner_w,
        std::slice::from_ref(&two),
        std::slice::from_ref(&two),
    );
    lines.extend(crate::wrap::wrap(
        &text,
        inner_w,
        std::slice::from_ref(&indent),
        std::slice::from_ref(&indent),
    ));
    lines
}
