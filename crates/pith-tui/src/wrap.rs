//! Word wrapping of styled text into screen lines, with a prefix for the first and later lines
//! (list markers, quote bars, gutters). Words longer than a line are split by character.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthChar;

fn spans_width(spans: &[Span<'_>]) -> usize {
    spans.iter().map(|s| s.width()).sum()
}

/// Wraps `content` to `width` columns. `first` prefixes the first line, `rest` every later one.
/// Always returns at least one line.
pub fn wrap(
    content: &[Span<'_>],
    width: usize,
    first: &[Span<'static>],
    rest: &[Span<'static>],
) -> Vec<Line<'static>> {
    let chars: Vec<(char, Style, usize)> = content
        .iter()
        .flat_map(|s| {
            s.content
                .chars()
                .filter(|c| *c != '\n')
                .map(move |c| (c, s.style, c.width().unwrap_or(0)))
        })
        .collect();
    let mut w = Wrapper {
        out: Vec::new(),
        cur: Vec::new(),
        cur_w: 0,
        first,
        rest,
        width,
    };
    let mut i = 0;
    while i < chars.len() {
        let space = chars[i].0 == ' ';
        let mut j = i;
        while j < chars.len() && (chars[j].0 == ' ') == space {
            j += 1;
        }
        let tok = &chars[i..j];
        let tw: usize = tok.iter().map(|c| c.2).sum();
        let avail = w.avail();
        if space {
            if w.cur.is_empty() && !w.out.is_empty() {
                // drop spaces at the start of a wrapped line
            } else if w.cur_w + tw <= avail {
                w.push_all(tok);
            } else {
                w.flush();
            }
        } else if w.cur_w + tw <= avail {
            w.push_all(tok);
        } else if w.cur_w > 0 && tw <= w.avail_next() {
            w.flush();
            w.push_all(tok);
        } else {
            if w.cur_w > 0 {
                w.flush();
            }
            for &c in tok {
                if w.cur_w + c.2 > w.avail() && w.cur_w > 0 {
                    w.flush();
                }
                w.cur.push(c);
                w.cur_w += c.2;
            }
        }
        i = j;
    }
    if !w.cur.is_empty() || w.out.is_empty() {
        w.flush();
    }
    w.out
}

struct Wrapper<'p> {
    out: Vec<Line<'static>>,
    cur: Vec<(char, Style, usize)>,
    cur_w: usize,
    first: &'p [Span<'static>],
    rest: &'p [Span<'static>],
    width: usize,
}

impl Wrapper<'_> {
    fn prefix(&self) -> &[Span<'static>] {
        if self.out.is_empty() {
            self.first
        } else {
            self.rest
        }
    }
    fn avail(&self) -> usize {
        self.width.saturating_sub(spans_width(self.prefix())).max(1)
    }
    fn avail_next(&self) -> usize {
        self.width.saturating_sub(spans_width(self.rest)).max(1)
    }
    fn push_all(&mut self, tok: &[(char, Style, usize)]) {
        self.cur.extend_from_slice(tok);
        self.cur_w += tok.iter().map(|c| c.2).sum::<usize>();
    }
    fn flush(&mut self) {
        while self.cur.last().is_some_and(|c| c.0 == ' ') {
            self.cur.pop();
        }
        let mut spans: Vec<Span<'static>> = self.prefix().to_vec();
        let mut run = String::new();
        let mut style = None;
        for (c, s, _) in self.cur.drain(..) {
            if style != Some(s) {
                if let Some(st) = style
                    && !run.is_empty()
                {
                    spans.push(Span::styled(std::mem::take(&mut run), st));
                }
                style = Some(s);
            }
            run.push(c);
        }
        if let Some(st) = style
            && !run.is_empty()
        {
            spans.push(Span::styled(run, st));
        }
        self.cur_w = 0;
        self.out.push(Line::from(spans));
    }
}

/// Hard-wraps (by character, no word logic) for code and tool output, keeping every column.
pub fn wrap_chars(
    content: &[Span<'_>],
    width: usize,
    first: &[Span<'static>],
    rest: &[Span<'static>],
) -> Vec<Line<'static>> {
    let mut out: Vec<Line<'static>> = Vec::new();
    let mut spans: Vec<Span<'static>> = first.to_vec();
    let mut avail = width.saturating_sub(spans_width(first)).max(1);
    let mut used = 0;
    for s in content {
        let mut run = String::new();
        for c in s.content.chars() {
            let cw = c.width().unwrap_or(0);
            if used + cw > avail && used > 0 {
                if !run.is_empty() {
                    spans.push(Span::styled(std::mem::take(&mut run), s.style));
                }
                out.push(Line::from(std::mem::take(&mut spans)));
                spans = rest.to_vec();
                avail = width.saturating_sub(spans_width(rest)).max(1);
                used = 0;
            }
            run.push(c);
            used += cw;
        }
        if !run.is_empty() {
            spans.push(Span::styled(run, s.style));
        }
    }
    out.push(Line::from(spans));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(|l| l.to_string()).collect()
    }

    #[test]
    fn wraps_on_words_with_prefixes() {
        let content = [Span::raw("the quick brown fox jumps over the lazy dog")];
        let out = wrap(&content, 16, &[Span::raw("• ")], &[Span::raw("  ")]);
        assert_eq!(
            text(&out),
            [
                "• the quick",
                "  brown fox",
                "  jumps over the",
                "  lazy dog"
            ]
        );
        assert!(out.iter().all(|l| l.width() <= 16));
    }

    #[test]
    fn splits_long_words_and_keeps_styles() {
        let bold = Style::default().add_modifier(ratatui::style::Modifier::BOLD);
        let content = [Span::raw("ab "), Span::styled("cdefghijkl", bold)];
        let out = wrap(&content, 4, &[], &[]);
        assert_eq!(text(&out), ["ab", "cdef", "ghij", "kl"]);
        assert_eq!(out[1].spans[0].style, bold);
    }

    #[test]
    fn empty_and_tiny_widths_do_not_loop() {
        assert_eq!(text(&wrap(&[], 10, &[], &[])), [""]);
        let out = wrap(&[Span::raw("abc")], 0, &[], &[]);
        assert_eq!(text(&out), ["a", "b", "c"]);
        let wide = wrap(&[Span::raw("日本語")], 1, &[], &[]);
        assert_eq!(wide.len(), 3);
    }

    #[test]
    fn char_wrap_keeps_every_column() {
        let out = wrap_chars(
            &[Span::raw("fn main() {}")],
            6,
            &[Span::raw("│ ")],
            &[Span::raw("│ ")],
        );
        assert_eq!(text(&out), ["│ fn m", "│ ain(", "│ ) {}"]);
    }
}
