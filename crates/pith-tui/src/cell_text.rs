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

/// A line that is one web address and nothing else (`https://…` without a space).
pub(crate) fn is_bare_url(line: &str) -> bool {
    let l = line.trim_end();
    (l.starts_with("https://") || l.starts_with("http://")) && !l.contains(char::is_whitespace)
}

/// A web address on rows of its own: no mark, no indent, cut only where the screen ends, so
/// what a selection of its rows copies is the address (a browser's address bar drops the line
/// breaks). `/copy url` copies it whole.
pub(crate) fn url_lines(url: &str, width: usize, style: Style) -> Vec<Line<'static>> {
    use unicode_width::UnicodeWidthChar as _;
    let url = sanitize(url.trim_end());
    let mut out = Vec::new();
    let (mut row, mut used) = (String::new(), 0);
    for c in url.chars() {
        let w = c.width().unwrap_or(0);
        if used + w > width.max(1) && !row.is_empty() {
            out.push(Line::from(Span::styled(std::mem::take(&mut row), style)));
            used = 0;
        }
        row.push(c);
        used += w;
    }
    if !row.is_empty() {
        out.push(Line::from(Span::styled(row, style)));
    }
    out
}
