//! The permission question on screen and those waiting behind it: which option is selected,
//! the deny note, how far the question's text is scrolled and whether its end has been read,
//! the guard that keeps keys typed for the composer from answering it.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crossterm::event::KeyEvent;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui_textarea::TextArea;

use pith_protocol::event::{PermissionReply, PermissionRequest};

use super::component::{Component, Handled};
use super::keymap::{Action, Context, Keymap, key_of};
use super::transcript::Transcript;

/// The answer to the question on screen.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Answer {
    /// Allowed, or denied with the note a denial carries (`n`): the turn goes on.
    Reply(PermissionReply, Option<String>),
    /// Esc (or Ctrl+C): the call is denied and the turn ends, as Codex and Claude Code do.
    Stop,
}

/// Pending permission questions; the first is on screen.
#[derive(Default)]
pub struct Permissions {
    queue: VecDeque<PermissionRequest>,
    selected: usize,
    /// Deny-with-note input, open after choosing "deny".
    note: Option<TextArea<'static>>,
    /// When the question on screen appeared (`None`: long enough ago).
    shown_at: Option<Instant>,
    /// When the last key went to the composer rather than to a question.
    typed_at: Option<Instant>,
    /// How many lines the question's text is scrolled by.
    scroll: usize,
    /// Set by the view: the most the text scrolls (`None`: not drawn yet) and its page height.
    max_scroll: Option<usize>,
    page: usize,
    /// The end of the question's text has been on screen: only then may it be allowed.
    seen_end: bool,
}

impl Permissions {
    /// The question on screen.
    pub(crate) fn front(&self) -> Option<&PermissionRequest> {
        self.queue.front()
    }

    /// No question waits.
    pub(crate) fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// How many questions wait, the one on screen included.
    pub(crate) fn len(&self) -> usize {
        self.queue.len()
    }

    /// The deny note being written, when it is open.
    pub(crate) fn note(&self) -> Option<&TextArea<'static>> {
        self.note.as_ref()
    }

    /// The engine asks `req`: it waits behind the questions already asked (in front when none).
    pub(crate) fn ask(&mut self, req: PermissionRequest) {
        if self.queue.is_empty() {
            self.front_changed();
        }
        self.queue.push_back(req);
    }

    /// The question on screen was answered: it goes, and the next (if any) appears.
    pub(crate) fn take_front(&mut self) -> Option<PermissionRequest> {
        let req = self.queue.pop_front()?;
        self.front_changed();
        Some(req)
    }

    /// Pasted text goes into the deny note when it is open (one line); false when it is not.
    pub(crate) fn paste_into_note(&mut self, text: &str) -> bool {
        let Some(note) = &mut self.note else {
            return false;
        };
        note.insert_str(text.replace(['\r', '\n'], " "));
        true
    }

    /// A key went to the composer at `now`: a question that appears waits for a pause.
    pub(crate) fn typing(&mut self, now: Instant) {
        self.typed_at = Some(now);
    }

    /// When the question on screen appeared (tests set it to skip the guard).
    #[cfg(test)]
    pub(crate) fn shown_at(&mut self, at: Option<Instant>) {
        self.shown_at = at;
    }

    /// When the last key went to the composer (tests set it to skip the guard).
    #[cfg(test)]
    pub(crate) fn typed_at(&mut self, at: Option<Instant>) {
        self.typed_at = at;
    }

    /// Whether keys may answer the question on screen: it has been up for a moment and the
    /// user has paused typing since. Until then keys go to the composer, so a prompt being
    /// typed as the question pops up (its `a`, `y`, `n`, Enter) answers nothing.
    pub fn armed(&self, now: Instant) -> bool {
        let quiet =
            |t: Option<Instant>| t.is_none_or(|t| now.duration_since(t) >= PERMISSION_GUARD);
        quiet(self.shown_at) && quiet(self.typed_at)
    }

    /// Drops every question (their turn ended); what is typed next goes to the composer.
    pub fn close_all(&mut self) {
        self.queue.clear();
        self.front_changed();
        self.shown_at = None;
    }

    /// Another question is in front: it starts unread, at its top, on its first option.
    fn front_changed(&mut self) {
        self.selected = 0;
        self.note = None;
        self.scroll = 0;
        self.max_scroll = None;
        self.page = 0;
        self.seen_end = false;
        self.shown_at = Some(Instant::now());
    }

    /// Which option is selected: allow once, always, (for a command) always as written, deny.
    pub(crate) fn selected(&self) -> usize {
        self.selected
    }

    /// How many options the question on screen offers: a command also offers "always allow
    /// this exact command".
    pub(crate) fn option_count(&self) -> usize {
        match self.front() {
            Some(r) if offers_exact(r) => 4,
            Some(r) if !offers_always(r) => 2,
            _ => 3,
        }
    }

    /// Whether the end of the question's text has been on screen.
    pub(crate) fn seen_end(&self) -> bool {
        self.seen_end
    }

    /// The view drew the question: its text scrolls by at most `max_scroll`, `rows` of it at
    /// once. Returns the scroll to draw it at.
    pub(crate) fn drawn(&mut self, max_scroll: usize, rows: usize) -> usize {
        let scroll = self.scroll.min(max_scroll);
        self.scroll = scroll;
        self.max_scroll = Some(max_scroll);
        self.page = rows;
        self.seen_end |= scroll >= max_scroll;
        scroll
    }

    /// Scrolls the question's text by `pages` of what the box shows (up when negative).
    fn scroll_pages(&mut self, pages: isize) {
        let page = self.page.saturating_sub(1).max(1) as isize;
        self.scroll_by(pages * page);
    }

    /// Opens the deny-with-note input.
    fn open_note(&mut self) {
        let mut ta = TextArea::default();
        ta.set_placeholder_text("why not? (optional, enter to send)");
        ta.set_cursor_line_style(ratatui::style::Style::default());
        self.selected = self.option_count() - 1;
        self.note = Some(ta);
    }

    /// A key while the deny note is open: enter sends the denial, esc goes back to the options.
    fn note_key(
        &mut self,
        k: KeyEvent,
        action: Option<Action>,
        keymap: &Keymap,
    ) -> Handled<Answer> {
        let Some(note) = &mut self.note else {
            return Handled::Consumed;
        };
        match action {
            Some(Action::OptionChoose) => {
                let text = note.lines().join(" ").trim().to_string();
                let note = (!text.is_empty()).then_some(text);
                return Handled::Done(Answer::Reply(PermissionReply::Deny, note));
            }
            Some(Action::Deny) => self.note = None,
            _ => match keymap.action(Context::Chat, key_of(&k)) {
                Some(a) if a.is_edit() => super::keymap::edit(note, a),
                _ => {
                    if super::keymap::to_textarea(&k) {
                        note.input(k);
                    }
                }
            },
        }
        Handled::Consumed
    }

    /// Scrolls the question's text by `lines` (up when negative), within what the view allows.
    pub fn scroll_by(&mut self, lines: isize) {
        let to = self.scroll.saturating_add_signed(lines);
        self.scroll = self.max_scroll.map_or(to, |max| to.min(max));
    }
}

