//! The pickers (sessions, models, effort, themes, resources): a filtered, scrolled list.

use super::{block, centered, selected_style};
use crate::format::{self, truncate};
use crate::picker::{Picker, PickerKind};
use crate::theme::theme;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

pub fn picker(frame: &mut Frame, area: Rect, p: &Picker) {
    let title = match p.kind() {
        PickerKind::Sessions => "resume a session",
        PickerKind::Model => "switch model",
        PickerKind::Resource => "attach an MCP resource to your next message",
        PickerKind::Rewind => "go back to before this prompt (files and conversation)",
        PickerKind::Theme => "colour theme · moving previews · enter keeps · esc puts back",
        PickerKind::Left => "what left the view, newest first · enter shows one in full",
        PickerKind::Memory => "memory files · enter opens one in $VISUAL / $EDITOR",
        PickerKind::Remember(text) => {
            let text = truncate(&pith_protocol::text::one_line(text), 60);
            return picker_titled(
                frame,
                area,
                p,
                &format!("remember \"{text}\" in which file?"),
            );
        }
        PickerKind::Skills => "skills · enter puts /NAME in the composer",
        PickerKind::Jobs => "background jobs · enter or delete stops the selected one · esc closes",
    };
    picker_titled(frame, area, p, title)
}

/// The picker under `title`.
fn picker_titled(frame: &mut Frame, area: Rect, p: &Picker, title: &str) {
    let items = p.visible();
    let rows = (area.height.saturating_sub(6) as usize).clamp(1, 14);
    let h = (items.len().clamp(1, rows) + 4) as u16;
    let r = centered(area, 110, h);
    frame.render_widget(Clear, r);
    let inner_w = r.width.saturating_sub(2) as usize;
    let mut lines = vec![Line::from(vec![
        Span::styled(" filter: ", Style::default().fg(theme().dim)),
        Span::raw(p.filter().to_string()),
        Span::styled("▏", Style::default().fg(theme().accent)),
    ])];
    if p.is_loading() {
        lines.push(Line::from(Span::styled(
            " loading…",
            Style::default().fg(theme().dim),
        )));
    } else if items.is_empty() {
        lines.push(Line::from(Span::styled(
            " nothing matches",
            Style::default().fg(theme().dim),
        )));
    }
    let first = p.selected().saturating_sub(rows - 1);
    for (i, it) in items.iter().enumerate().skip(first).take(rows) {
        // the detail (when, where) keeps its room; the title takes what is left
        let detail = truncate(&it.detail, inner_w.saturating_sub(18));
        let label_w = inner_w.saturating_sub(format::width(&detail) + 3).max(1);
        let label = truncate(&it.label, label_w);
        let pad = label_w.saturating_sub(format::width(&label));
        let text = format!(" {label}{} {detail}", " ".repeat(pad));
        let text = truncate(&text, inner_w);
        lines.push(if i == p.selected() {
            Line::from(Span::styled(format!("{text:<inner_w$}"), selected_style()))
        } else {
            Line::from(Span::raw(text))
        });
    }
    lines.push(Line::from(Span::styled(
        " ↑↓ choose · enter select · esc cancel · type to filter",
        Style::default().fg(theme().dim),
    )));
    frame.render_widget(Paragraph::new(lines).block(block(title)), r);
}
