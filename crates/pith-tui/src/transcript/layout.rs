//! Laying the transcript out: each cell's wrapped lines are cached (by width, revision and the
//! expand-all switch), offsets give each cell's first line, and only the cells on screen are
//! syntax-highlighted — the others are rendered with their code blocks plain (same height) and
//! highlighted when they scroll into view ([`Transcript::reveal`]).

use ratatui::text::Line;

use super::super::{cells, highlight};
use super::{Cell, Transcript};

pub(super) struct Cached {
    width: u16,
    rev: u64,
    expand_all: bool,
    /// Some code block is still plain: rendering again would highlight it.
    deferred: bool,
    lines: Vec<Line<'static>>,
}

impl Cell {
    /// Lines at the last render (0 for a cell that shows nothing, or was never rendered).
    fn height(&self) -> usize {
        self.cache.as_ref().map_or(0, |c| c.lines.len())
    }

    /// Rendered at this width and expand-all setting (perhaps of an older revision).
    fn rendered_for(&self, width: u16, expand_all: bool) -> bool {
        self.cache
            .as_ref()
            .is_some_and(|c| c.width == width && c.expand_all == expand_all)
    }

    /// Its cached lines are what a render now would give (highlighting aside).
    fn fresh_for(&self, width: u16, expand_all: bool) -> bool {
        self.rendered_for(width, expand_all)
            && self.cache.as_ref().is_some_and(|c| c.rev == self.rev)
    }
}

impl Transcript {
    /// The first line of cell `i` at the last layout.
    pub fn offset(&self, i: usize) -> Option<usize> {
        self.offsets.get(i).copied()
    }

    fn render_cell(&mut self, i: usize, width: u16, expand_all: bool, defer: bool) {
        let meta = self.meta_of(&self.cells[i]);
        let cell = &self.cells[i];
        let render = || cells::render(cell, &meta, width as usize, expand_all);
        let (lines, deferred) = if defer {
            highlight::deferring(render)
        } else {
            (render(), false)
        };
        let cell = &mut self.cells[i];
        cell.cache = Some(Cached {
            width,
            rev: cell.rev,
            expand_all,
            deferred,
            lines,
        });
    }

    /// Re-wraps the cells that changed since the last layout and recomputes offsets.
    /// Returns the total height in lines.
    ///
    /// A cell whose text changed (a streaming answer, a finished tool) is rendered in full: it is
    /// where the user is looking. A cell rendered for the first time or at a new width is rendered
    /// with highlighting deferred — a page of history or a resize would otherwise highlight every
    /// code block it holds — and [`Transcript::reveal`] highlights the ones on screen.
    ///
    /// Cells before the first one that changed since the last layout keep their offsets: while an
    /// answer streams at the end of a long transcript, a frame walks only the last cells.
    pub fn layout(&mut self, width: u16, expand_all: bool) -> usize {
        if width != self.laid_out_width || expand_all != self.laid_out_expand_all {
            self.dirty_from = 0;
        }
        #[cfg(debug_assertions)]
        self.assert_clean_before_dirty(width, expand_all);
        let start = self
            .dirty_from
            .min(self.cells.len())
            .min(self.offsets.len());
        self.offsets.truncate(start);
        // where the cell before `start` ended, and the last cell with lines (for the gap)
        let (mut total, mut prev_visible) = match start.checked_sub(1) {
            None => (0, None),
            Some(last) => (
                self.offsets[last] + self.cells[last].height(),
                (0..start).rev().find(|&j| self.cells[j].height() > 0),
            ),
        };
        for i in start..self.cells.len() {
            let cell = &self.cells[i];
            if !cell.fresh_for(width, expand_all) {
                let defer = !cell.rendered_for(width, expand_all);
                self.renders += 1;
                self.render_cell(i, width, expand_all, defer);
            }
            let h = self.cells[i].height();
            if h > 0 {
                if let Some(p) = prev_visible {
                    total += self.gap_between(&self.cells[p], &self.cells[i]);
                }
                prev_visible = Some(i);
            }
            self.offsets.push(total);
            total += h;
        }
        self.total = total;
        self.laid_out_width = width;
        self.laid_out_expand_all = expand_all;
        self.dirty_from = self.cells.len();
        total
    }

