//! Markdown to wrapped terminal lines (pulldown-cmark). Works on partial text while it streams:
//! an unclosed fence is a code block to the end, unclosed emphasis shows literally.

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::format::sanitize;
use super::highlight;
use super::theme::theme;
use super::wrap::{wrap, wrap_chars};

enum Ctx {
    Quote,
    List { next: Option<u64> },
    Item { marker: String, used: bool },
}

struct Table {
    rows: Vec<Vec<Vec<Span<'static>>>>,
    header_rows: usize,
}

struct Renderer {
    width: usize,
    base: Style,
    out: Vec<Line<'static>>,
    cur: Vec<Span<'static>>,
    styles: Vec<Style>,
    ctx: Vec<Ctx>,
    need_blank: bool,
    code: Option<(String, String)>,
    link: Option<String>,
    link_text: String,
    table: Option<Table>,
}

/// Renders `md` into lines at most `width` columns wide, in `base` style.
pub fn render(md: &str, width: usize, base: Style) -> Vec<Line<'static>> {
    let md = sanitize(md);
    let opts = Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TABLES | Options::ENABLE_TASKLISTS;
    let mut r = Renderer {
        width: width.max(1),
        base,
        out: Vec::new(),
        cur: Vec::new(),
        styles: vec![base],
        ctx: Vec::new(),
        need_blank: false,
        code: None,
        link: None,
        link_text: String::new(),
        table: None,
    };
    for ev in Parser::new_ext(&md, opts) {
        r.event(ev);
    }
    if let Some((lang, code)) = r.code.take() {
        r.code_block(&lang, &code);
    }
    r.flush();
    r.out
}

impl Renderer {
    fn style(&self) -> Style {
        *self.styles.last().unwrap_or(&self.base)
    }

    fn push_style(&mut self, f: impl FnOnce(Style) -> Style) {
        let s = f(self.style());
        self.styles.push(s);
    }

    fn pop_style(&mut self) {
        if self.styles.len() > 1 {
            self.styles.pop();
        }
    }

    /// Prefixes for the next flushed block: (first line, later lines).
    fn prefixes(&self) -> (Vec<Span<'static>>, Vec<Span<'static>>) {
        let mut first = Vec::new();
        let mut rest = Vec::new();
        let dim = Style::default().fg(theme().dim);
        for c in &self.ctx {
            match c {
                Ctx::Quote => {
                    first.push(Span::styled("│ ", Style::default().fg(theme().quote)));
                    rest.push(Span::styled("│ ", Style::default().fg(theme().quote)));
                }
                Ctx::List { .. } => {}
                Ctx::Item { marker, used } => {
                    let pad = " ".repeat(super::format::width(marker));
                    if *used {
                        first.push(Span::raw(pad.clone()));
                    } else {
                        first.push(Span::styled(marker.clone(), dim));
                    }
                    rest.push(Span::raw(pad));
                }
            }
        }
        (first, rest)
    }

    fn mark_items_used(&mut self) {
        for c in &mut self.ctx {
            if let Ctx::Item { used, .. } = c {
                *used = true;
            }
        }
    }

    fn blank_if_needed(&mut self) {
        if self.need_blank && !self.out.is_empty() {
            let (_, rest) = self.prefixes();
            let quote_only: Vec<Span<'static>> = rest
                .into_iter()
                .filter(|s| s.content.trim() == "│")
                .collect();
            self.out.push(Line::from(quote_only));
        }
        self.need_blank = false;
    }

    /// Emits the pending inline content as a wrapped block.
    fn flush(&mut self) {
        if self.cur.is_empty() {
            return;
        }
        self.blank_if_needed();
        let (first, rest) = self.prefixes();
        let spans = std::mem::take(&mut self.cur);
        self.out.extend(wrap(&spans, self.width, &first, &rest));
        self.mark_items_used();
    }

    fn text(&mut self, t: &str) {
        if let Some(table) = &mut self.table {
            if let Some(row) = table.rows.last_mut()
                && let Some(cell) = row.last_mut()
            {
                cell.push(Span::styled(
                    t.to_string(),
                    *self.styles.last().unwrap_or(&self.base),
                ));
            }
            return;
        }
        if self.link.is_some() {
            self.link_text.push_str(t);
        }
        let st = self.style();
        self.cur.push(Span::styled(t.to_string(), st));
    }

