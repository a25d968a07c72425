//! The small pieces every cell's lines are built from (the transcript cells, tool cells, hook
//! notes): the dim style, an indent, and plain text wrapped keeping the author's line breaks.

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use crate::format::sanitize;
use crate::theme::theme;
use crate::wrap::wrap;

pub(crate) fn dim() -> Style {
    Style::default().fg(theme().dim)
}

pub(crate) fn indent(n: usize) -> Vec<Span<'static>> {
    vec![Span::raw(" ".repeat(n))]
}

/// Plain (non-markdown) text wrapped line by line, keeping the author's line breaks.
pub(crate) fn plain_lines(
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
