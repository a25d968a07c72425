//! A URL pith showed on rows of its own (`cell_text::url_lines`: the sign-in URL of `/mcp
//! login`) is made a terminal hyperlink (OSC 8) on screen, so a click opens it whole though the
//! screen cut it into rows. Only an exact, whole URL of a notice is linked: rows are joined
//! while each fills the width, and the result must be one of the notices' URLs (a URL scrolled
//! half off screen is left plain). Each row's escape is put in its first cell with its width
//! forced (`CellDiffOption::ForcedWidth`), so ratatui moves on as the terminal does. Off in
//! tests (the `TestBackend` would show the escapes) and on terminals known not to take it.

use std::num::NonZeroU16;
use std::sync::atomic::{AtomicBool, Ordering};

use ratatui::buffer::{Buffer, CellDiffOption};
use ratatui::layout::Rect;

/// Set by the run loop on a real terminal that takes OSC 8.
static ENABLED: AtomicBool = AtomicBool::new(false);

/// Turns hyperlinks on for a terminal whose `TERM` is not known to print them as text.
pub(crate) fn enable_for(term: Option<&str>) {
    let plain = matches!(term, Some("dumb" | "linux") | None);
    ENABLED.store(!plain, Ordering::Relaxed);
}

pub(crate) fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// Only a URL of printable ASCII goes into an escape sequence (nothing can end it early).
fn linkable(url: &str) -> bool {
    !url.is_empty() && url.len() <= 4096 && url.bytes().all(|b| (0x21..=0x7e).contains(&b))
}

/// The rows of `area` that together spell one of `known` from its first character: `(first row,
/// rows, url)`.
pub(crate) fn find(buf: &Buffer, area: Rect, known: &[String]) -> Vec<(u16, u16, String)> {
    let row = |y: u16| -> String {
        (area.x..area.x + area.width)
            .map(|x| buf[(x, y)].symbol())
            .collect::<String>()
            .trim_end()
            .to_string()
    };
    let full = area.width as usize;
    let mut found = Vec::new();
    let mut y = area.y;
    while y < area.y + area.height {
        let first = row(y);
        if !(first.starts_with("https://") || first.starts_with("http://")) {
            y += 1;
            continue;
        }
        let (mut url, mut rows) = (first, 1u16);
        while !known.contains(&url)
            && url.len() % full.max(1) == 0
            && y + rows < area.y + area.height
        {
            let next = row(y + rows);
            if next.is_empty() || next.contains(' ') {
                break;
            }
            url.push_str(&next);
            rows += 1;
        }
        if known.contains(&url) && linkable(&url) {
            found.push((y, rows, url));
        }
        y += rows;
    }
    found
}

/// Links the whole URLs of `known` drawn in `area`; the URLs are asked for only when a row
/// there starts like one.
pub(crate) fn link_urls(buf: &mut Buffer, area: Rect, known: impl FnOnce() -> Vec<String>) {
    let starts_a_url = (area.y..area.y + area.height).any(|y| {
        let head: String = (area.x..area.x + area.width.min(8))
            .map(|x| buf[(x, y)].symbol())
            .collect();
        head.starts_with("http")
    });
    if !starts_a_url {
        return;
    }
    let links = find(buf, area, &known());
    apply(buf, area, &links);
}

/// Makes each found row an OSC 8 hyperlink to its URL.
pub(crate) fn apply(buf: &mut Buffer, area: Rect, links: &[(u16, u16, String)]) {
    for (y0, rows, url) in links {
        for y in *y0..y0 + rows {
            let text: String = (area.x..area.x + area.width)
                .map(|x| buf[(x, y)].symbol().to_string())
                .collect::<String>()
                .trim_end()
                .to_string();
            let Some(width) = NonZeroU16::new(text.chars().count() as u16) else {
                continue;
            };
            let cell = &mut buf[(area.x, y)];
            cell.set_symbol(&format!("\x1b]8;;{url}\x1b\\{text}\x1b]8;;\x1b\\"));
            cell.diff_option = CellDiffOption::ForcedWidth(width);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buffer(rows: &[&str], width: u16) -> Buffer {
        let area = Rect::new(0, 0, width, rows.len() as u16);
        let mut buf = Buffer::empty(area);
        for (y, r) in rows.iter().enumerate() {
            buf.set_string(0, y as u16, r, ratatui::style::Style::default());
        }
        buf
    }

    #[test]
    fn a_whole_known_url_cut_into_rows_is_found_and_linked() {
        let url = "https://auth.example.com/authorize?state=abc&x=1".to_string();
        let rows = [
            "· open this URL:",
            "https://auth.exampl",
            "e.com/authorize?sta",
            "te=abc&x=1",
            "",
        ];
        let mut buf = buffer(&rows, 19);
        let area = buf.area;
        let found = find(&buf, area, std::slice::from_ref(&url));
        assert_eq!(found, vec![(1, 3, url.clone())]);
        apply(&mut buf, area, &found);
        let first = buf[(0, 1)].symbol().to_string();
        assert_eq!(
            first,
            format!("\x1b]8;;{url}\x1b\\https://auth.exampl\x1b]8;;\x1b\\")
        );
        assert_eq!(
            buf[(0, 3)].diff_option,
            CellDiffOption::ForcedWidth(NonZeroU16::new(10).unwrap())
        );
        // The row of prose is left alone.
        assert_eq!(buf[(0, 0)].symbol(), "·");
    }

    /// Half a URL (scrolled off), an unknown one, or one that could end the escape: no link.
    #[test]
    fn a_partial_unknown_or_unsafe_url_is_not_linked() {
        let url = "https://auth.example.com/authorize?state=abc&x=1".to_string();
        let cut = buffer(&["https://auth.exampl", "e.com/authorize?sta"], 19);
        assert!(find(&cut, cut.area, std::slice::from_ref(&url)).is_empty());
        let other = buffer(&["https://elsewhere.example/"], 40);
        assert!(find(&other, other.area, std::slice::from_ref(&url)).is_empty());
        assert!(!linkable("https://x.example/\u{1b}\\evil"));
        assert!(!linkable("https://x.example/\u{7}"));
    }
}
