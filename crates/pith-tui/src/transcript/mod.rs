//! The transcript model: a flat list of cells (one per message part, plus notices), kept in
//! message order, each with a cache of its wrapped lines so only changed cells re-layout. Here:
//! the cell store (the index, inserting, updating and removing cells, notices); the cells
//! themselves are in `cell`, tool calls in `tools`, compaction dividers in `compaction`.

use std::collections::{HashMap, VecDeque};

use pith_protocol::event::{PermissionReply, PermissionRequest};
use pith_protocol::message::{Message, MessageError, Part, PartKind, Role};

mod cell;
mod compaction;
mod layout;
mod tools;
mod window;

pub use cell::{Cell, CellBody, CompactionState, CompactionStats, MsgMeta, NoticeLevel};
pub(crate) use window::Banner;
pub use window::{BANNER_LINES, PendingPrompt};

#[derive(Default)]
pub struct Transcript {
    /// A deque: older pages of history go in at the front without moving every cell.
    cells: VecDeque<Cell>,
    /// Cell key → sequence number; a cell's position is its number minus `base`, so a page
    /// put in front numbers its own cells only.
    index: HashMap<String, i64>,
    base: i64,
    meta: HashMap<String, MsgMeta>,
    notice_seq: u64,
    /// How many cell renders layout has done (cache misses); for tests and tracing.
    renders: u64,
    /// How many cells were rendered again to highlight their code as they came into view.
    reveals: u64,
    /// Cells created from now on are live (set after loading history).
    live: bool,
    /// A compaction is running: a divider created now shows as running.
    compacting: bool,
    /// Total wrapped height at the last layout and the first line of each cell.
    offsets: Vec<usize>,
    total: usize,
    laid_out_width: u16,
    laid_out_expand_all: bool,
    /// Cells from this index on changed (or moved) since the last layout; the ones before it
    /// keep their offsets, so a frame lays out only what changed.
    dirty_from: usize,
    /// The window on screen: scroll position, unfolding, the last draw's layout.
    viewport: crate::viewport::Viewport,
    /// The part of a long session's history not loaded yet.
    paging: window::HistoryPaging,
    /// Prompts sent but not yet seen back from the engine, drawn under the cells.
    pending: Vec<PendingPrompt>,
}

/// Lines between cells: none between consecutive tool cells, one otherwise.
fn gap(prev: &Cell, next: &Cell) -> usize {
    let is_tool = |c: &Cell| {
        matches!(
            c.part().map(|p| &p.kind),
            Some(PartKind::Tool { .. } | PartKind::Reasoning { .. })
        )
    };
    if is_tool(prev) && is_tool(next) { 0 } else { 1 }
}

impl Transcript {
    /// Lines between two cells: [`gap`], and none between a user's prompt and what it attached
    /// (or ran), which belong to it.
    fn gap_between(&self, prev: &Cell, next: &Cell) -> usize {
        let users_own = next.message_id.is_some()
            && prev.message_id == next.message_id
            && matches!(next.part().map(|p| &p.kind), Some(PartKind::Tool { .. }))
            && self.meta_of(next).role == Some(Role::User);
        if users_own { 0 } else { gap(prev, next) }
    }
}

impl Transcript {
    pub fn new(messages: &[Message]) -> Self {
        let mut t = Transcript::default();
        for m in messages {
            t.upsert_message(m);
        }
        t.live = true;
        t
    }

    /// The cells, in order.
    pub fn cells(&self) -> &VecDeque<Cell> {
        &self.cells
    }

    /// How many cell renders layout has done (cache misses).
    pub fn renders(&self) -> u64 {
        self.renders
    }

    /// How many cells were rendered again to highlight their code as they came into view.
    pub fn reveals(&self) -> u64 {
        self.reveals
    }

    pub fn len(&self) -> usize {
        self.cells.len()
    }