    /// Every cell before `dirty_from` is laid out as it is now: a change that did not mark its
    /// cell would show stale lines (debug builds, so every test checks it).
    #[cfg(debug_assertions)]
    fn assert_clean_before_dirty(&self, width: u16, expand_all: bool) {
        let clean = self
            .dirty_from
            .min(self.cells.len())
            .min(self.offsets.len());
        for (i, c) in self.cells.iter().take(clean).enumerate() {
            assert!(
                c.fresh_for(width, expand_all),
                "cell {i} ({}) changed without marking it",
                c.key
            );
        }
    }

    /// Highlights the code of the cells in lines `[top, top + height)` of the last layout that were
    /// rendered with highlighting deferred. Returns whether a height changed (it should not: the
    /// text is the same), in which case the caller lays out again.
    pub fn reveal(&mut self, top: usize, height: usize) -> bool {
        let end = top + height;
        let start = self.first_cell_from(top);
        let mut moved = false;
        for i in start..self.cells.len() {
            if self.offsets.get(i).is_none_or(|&o| o >= end) {
                break;
            }
            let Some(c) = &self.cells[i].cache else {
                continue;
            };
            if !c.deferred {
                continue;
            }
            let (before, width, expand_all) = (c.lines.len(), c.width, c.expand_all);
            self.reveals += 1;
            self.render_cell(i, width, expand_all, false);
            if self.cells[i].height() != before {
                moved = true;
                self.moved_from(i);
            }
        }
        moved
    }

    pub fn total_height(&self) -> usize {
        self.total
    }

    /// The lines in `[top, top + height)` of the last layout.
    pub fn visible(&self, top: usize, height: usize) -> Vec<Line<'static>> {
        let mut out = Vec::with_capacity(height);
        let end = top + height;
        let start = self.first_cell_from(top);
        let mut line = self.offsets.get(start).copied().unwrap_or(0);
        if line > top {
            line = top;
        }
        for (i, cell) in self.cells.iter().enumerate().skip(start) {
            let off = self.offsets[i];
            if off >= end {
                break;
            }
            // gap lines before this cell
            while line < off && line < end {
                if line >= top {
                    out.push(Line::default());
                }
                line += 1;
            }
            if let Some(c) = &cell.cache {
                for l in &c.lines {
                    if line >= end {
                        break;
                    }
                    if line >= top {
                        out.push(l.clone());
                    }
                    line += 1;
                }
            }
        }
        out
    }

    /// The last cell starting at or before `line` (0 if none): where showing from `line` begins.
    fn first_cell_from(&self, line: usize) -> usize {
        self.offsets
            .partition_point(|&o| o <= line)
            .saturating_sub(1)
    }

    /// The cell shown at absolute line `line` of the last layout.
    pub fn cell_at(&self, line: usize) -> Option<usize> {
        let i = self
            .offsets
            .partition_point(|&o| o <= line)
            .checked_sub(1)?;
        (line < self.offsets[i] + self.cells[i].height()).then_some(i)
    }
}

