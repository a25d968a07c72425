//! The transcript as a component: its window on screen (scroll, unfolding, the last draw's
//! layout), the part of a long session's history not loaded yet, the prompts sent but not yet
//! seen back; drawing (the banner, the cells, the pending prompts) and the keys and clicks that
//! move or fold it.

use std::path::Path;

use crossterm::event::KeyEvent;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{Cell, Transcript};
use crate::component::{Component, Handled};
use crate::format::truncate;
use crate::keymap::{Action, Context, Keymap, key_of};
use crate::theme::theme;
use crate::wrap::wrap;
use pith_protocol::message::{Message, PartKind};

/// The banner's height: it heads a session's transcript once its start is loaded.
pub const BANNER_LINES: usize = 9;

/// A prompt sent but not yet seen back from the engine.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingPrompt {
    /// The id sent with `Op::UserTurn`; the stored message carries it back.
    pub id: String,
    pub text: String,
    /// Sent while the agent was working: the engine delivers it mid-turn.
    pub queued: bool,
}

/// A resumed session is shown from its end, a page at a time: scrolling near the top of what is
/// loaded asks the engine for the page before it (`Op::LoadHistory`).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct HistoryPaging {
    /// Older messages remain in the store.
    more: bool,
    /// A page was asked for and has not arrived.
    loading: bool,
    /// The oldest message loaded: the next page ends before it.
    oldest: Option<String>,
    /// A page to ask for, decided at the last draw, not yet taken by `App`.
    wanted: Option<String>,
}

impl HistoryPaging {
    fn new(messages: &[Message], more: bool) -> Self {
        HistoryPaging {
            more,
            loading: false,
            oldest: messages.first().map(|m| m.id.clone()),
            wanted: None,
        }
    }
}

/// What the banner over a session's start shows.
pub(crate) struct Banner<'a> {
    pub model: &'a str,
    pub workspace: &'a Path,
}

impl Transcript {
    /// Once the whole screen is drawn (overlays too, so a row something covers no longer
    /// spells its URL): the notices' URLs on screen become hyperlinks (`hyperlink.rs`).
    pub(crate) fn link_urls(&self, buf: &mut ratatui::buffer::Buffer) {
        let area = self.viewport.area().intersection(buf.area);
        crate::hyperlink::link_urls(buf, area, || self.notice_urls(20));
    }

    /// A session's transcript, shown from its end; `more`: older messages remain in the store.
    pub(crate) fn resumed(messages: &[Message], more: bool) -> Self {
        let mut t = Transcript::new(messages);
        t.paging = HistoryPaging::new(messages, more);
        t
    }

    /// Another session is shown: its messages replace the cells, the pending prompts go, the
    /// window follows its end (unfolding everything stays as it was).
    pub(crate) fn reload(&mut self, messages: &[Message], more: bool) {
        let viewport = std::mem::take(&mut self.viewport);
        *self = Transcript::resumed(messages, more);
        self.viewport = viewport;
        self.viewport.follow();
    }

    /// The transcript's height in lines at the last draw.
    pub fn total_lines(&self) -> usize {
        self.viewport.total_lines()
    }

    /// The first line on screen.
    pub fn top_line(&self) -> usize {
        self.viewport.top_line()
    }

    pub fn scroll_up(&mut self, n: usize) {
        self.viewport.scroll_up(n);
    }

    pub fn scroll_down(&mut self, n: usize) {
        self.viewport.scroll_down(n);
    }

    /// Scrolls to the first line.
    pub fn scroll_to_top(&mut self) {
        self.viewport.scroll_to_top();
    }

    /// Follows the bottom again.
    pub fn follow(&mut self) {
        self.viewport.follow();
    }

    /// The first line scrolled to; `None` while following the bottom.
    pub fn scroll_top(&self) -> Option<usize> {
        self.viewport.scroll_top()
    }

