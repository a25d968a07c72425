//! Keys, mouse and paste: what the user does, turned into state changes and `Op`s.

use std::time::Instant;

use crossterm::event::{
    Event as TermEvent, KeyEvent, KeyEventKind, MouseButton, MouseEvent, MouseEventKind,
};
use ratatui::layout::Rect;

use crate::event::Op;
use crate::message::PartKind;

use super::app::{App, PendingPrompt, QUIT_WINDOW};
use super::completion::ListKey;
use super::component::{Component, Handled};
use super::composer::ComposerKey;
use super::keymap::{Action, Context, key_of};
use super::mcp::SlashItem;
use super::transcript::NoticeLevel;
use crate::commands;
use crate::route::Route;

const WHEEL_LINES: usize = 3;

impl App {
    // ---------------------------------------------------------------- terminal events

    pub(super) fn on_term(&mut self, ev: TermEvent) {
        match ev {
            TermEvent::Key(k) => {
                if k.kind != KeyEventKind::Release {
                    self.on_key(k);
                }
            }
            TermEvent::Paste(text) => {
                if let Some(note) = &mut self.permissions.note {
                    note.insert_str(text.replace(['\r', '\n'], " "));
                } else if matches!(self.popup, Some(super::app::Popup::Key(_))) {
                    self.key_dialog_paste(&text);
                } else if self.popup.is_none() {
                    // a dropped image file arrives as its path: attach it
                    self.composer.paste_in(&text, &self.workspace);
                    self.completion.pasted();
                }
            }
            TermEvent::Mouse(m) => self.on_mouse(m),
            TermEvent::FocusGained => self.notifier.focused = Some(true),
            TermEvent::FocusLost => self.notifier.focused = Some(false),
            TermEvent::Resize(..) => {}
        }
    }

    fn on_mouse(&mut self, m: MouseEvent) {
        let question = !self.permissions.queue.is_empty();
        match m.kind {
            // the wheel scrolls what is in front: a question, else the transcript
            MouseEventKind::ScrollUp if question => {
                self.permissions.scroll_by(-(WHEEL_LINES as isize))
            }
            MouseEventKind::ScrollDown if question => {
                self.permissions.scroll_by(WHEEL_LINES as isize)
            }
            MouseEventKind::ScrollUp => self.scroll_up(WHEEL_LINES),
            MouseEventKind::ScrollDown => self.scroll_down(WHEEL_LINES),
            MouseEventKind::Down(MouseButton::Left) => {
                let a = self.viewport.area();
                if self.popup.is_some() || self.permissions.queue.front().is_some() {
                    return;
                }
                if m.row >= a.y
                    && m.row < a.y + a.height
                    && m.column >= a.x
                    && m.column < a.x + a.width
                {
                    let line = self.top_line() + (m.row - a.y) as usize;
                    if let Some(i) = line
                        .checked_sub(self.viewport.banner_lines())
                        .and_then(|l| self.transcript.cell_at(l))
                    {
                        self.toggle_cell(i);
                    }
                }
            }
            _ => {}
        }
    }

    /// Folds or unfolds a cell; a compaction divider unfolds the summary after it.
    pub fn toggle_cell(&mut self, i: usize) {
        let cells = &self.transcript.cells;
        let Some(cell) = cells.get(i) else { return };
        let is_divider = matches!(cell.part().map(|p| &p.kind), Some(PartKind::Compaction(_)));
        if is_divider {
            let target = (i + 1..cells.len()).find(|&j| {
                cells[j]
                    .message_id
                    .as_ref()
                    .and_then(|m| self.transcript.meta.get(m))
                    .is_some_and(|m| m.summary)
            });
            if let Some(j) = target {
                self.toggle_summary(j);
            }
            return;
        }
        let meta = self.transcript.meta_of(cell);
        if meta.summary {
            return self.toggle_summary(i);
        }
        if cell.foldable(&meta) || is_long_user(cell) || meta.command.is_some() {
            self.transcript.toggle(i);
        }
    }

    /// The summary and what pith carried after it are one fold: every cell of the summary
    /// message at `i` opens and closes with it.
    fn toggle_summary(&mut self, i: usize) {
        let cells = &self.transcript.cells;
        let Some(mid) = cells.get(i).and_then(|c| c.message_id.clone()) else {
            return;
        };
        let open = !cells[i].expanded;
        let same: Vec<usize> = (0..cells.len())
            .filter(|&j| cells[j].message_id.as_ref() == Some(&mid) && cells[j].expanded != open)
            .collect();
        for j in same {
            self.transcript.toggle(j);
        }
    }

    fn slash_items(&self) -> Option<Vec<SlashItem>> {
        if self.completion.slash_dismissed()
            || self.composer.browsing_history()
            || self.composer.line_count() != 1
        {
            return None;
        }
        let text = self.composer.text();
        let word = commands::typing_command(&text)?;
        let mut items: Vec<SlashItem> = commands::filter(word)
            .into_iter()
            .map(SlashItem::Command)
            .collect();
        items.extend(self.custom_items(word));
        items.extend(self.mcp_prompt_items(word));
        (!items.is_empty()).then_some(items)
    }