/// Is cell `c` waiting for its code to be highlighted? (tests)
#[cfg(test)]
pub(super) fn is_deferred(c: &Cell) -> bool {
    c.cache.as_ref().is_some_and(|c| c.deferred)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::NoticeLevel;
    use pith_protocol::message::{Message, PartKind, Role};

    fn answer(i: usize) -> Message {
        let mut m = Message::new("S", Role::Assistant);
        m.push(PartKind::Text {
            text: format!(
                "Step {i}:\n\n```rust\nfn layout_reveal_probe_{i}() -> usize {{\n    {i}\n}}\n```\n"
            ),
            synthetic: false,
        });
        m
    }

    fn text(lines: &[Line<'static>]) -> Vec<String> {
        lines.iter().map(|l| l.to_string()).collect()
    }

    /// History is laid out with its code plain; what is on screen is highlighted before it is
    /// drawn, at the same height; what is off screen waits.
    #[test]
    fn only_cells_on_screen_are_highlighted() {
        let history: Vec<Message> = (0..40).map(answer).collect();
        let mut t = Transcript::new(&history);
        let total = t.layout(80, false);
        assert!(t.cells.iter().all(is_deferred), "nothing highlighted yet");
        let plain_lines = t.visible(0, total);

        let first_shown = 30;
        let top = t.offset(first_shown).expect("laid out");
        let screen = total - top;
        assert!(!t.reveal(top, screen), "heights do not move");
        assert_eq!(t.reveals, 10);
        assert_eq!(t.layout(80, false), total, "revealing changes no height");
        for (i, c) in t.cells.iter().enumerate() {
            assert_eq!(is_deferred(c), i < first_shown, "cell {i}");
        }
        // same text, now in colour: the code line of the last answer has several styles
        let coloured = t.visible(0, total);
        assert_eq!(text(&coloured), text(&plain_lines));
        let code = coloured
            .iter()
            .rev()
            .find(|l| l.to_string().contains("fn layout_reveal_probe_39"))
            .expect("the last code block");
        let styles: std::collections::HashSet<_> = code.spans.iter().map(|s| s.style).collect();
        assert!(styles.len() > 2, "{code:?}");
        // a second reveal of the same lines renders nothing
        t.reveal(top, screen);
        assert_eq!(t.reveals, 10);
    }

    fn turn(i: usize) -> Vec<Message> {
        let mut u = Message::new("S", Role::User);
        u.push(PartKind::Text {
            text: format!("question {i}"),
            synthetic: false,
        });
        let mut a = Message::new("S", Role::Assistant);
        a.push(PartKind::StepStart);
        a.push(PartKind::Reasoning {
            text: format!("thinking {i}"),
            signature: None,
            redacted: None,
        });
        for k in 0..2 {
            a.push(PartKind::Tool {
                call_id: format!("call-{i}-{k}"),
                tool: "bash".into(),
                input: serde_json::json!({ "command": format!("ls {k}") }),
                state: pith_protocol::message::ToolState::Pending,
            });
        }
        a.push(PartKind::Text {
            text: format!("answer {i}\n\nwith a second paragraph"),
            synthetic: false,
        });
        vec![u, a]
    }

    /// Offsets and total of a layout that starts from scratch.
    fn full(t: &mut Transcript) -> (usize, Vec<usize>) {
        t.dirty_from = 0;
        let total = t.layout(60, false);
        (total, t.offsets.clone())
    }

    /// A layout that starts at the first changed cell gives the offsets a full one gives, whatever
    /// changed: the last text, an early cell's height, a cell put in or taken out in the middle,
    /// a page in front, a notice at the end.
    #[test]
    fn incremental_layout_matches_a_full_one() {
        let history: Vec<Message> = (0..6).flat_map(turn).collect();
        let mut t = Transcript::new(&history);
        t.layout(60, false);
        let last = history.last().expect("a message");
        let (mid, pid) = (last.id.clone(), last.parts[4].id.clone());
        let early = history[1].clone();
        let mut with_error = early.clone();
        with_error.error = Some("boom".into());
        let older: Vec<Message> = (100..103).flat_map(turn).collect();

        type Change<'a> = Box<dyn Fn(&mut Transcript) + 'a>;
        let changes: Vec<(&str, Change)> = vec![
            (
                "delta",
                Box::new(|t| t.append_delta(&mid, &pid, " more\n\nand more", false)),
            ),
            (
                "tool finished",
                Box::new(|t| t.tool_finished("call-1-0", 1200)),
            ),
            ("toggle early", Box::new(|t| t.toggle(2))),
            (
                "error inserted",
                Box::new(|t| t.upsert_message(&with_error)),
            ),
            ("error removed", Box::new(|t| t.upsert_message(&early))),
            (
                "page in front",
                Box::new(|t| {
                    t.prepend(&older);
                }),
            ),
            ("notice", Box::new(|t| t.notice(NoticeLevel::Info, "hello"))),
            ("nothing", Box::new(|_| {})),
        ];
        for (what, change) in changes {
            change(&mut t);
            let total = t.layout(60, false);
            let offsets = t.offsets.clone();
            assert_eq!((total, offsets), full(&mut t), "after: {what}");
        }
    }

    /// A cell whose text changes (streaming) is highlighted as it is laid out: one render a frame.
    #[test]
    fn a_changing_cell_is_highlighted_at_once() {
        let mut t = Transcript::new(&[answer(100)]);
        t.layout(80, false);
        let (mid, pid) = {
            let p = t.cells[0].part().expect("a part");
            (p.message_id.clone(), p.id.clone())
        };
        t.append_delta(&mid, &pid, "\n```rust\nlet streamed_probe = 1;\n", false);
        let renders = t.renders;
        t.layout(80, false);
        assert_eq!(t.renders, renders + 1);
        assert!(!is_deferred(&t.cells[0]));
    }
}