    /// Lines below the screen while scrolled up; `None` while following the bottom.
    pub(crate) fn lines_below(&self) -> Option<usize> {
        self.viewport
            .scroll_top()
            .map(|_| self.viewport.lines_below())
    }

    /// The prompts sent and not yet seen back, oldest first.
    pub fn pending(&self) -> &[PendingPrompt] {
        &self.pending
    }

    pub(crate) fn add_pending(&mut self, prompt: PendingPrompt) {
        self.pending.push(prompt);
    }

    /// The prompt sent as `id` came back (or was refused): it is no longer pending.
    pub(crate) fn drop_pending(&mut self, id: &str) {
        self.pending.retain(|p| p.id != id);
    }

    /// The turn ended: prompts still waiting become the next turn, no longer "queued".
    pub(crate) fn pending_start_next_turn(&mut self) {
        for p in &mut self.pending {
            p.queued = false;
        }
    }

    /// A page of older history arrived: it goes above the cells, and a scrolled window keeps
    /// showing the lines it showed.
    pub(crate) fn older_page(&mut self, messages: &[Message], more: bool) {
        self.paging.loading = false;
        // the start of the session is loaded now: the banner goes above it
        let banner = if self.paging.more && !more {
            BANNER_LINES
        } else {
            0
        };
        self.paging.more = more;
        if let Some(first) = messages.first() {
            self.paging.oldest = Some(first.id.clone());
        }
        let added = self.prepend(messages);
        let width = self.viewport.area().width;
        if added > 0 && self.viewport.scroll_top().is_some() && width > 0 {
            let total = self.layout(width, self.viewport.expand_all());
            let shift = self.offset(added).unwrap_or(total) + banner;
            self.viewport.lines_added_above(shift);
        }
    }

    /// The page of older history the last draw came near, to ask the engine for (the oldest
    /// message loaded, which the page ends before); taken once.
    pub(crate) fn take_history_request(&mut self) -> Option<String> {
        self.paging.wanted.take()
    }

    /// The cells were laid out on `area`, `total` lines: keep a scrolled position valid, and
    /// want older history once the screen is within a screen's height of the oldest line.
    fn laid_out(&mut self, area: Rect, total: usize) {
        self.viewport.laid_out(area, total);
        if self.paging.more
            && !self.paging.loading
            && area.height > 0
            && self.top_line() < area.height as usize
            && let Some(before) = self.paging.oldest.clone()
        {
            self.paging.loading = true;
            self.paging.wanted = Some(before);
        }
    }
}

// ---------------------------------------------------------------- folding

impl Transcript {
    /// A click at (`column`, `row`) of the screen: the cell under it folds or unfolds.
    pub(crate) fn click(&mut self, column: u16, row: u16) {
        let a = self.viewport.area();
        if row >= a.y && row < a.y + a.height && column >= a.x && column < a.x + a.width {
            let line = self.top_line() + (row - a.y) as usize;
            if let Some(i) = line
                .checked_sub(self.viewport.banner_lines())
                .and_then(|l| self.cell_at(l))
            {
                self.toggle_cell(i);
            }
        }
    }

    /// Folds or unfolds a cell; a compaction divider unfolds the summary after it.
    pub fn toggle_cell(&mut self, i: usize) {
        let Some(cell) = self.cells.get(i) else {
            return;
        };
        let is_divider = matches!(cell.part().map(|p| &p.kind), Some(PartKind::Compaction(_)));
        if is_divider {
            let target = (i + 1..self.cells.len()).find(|&j| {
                self.cells[j]
                    .message_id
                    .as_ref()
                    .and_then(|m| self.meta.get(m))
                    .is_some_and(|m| m.summary)
            });
            if let Some(j) = target {
                self.toggle_summary(j);
            }
            // the divider itself unfolds with it: the list of what left the view
            let open = target.map_or(!self.cells[i].expanded, |j| self.cells[j].expanded);
            if self.cells[i].expanded != open {
                self.toggle(i);
            }
            return;
        }
        let meta = self.meta_of(cell);
        if meta.summary {
            return self.toggle_summary(i);
        }
        if cell.foldable(&meta) || is_long_user(cell) || meta.command.is_some() {
            self.toggle(i);
        }
    }

