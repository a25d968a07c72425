//! Keys, mouse and paste: what the user does, turned into state changes and `Op`s.

use std::time::Instant;

use crossterm::event::{
    Event as TermEvent, KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent,
    MouseEventKind,
};
use ratatui::layout::Rect;
use ratatui_textarea::{CursorMove, TextArea};

use crate::event::{Op, PermissionReply};
use crate::message::PartKind;

use super::app::{App, PendingPrompt, PickItem, Picker, PickerKind, Popup, QUIT_WINDOW};
use super::keymap::{Action, Context};
use super::mcp::SlashItem;
use super::transcript::NoticeLevel;
use crate::commands::{self, Command};

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
                } else if self.popup.is_none() {
                    // a dropped image file arrives as its path: attach it
                    match super::mentions::pasted_image(&text, &self.workspace) {
                        Some(path) => self.composer.paste(&format!("@{path} ")),
                        None => self.composer.paste(&text),
                    }
                    self.slash_dismissed = false;
                }
            }
            TermEvent::Mouse(m) => self.on_mouse(m),
            TermEvent::FocusGained => self.notifier.focused = Some(true),
            TermEvent::FocusLost => self.notifier.focused = Some(false),
            TermEvent::Resize(..) => {}
        }
    }

    fn on_mouse(&mut self, m: MouseEvent) {
        match m.kind {
            MouseEventKind::ScrollUp => self.scroll_up(WHEEL_LINES),
            MouseEventKind::ScrollDown => self.scroll_down(WHEEL_LINES),
            MouseEventKind::Down(MouseButton::Left) => {
                let a = self.transcript_area;
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
                        .checked_sub(self.banner_lines)
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
                self.transcript.toggle(j);
            }
            return;
        }
        let meta = self.transcript.meta_of(cell);
        if cell.foldable(&meta) || is_long_user(cell) || meta.command.is_some() {
            self.transcript.toggle(i);
        }
    }

    fn slash_items(&self) -> Option<Vec<SlashItem>> {
        if self.slash_dismissed
            || self.composer.browsing_history()
            || self.composer.textarea.lines().len() != 1
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
        if self.mention_dismissed || self.popup.is_some() || !self.permissions.queue.is_empty() {
            return None;
        }
        let (line, col) = self.composer.cursor_line();
        let (_, query) = super::mentions::token_at(&line, col)?;
        let files = self
            .files
            .get_or_insert_with(|| super::mentions::FileIndex::scan(&self.workspace));
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
        self.mention_selected = 0;
    }

    /// The slash popup's entries when it is open.
    pub fn slash_popup(&self) -> Option<Vec<SlashItem>> {
        if self.popup.is_some() || !self.permissions.queue.is_empty() {
            return None;
        }
        self.slash_items()
    }

    fn on_key(&mut self, k: KeyEvent) {
        let global = self.keymap.action(Context::Global, &k);
        if global == Some(Action::Cancel) {
            self.ctrl_c();
            return;
        }
        // any other key disarms the quit prompt
        self.quit_armed = None;
        let now = Instant::now();
        if !self.permissions.queue.is_empty() && self.permissions.armed(now) {
            self.permission_key(k);
            return;
        }
        // Anything else is typing: a question that appears now waits for a pause.
        self.permissions.typed_at = Some(now);
        if self.popup.is_some() {
            self.popup_key(k);
            return;
        }
        let chat = self.keymap.action(Context::Chat, &k);
        // transcript navigation
        let plain = k.modifiers.is_empty();
        match chat {
            Some(Action::PageUp) => return self.scroll_up(self.page()),
            Some(Action::PageDown) => return self.scroll_down(self.page()),
            // a plain Home/End moves the cursor in a prompt being written
            Some(Action::ScrollTop) if !plain || self.composer.is_empty() => {
                self.scroll_top = Some(0);
                return;
            }
            Some(Action::ScrollBottom) if !plain || self.composer.is_empty() => {
                self.scroll_top = None;
                return;
            }
            Some(Action::ExpandAll) => {
                self.expand_all = !self.expand_all;
                return;
            }
            Some(Action::OpenEditor) => {
                self.effects.push(super::effects::Effect::Editor);
                return;
            }
            Some(Action::Quit) if self.composer.is_empty() => {
                self.quit();
                return;
            }
            _ => {}
        }
        let list = self.keymap.action(Context::List, &k);
        // @ file picker
        if let Some((_, items)) = self.mention_popup() {
            let n = items.len().min(super::mentions::SHOWN * 8);
            self.mention_selected = self.mention_selected.min(n - 1);
            match list {
                Some(Action::ListUp) => {
                    self.mention_selected = (self.mention_selected + n - 1) % n;
                    return;
                }
                Some(Action::ListDown) => {
                    self.mention_selected = (self.mention_selected + 1) % n;
                    return;
                }
                Some(Action::ListComplete | Action::ListAccept) => {
                    let chosen = items[self.mention_selected].clone();
                    self.accept_mention(&chosen);
                    return;
                }
                Some(Action::ListClose) => {
                    self.mention_dismissed = true;
                    return;
                }
                _ => {}
            }
        }
        // slash popup
        if let Some(items) = self.slash_items() {
            let n = items.len();
            self.slash_selected = self.slash_selected.min(n - 1);
            match list {
                Some(Action::ListUp) => {
                    self.slash_selected = (self.slash_selected + n - 1) % n;
                    return;
                }
                Some(Action::ListDown) => {
                    self.slash_selected = (self.slash_selected + 1) % n;
                    return;
                }
                Some(Action::ListComplete) => {
                    let c = &items[self.slash_selected];
                    let text = if c.args().is_empty() {
                        format!("/{}", c.name())
                    } else {
                        format!("/{} ", c.name())
                    };
                    self.composer.set_text(&text);
                    self.slash_selected = 0;
                    return;
                }
                Some(Action::ListAccept) => {
                    let c = items[self.slash_selected].clone();
                    self.slash_selected = 0;
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
                    return;
                }
                Some(Action::ListClose) => {
                    self.slash_dismissed = true;
                    return;
                }
                _ => {}
            }
        }
        match chat {
            Some(Action::Newline) => self.composer.textarea.insert_newline(),
            Some(Action::Submit) => self.submit(),
            Some(Action::Interrupt) => {
                if self.busy() {
                    self.interrupt();
                }
            }
            Some(Action::HistoryPrev)
                if self.composer.cursor_on_first_line() || self.composer.browsing_history() =>
            {
                if !self.composer.history_prev() {
                    self.composer.textarea.move_cursor(CursorMove::Up);
                }
            }
            Some(Action::HistoryNext)
                if self.composer.cursor_on_last_line() || self.composer.browsing_history() =>
            {
                if !self.composer.history_next() {
                    self.composer.textarea.move_cursor(CursorMove::Down);
                }
            }
            Some(Action::HistoryPrev) => self.composer.textarea.move_cursor(CursorMove::Up),
            Some(Action::HistoryNext) => self.composer.textarea.move_cursor(CursorMove::Down),
            Some(Action::Indent) => {
                self.composer.textarea.insert_str("    ");
            }
            Some(a) if a.is_edit() => {
                super::keymap::edit(&mut self.composer.textarea, a);
                self.typed();
            }
            _ => {
                if super::keymap::to_textarea(&k) {
                    self.composer.textarea.input(k);
                }
                self.typed();
            }
        }
    }

    /// The prompt was edited: the popups follow what it now says.
    fn typed(&mut self) {
        self.slash_dismissed = false;
        self.mention_dismissed = false;
        self.mention_selected = 0;
        self.slash_selected = self
            .slash_selected
            .min(self.slash_items().map_or(0, |i| i.len().saturating_sub(1)));
    }

    fn ctrl_c(&mut self) {
        if let Some(note) = self.permissions.note.take() {
            drop(note);
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
        if let Some(parsed) = self.mcp_prompt_command(&text) {
            self.composer.take();
            match parsed {
                Ok((server, prompt, args)) => self.run_mcp_prompt(server, prompt, args),
                Err(e) => self.transcript.notice(NoticeLevel::Error, e),
            }
            return;
        }
        if self.run_custom_text(&text) {
            self.composer.take();
            return;
        }
        if let Some(parsed) = commands::parse(&text) {
            self.composer.take();
            match parsed {
                Ok((cmd, arg)) => self.run_command(cmd, arg),
                Err(e) => self.transcript.notice(NoticeLevel::Error, e),
            }
            return;
        }
        let text = self.composer.take();
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
            _ => self.send(Op::UserTurn { id, text }),
        }
        self.scroll_top = None;
    }

    pub fn run_command(&mut self, cmd: Command, arg: Option<String>) {
        // Commands that change the session wait for the turn: say so rather than act later
        // without a word. The read-only ones run at once.
        if self.busy() && cmd.waits_for_turn() {
            self.transcript.notice(
                NoticeLevel::Info,
                format!(
                    "/{} runs when the agent finishes this turn (esc interrupts it)",
                    cmd.name()
                ),
            );
        }
        match cmd {
            Command::Compact => {
                self.send(Op::Compact { focus: arg });
                self.scroll_top = None;
            }
            Command::Context => {
                self.popup = Some(Popup::Context(None));
                self.send(Op::ContextBreakdown);
            }
            Command::Model => match arg {
                Some(m) => self.set_model(m),
                None => {
                    let mut models = self.models.clone();
                    if !models.contains(&self.model) && !self.model.is_empty() {
                        models.insert(0, self.model.clone());
                    }
                    let selected = models.iter().position(|m| *m == self.model).unwrap_or(0);
                    self.popup = Some(Popup::Picker(Picker {
                        kind: PickerKind::Model,
                        items: models
                            .into_iter()
                            .map(|m| PickItem {
                                detail: if m == self.model {
                                    "current".into()
                                } else {
                                    String::new()
                                },
                                label: m.clone(),
                                id: m,
                            })
                            .collect(),
                        filter: String::new(),
                        selected,
                        loading: false,
                    }));
                }
            },
            Command::Sessions => {
                self.popup = Some(Popup::Picker(Picker {
                    kind: PickerKind::Sessions,
                    items: Vec::new(),
                    filter: String::new(),
                    selected: 0,
                    loading: true,
                }));
                self.send(Op::ListSessions);
            }
            Command::Agents => {
                self.popup = Some(Popup::Picker(Picker {
                    kind: PickerKind::Sessions,
                    items: Vec::new(),
                    filter: String::new(),
                    selected: 0,
                    loading: true,
                }));
                self.send(Op::ListSubagents {
                    session_id: self.session.id.clone(),
                });
            }
            Command::New => self.send(Op::NewSession),
            Command::Export => self.send(Op::Export { path: arg }),
            Command::Mcp => self.mcp_command(arg),
            Command::Resource => self.resource_command(arg),
            Command::Init => {
                let init =
                    crate::custom_commands::init(&self.workspace, arg.as_deref().unwrap_or(""));
                self.run_expanded(init);
            }
            Command::Undo => self.send(Op::Undo),
            Command::Redo => self.send(Op::Redo),
            Command::Rewind => self.rewind_picker(),
            Command::Copy => self.copy_command(arg.as_deref()),
            Command::Editor => self.effects.push(super::effects::Effect::Editor),
            Command::Help => self.popup = Some(Popup::Help { scroll: 0 }),
            Command::Keys => {
                // the help, from its list of keys
                let scroll = Command::all().count() + 2;
                self.popup = Some(Popup::Help { scroll });
            }
            Command::Theme => self.theme_command(arg),
            Command::Quit => self.quit(),
        }
    }

    /// `/rewind`: the prompts on screen, newest first, to go back to.
    fn rewind_picker(&mut self) {
        let mut items = Vec::new();
        for c in self.transcript.cells.iter().rev() {
            let Some(mid) = &c.message_id else { continue };
            let meta = self.transcript.meta_of(c);
            if meta.role != Some(crate::message::Role::User) || meta.mid_turn {
                continue;
            }
            let label = match c.part().map(|p| &p.kind) {
                Some(PartKind::Text {
                    text,
                    synthetic: false,
                }) => text.lines().next().unwrap_or("").to_string(),
                Some(PartKind::Tool { tool, input, .. }) if tool == "bash" => format!(
                    "!{}",
                    input.get("command").and_then(|v| v.as_str()).unwrap_or("")
                ),
                _ => continue,
            };
            if items.iter().any(|i: &PickItem| &i.id == mid) {
                continue;
            }
            items.push(PickItem {
                id: mid.clone(),
                label,
                detail: String::new(),
            });
        }
        if items.is_empty() {
            self.transcript
                .notice(NoticeLevel::Info, "no earlier prompt to go back to");
            return;
        }
        self.popup = Some(Popup::Picker(Picker {
            kind: PickerKind::Rewind,
            items,
            filter: String::new(),
            selected: 0,
            loading: false,
        }));
    }

    /// Asks the engine to switch; the status bar shows the new model once the engine confirms
    /// it (a model without a key or provider is refused).
    fn set_model(&mut self, model: String) {
        self.send(Op::SetModel {
            model: model.clone(),
        });
        self.pending_model = Some(model);
    }

    fn popup_key(&mut self, k: KeyEvent) {
        let list = self.keymap.action(Context::List, &k);
        let Some(popup) = &mut self.popup else { return };
        match popup {
            Popup::Help { scroll } => match list {
                Some(Action::ListUp) => *scroll = scroll.saturating_sub(1),
                Some(Action::ListDown) => *scroll += 1,
                Some(Action::ListPageUp) => *scroll = scroll.saturating_sub(10),
                Some(Action::ListPageDown) => *scroll += 10,
                _ => self.popup = None,
            },
            Popup::Context(_) | Popup::Mcp => self.popup = None,
            Popup::Picker(p) => {
                let n = p.visible().len();
                match (list, k.code) {
                    (Some(Action::ListClose), _) => {
                        self.popup = None;
                        self.picker_closed();
                    }
                    (Some(Action::ListUp), _) => p.selected = p.selected.saturating_sub(1),
                    (Some(Action::ListDown), _) => {
                        p.selected = (p.selected + 1).min(n.saturating_sub(1))
                    }
                    (Some(Action::ListPageUp), _) => p.selected = p.selected.saturating_sub(10),
                    (Some(Action::ListPageDown), _) => {
                        p.selected = (p.selected + 10).min(n.saturating_sub(1))
                    }
                    (Some(Action::ListAccept), _) => {
                        let chosen = p.visible().get(p.selected).map(|i| i.id.clone());
                        let kind = p.kind.clone();
                        self.popup = None;
                        if let Some(id) = chosen {
                            self.picked(kind, id);
                        } else {
                            self.picker_closed();
                        }
                        return;
                    }
                    (_, KeyCode::Backspace) => {
                        p.filter.pop();
                        p.selected = 0;
                    }
                    (_, KeyCode::Char(c)) if !k.modifiers.contains(KeyModifiers::CONTROL) => {
                        p.filter.push(c);
                        p.selected = 0;
                    }
                    _ => {}
                }
                self.picker_moved();
            }
        }
    }

    /// The entry `id` of a `kind` picker was chosen.
    fn picked(&mut self, kind: PickerKind, id: String) {
        match kind {
            PickerKind::Model => self.set_model(id),
            PickerKind::Resource => self.attach_resource(&id),
            PickerKind::Rewind => self.send(Op::Rewind { message_id: id }),
            PickerKind::Theme => self.choose_theme(&id),
            PickerKind::Sessions => {
                if self.busy() {
                    self.transcript.notice(
                        NoticeLevel::Info,
                        "the session opens when the agent finishes this turn (esc interrupts it)",
                    );
                }
                self.send(Op::ResumeSession { id })
            }
        }
    }

    fn permission_key(&mut self, k: KeyEvent) {
        let action = self.keymap.action(Context::Permission, &k);
        if let Some(note) = &mut self.permissions.note {
            match action {
                Some(Action::OptionChoose) => {
                    let text = note.lines().join(" ").trim().to_string();
                    self.answer_permission(
                        PermissionReply::Deny,
                        (!text.is_empty()).then_some(text),
                    );
                }
                Some(Action::Deny) => self.permissions.note = None,
                _ => match self.keymap.action(Context::Chat, &k) {
                    Some(a) if a.is_edit() => super::keymap::edit(note, a),
                    _ => {
                        if super::keymap::to_textarea(&k) {
                            note.input(k);
                        }
                    }
                },
            }
            return;
        }
        match action {
            Some(Action::OptionPrev) => {
                self.permissions.selected = (self.permissions.selected + 2) % 3
            }
            Some(Action::OptionNext) => {
                self.permissions.selected = (self.permissions.selected + 1) % 3
            }
            Some(Action::AllowOnce) => self.answer_permission(PermissionReply::Once, None),
            Some(Action::AllowAlways) => self.answer_permission(PermissionReply::Always, None),
            Some(Action::DenyWithNote) => self.open_note(),
            Some(Action::Deny) => self.answer_permission(PermissionReply::Deny, None),
            Some(Action::OptionChoose) => match self.permissions.selected {
                0 => self.answer_permission(PermissionReply::Once, None),
                1 => self.answer_permission(PermissionReply::Always, None),
                _ => self.open_note(),
            },
            _ => {}
        }
    }

    fn open_note(&mut self) {
        let mut ta = TextArea::default();
        ta.set_placeholder_text("why not? (optional, enter to send)");
        ta.set_cursor_line_style(ratatui::style::Style::default());
        self.permissions.selected = 2;
        self.permissions.note = Some(ta);
    }

    fn answer_permission(&mut self, reply: PermissionReply, note: Option<String>) {
        let Some(req) = self.permissions.queue.pop_front() else {
            return;
        };
        self.send(Op::PermissionReply {
            id: req.id.clone(),
            reply,
            message: note.clone(),
        });
        self.transcript.permission(req, reply, note);
        self.permissions.selected = 0;
        self.permissions.note = None;
        // the next question (if any) was already waiting: it appears now
        self.permissions.shown_at = Some(Instant::now());
    }

    // ---------------------------------------------------------------- scrolling

    fn page(&self) -> usize {
        (self.transcript_area.height as usize)
            .saturating_sub(2)
            .max(1)
    }

    fn max_top(&self) -> usize {
        self.total_lines
            .saturating_sub(self.transcript_area.height as usize)
    }

    /// The first line on screen.
    pub fn top_line(&self) -> usize {
        self.scroll_top.unwrap_or(usize::MAX).min(self.max_top())
    }

    pub fn scroll_up(&mut self, n: usize) {
        self.scroll_top = Some(self.top_line().saturating_sub(n));
    }

    pub fn scroll_down(&mut self, n: usize) {
        if let Some(t) = self.scroll_top {
            let t = t.min(self.max_top()) + n;
            self.scroll_top = if t >= self.max_top() { None } else { Some(t) };
        }
    }

    /// Called by the view after layout: keep a scrolled position valid, and ask for older
    /// history once the screen is within a screen's height of the oldest line loaded.
    pub fn set_layout(&mut self, area: Rect, total: usize) {
        self.transcript_area = area;
        self.total_lines = total;
        if let Some(t) = self.scroll_top
            && t >= self.max_top()
        {
            self.scroll_top = None;
        }
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
