//! The transcript's window on screen: where it is scrolled to (or that it follows the bottom),
//! whether every cell shows unfolded, and what the last draw laid out (its area, its height,
//! the banner's lines above the conversation).

use ratatui::layout::Rect;

#[derive(Debug, Default)]
pub(crate) struct Viewport {
    /// First line on screen; `None` follows the bottom.
    scroll_top: Option<usize>,
    expand_all: bool,
    /// Set by the view at each draw.
    area: Rect,
    total_lines: usize,
    /// Lines of the banner above the transcript at the last draw.
    banner_lines: usize,
}

impl Viewport {
    /// Where the transcript was drawn last.
    pub(crate) fn area(&self) -> Rect {
        self.area
    }

    /// The transcript's height in lines at the last draw (banner and pending prompts included).
    pub(crate) fn total_lines(&self) -> usize {
        self.total_lines
    }

    pub(crate) fn banner_lines(&self) -> usize {
        self.banner_lines
    }

    pub(crate) fn set_banner_lines(&mut self, n: usize) {
        self.banner_lines = n;
    }

    pub(crate) fn expand_all(&self) -> bool {
        self.expand_all
    }

    pub(crate) fn toggle_expand_all(&mut self) {
        self.expand_all = !self.expand_all;
    }

    /// The first line scrolled to; `None` while following the bottom.
    pub(crate) fn scroll_top(&self) -> Option<usize> {
        self.scroll_top
    }

    /// Follow the bottom again.
    pub(crate) fn follow(&mut self) {
        self.scroll_top = None;
    }

    pub(crate) fn scroll_to_top(&mut self) {
        self.scroll_top = Some(0);
    }

    /// A page: the area's height less two lines of context.
    pub(crate) fn page(&self) -> usize {
        (self.area.height as usize).saturating_sub(2).max(1)
    }

    fn max_top(&self) -> usize {
        self.total_lines.saturating_sub(self.area.height as usize)
    }

    /// The first line on screen.
    pub(crate) fn top_line(&self) -> usize {
        self.scroll_top.unwrap_or(usize::MAX).min(self.max_top())
    }

    /// Lines below the screen's last.
    pub(crate) fn lines_below(&self) -> usize {
        self.total_lines
            .saturating_sub(self.top_line() + self.area.height as usize)
    }

    pub(crate) fn scroll_up(&mut self, n: usize) {
        self.scroll_top = Some(self.top_line().saturating_sub(n));
    }

    pub(crate) fn scroll_down(&mut self, n: usize) {
        if let Some(t) = self.scroll_top {
            let t = t.min(self.max_top()) + n;
            self.scroll_top = if t >= self.max_top() { None } else { Some(t) };
        }
    }

    /// The view laid the transcript out on `area`, `total` lines: a scrolled position past the
    /// bottom follows it again.
    pub(crate) fn laid_out(&mut self, area: Rect, total: usize) {
        self.area = area;
        self.total_lines = total;
        if let Some(t) = self.scroll_top
            && t >= self.max_top()
        {
            self.scroll_top = None;
        }
    }

    /// `lines` were put above what is on screen (older history): a scrolled position stays on
    /// the same text.
    pub(crate) fn lines_added_above(&mut self, lines: usize) {
        if let Some(top) = self.scroll_top {
            self.scroll_top = Some(top + lines);
            self.total_lines += lines;
        }
    }
}
