//! The prompt composer: a multi-line textarea, pasted-text chips, prompt history and the text
//! handed to the external editor. As a component it takes the keys that edit the prompt and
//! draws its box; what a key means for the session (send, interrupt, cycle the mode) it hands
//! back to `App`.

use std::path::Path;

use ratatui::style::{Modifier, Style};
use ratatui_textarea::{CursorMove, TextArea, WrapMode};

use super::format;
use pith_protocol::message::Span;

mod image_chip;
mod screen;

pub(crate) use screen::{ComposerChrome, ComposerKey};

/// Pastes with more lines (or characters) than this collapse into a chip.
const CHIP_LINES: usize = 5;
const CHIP_CHARS: usize = 1_000;
const MAX_HISTORY: usize = 1_000;

/// Text as typed, with the texts its chip labels stand for.
#[derive(Debug, Clone, Default, PartialEq)]
struct Entry {
    text: String,
    chips: Vec<Chip>,
}

/// A `[pasted N lines]` label and the text it stands for.
#[derive(Debug, Clone, PartialEq)]
struct Chip {
    label: String,
    text: String,
    /// The user pasted it (a bracketed paste), rather than pith folding a long prompt from the
    /// history or given back by the engine: the engine is told, so compaction carries it as a
    /// pasted block.
    pasted: bool,
    /// An image attached from the clipboard: the label stands for its `@path`, and backspace
    /// takes the label whole.
    image: bool,
}

impl Entry {
    /// A prompt from elsewhere (the stored history, the engine): one chip when it is large.
    fn folded(text: &str) -> Entry {
        if chip_sized(text) {
            let label = chip_label(text);
            Entry {
                text: label.clone(),
                chips: vec![Chip {
                    label,
                    text: text.to_string(),
                    pasted: false,
                    image: false,
                }],
            }
        } else {
            Entry {
                text: text.to_string(),
                chips: Vec::new(),
            }
        }
    }
}

pub struct Composer {
    textarea: TextArea<'static>,
    /// The chips in the text; expanded when the prompt is sent.
    chips: Vec<Chip>,
    /// Earlier prompts as they were typed (chips kept folded).
    history: Vec<Entry>,
    /// Position while walking the history (`None`: editing the draft).
    hist_pos: Option<usize>,
    draft: Entry,
    /// The project's prompt history on disk (`None`: not kept, e.g. in tests).
    log: Option<super::prompt_log::PromptLog>,
    /// The project's earlier prompts (oldest first), put before a session's own.
    project: Vec<String>,
    /// The terminal reports Shift+Enter (kitty keyboard protocol): the hint names it.
    keyboard_enhanced: bool,
}

/// Is `text` large enough to show as a chip?
fn chip_sized(text: &str) -> bool {
    text.lines().count() > CHIP_LINES || text.chars().count() > CHIP_CHARS
}

fn chip_label(text: &str) -> String {
    let lines = text.lines().count();
    if lines > 1 {
        format!("[pasted {lines} lines]")
    } else {
        format!("[pasted {} chars]", text.chars().count())
    }
}

/// `text` with each chip label (its first occurrence) replaced by the text it stands for, and
/// the byte spans of the result that the user pasted.
fn expand(text: &str, chips: &[Chip]) -> (String, Vec<Span>) {
    let mut found: Vec<(usize, &Chip)> = chips
        .iter()
        .filter_map(|c| text.find(c.label.as_str()).map(|i| (i, c)))
        .collect();
    found.sort_by_key(|(i, _)| *i);
    let mut out = String::with_capacity(text.len());
    let mut spans = Vec::new();
    let mut at = 0;
    for (i, chip) in found {
        if i < at {
            continue; // inside a label already replaced
        }
        out.push_str(&text[at..i]);
        let start = out.len();
        out.push_str(&chip.text);
        if chip.pasted {
            spans.push((start, out.len()));
        }
        at = i + chip.label.len();
    }
    out.push_str(&text[at..]);
    (out, spans)
}

fn new_textarea(text: &str) -> TextArea<'static> {
    let mut ta = TextArea::from(text.split('\n').map(str::to_string).collect::<Vec<_>>());
    ta.set_cursor_line_style(Style::default());
    ta.set_cursor_style(Style::default().add_modifier(Modifier::REVERSED));
    ta.set_placeholder_text("Ask pith anything · / for commands");
    ta.set_placeholder_style(Style::default().fg(super::theme::theme().dim));
    ta.set_wrap_mode(WrapMode::WordOrGlyph);
    ta.move_cursor(CursorMove::Bottom);
    ta.move_cursor(CursorMove::End);
    ta
}