    /// The `@` picker's entries when it is open: the files matching the `@word` at the cursor.
    pub fn mention_popup(&mut self) -> Option<(String, Vec<String>)> {
        if self.completion.mention_dismissed()
            || self.popup.is_some()
            || !self.permissions.queue.is_empty()
        {
            return None;
        }
        let (line, col) = self.composer.cursor_line();
        let (_, query) = super::mentions::token_at(&line, col)?;
        let files = self.completion.files(&self.workspace);
        let items = files.matches(&query);
        (!items.is_empty()).then_some((query, items))
    }

    /// Writes the chosen path in place of the `@word` at the cursor (a directory stays open
    /// for its entries).
    fn accept_mention(&mut self, path: &str) {
        let (line, col) = self.composer.cursor_line();
        if let Some((start, _)) = super::mentions::token_at(&line, col) {
            let text = if path.ends_with('/') {
                format!("@{path}")
            } else {
                format!("@{path} ")
            };
            self.composer.replace_before_cursor(start, &text);
        }
        self.completion.reset_mention();
    }

    /// The slash popup's entries when it is open.
    pub fn slash_popup(&self) -> Option<Vec<SlashItem>> {
        if self.popup.is_some() || !self.permissions.queue.is_empty() {
            return None;
        }
        self.slash_items()
    }

    fn on_key(&mut self, k: KeyEvent) {
        let global = self.keymap.action(Context::Global, key_of(&k));
        if global == Some(Action::Cancel) {
            self.ctrl_c();
            return;
        }
        // any other key disarms the quit prompt
        self.quit_armed = None;
        let now = Instant::now();
        // Keys wait for the question to be read, except esc and scrolling: they are safe.
        let safe = matches!(
            self.keymap.action(Context::Permission, key_of(&k)),
            Some(Action::Deny | Action::QuestionScrollUp | Action::QuestionScrollDown)
        );
        if !self.permissions.queue.is_empty() && (safe || self.permissions.armed(now)) {
            self.permission_key(k);
            return;
        }
        // Anything else is typing: a question that appears now waits for a pause.
        self.permissions.typed_at = Some(now);
        if self.popup.is_some() {
            self.popup_key(k);
            return;
        }
        let chat = self.keymap.action(Context::Chat, key_of(&k));
        if self.navigation_key(chat, k.modifiers.is_empty()) {
            return;
        }
        let list = self.keymap.action(Context::List, key_of(&k));
        if self.mention_key(list) || self.slash_key(list) {
            return;
        }
        self.composer_key(k);
    }

    /// Transcript navigation and the chat's own keys (expand, editor, quit); true when the key
    /// was one of them.
    fn navigation_key(&mut self, chat: Option<Action>, plain: bool) -> bool {
        match chat {
            Some(Action::PageUp) => self.scroll_up(self.viewport.page()),
            Some(Action::PageDown) => self.scroll_down(self.viewport.page()),
            // a plain Home/End moves the cursor in a prompt being written
            Some(Action::ScrollTop) if !plain || self.composer.is_empty() => {
                self.viewport.scroll_to_top();
            }
            Some(Action::ScrollBottom) if !plain || self.composer.is_empty() => {
                self.viewport.follow();
            }
            Some(Action::ExpandAll) => self.viewport.toggle_expand_all(),
            Some(Action::OpenEditor) => {
                self.effects.push(super::effects::Effect::Editor);
            }
            Some(Action::Quit) if self.composer.is_empty() => {
                self.quit();
            }
            _ => return false,
        }
        true
    }

    /// A list key while the `@` file picker is open; true when the picker took it.
    fn mention_key(&mut self, list: Option<Action>) -> bool {
        let Some((_, items)) = self.mention_popup() else {
            return false;
        };
        let n = items.len().min(super::mentions::SHOWN * 8);
        match self.completion.mention_key(n, list) {
            Some(ListKey::Complete(i) | ListKey::Accept(i)) => self.accept_mention(&items[i]),
            Some(ListKey::Moved | ListKey::Closed) => {}
            None => return false,
        }
        true
    }

    /// A list key while the slash popup is open; true when the popup took it.
    fn slash_key(&mut self, list: Option<Action>) -> bool {
        let Some(items) = self.slash_items() else {
            return false;
        };
        match self.completion.slash_key(items.len(), list) {
            Some(ListKey::Complete(i)) => {
                let c = &items[i];
                let text = if c.args().is_empty() {
                    format!("/{}", c.name())
                } else {
                    format!("/{} ", c.name())
                };
                self.composer.set_text(&text);
                self.completion.reset_slash();
            }
            Some(ListKey::Accept(i)) => {
                let c = items[i].clone();
                self.completion.reset_slash();
                self.accept_slash(c);
            }
            Some(ListKey::Moved | ListKey::Closed) => {}
            None => return false,
        }
        true
    }