    pub fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }

    fn reindex(&mut self) {
        self.index.clear();
        self.base = 0;
        for (i, c) in self.cells.iter().enumerate() {
            self.index.insert(c.key.clone(), i as i64);
        }
    }

    /// Cell `i` changed: its cached lines are stale, and the offsets from it on.
    fn touch_at(&mut self, i: usize) {
        self.cells[i].rev += 1;
        self.moved_from(i);
    }

    /// Every cell renders again (the colours changed).
    pub fn restyle(&mut self) {
        for c in &mut self.cells {
            c.rev += 1;
        }
        self.moved_from(0);
    }

    /// Cells from `i` on may sit at other lines (one was inserted or removed there).
    fn moved_from(&mut self, i: usize) {
        self.dirty_from = self.dirty_from.min(i);
    }

    /// Where the cell with `key` is.
    fn position(&self, key: &str) -> Option<usize> {
        self.index.get(key).map(|&seq| (seq - self.base) as usize)
    }

    fn insert_at(&mut self, pos: usize, mut cell: Cell) -> usize {
        cell.live = self.live;
        if self.compacting
            && self.live
            && matches!(cell.part().map(|p| &p.kind), Some(PartKind::Compaction(_)))
        {
            cell.compaction = CompactionState::Running;
        }
        if pos >= self.cells.len() {
            let seq = self.base + self.cells.len() as i64;
            self.index.insert(cell.key.clone(), seq);
            self.cells.push_back(cell);
            self.moved_from(self.cells.len() - 1);
            self.cells.len() - 1
        } else {
            self.cells.insert(pos, cell);
            self.reindex();
            self.moved_from(pos);
            pos
        }
    }

    /// Where a new part of `message_id` goes: after the message's last part (before its error).
    fn part_position(&self, message_id: &str) -> usize {
        if !self.meta.contains_key(message_id) {
            return self.cells.len();
        }
        for (i, c) in self.cells.iter().enumerate().rev() {
            if c.message_id.as_deref() == Some(message_id)
                && !matches!(c.body, CellBody::MessageError(_))
            {
                return i + 1;
            }
        }
        // the message has no parts yet: after its error cell if any, else at the end
        self.cells
            .iter()
            .position(|c| c.message_id.as_deref() == Some(message_id))
            .unwrap_or(self.cells.len())
    }

    pub fn meta_of(&self, cell: &Cell) -> MsgMeta {
        cell.message_id
            .as_ref()
            .and_then(|m| self.meta.get(m))
            .cloned()
            .unwrap_or_default()
    }

    /// Older messages (a page of history) go before every cell; returns how many cells that
    /// added. Messages already shown are skipped; cached layouts of the others are kept.
    pub fn prepend(&mut self, messages: &[Message]) -> usize {
        let fresh: Vec<Message> = messages
            .iter()
            .filter(|m| !self.meta.contains_key(&m.id))
            .cloned()
            .collect();
        let older = Transcript::new(&fresh);
        let added = older.cells.len();
        self.meta.extend(older.meta);
        self.base -= added as i64;
        for (i, cell) in older.cells.into_iter().enumerate().rev() {
            self.index.insert(cell.key.clone(), self.base + i as i64);
            self.cells.push_front(cell);
        }
        if added > 0 {
            self.moved_from(0);
        }
        added
    }

    /// A message was created or its header changed.
    pub fn upsert_message(&mut self, m: &Message) {
        let meta = MsgMeta {
            role: Some(m.role),
            summary: m.summary,
            mid_turn: m.mid_turn,
            command: m.command.clone(),
        };
        // A message not seen before has no cells yet (a part cell is only created after its
        // message's meta entry): nothing to touch, and its parts go at the end. Skipping the
        // scans keeps loading a long history linear (resume).
        let previous = self.meta.insert(m.id.clone(), meta.clone());
        let is_new = previous.is_none();
        if !is_new && previous != Some(meta) {
            for i in 0..self.cells.len() {
                if self.cells[i].message_id.as_deref() == Some(m.id.as_str()) {
                    self.touch_at(i);
                }
            }
        }
        for p in &m.parts {
            if is_new && !self.index.contains_key(&p.id) {
                let pos = self.cells.len();
                self.insert_at(
                    pos,
                    Cell::new(p.id.clone(), Some(m.id.clone()), CellBody::Part(p.clone())),
                );
            } else {
                self.upsert_part(p.clone());
            }
        }
        let err_key = format!("err:{}", m.id);
        match (&m.error, self.position(&err_key)) {
            (Some(e), Some(i)) => {
                if self.cells[i].body != CellBody::MessageError(e.clone()) {
                    self.cells[i].body = CellBody::MessageError(e.clone());
                    self.touch_at(i);
                }
            }
            (Some(e), None) => {
                let pos = self.part_position(&m.id);
                self.insert_at(
                    pos,
                    Cell::new(
                        err_key,
                        Some(m.id.clone()),
                        CellBody::MessageError(e.clone()),
                    ),
                );
            }
            (None, Some(i)) => {
                self.cells.remove(i);
                self.reindex();
                self.moved_from(i);
            }
            (None, None) => {}
        }
    }

    /// A part was created or replaced.
    pub fn upsert_part(&mut self, part: Part) {
        if let Some(i) = self.position(&part.id) {
            let cell = &mut self.cells[i];
            if cell.part() != Some(&part) {
                cell.body = CellBody::Part(part);
                self.touch_at(i);
            }
            return;
        }
        let mid = part.message_id.clone();
        let pos = self.part_position(&mid);
        self.meta.entry(mid.clone()).or_default();
        self.insert_at(
            pos,
            Cell::new(part.id.clone(), Some(mid), CellBody::Part(part)),
        );
    }

    /// Streamed text for a text or reasoning part; creates the part on first delta.
    pub fn append_delta(&mut self, message_id: &str, part_id: &str, delta: &str, reasoning: bool) {
        if let Some(i) = self.position(part_id) {
            if let CellBody::Part(p) = &mut self.cells[i].body {
                match &mut p.kind {
                    PartKind::Text { text, .. } | PartKind::Reasoning { text, .. } => {
                        text.push_str(delta)
                    }
                    _ => {}
                }
                self.touch_at(i);
            }
            return;
        }
        let kind = if reasoning {
            PartKind::Reasoning {
                text: delta.to_string(),
                signature: None,
                redacted: None,
            }
        } else {
            PartKind::Text {
                text: delta.to_string(),
                synthetic: false,
            }
        };
        self.upsert_part(Part {
            id: part_id.to_string(),
            message_id: message_id.to_string(),
            kind,
        });
    }

    /// The newest cell satisfying `f`.
    fn last_where(&self, f: impl Fn(&Cell) -> bool) -> Option<usize> {
        self.cells.iter().rposition(f)
    }

    /// Removes every cell of a message (a step tried again, a turn taken back).
    pub fn remove_message(&mut self, message_id: &str) {
        self.remove_where(|c| c.message_id.as_deref() == Some(message_id));
        self.meta.remove(message_id);
    }

    /// Removes the cells of these parts.
    pub fn remove_parts(&mut self, part_ids: &[String]) {
        self.remove_where(|c| part_ids.contains(&c.key));
    }

    /// Removes every cell from the first one of message `message_id` (or of a newer message) on,
    /// with the notices among them: what `/undo` took back. Ids sort in creation order.
    pub fn truncate_from(&mut self, message_id: &str) {
        let Some(first) = self.cells.iter().position(|c| {
            c.message_id
                .as_deref()
                .is_some_and(|m| m >= message_id && self.meta.contains_key(m))
        }) else {
            return;
        };
        let gone: Vec<String> = self
            .cells
            .iter()
            .skip(first)
            .filter_map(|c| c.message_id.clone())
            .collect();
        self.cells.truncate(first);
        for m in gone {
            self.meta.remove(&m);
        }
        self.reindex();
        self.moved_from(first);
    }

    fn remove_where(&mut self, f: impl Fn(&Cell) -> bool) {
        let Some(first) = self.cells.iter().position(&f) else {
            return;
        };
        self.cells.retain(|c| !f(c));
        self.reindex();
        self.moved_from(first);
    }

    /// Does the transcript already end with the "interrupted" mark of a message?
    pub fn ends_interrupted(&self) -> bool {
        self.cells
            .iter()
            .rev()
            .find(|c| !matches!(c.body, CellBody::Notice(..)))
            .is_some_and(|c| matches!(c.body, CellBody::MessageError(MessageError::Interrupted)))
    }

    /// Whether the latest message is `message_id`, showing the error its step failed with (the
    /// same error as a notice would say it twice).
    pub fn ends_with_failed_step(&self, message_id: &str) -> bool {
        self.cells
            .iter()
            .rev()
            .find(|c| !matches!(c.body, CellBody::Notice(..)))
            .is_some_and(|c| {
                c.message_id.as_deref() == Some(message_id)
                    && matches!(&c.body, CellBody::MessageError(MessageError::Failed(_)))
            })
    }

    /// The web addresses notices showed on lines of their own (a sign-in URL), newest first,
    /// at most `max`.
    pub fn notice_urls(&self, max: usize) -> Vec<String> {
        self.cells
            .iter()
            .rev()
            .filter_map(|cell| match &cell.body {
                CellBody::Notice(_, text) => Some(text),
                _ => None,
            })
            .flat_map(|text| {
                text.lines()
                    .rev()
                    .filter(|l| crate::cell_text::is_bare_url(l))
                    .map(|l| l.trim_end().to_string())
            })
            .take(max)
            .collect()
    }

    pub fn notice(&mut self, level: NoticeLevel, text: impl Into<String>) {
        self.notice_seq += 1;
        let key = format!("notice:{}", self.notice_seq);
        let pos = self.cells.len();
        self.insert_at(
            pos,
            Cell::new(key, None, CellBody::Notice(level, text.into())),
        );
    }

    pub fn permission(
        &mut self,
        req: PermissionRequest,
        reply: PermissionReply,
        note: Option<String>,
    ) {
        // shown on the tool's own cell when it is there (its output carries any note)
        if let Some(i) = self.tool_cell(&req.call_id) {
            self.cells[i].decision = Some(reply);
            self.touch_at(i);
            return;
        }
        self.notice_seq += 1;
        let key = format!("perm:{}", self.notice_seq);
        let pos = self.cells.len();
        self.insert_at(
            pos,
            Cell::new(key, None, CellBody::Permission { req, reply, note }),
        );
    }

    pub fn toggle(&mut self, idx: usize) {
        if let Some(c) = self.cells.get_mut(idx) {
            c.expanded = !c.expanded;
            self.touch_at(idx);
        }
    }

    /// Index of the most recent foldable cell (what Ctrl+O style keys act on).
    pub fn last_foldable(&self) -> Option<usize> {
        self.last_where(|c| c.foldable(&self.meta_of(c)))
    }
}

#[cfg(test)]
mod load_tests;
