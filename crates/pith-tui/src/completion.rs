//! The completion popup over the composer: `/` completes a command, `@` a file of the
//! workspace. One popup, two sources; each keeps its selection and whether esc dismissed it
//! until the prompt is edited again. What the entries are and what a choice does are `App`'s
//! (they need the commands, the MCP prompts, the composer); this owns the list state.

use super::keymap::Action;
use super::mentions::FileIndex;

/// What a list key did to the open completion list.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum ListKey {
    /// The selection moved.
    Moved,
    /// Tab: the entry at this index is completed into the prompt.
    Complete(usize),
    /// Enter: the entry at this index is chosen.
    Accept(usize),
    /// Esc: the list is dismissed until the prompt changes.
    Closed,
}

/// One source's list: which entry is selected, whether esc put it away.
#[derive(Debug, Default, Clone, Copy)]
struct List {
    selected: usize,
    dismissed: bool,
}

impl List {
    /// A list key over `n` entries (the selection wraps); `None`: not a key the list takes.
    fn key(&mut self, n: usize, list: Option<Action>) -> Option<ListKey> {
        self.selected = self.selected.min(n - 1);
        Some(match list? {
            Action::ListUp => {
                self.selected = (self.selected + n - 1) % n;
                ListKey::Moved
            }
            Action::ListDown => {
                self.selected = (self.selected + 1) % n;
                ListKey::Moved
            }
            Action::ListComplete => ListKey::Complete(self.selected),
            Action::ListAccept => ListKey::Accept(self.selected),
            Action::ListClose => {
                self.dismissed = true;
                ListKey::Closed
            }
            _ => return None,
        })
    }
}

/// The `/` and `@` completion lists.
#[derive(Default)]
pub(crate) struct Completion {
    slash: List,
    mention: List,
    /// The workspace's files for `@` (read when it first opens).
    files: Option<FileIndex>,
}

impl Completion {
    pub(crate) fn slash_dismissed(&self) -> bool {
        self.slash.dismissed
    }

    pub(crate) fn mention_dismissed(&self) -> bool {
        self.mention.dismissed
    }

    /// The slash list's selection among `n` entries.
    pub(crate) fn slash_selected(&self, n: usize) -> usize {
        self.slash.selected.min(n - 1)
    }

    /// The `@` list's selection among `n` entries.
    pub(crate) fn mention_selected(&self, n: usize) -> usize {
        self.mention.selected.min(n - 1)
    }

    /// A list key for the slash list of `n` entries.
    pub(crate) fn slash_key(&mut self, n: usize, list: Option<Action>) -> Option<ListKey> {
        self.slash.key(n, list)
    }

    /// A list key for the `@` list of `n` entries.
    pub(crate) fn mention_key(&mut self, n: usize, list: Option<Action>) -> Option<ListKey> {
        self.mention.key(n, list)
    }

    /// The slash list starts again from its first entry.
    pub(crate) fn reset_slash(&mut self) {
        self.slash.selected = 0;
    }

    /// The `@` list starts again from its first entry.
    pub(crate) fn reset_mention(&mut self) {
        self.mention.selected = 0;
    }

    /// Text was pasted: the slash list may open again.
    pub(crate) fn pasted(&mut self) {
        self.slash.dismissed = false;
    }

    /// The prompt was edited: both lists may open again, the `@` list from its top.
    pub(crate) fn typed(&mut self) {
        self.slash.dismissed = false;
        self.mention.dismissed = false;
        self.mention.selected = 0;
    }

    /// Keeps the slash selection within `last`, the index of its last entry.
    pub(crate) fn clamp_slash(&mut self, last: usize) {
        self.slash.selected = self.slash.selected.min(last);
    }

    /// The workspace's files, scanned at the first call.
    pub(crate) fn files(&mut self, workspace: &std::path::Path) -> &mut FileIndex {
        self.files.get_or_insert_with(|| FileIndex::scan(workspace))
    }
}