/// Whether `req` offers "always allow this session": only when it has something to grant (a
/// protected path, a doom loop or a mention grants nothing; a plan's second choice is its own).
pub(crate) fn offers_always(req: &PermissionRequest) -> bool {
    !req.patterns.is_empty() || super::view::plan_box::is_plan(req)
}

/// Whether `req` offers "always allow this exact command": a command, granted by prefix.
pub(crate) fn offers_exact(req: &PermissionRequest) -> bool {
    pith_protocol::tool::ToolName::parse(&req.tool).is(pith_protocol::tool::Builtin::Bash)
        && req.grants_a_prefix()
}

/// How long a new permission question, or one the user was typing over, ignores answer keys.
pub(crate) const PERMISSION_GUARD: Duration = Duration::from_millis(400);

impl Component for Permissions {
    type Outcome = Answer;
    /// The transcript holds the call asked about.
    type Context<'a> = (&'a Transcript, &'a Keymap);

    fn on_key(&mut self, k: KeyEvent, keymap: &Keymap) -> Handled<Answer> {
        let action = keymap.action(Context::Permission, key_of(&k));
        match action {
            Some(Action::QuestionScrollUp) => {
                self.scroll_pages(-1);
                return Handled::Consumed;
            }
            Some(Action::QuestionScrollDown) => {
                self.scroll_pages(1);
                return Handled::Consumed;
            }
            _ => {}
        }
        if self.note.is_some() {
            return self.note_key(k, action, keymap);
        }
        let unread = !self.seen_end;
        let n = self.option_count();
        match action {
            Some(Action::OptionPrev) => self.selected = (self.selected + n - 1) % n,
            Some(Action::OptionNext) => self.selected = (self.selected + 1) % n,
            // allowing waits until the whole of what is allowed has been on screen
            Some(Action::AllowOnce) if unread => {}
            Some(Action::AllowAlways) if unread || n < 3 => {}
            Some(Action::AllowOnce) => {
                return Handled::Done(Answer::Reply(PermissionReply::Once, None));
            }
            Some(Action::AllowAlways) => {
                return Handled::Done(Answer::Reply(PermissionReply::Always, None));
            }
            Some(Action::DenyWithNote) => self.open_note(),
            Some(Action::Deny) => return Handled::Done(Answer::Stop),
            Some(Action::OptionChoose) => match self.selected {
                i if i + 1 < n && unread => {}
                0 => return Handled::Done(Answer::Reply(PermissionReply::Once, None)),
                1 if n >= 3 => return Handled::Done(Answer::Reply(PermissionReply::Always, None)),
                2 if n == 4 => {
                    return Handled::Done(Answer::Reply(PermissionReply::AlwaysExact, None));
                }
                _ => self.open_note(),
            },
            _ => {}
        }
        Handled::Consumed
    }

    fn render(&mut self, frame: &mut Frame, area: Rect, (transcript, keymap): Self::Context<'_>) {
        super::view::permission::draw(frame, area, self, transcript, keymap);
    }
}