    /// The slash popup's choice accepted: it runs, or is completed when it needs arguments.
    fn accept_slash(&mut self, c: SlashItem) {
        match c {
            SlashItem::Command(c) => {
                self.composer.take();
                self.run_command(c, None);
            }
            // A prompt that needs arguments is completed, not run.
            SlashItem::Prompt { required: true, .. } => {
                self.composer.set_text(&format!("/{} ", c.name()));
            }
            SlashItem::Prompt { server, prompt, .. } => {
                self.composer.take();
                self.run_mcp_prompt(server, prompt, String::new());
            }
            SlashItem::Custom {
                wants_args: true, ..
            } => self.composer.set_text(&format!("/{} ", c.name())),
            SlashItem::Custom { name, .. } => {
                self.composer.take();
                self.run_custom_named(&name, "");
            }
        }
    }

    /// A key for the prompt being written: the composer edits; sending, interrupting and the
    /// mode are the session's.
    fn composer_key(&mut self, k: KeyEvent) {
        let Handled::Done(key) = self.composer.on_key(k, &self.keymap) else {
            return;
        };
        match key {
            ComposerKey::Submit => self.submit(),
            ComposerKey::Interrupt => {
                if self.busy() {
                    self.interrupt();
                }
            }
            ComposerKey::CycleMode => {
                let mode = self.status.permission_mode().next();
                self.send(Op::SetPermissionMode { mode });
            }
            ComposerKey::Edited => self.typed(),
        }
    }

    /// The prompt was edited: the popups follow what it now says.
    fn typed(&mut self) {
        if self.composer.text() == "/" {
            // the slash popup opens: commands added or changed since show up in it
            self.custom_commands.reload_if_changed();
        }
        self.completion.typed();
        let last = self.slash_items().map_or(0, |i| i.len().saturating_sub(1));
        self.completion.clamp_slash(last);
    }

    fn ctrl_c(&mut self) {
        // at a question it answers that question: the call is denied and the question closes
        if !self.permissions.queue.is_empty() {
            self.answer_permission(crate::event::PermissionReply::Deny, None);
            return;
        }
        if self.popup.take().is_some() {
            self.picker_closed();
            return;
        }
        if !self.composer.is_empty() {
            self.composer.clear();
            self.quit_armed = None;
            return;
        }
        let now = Instant::now();
        if self
            .quit_armed
            .is_some_and(|t| now.duration_since(t) <= QUIT_WINDOW)
        {
            self.exit_code = 130;
            self.quit();
            return;
        }
        self.quit_armed = Some(now);
        if self.busy() {
            self.interrupt();
        }
    }

    pub fn quit(&mut self) {
        self.send(Op::Shutdown);
        self.should_quit = true;
    }

    fn interrupt(&mut self) {
        if !self.interrupting {
            self.interrupting = true;
            self.send(Op::Interrupt);
        }
    }

    fn submit(&mut self) {
        let text = self.composer.text();
        if text.trim().is_empty() {
            return;
        }
        if text.starts_with('/') {
            self.custom_commands.reload_if_changed();
        }
        // the same routing as `pith run` (`crate::route`)
        let routed = crate::route::route(&text, &self.custom_commands, &|server, prompt| {
            self.mcp_has_prompt(server, prompt)
        });
        if routed != Route::Prompt {
            self.composer.take();
        }
        match routed {
            Route::Prompt => {}
            Route::Builtin { command, args } => return self.run_command(command, args),
            Route::Custom(expanded) => return self.run_expanded(expanded),
            Route::McpPrompt {
                server,
                prompt,
                args,
            } => return self.run_mcp_prompt(server, prompt, args),
            e @ (Route::Invalid(_) | Route::Unknown { .. }) => {
                let line = e.error().unwrap_or_default();
                let hint = if matches!(e, Route::Unknown { .. }) {
                    " — type / to see the commands"
                } else {
                    ""
                };
                self.transcript
                    .notice(NoticeLevel::Error, format!("{line}{hint}"));
                return;
            }
        }
        let (text, pasted) = self.composer.take();
        let id = crate::message::new_id();
        self.pending.push(PendingPrompt {
            id: id.clone(),
            text: text.clone(),
            queued: self.busy(),
        });
        // `!command` runs in the shell; its output joins the conversation
        match text.strip_prefix('!').map(str::trim) {
            Some(command) if !command.is_empty() => self.send(Op::Shell {
                id,
                command: command.to_string(),
            }),
            _ => self.send(Op::UserTurn { id, text, pasted }),
        }
        self.viewport.follow();
    }

    // ---------------------------------------------------------------- scrolling

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

    /// Called by the view after layout: keep a scrolled position valid, and ask for older
    /// history once the screen is within a screen's height of the oldest line loaded.
    pub fn set_layout(&mut self, area: Rect, total: usize) {
        self.viewport.laid_out(area, total);
        if self.history.more
            && !self.history.loading
            && area.height > 0
            && self.top_line() < area.height as usize
            && let Some(before) = self.history.oldest.clone()
        {
            self.history.loading = true;
            let session_id = self.session.id.clone();
            self.send(Op::LoadHistory { session_id, before });
        }
    }
}

fn is_long_user(cell: &super::transcript::Cell) -> bool {
    matches!(cell.part().map(|p| &p.kind), Some(PartKind::Text { text, synthetic: false }) if text.lines().count() > 8)
}