    /// The summary and what pith carried after it are one fold: every cell of the summary
    /// message at `i` opens and closes with it.
    fn toggle_summary(&mut self, i: usize) {
        let Some(mid) = self.cells.get(i).and_then(|c| c.message_id.clone()) else {
            return;
        };
        let open = !self.cells[i].expanded;
        let same: Vec<usize> = (0..self.cells.len())
            .filter(|&j| {
                self.cells[j].message_id.as_ref() == Some(&mid) && self.cells[j].expanded != open
            })
            .collect();
        for j in same {
            self.toggle(j);
        }
    }
}

fn is_long_user(cell: &Cell) -> bool {
    match cell.part().map(|p| &p.kind) {
        Some(PartKind::Text {
            text,
            synthetic: false,
        }) => text.lines().count() > 8,
        Some(PartKind::Text {
            text,
            synthetic: true,
        }) => crate::hook_note::is_long(text),
        _ => false,
    }
}

// ---------------------------------------------------------------- drawing

impl Component for Transcript {
    type Outcome = ();
    type Context<'a> = Banner<'a>;

    /// Paging, the ends and unfolding everything; other keys are not the transcript's.
    fn on_key(&mut self, k: KeyEvent, keymap: &Keymap) -> Handled<()> {
        match keymap.action(Context::Chat, key_of(&k)) {
            Some(Action::PageUp) => self.scroll_up(self.viewport.page()),
            Some(Action::PageDown) => self.scroll_down(self.viewport.page()),
            Some(Action::ScrollTop) => self.viewport.scroll_to_top(),
            Some(Action::ScrollBottom) => self.viewport.follow(),
            Some(Action::ExpandAll) => self.viewport.toggle_expand_all(),
            _ => return Handled::Ignored,
        }
        Handled::Consumed
    }

    /// The banner (once the session's start is loaded), the cells on screen, the prompts not
    /// yet seen back; lays out what changed and highlights the code that came into view.
    fn render(&mut self, frame: &mut Frame, area: Rect, banner: Banner<'_>) {
        if area.height == 0 {
            self.laid_out(area, 0);
            return;
        }
        let width = area.width as usize;
        let h = area.height as usize;
        let pending = pending_lines(&self.pending, width);
        // The banner heads the conversation: it scrolls away with it, it does not vanish.
        let banner = if self.paging.more {
            Vec::new()
        } else {
            welcome(&banner, width)
        };
        let b = banner.len();
        self.viewport.set_banner_lines(b);
        let mut t_total = self.layout(area.width, self.viewport.expand_all());
        self.laid_out(area, b + t_total + pending.len());
        // highlight the code on screen; the heights stay, so this is one pass
        if self.reveal(self.top_line().saturating_sub(b), h) {
            t_total = self.layout(area.width, self.viewport.expand_all());
            self.laid_out(area, b + t_total + pending.len());
        }
        let lines = self.screen_lines(banner, &pending, t_total, h);
        frame.render_widget(Paragraph::new(lines), area);

        if self.paging.loading && self.top_line() == 0 {
            corner_label(frame, area, " ↑ loading older messages… ", area.y);
        }
    }
}

impl Transcript {
    /// The `h` lines on screen from the top line: the banner's, the cells', the pending
    /// prompts' (`t_total`: the cells' height).
    fn screen_lines(
        &self,
        banner: Vec<Line<'static>>,
        pending: &[Line<'static>],
        t_total: usize,
        h: usize,
    ) -> Vec<Line<'static>> {
        let b = banner.len();
        let total = b + t_total + pending.len();
        let top = self.top_line();
        let mut lines: Vec<Line<'static>> = banner.into_iter().skip(top).take(h).collect();
        let t_top = top.saturating_sub(b);
        if lines.len() < h && t_top < t_total {
            lines.extend(self.visible(t_top, (h - lines.len()).min(t_total - t_top)));
        }
        let mut line = top + lines.len();
        while lines.len() < h && line < total {
            if let Some(p) = line.checked_sub(b + t_total).and_then(|i| pending.get(i)) {
                lines.push(p.clone());
            }
            line += 1;
        }
        lines
    }
}

