//! Overlays, each drawn by its module: the `/` and `@` completion popups, help, the /context
//! breakdown, `/mcp`, pickers (the permission question is `permission.rs`); here the box and
//! placement they share.

mod completion;
mod context;
mod help;
mod mcp;
mod picker;

pub use completion::{files, slash};
pub use context::{breakdown_bar, context};
pub use help::help;
pub use mcp::mcp;
pub use picker::picker;

use crate::theme::theme;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::Span;
use ratatui::widgets::{Block, BorderType};

pub(super) fn block(title: &str) -> Block<'static> {
    Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(Style::default().fg(theme().accent))
        .title(Span::styled(
            format!(" {title} "),
            Style::default().add_modifier(Modifier::BOLD),
        ))
}

/// The popups' box titled `title` (a popup drawn outside this module).
pub fn block_titled(title: &str) -> Block<'static> {
    block(title)
}

/// A rectangle of at most `w`×`h` centred in `area`.
pub fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width);
    let h = h.min(area.height);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

pub(super) fn selected_style() -> Style {
    Style::default()
        .fg(theme().on_accent)
        .bg(theme().accent)
        .add_modifier(Modifier::BOLD)
}

/// The area of a popup of `rows` lines just above the composer (`anchor`), or `None` when it
/// does not fit below `limit_top` or the composer is too narrow.
pub(super) fn above(anchor: Rect, limit_top: u16, rows: u16) -> Option<Rect> {
    let h = rows + 2;
    if anchor.y < limit_top + h || anchor.width < 10 {
        return None;
    }
    Some(Rect {
        x: anchor.x,
        y: anchor.y - h,
        width: anchor.width,
        height: h,
    })
}
