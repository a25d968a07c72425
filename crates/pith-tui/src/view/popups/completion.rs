//! The completion popups over the composer: `/` commands and `@` files.

use super::{above, block, selected_style};
use crate::format::{self, truncate};
use crate::mcp::SlashItem;
use crate::theme::theme;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

/// The slash-command list, drawn just above the composer (`anchor` is the composer's area).
pub fn slash(
    frame: &mut Frame,
    items: &[SlashItem],
    selected: usize,
    anchor: Rect,
    limit_top: u16,
) {
    let rows = items.len().min(8) as u16;
    let Some(area) = above(anchor, limit_top, rows) else {
        return;
    };
    let first = selected.saturating_sub(rows as usize - 1);
    let name_w = items
        .iter()
        .map(|c| format::width(&c.name()) + format::width(&c.args()) + 2)
        .max()
        .unwrap_or(0);
    let inner_w = area.width.saturating_sub(2) as usize;
    let lines: Vec<Line> = items
        .iter()
        .enumerate()
        .skip(first)
        .take(rows as usize)
        .map(|(i, c)| {
            let head = if c.args().is_empty() {
                format!("/{}", c.name())
            } else {
                format!("/{} {}", c.name(), c.args())
            };
            let text = format!("{head:<name_w$}  {}", c.about());
            let text = format!(" {}", truncate(&text, inner_w.saturating_sub(1)));
            if i == selected {
                Line::from(Span::styled(format!("{text:<inner_w$}"), selected_style()))
            } else {
                Line::from(Span::raw(text))
            }
        })
        .collect();
    frame.render_widget(Clear, area);
    frame.render_widget(
        Paragraph::new(lines).block(block("commands · tab completes · enter runs")),
        area,
    );
}

/// The `@` file picker, just above the composer.
pub fn files(
    frame: &mut Frame,
    query: &str,
    items: &[String],
    selected: usize,
    anchor: Rect,
    limit_top: u16,
) {
    let rows = items.len().min(crate::mentions::SHOWN) as u16;
    let Some(area) = above(anchor, limit_top, rows) else {
        return;
    };
    let first = selected.saturating_sub(rows as usize - 1);
    let inner_w = area.width.saturating_sub(2) as usize;
    let lines: Vec<Line> = items
        .iter()
        .enumerate()
        .skip(first)
        .take(rows as usize)
        .map(|(i, p)| {
            let text = format!(" {}", truncate(p, inner_w.saturating_sub(1)));
            if i == selected {
                Line::from(Span::styled(format!("{text:<inner_w$}"), selected_style()))
            } else if p.ends_with('/') {
                Line::from(Span::styled(text, Style::default().fg(theme().user)))
            } else {
                Line::from(Span::raw(text))
            }
        })
        .collect();
    let title = if query.is_empty() {
        "attach a file · tab/enter picks · esc".to_string()
    } else {
        format!(
            "@{query} · {} match{}",
            items.len(),
            if items.len() == 1 { "" } else { "es" }
        )
    };
    frame.render_widget(Clear, area);
    frame.render_widget(Paragraph::new(lines).block(block(&title)), area);
}