impl Default for Composer {
    fn default() -> Self {
        Composer {
            textarea: new_textarea(""),
            chips: Vec::new(),
            history: Vec::new(),
            hist_pos: None,
            draft: Entry::default(),
            log: None,
            project: Vec::new(),
            keyboard_enhanced: false,
        }
    }
}

impl Composer {
    pub fn text(&self) -> String {
        self.textarea.lines().join("\n")
    }

    pub fn is_empty(&self) -> bool {
        self.textarea.lines().iter().all(|l| l.is_empty())
    }

    pub fn set_text(&mut self, text: &str) {
        self.textarea = new_textarea(text);
    }

    pub fn clear(&mut self) {
        self.set_text("");
        self.chips.clear();
        self.hist_pos = None;
    }

    /// Keeps the prompts sent from now on in the project's history on disk, and puts the
    /// project's earlier prompts before every session's own.
    pub fn set_log(&mut self, log: super::prompt_log::PromptLog) {
        self.project = log.load();
        self.log = Some(log);
    }

    /// The session now on screen belongs to `directory`: its project's history comes before
    /// the session's own, and new prompts are kept there.
    pub fn set_project(&mut self, directory: &str) {
        if let Some(log) = &self.log
            && log.directory() != directory
        {
            let log = log.for_directory(directory);
            self.set_log(log);
        }
    }

    /// Seeds history (oldest first), e.g. from a resumed session, after the project's earlier
    /// prompts; a long prompt comes back as one chip.
    pub fn set_history(&mut self, prompts: Vec<String>) {
        self.history.clear();
        self.hist_pos = None;
        let all = super::prompt_log::merge(self.project.clone(), prompts);
        self.prepend_history(all);
    }

    /// Puts older prompts (oldest first) before the ones held, e.g. from a page of history the
    /// transcript loaded; at most `MAX_HISTORY` are kept, the newest. A walk through the history
    /// stays on the prompt it shows.
    pub fn prepend_history(&mut self, prompts: Vec<String>) {
        let room = MAX_HISTORY.saturating_sub(self.history.len());
        let skip = prompts.len().saturating_sub(room);
        let older: Vec<Entry> = prompts
            .into_iter()
            .skip(skip)
            .map(|p| Entry::folded(&p))
            .collect();
        let n = older.len();
        self.history.splice(0..0, older);
        if let Some(p) = &mut self.hist_pos {
            *p += n;
        }
    }

    /// Inserts pasted text; a large paste becomes a `[pasted N lines]` chip.
    pub fn paste(&mut self, text: &str) {
        let text = text.replace("\r\n", "\n").replace('\r', "\n");
        if chip_sized(&text) {
            let base = chip_label(&text);
            let mut label = base.clone();
            let mut n = 1;
            while self.chips.iter().any(|c| c.label == label) {
                n += 1;
                label = format!("{} #{n}]", base.trim_end_matches(']'));
            }
            self.textarea.insert_str(&label);
            self.chips.push(Chip {
                label,
                text,
                pasted: true,
                image: false,
            });
        } else {
            self.textarea.insert_str(&text);
        }
        self.hist_pos = None;
    }

    /// The text with its chips expanded.
    pub fn expanded(&self) -> String {
        expand(&self.text(), &self.chips).0
    }

    /// The prompt to send (chips expanded) and the spans of it the user pasted, recorded in
    /// history; the composer is cleared.
    pub fn take(&mut self) -> (String, Vec<Span>) {
        let typed = self.text();
        let (text, pasted) = expand(&typed, &self.chips);
        let entry = Entry {
            text: typed.clone(),
            chips: self
                .chips
                .iter()
                .filter(|c| typed.contains(c.label.as_str()))
                .cloned()
                .collect(),
        };
        if !typed.trim().is_empty() {
            if self.history.last() != Some(&entry) {
                self.history.push(entry);
                if self.history.len() > MAX_HISTORY {
                    self.history.remove(0);
                }
            }
            if let Some(log) = &self.log {
                let kept = super::prompt_log::entry(&typed, &text);
                log.record(&kept);
                self.project.retain(|p| *p != kept);
                self.project.push(kept);
            }
        }
        self.clear();
        (text, pasted)
    }

