//! Keys, mouse and paste: what the user does, turned into state changes and `Op`s.

use std::time::Instant;

use crossterm::event::{
    Event as TermEvent, KeyEvent, KeyEventKind, MouseButton, MouseEvent, MouseEventKind,
};

use pith_protocol::event::Op;

use crate::app::App;
use crate::completion::ListKey;
use crate::component::{Component, Handled};
use crate::composer::ComposerKey;
use crate::keymap::{Action, Context, key_of};
use crate::mcp::SlashItem;
use crate::transcript::{NoticeLevel, PendingPrompt};
use pith_commands::commands;
use pith_commands::route::Route;

const WHEEL_LINES: usize = 3;

impl App {
    // ---------------------------------------------------------------- terminal events

    pub(crate) fn on_term(&mut self, ev: TermEvent) {
        match ev {
            TermEvent::Key(k) => {
                if k.kind != KeyEventKind::Release {
                    self.on_key(k);
                }
            }
            TermEvent::Paste(text) => self.on_paste(&text),
            TermEvent::Mouse(m) => self.on_mouse(m),
            TermEvent::FocusGained => self.notifier.focused = Some(true),
            TermEvent::FocusLost => self.notifier.focused = Some(false),
            TermEvent::Resize(..) => {}
        }
    }

    /// Pasted text goes to what has the keys: the deny note, the key dialog, else the prompt.
    fn on_paste(&mut self, text: &str) {
        if self.permissions.paste_into_note(text) || self.forms.paste(text) {
            return;
        }
        match &mut self.popup {
            Some(crate::app::Popup::Key(dialog)) => dialog.paste(text),
            Some(_) => {}
            None => {
                // a dropped image file arrives as its path: attach it
                self.composer.paste_in(text, self.session.workspace());
                self.completion.pasted();
            }
        }
    }

    fn on_mouse(&mut self, m: MouseEvent) {
        let question = !self.permissions.is_empty();
        match m.kind {
            // the wheel scrolls what is in front: a question, else the transcript
            MouseEventKind::ScrollUp if question => {
                self.permissions.scroll_by(-(WHEEL_LINES as isize))
            }
            MouseEventKind::ScrollDown if question => {
                self.permissions.scroll_by(WHEEL_LINES as isize)
            }
            MouseEventKind::ScrollUp => self.transcript.scroll_up(WHEEL_LINES),
            MouseEventKind::ScrollDown => self.transcript.scroll_down(WHEEL_LINES),
            // a click folds the cell under it, when nothing is in front of the transcript
            MouseEventKind::Down(MouseButton::Left)
                if self.popup.is_none() && self.permissions.front().is_none() =>
            {
                self.transcript.click(m.column, m.row);
            }
            _ => {}
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
        items.extend(self.mcp.prompt_items(word));
        (!items.is_empty()).then_some(items)
    }

    /// The `@` picker's entries when it is open: the files matching the `@word` at the cursor.
    pub fn mention_popup(&mut self) -> Option<(String, Vec<String>)> {
        if self.completion.mention_dismissed()
            || self.popup.is_some()
            || !self.permissions.is_empty()
            || !self.forms.is_empty()
        {
            return None;
        }
        let (line, col) = self.composer.cursor_line();
        let (_, query) = crate::mentions::token_at(&line, col)?;
        let files = self.completion.files(self.session.workspace());
        let items = files.matches(&query);
        (!items.is_empty()).then_some((query, items))
    }

    /// Writes the chosen path in place of the `@word` at the cursor (a directory stays open
    /// for its entries).
    fn accept_mention(&mut self, path: &str) {
        let (line, col) = self.composer.cursor_line();
        if let Some((start, _)) = crate::mentions::token_at(&line, col) {
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
        if self.popup.is_some() || !self.permissions.is_empty() || !self.forms.is_empty() {
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
        self.quit.disarm();
        let now = Instant::now();
        // Keys wait for the question to be read, except esc and scrolling: they are safe.
        let safe = matches!(
            self.keymap.action(Context::Permission, key_of(&k)),
            Some(Action::Deny | Action::QuestionScrollUp | Action::QuestionScrollDown)
        );
        if !self.permissions.is_empty() && (safe || self.permissions.armed(now)) {
            self.permission_key(k);
            return;
        }
        if self.permissions.is_empty() && !self.forms.is_empty() {
            self.form_key(k);
            return;
        }
        // Anything else is typing: a question that appears now waits for a pause.
        self.permissions.typing(now);
        if self.popup.is_some() {
            self.popup_key(k);
            return;
        }
        if self.navigation_key(k) {
            return;
        }
        let list = self.keymap.action(Context::List, key_of(&k));
        if self.mention_key(list) || self.slash_key(list) {
            return;
        }
        self.composer_key(k);
    }

    /// The chat's own keys (editor, quit) and the transcript's (paging, unfolding); true when
    /// the key was one of them.
    fn navigation_key(&mut self, k: KeyEvent) -> bool {
        match self.keymap.action(Context::Chat, key_of(&k)) {
            Some(Action::OpenEditor) => {
                self.effects.push(crate::effects::Effect::Editor);
                true
            }
            Some(Action::LeftList) => {
                self.open_left_list();
                true
            }
            Some(Action::PasteImage) => {
                self.paste_image(false);
                true
            }
            Some(Action::Quit) if self.composer.is_empty() => {
                self.quit();
                true
            }
            // a plain Home/End moves the cursor in a prompt being written
            Some(Action::ScrollTop | Action::ScrollBottom)
                if k.modifiers.is_empty() && !self.composer.is_empty() =>
            {
                false
            }
            _ => self.transcript.on_key(k, &self.keymap) == Handled::Consumed,
        }
    }

    /// A list key while the `@` file picker is open; true when the picker took it.
    fn mention_key(&mut self, list: Option<Action>) -> bool {
        let Some((_, items)) = self.mention_popup() else {
            return false;
        };
        let n = items.len().min(crate::mentions::SHOWN * 8);
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
        // at a question it stops: the call is denied and the turn ends
        if !self.permissions.is_empty() {
            self.stop_at_question();
            return;
        }
        // at a server's form it cancels the form (the call goes on without an answer)
        if !self.forms.is_empty() {
            self.answer_form(pith_protocol::elicitation::ElicitationAction::Cancel, None);
            return;
        }
        if self.popup.take().is_some() {
            self.picker_closed();
            return;
        }
        if !self.composer.is_empty() {
            self.composer.clear();
            self.quit.disarm();
            return;
        }
        if self.quit.press(Instant::now()) {
            self.quit();
            return;
        }
        if self.busy() {
            self.interrupt();
        }
    }

    pub fn quit(&mut self) {
        self.send(Op::Shutdown);
        self.quit.leave();
    }

    fn interrupt(&mut self) {
        if self.status.interrupt() {
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
        // `#TEXT`: a line for a memory file, after asking which
        if let Some(line) = pith_commands::memory::quick_add(&text) {
            let line = line.to_string();
            self.composer.take();
            return self.ask_memory_file(line);
        }
        // the same routing as `pith run` (`pith_commands::route`)
        let routed =
            pith_commands::route::route(&text, &self.custom_commands, &|server, prompt| {
                self.mcp.has_prompt(server, prompt)
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
        let id = pith_protocol::message::new_id();
        self.transcript.add_pending(PendingPrompt {
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
        self.transcript.follow();
    }
}