    fn code_block(&mut self, lang: &str, code: &str) {
        self.flush();
        self.blank_if_needed();
        let (first, rest) = self.prefixes();
        let gutter = Span::styled("▏ ", Style::default().fg(theme().dim));
        let mut p_first = first;
        p_first.push(gutter.clone());
        let mut p_rest = rest;
        p_rest.push(gutter);
        let lines = highlight::highlight(code, lang);
        for (i, spans) in lines.iter().enumerate() {
            let first = if i == 0 { &p_first } else { &p_rest };
            self.out
                .extend(wrap_chars(spans, self.width, first, &p_rest));
        }
        if lines.is_empty() {
            self.out.push(Line::from(p_first));
        }
        self.mark_items_used();
        self.need_blank = true;
    }

    fn table_done(&mut self, table: Table) {
        self.flush();
        self.blank_if_needed();
        let (first, rest) = self.prefixes();
        let ncols = table.rows.iter().map(Vec::len).max().unwrap_or(0);
        if ncols == 0 {
            return;
        }
        let widths: Vec<usize> = (0..ncols)
            .map(|c| {
                table
                    .rows
                    .iter()
                    .filter_map(|r| r.get(c))
                    .map(|cell| cell.iter().map(|s| s.width()).sum::<usize>())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let prefix_w: usize = rest.iter().map(|s| s.width()).sum();
        let total: usize = widths.iter().sum::<usize>() + 3 * (ncols - 1) + prefix_w;
        let sep = Style::default().fg(theme().dim);
        for (ri, row) in table.rows.iter().enumerate() {
            let mut spans: Vec<Span<'static>> = Vec::new();
            for (ci, cell) in row.iter().enumerate() {
                if ci > 0 {
                    spans.push(Span::styled(" │ ", sep));
                }
                let w: usize = cell.iter().map(|s| s.width()).sum();
                spans.extend(cell.iter().cloned().map(|s| {
                    if ri < table.header_rows {
                        s.patch_style(Style::default().add_modifier(Modifier::BOLD))
                    } else {
                        s
                    }
                }));
                if total <= self.width && ci + 1 < row.len() {
                    spans.push(Span::raw(" ".repeat(widths[ci].saturating_sub(w))));
                }
            }
            let p = if ri == 0 { &first } else { &rest };
            self.out.extend(wrap(&spans, self.width, p, &rest));
            if ri + 1 == table.header_rows && total <= self.width {
                let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
                let mut line = rest.clone();
                line.push(Span::styled(rule.join("─┼─"), sep));
                self.out.push(Line::from(line));
            }
        }
        self.mark_items_used();
        self.need_blank = true;
    }

    fn event(&mut self, ev: Event<'_>) {
        if let Some((_, buf)) = &mut self.code {
            match ev {
                Event::Text(t) => buf.push_str(&t),
                Event::End(TagEnd::CodeBlock) => {
                    if let Some((lang, code)) = self.code.take() {
                        self.code_block(&lang, &code);
                    }
                }
                _ => {}
            }
            return;
        }
        match ev {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(t) => self.text(&t),
            Event::Code(c) => {
                let st = self.style().fg(theme().code);
                if let Some(table) = &mut self.table {
                    if let Some(cell) = table.rows.last_mut().and_then(|r| r.last_mut()) {
                        cell.push(Span::styled(c.to_string(), st));
                    }
                } else {
                    self.cur.push(Span::styled(c.to_string(), st));
                }
            }
            Event::InlineMath(m) | Event::DisplayMath(m) => self.text(&m),
            Event::Html(h) | Event::InlineHtml(h) => {
                let st = self.style().add_modifier(Modifier::DIM);
                for (i, l) in h.lines().enumerate() {
                    if i > 0 {
                        self.flush();
                    }
                    self.cur.push(Span::styled(l.to_string(), st));
                }
            }
            Event::FootnoteReference(f) => self.text(&format!("[{f}]")),
            Event::SoftBreak => self.text(" "),
            Event::HardBreak => {
                self.flush();
            }
            Event::Rule => {
                self.flush();
                self.blank_if_needed();
                let (first, _) = self.prefixes();
                let pw: usize = first.iter().map(|s| s.width()).sum();
                let mut line = first;
                line.push(Span::styled(
                    "─".repeat(self.width.saturating_sub(pw).min(80)),
                    Style::default().fg(theme().dim),
                ));
                self.out.push(Line::from(line));
                self.need_blank = true;
            }
            Event::TaskListMarker(done) => {
                let st = if done {
                    Style::default().fg(theme().ok)
                } else {
                    Style::default().fg(theme().dim)
                };
                self.cur
                    .push(Span::styled(if done { "[x] " } else { "[ ] " }, st));
            }
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph => {}
            Tag::Heading { level, .. } => self.start_heading(level),
            Tag::BlockQuote(_) => {
                self.flush();
                // the blank line before a quote belongs outside it (no bar of its own)
                self.blank_if_needed();
                self.ctx.push(Ctx::Quote);
                self.push_style(|s| s.add_modifier(Modifier::ITALIC));
            }
            Tag::CodeBlock(kind) => self.start_code_block(kind),
            Tag::HtmlBlock => self.flush(),
            Tag::List(start) => {
                self.flush();
                if !self.ctx.iter().any(|c| matches!(c, Ctx::Item { .. })) {
                    self.blank_if_needed();
                }
                self.ctx.push(Ctx::List { next: start });
            }
            Tag::Item => self.start_item(),
            Tag::FootnoteDefinition(name) => {
                self.flush();
                self.text(&format!("[{name}]: "));
            }
            Tag::DefinitionList | Tag::DefinitionListTitle | Tag::DefinitionListDefinition => {
                self.flush()
            }
            Tag::Table(_) => {
                self.flush();
                self.table = Some(Table {
                    rows: Vec::new(),
                    header_rows: 0,
                });
            }
            Tag::TableHead | Tag::TableRow => {
                if let Some(t) = &mut self.table {
                    t.rows.push(Vec::new());
                }
            }
            Tag::TableCell => {
                if let Some(t) = &mut self.table
                    && let Some(r) = t.rows.last_mut()
                {
                    r.push(Vec::new());
                }
            }
            Tag::Emphasis => self.push_style(|s| s.add_modifier(Modifier::ITALIC)),
            Tag::Strong => self.push_style(|s| s.add_modifier(Modifier::BOLD)),
            Tag::Strikethrough => self.push_style(|s| s.add_modifier(Modifier::CROSSED_OUT)),
            Tag::Superscript | Tag::Subscript => self.push_style(|s| s),
            Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. } => {
                self.link = Some(dest_url.to_string());
                self.link_text.clear();
                self.push_style(|s| s.fg(theme().link).add_modifier(Modifier::UNDERLINED));
            }
            Tag::MetadataBlock(_) => {}
        }
    }

    fn start_heading(&mut self, level: HeadingLevel) {
        self.flush();
        self.need_blank = !self.out.is_empty();
        let color = match level {
            HeadingLevel::H1 => theme().heading1,
            HeadingLevel::H2 => theme().heading2,
            _ => theme().heading3,
        };
        self.push_style(|s| s.fg(color).add_modifier(Modifier::BOLD));
        if level == HeadingLevel::H1 {
            self.push_style(|s| s.add_modifier(Modifier::UNDERLINED));
        }
    }

    /// A code block opens: its text gathers until it ends, with the fence's language.
    fn start_code_block(&mut self, kind: CodeBlockKind<'_>) {
        self.flush();
        let lang = match kind {
            CodeBlockKind::Fenced(info) => {
                info.split([' ', ',', '{']).next().unwrap_or("").to_string()
            }
            CodeBlockKind::Indented => String::new(),
        };
        self.code = Some((lang, String::new()));
    }

    /// A list item opens: its marker is the list's next number, or a bullet by depth.
    fn start_item(&mut self) {
        self.flush();
        let marker = match self.ctx.iter_mut().rev().find_map(|c| match c {
            Ctx::List { next } => Some(next),
            _ => None,
        }) {
            Some(Some(n)) => {
                let m = format!("{n}. ");
                *n += 1;
                m
            }
            _ => {
                let depth = self
                    .ctx
                    .iter()
                    .filter(|c| matches!(c, Ctx::List { .. }))
                    .count();
                if depth % 2 == 1 { "• " } else { "◦ " }.to_string()
            }
        };
        self.ctx.push(Ctx::Item {
            marker,
            used: false,
        });
        self.need_blank = false;
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph => {
                self.flush();
                self.need_blank = true;
            }
            TagEnd::Heading(level) => {
                self.flush();
                self.pop_style();
                if level == HeadingLevel::H1 {
                    self.pop_style();
                }
                self.need_blank = true;
            }
            TagEnd::BlockQuote(_) => {
                self.flush();
                self.pop_style();
                if let Some(pos) = self.ctx.iter().rposition(|c| matches!(c, Ctx::Quote)) {
                    self.ctx.truncate(pos);
                }
                self.need_blank = true;
            }
            TagEnd::CodeBlock => {}
            TagEnd::HtmlBlock => {
                self.flush();
                self.need_blank = true;
            }
            TagEnd::List(_) => {
                self.flush();
                if let Some(pos) = self.ctx.iter().rposition(|c| matches!(c, Ctx::List { .. })) {
                    self.ctx.truncate(pos);
                }
                self.need_blank = !self.ctx.iter().any(|c| matches!(c, Ctx::Item { .. }));
            }
            TagEnd::Item => {
                self.flush();
                if let Some(pos) = self.ctx.iter().rposition(|c| matches!(c, Ctx::Item { .. })) {
                    self.ctx.truncate(pos);
                }
                self.need_blank = false;
            }
            TagEnd::FootnoteDefinition
            | TagEnd::DefinitionList
            | TagEnd::DefinitionListTitle
            | TagEnd::DefinitionListDefinition => {
                self.flush();
                self.need_blank = true;
            }
            TagEnd::Table => {
                if let Some(t) = self.table.take() {
                    self.table_done(t);
                }
            }
            TagEnd::TableHead => {
                if let Some(t) = &mut self.table {
                    t.header_rows = t.rows.len();
                }
            }
            TagEnd::TableRow | TagEnd::TableCell => {}
            TagEnd::Emphasis
            | TagEnd::Strong
            | TagEnd::Strikethrough
            | TagEnd::Superscript
            | TagEnd::Subscript => self.pop_style(),
            TagEnd::Link | TagEnd::Image => {
                self.pop_style();
                if let Some(url) = self.link.take()
                    && !url.is_empty()
                    && url != self.link_text
                    && !url.starts_with('#')
                {
                    let st = Style::default().fg(theme().dim);
                    self.cur.push(Span::styled(format!(" ({url})"), st));
                }
            }
            TagEnd::MetadataBlock(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(md: &str, width: usize) -> Vec<String> {
        render(md, width, Style::default())
            .iter()
            .map(|l| l.to_string().trim_end().to_string())
            .collect()
    }

    #[test]
    fn paragraphs_headings_lists() {
        let out = plain(
            "# Title\n\nSome *text* here.\n\n- one\n- two\n  - nested\n\n1. first\n2. second",
            40,
        );
        assert_eq!(
            out,
            [
                "Title",
                "",
                "Some text here.",
                "",
                "• one",
                "• two",
                "  ◦ nested",
                "",
                "1. first",
                "2. second"
            ]
        );
    }

    #[test]
    fn code_block_has_gutter_and_colour() {
        let lines = render(
            "Look:\n\n```rust\nfn main() {}\n```\nafter",
            40,
            Style::default(),
        );
        let text: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        assert_eq!(text, ["Look:", "", "▏ fn main() {}", "", "after"]);
        assert!(lines[2].spans.len() > 2, "highlighted into several spans");
    }

    #[test]
    fn unclosed_fence_while_streaming() {
        let out = plain("```python\nprint('hi')\nx = ", 40);
        assert_eq!(out, ["▏ print('hi')", "▏ x ="]);
    }

    #[test]
    fn quote_link_table_and_wrapping() {
        let out = plain("> quoted words that wrap around", 16);
        assert_eq!(out, ["│ quoted words", "│ that wrap", "│ around"]);
        let out = plain("before\n\n> quoted\n\nafter", 40);
        assert_eq!(
            out,
            ["before", "", "│ quoted", "", "after"],
            "no bar on the blank line"
        );
        let out = plain("> outer\n>\n> > inner", 40);
        assert_eq!(
            out,
            ["│ outer", "│", "│ │ inner"],
            "a nested quote keeps the outer bar"
        );
        let out = plain("see [docs](https://x.y)", 80);
        assert_eq!(out, ["see docs (https://x.y)"]);
        let out = plain("| a | bb |\n|---|---|\n| 1 | 2 |", 40);
        assert_eq!(out, ["a │ bb", "──┼───", "1 │ 2"]);
    }

    #[test]
    fn every_line_fits() {
        let md = "A very long paragraph with `inline code` and **bold** words, repeated. "
            .repeat(20)
            + "\n\n```\n"
            + &"x".repeat(300)
            + "\n```\n";
        for w in [4, 5, 20, 80] {
            for l in render(&md, w, Style::default()) {
                assert!(l.width() <= w, "width {w}: {l}");
            }
        }
        // narrower than a gutter: no panic, no endless loop
        assert!(!render(&md, 1, Style::default()).is_empty());
    }
}