    /// Puts a prompt the engine gave back (refused, or undone) into the composer when it is
    /// empty: as it was typed when it is a prompt sent from here (its chips folded), else as one
    /// chip when large. False when the composer holds something (it is left alone).
    pub fn give_back(&mut self, text: &str) -> bool {
        if !self.is_empty() || text.trim().is_empty() {
            return false;
        }
        let typed = self
            .history
            .iter()
            .rev()
            .find(|e| expand(&e.text, &e.chips).0 == text)
            .cloned();
        let entry = typed.unwrap_or_else(|| Entry::folded(text));
        self.show(entry);
        self.textarea
            .move_cursor(ratatui_textarea::CursorMove::Bottom);
        self.textarea.move_cursor(ratatui_textarea::CursorMove::End);
        self.hist_pos = None;
        true
    }

    /// Replaces the text from char column `from` of the cursor's line up to the cursor.
    pub fn replace_before_cursor(&mut self, from: usize, text: &str) {
        let ratatui_textarea::DataCursor(row, col) = self.textarea.cursor();
        let from = from.min(col);
        self.textarea
            .move_cursor(ratatui_textarea::CursorMove::Jump(
                row.min(u16::MAX as usize) as u16,
                from.min(u16::MAX as usize) as u16,
            ));
        self.textarea.delete_str(col - from);
        self.textarea.insert_str(text);
        self.hist_pos = None;
    }

    /// The cursor's line and char column.
    pub fn cursor_line(&self) -> (String, usize) {
        let ratatui_textarea::DataCursor(row, col) = self.textarea.cursor();
        let line = self.textarea.lines().get(row).cloned().unwrap_or_default();
        (line, col)
    }

    pub fn cursor_on_first_line(&self) -> bool {
        self.textarea.cursor().0 == 0
    }

    pub fn cursor_on_last_line(&self) -> bool {
        self.textarea.cursor().0 + 1 >= self.textarea.lines().len()
    }

    /// Showing a recalled prompt, not edited since: Up/Down keep walking the history wherever
    /// the cursor is (a recalled multi-line prompt does not trap them).
    pub fn browsing_history(&self) -> bool {
        self.hist_pos
            .and_then(|p| self.history.get(p))
            .is_some_and(|e| e.text == self.text())
    }

    fn show(&mut self, entry: Entry) {
        self.textarea = new_textarea(&entry.text);
        self.chips = entry.chips;
    }

    /// Up: the previous prompt. Returns false when there is nothing older.
    pub fn history_prev(&mut self) -> bool {
        if self.history.is_empty() {
            return false;
        }
        let pos = match self.hist_pos {
            None => {
                self.draft = Entry {
                    text: self.text(),
                    chips: self.chips.clone(),
                };
                self.history.len() - 1
            }
            Some(0) => return false,
            Some(p) => p - 1,
        };
        self.hist_pos = Some(pos);
        self.show(self.history[pos].clone());
        true
    }

    /// Down: the next prompt, or back to the draft.
    pub fn history_next(&mut self) -> bool {
        let Some(p) = self.hist_pos else {
            return false;
        };
        if p + 1 < self.history.len() {
            self.hist_pos = Some(p + 1);
            self.show(self.history[p + 1].clone());
        } else {
            self.hist_pos = None;
            let draft = std::mem::take(&mut self.draft);
            self.show(draft);
        }
        true
    }

    /// Rows the composer wants at `width` inner columns (wrapped), at least 1.
    pub fn rows(&self, width: u16) -> u16 {
        let w = (width as usize).max(1);
        let rows: usize = self
            .textarea
            .lines()
            .iter()
            .map(|l| format::width(l).div_ceil(w).max(1))
            .sum();
        rows.clamp(1, u16::MAX as usize) as u16
    }
}

impl Composer {
    /// The terminal reports Shift+Enter (the kitty keyboard protocol is on).
    pub fn set_keyboard_enhanced(&mut self, on: bool) {
        self.keyboard_enhanced = on;
    }

    /// Lines of text (a wrapped line counts once).
    pub fn line_count(&self) -> usize {
        self.textarea.lines().len()
    }