/// Lines for prompts sent but not yet echoed by the engine.
fn pending_lines(pending: &[PendingPrompt], width: usize) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    for p in pending {
        let (mark, style) = if p.queued {
            ("◷ ", Style::default().fg(theme().dim))
        } else {
            (
                "› ",
                Style::default()
                    .fg(theme().user)
                    .add_modifier(Modifier::BOLD),
            )
        };
        let first = [Span::styled(mark, style)];
        let rest = [Span::raw("  ")];
        let text_style = if p.queued {
            Style::default().fg(theme().dim)
        } else {
            Style::default().add_modifier(Modifier::BOLD)
        };
        let mut lines: Vec<Line<'static>> = Vec::new();
        for (i, l) in p.text.split('\n').enumerate() {
            let pre: &[Span<'static>] = if i == 0 { &first } else { &rest };
            lines.extend(wrap(
                &[Span::styled(l.to_string(), text_style)],
                width,
                pre,
                &rest,
            ));
        }
        if lines.len() > 6 {
            let more = lines.len() - 5;
            lines.truncate(5);
            lines.push(Line::from(Span::styled(
                format!("  … +{more} lines"),
                Style::default().fg(theme().dim),
            )));
        }
        if p.queued {
            lines.push(Line::from(Span::styled(
                "  queued · delivered to the agent at its next step",
                Style::default()
                    .fg(theme().dim)
                    .add_modifier(Modifier::ITALIC),
            )));
        }
        out.push(Line::default());
        out.extend(lines);
    }
    out
}

fn welcome(banner: &Banner<'_>, width: usize) -> Vec<Line<'static>> {
    let dim = Style::default().fg(theme().dim);
    let mut lines = vec![
        Line::default(),
        Line::from(vec![
            Span::styled(
                " ✻ pith",
                Style::default()
                    .fg(theme().accent)
                    .add_modifier(Modifier::BOLD),
            ),
            Span::styled(format!(" {}", env!("CARGO_PKG_VERSION")), dim),
        ]),
        Line::from(Span::styled(
            " a coding agent that never runs out of context",
            dim,
        )),
        Line::default(),
        Line::from(vec![
            Span::styled(" model      ", dim),
            Span::raw(banner.model.to_string()),
        ]),
        Line::from(vec![
            Span::styled(" workspace  ", dim),
            Span::raw(banner.workspace.display().to_string()),
        ]),
        Line::default(),
        Line::from(Span::styled(
            " /help for commands and keys · @ attaches a file · ! runs a command",
            dim,
        )),
    ];
    // a blank line between the banner and the conversation under it
    lines.push(Line::default());
    debug_assert_eq!(lines.len(), BANNER_LINES);
    for l in &mut lines {
        let s = l.to_string();
        if crate::format::width(&s) > width {
            *l = Line::from(Span::styled(truncate(&s, width), dim));
        }
    }
    lines
}

/// A one-line label at the right end of row `y` of `area` (dropped when it does not fit).
fn corner_label(frame: &mut Frame, area: Rect, label: &str, y: u16) {
    let w = crate::format::width(label) as u16;
    if w < area.width {
        let r = Rect {
            x: area.x + area.width - w,
            y,
            width: w,
            height: 1,
        };
        frame.render_widget(
            Paragraph::new(Span::styled(
                label.to_string(),
                Style::default().fg(theme().on_accent).bg(theme().muted),
            )),
            r,
        );
    }
}