    /// Text pasted (or dropped) into the prompt: a dropped image file's path becomes its
    /// mention, other text goes in as typed (a long one as a chip).
    pub fn paste_in(&mut self, text: &str, workspace: &Path) {
        match super::mentions::pasted_image(text, workspace) {
            Some(path) => self.paste(&format!("@{path} ")),
            None => self.paste(text),
        }
    }

    /// The text for the external editor: the chips expanded.
    pub fn for_editor(&self) -> String {
        self.expanded()
    }

    /// What the external editor saved replaces the prompt.
    pub fn from_editor(&mut self, text: &str) {
        self.clear();
        self.set_text(text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_paste_becomes_chip_and_expands_on_send() {
        let mut c = Composer::default();
        c.textarea.insert_str("look at this: ");
        let big: String = (1..=40).map(|i| format!("line {i}\n")).collect();
        c.paste(&big);
        assert_eq!(c.text(), "look at this: [pasted 40 lines]");
        c.textarea.insert_str(" why?");
        let (sent, pasted) = c.take();
        assert!(sent.starts_with("look at this: line 1\nline 2\n"));
        assert!(sent.contains("line 40"));
        assert_eq!(
            pasted,
            vec![(14, 14 + big.len())],
            "the paste is marked as such"
        );
        assert_eq!(&sent[pasted[0].0..pasted[0].1], big);
        assert!(sent.ends_with(" why?"));
        assert!(c.is_empty());
    }

    #[test]
    fn recalled_paste_stays_a_chip() {
        let mut c = Composer::default();
        let big: String = (1..=200).map(|i| format!("line {i}\n")).collect();
        c.paste(&big);
        c.textarea.insert_str("what is this?");
        let sent = c.take();
        c.set_text("one more");
        c.take();
        assert!(c.history_prev());
        assert_eq!(c.text(), "one more");
        assert!(c.history_prev());
        assert_eq!(c.text(), "[pasted 200 lines]what is this?");
        assert_eq!(c.take(), sent, "the chip expands again when re-sent");
    }

    #[test]
    fn long_stored_prompts_come_back_as_chips() {
        let mut c = Composer::default();
        let long: String = (1..=30).map(|i| format!("row {i}\n")).collect();
        c.set_history(vec![long.clone(), "short".into()]);
        assert!(c.history_prev());
        assert_eq!(c.text(), "short");
        assert!(c.history_prev());
        assert_eq!(c.text(), "[pasted 30 lines]");
        assert!(c.browsing_history());
        assert_eq!(
            c.take(),
            (long, Vec::new()),
            "a prompt folded by pith is not marked as pasted"
        );
    }

    /// Older prompts go before the held ones; a walk in progress keeps showing its prompt and
    /// goes on into the older ones; the cap keeps the newest.
    #[test]
    fn older_prompts_are_prepended_during_a_walk() {
        let mut c = Composer::default();
        c.set_history(vec!["c".into(), "d".into()]);
        assert!(c.history_prev());
        assert!(c.history_prev());
        assert_eq!(c.text(), "c");
        c.prepend_history(vec!["a".into(), "b".into()]);
        assert_eq!(c.text(), "c");
        assert!(c.history_prev());
        assert_eq!(c.text(), "b");
        assert!(c.history_prev());
        assert_eq!(c.text(), "a");
        assert!(c.history_next());
        assert_eq!(c.text(), "b");

        let mut full = Composer::default();
        full.set_history((0..MAX_HISTORY - 1).map(|i| format!("p{i}")).collect());
        full.prepend_history(vec!["old1".into(), "old2".into(), "old3".into()]);
        assert_eq!(full.history.len(), MAX_HISTORY);
        assert_eq!(
            full.history[0].text, "old3",
            "the newest of the older ones fit"
        );
    }

    #[test]
    fn small_paste_is_inline() {
        let mut c = Composer::default();
        c.paste("a\r\nb");
        assert_eq!(c.text(), "a\nb");
    }

    #[test]
    fn history_walks_and_restores_draft() {
        let mut c = Composer::default();
        c.set_text("one");
        c.take();
        c.set_text("two");
        c.take();
        c.set_text("draft");
        assert!(c.history_prev());
        assert_eq!(c.text(), "two");
        assert!(c.history_prev());
        assert_eq!(c.text(), "one");
        assert!(!c.history_prev());
        assert!(c.history_next());
        assert_eq!(c.text(), "two");
        assert!(c.history_next());
        assert_eq!(c.text(), "draft");
        assert!(!c.history_next());
    }
}
