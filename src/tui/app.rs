//! Application state and `update`: every terminal and engine event goes through here. Nothing in
//! this file touches the terminal, so tests drive it directly.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crossterm::event::{
    Event as TermEvent, KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent,
    MouseEventKind,
};
use ratatui::layout::Rect;
use ratatui_textarea::TextArea;
use tokio::sync::mpsc::UnboundedSender;

use crate::event::{
    Breakdown, ContextUsage, EngineState, Event, Op, PermissionReply, PermissionRequest,
};
use crate::message::{Message, PartKind, Role, Session};

use super::TuiInit;
use super::commands::{self, Command};
use super::composer::Composer;
use super::transcript::{CompactionStats, NoticeLevel, Transcript};

/// How long a first Ctrl+C waits for the second.
const QUIT_WINDOW: Duration = Duration::from_secs(2);
const WHEEL_LINES: usize = 3;

/// Everything `update` reacts to.
#[derive(Debug, Clone)]
#[allow(clippy::large_enum_variant)] // one at a time, never stored
pub enum Msg {
    Term(TermEvent),
    Engine(Event),
    /// Periodic: animates the spinner and expires the quit prompt.
    Tick,
}

#[derive(Debug, Clone, PartialEq)]
pub enum PickerKind {
    Sessions,
    Model,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PickItem {
    pub id: String,
    pub label: String,
    pub detail: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Picker {
    pub kind: PickerKind,
    pub items: Vec<PickItem>,
    pub filter: String,
    pub selected: usize,
    pub loading: bool,
}

impl Picker {
    pub fn visible(&self) -> Vec<&PickItem> {
        let f = self.filter.to_lowercase();
        self.items
            .iter()
            .filter(|i| {
                f.is_empty()
                    || i.label.to_lowercase().contains(&f)
                    || i.detail.to_lowercase().contains(&f)
            })
            .collect()
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Popup {
    Help { scroll: usize },
    Context(Option<Breakdown>),
    Picker(Picker),
}

/// Pending permission questions; the first is on screen.
#[derive(Default)]
pub struct Permissions {
    pub queue: VecDeque<PermissionRequest>,
    pub selected: usize,
    /// Deny-with-note input, open after choosing "deny".
    pub note: Option<TextArea<'static>>,
}

/// A prompt sent but not yet seen back from the engine.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingPrompt {
    pub text: String,
    /// Sent while the agent was working: the engine delivers it mid-turn.
    pub queued: bool,
}

pub struct App {
    ops: UnboundedSender<Op>,
    pub transcript: Transcript,
    pub composer: Composer,
    pub session: Session,
    pub model: String,
    pub models: Vec<String>,
    pub workspace: PathBuf,
    pub git_branch: Option<String>,
    pub context: ContextUsage,
    pub cost: f64,
    pub state: EngineState,
    pub state_detail: Option<String>,
    pub state_since: Instant,
    pub running_tool: Option<String>,
    pub retry: Option<(u32, u32, String)>,
    pub interrupting: bool,
    pub popup: Option<Popup>,
    pub permissions: Permissions,
    pub pending: Vec<PendingPrompt>,
    pub slash_selected: usize,
    pub slash_dismissed: bool,
    /// First transcript line on screen; `None` follows the bottom.
    pub scroll_top: Option<usize>,
    pub expand_all: bool,
    pub quit_armed: Option<Instant>,
    pub should_quit: bool,
    pub engine_gone: bool,
    pub now: Instant,
    pub spinner: usize,
    /// Set by the view at each draw.
    pub transcript_area: Rect,
    pub total_lines: usize,
    /// Something changed since the last draw.
    pub dirty: bool,
}

fn busy_state(s: EngineState) -> bool {
    s != EngineState::Idle
}

impl App {
    pub fn new(init: TuiInit, ops: UnboundedSender<Op>) -> Self {
        let mut transcript = Transcript::new(&init.messages);
        if let Some(hint) = &init.first_run_hint {
            transcript.notice(NoticeLevel::Warn, hint.clone());
        }
        let mut composer = Composer::default();
        composer.set_history(user_prompts(&init.messages));
        let now = Instant::now();
        App {
            ops,
            transcript,
            composer,
            cost: init.messages.iter().map(|m| m.cost).sum(),
            session: init.session,
            model: init.model,
            models: init.models,
            workspace: init.workspace,
            git_branch: init.git_branch,
            context: init.context,
            state: EngineState::Idle,
            state_detail: None,
            state_since: now,
            running_tool: None,
            retry: None,
            interrupting: false,
            popup: None,
            permissions: Permissions::default(),
            pending: Vec::new(),
            slash_selected: 0,
            slash_dismissed: false,
            scroll_top: None,
            expand_all: false,
            quit_armed: None,
            should_quit: false,
            engine_gone: false,
            now,
            spinner: 0,
            transcript_area: Rect::default(),
            total_lines: 0,
            dirty: true,
        }
    }

    pub fn busy(&self) -> bool {
        busy_state(self.state)
    }

    fn send(&mut self, op: Op) {
        if self.ops.send(op).is_err() && !self.engine_gone {
            self.engine_gone = true;
            self.transcript
                .notice(NoticeLevel::Error, "the engine has stopped; restart pith");
        }
    }

    pub fn update(&mut self, msg: Msg) {
        match msg {
            Msg::Term(ev) => {
                // pointer motion changes nothing on screen
                let moved = matches!(
                    ev,
                    TermEvent::Mouse(MouseEvent {
                        kind: MouseEventKind::Moved | MouseEventKind::Drag(_),
                        ..
                    })
                );
                if !moved {
                    self.dirty = true;
                    self.on_term(ev);
                }
            }
            Msg::Engine(ev) => {
                self.dirty = true;
                self.on_engine(ev);
            }
            Msg::Tick => {
                self.now = Instant::now();
                if self.busy() || self.transcript.running_tools() > 0 {
                    self.spinner = self.spinner.wrapping_add(1);
                    self.dirty = true;
                }
                if let Some(t) = self.quit_armed
                    && self.now.duration_since(t) > QUIT_WINDOW
                {
                    self.quit_armed = None;
                    self.dirty = true;
                }
            }
        }
    }

    // ---------------------------------------------------------------- engine events

    fn on_engine(&mut self, ev: Event) {
        match ev {
            Event::Message { message } => {
                self.transcript.upsert_message(&message);
                if message.role == Role::User {
                    let text = message.text();
                    if !text.is_empty() {
                        self.ack_prompt(&text);
                    }
                }
            }
            Event::PartUpdated { part } => {
                let user_text = match (&part.kind, self.transcript.meta.get(&part.message_id)) {
                    (PartKind::Text { text, synthetic: false }, Some(m))
                        if m.role == Some(Role::User) =>
                    {
                        Some(text.clone())
                    }
                    _ => None,
                };
                self.transcript.upsert_part(part);
                if let Some(t) = user_text {
                    self.ack_prompt(&t);
                }
            }
            Event::TextDelta {
                message_id,
                part_id,
                delta,
            } => self
                .transcript
                .append_delta(&message_id, &part_id, &delta, false),
            Event::ReasoningDelta {
                message_id,
                part_id,
                delta,
            } => self
                .transcript
                .append_delta(&message_id, &part_id, &delta, true),
            Event::ToolStarted { call_id, tool, .. } => {
                self.running_tool = Some(tool);
                self.transcript.tool_started(&call_id);
            }
            Event::ToolFinished {
                call_id,
                duration_ms,
                ..
            } => {
                self.running_tool = None;
                self.transcript.tool_finished(&call_id, duration_ms);
            }
            Event::StepFinished { cost, .. } => {
                if cost.is_finite() && cost > 0.0 {
                    self.cost += cost;
                }
            }
            Event::ContextUsage(u) => self.context = u,
            Event::CompactionStarted { .. } => {
                self.transcript.compaction_started();
                self.set_state(EngineState::Compacting, None);
            }
            Event::CompactionFinished {
                before,
                after,
                model_calls,
                ..
            } => {
                let stats = CompactionStats {
                    before,
                    after,
                    model_calls,
                };
                if !self.transcript.compaction_finished(stats) {
                    self.transcript.notice(
                        NoticeLevel::Info,
                        format!(
                            "context compacted: {} → {}",
                            super::format::tokens(before),
                            super::format::tokens(after)
                        ),
                    );
                }
                if self.state == EngineState::Compacting {
                    self.set_state(EngineState::Thinking, None);
                }
            }
            Event::Pruned { parts, tokens } => self.transcript.notice(
                NoticeLevel::Info,
                format!(
                    "pruned {parts} old tool output{} (~{} tokens) from the context; still shown here, marked pruned",
                    if parts == 1 { "" } else { "s" },
                    super::format::tokens(tokens)
                ),
            ),
            Event::PermissionAsked(req) => {
                if self.permissions.queue.is_empty() {
                    self.permissions.selected = 0;
                    self.permissions.note = None;
                }
                self.permissions.queue.push_back(req);
            }
            Event::Retrying {
                attempt,
                max,
                delay_ms,
                message,
            } => {
                self.retry = Some((attempt, max, message));
                self.set_state(
                    EngineState::Retrying,
                    Some(format!("in {}", super::format::duration_ms(delay_ms))),
                );
            }
            Event::State { state, detail } => {
                if state != EngineState::Retrying {
                    self.retry = None;
                }
                if state == EngineState::Idle {
                    self.interrupting = false;
                    self.running_tool = None;
                }
                self.set_state(state, detail);
            }
            Event::SessionLoaded { session, messages } => self.load_session(session, messages),
            Event::Sessions { sessions } => {
                let items = sessions
                    .iter()
                    .map(|s| PickItem {
                        id: s.id.clone(),
                        label: if s.title.trim().is_empty() {
                            "(untitled)".to_string()
                        } else {
                            s.title.clone()
                        },
                        detail: format!(
                            "{} · {} tokens · {}",
                            when(s.time_updated),
                            super::format::tokens(s.tokens),
                            s.model
                        ),
                    })
                    .collect();
                match &mut self.popup {
                    Some(Popup::Picker(p)) if p.kind == PickerKind::Sessions => {
                        p.items = items;
                        p.loading = false;
                        p.selected = 0;
                    }
                    _ => {
                        self.popup = Some(Popup::Picker(Picker {
                            kind: PickerKind::Sessions,
                            items,
                            filter: String::new(),
                            selected: 0,
                            loading: false,
                        }))
                    }
                }
            }
            Event::ContextBreakdown(b) => self.popup = Some(Popup::Context(Some(b))),
            Event::Info { message } => self.transcript.notice(NoticeLevel::Info, message),
            Event::Error { message } => self.transcript.notice(NoticeLevel::Error, message),
            Event::TurnFinished { reason } => {
                let r = reason.to_ascii_lowercase();
                if r.contains("interrupt") || r.contains("cancel") || r.contains("abort") {
                    self.transcript.notice(NoticeLevel::Info, "interrupted");
                }
                self.transcript.settle();
                self.interrupting = false;
                self.running_tool = None;
                self.retry = None;
                // prompts still waiting become the next turn: they are no longer "queued"
                for p in &mut self.pending {
                    p.queued = false;
                }
                self.set_state(EngineState::Idle, None);
            }
        }
    }

    fn set_state(&mut self, state: EngineState, detail: Option<String>) {
        if state != self.state {
            self.state_since = Instant::now();
        }
        self.state = state;
        self.state_detail = detail;
    }

    fn ack_prompt(&mut self, text: &str) {
        let t = text.trim();
        let pos = self
            .pending
            .iter()
            .position(|p| p.text.trim() == t)
            .or_else(|| {
                self.pending
                    .iter()
                    .position(|p| t.contains(p.text.trim()) || p.text.trim().contains(t))
            });
        if let Some(i) = pos {
            self.pending.remove(i);
        }
    }

    fn load_session(&mut self, session: Session, messages: Vec<Message>) {
        self.transcript = Transcript::new(&messages);
        self.cost = messages.iter().map(|m| m.cost).sum();
        self.composer.set_history(user_prompts(&messages));
        self.pending.clear();
        self.permissions = Permissions::default();
        self.scroll_top = None;
        self.context.used = session.tokens;
        self.context.estimated = true;
        self.context.percent = if self.context.window > 0 {
            session.tokens as f64 * 100.0 / self.context.window as f64
        } else {
            0.0
        };
        if !session.model.is_empty() {
            self.model = session.model.clone();
        }
        let title = if session.title.trim().is_empty() {
            "new session".to_string()
        } else {
            format!("session: {}", session.title)
        };
        self.transcript.notice(NoticeLevel::Info, title);
        self.session = session;
        if matches!(self.popup, Some(Popup::Picker(_))) {
            self.popup = None;
        }
    }

    // ---------------------------------------------------------------- terminal events

    fn on_term(&mut self, ev: TermEvent) {
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
                    self.composer.paste(&text);
                    self.slash_dismissed = false;
                }
            }
            TermEvent::Mouse(m) => self.on_mouse(m),
            TermEvent::Resize(..) | TermEvent::FocusGained | TermEvent::FocusLost => {}
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
                    if let Some(i) = self.transcript.cell_at(line) {
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
        if cell.foldable(&self.transcript.meta_of(cell)) || is_long_user(cell) {
            self.transcript.toggle(i);
        }
    }

    fn slash_items(&self) -> Option<Vec<&'static commands::Spec>> {
        if self.slash_dismissed || self.composer.textarea.lines().len() != 1 {
            return None;
        }
        let text = self.composer.text();
        let word = commands::typing_command(&text)?;
        let items = commands::filter(word);
        (!items.is_empty()).then_some(items)
    }

    /// The slash popup's entries when it is open.
    pub fn slash_popup(&self) -> Option<Vec<&'static commands::Spec>> {
        if self.popup.is_some() || !self.permissions.queue.is_empty() {
            return None;
        }
        self.slash_items()
    }

    fn on_key(&mut self, k: KeyEvent) {
        let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
        let alt = k.modifiers.contains(KeyModifiers::ALT);
        let shift = k.modifiers.contains(KeyModifiers::SHIFT);

        if ctrl && matches!(k.code, KeyCode::Char('c')) {
            self.ctrl_c();
            return;
        }
        if k.code != KeyCode::Char('c') || !ctrl {
            // any other key disarms the quit prompt
            self.quit_armed = None;
        }
        if !self.permissions.queue.is_empty() {
            self.permission_key(k);
            return;
        }
        if self.popup.is_some() {
            self.popup_key(k);
            return;
        }
        // transcript navigation
        match k.code {
            KeyCode::PageUp => return self.scroll_up(self.page()),
            KeyCode::PageDown => return self.scroll_down(self.page()),
            KeyCode::Home if ctrl || self.composer.is_empty() => {
                self.scroll_top = Some(0);
                return;
            }
            KeyCode::End if ctrl || self.composer.is_empty() => {
                self.scroll_top = None;
                return;
            }
            KeyCode::Char('o') if ctrl => {
                self.expand_all = !self.expand_all;
                return;
            }
            KeyCode::Char('d') if ctrl && self.composer.is_empty() => {
                self.quit();
                return;
            }
            _ => {}
        }
        // slash popup
        if let Some(items) = self.slash_items() {
            let n = items.len();
            self.slash_selected = self.slash_selected.min(n - 1);
            match k.code {
                KeyCode::Up => {
                    self.slash_selected = (self.slash_selected + n - 1) % n;
                    return;
                }
                KeyCode::Down => {
                    self.slash_selected = (self.slash_selected + 1) % n;
                    return;
                }
                KeyCode::Tab | KeyCode::BackTab => {
                    let s = items[self.slash_selected];
                    let text = if s.args.is_empty() {
                        format!("/{}", s.name)
                    } else {
                        format!("/{} ", s.name)
                    };
                    self.composer.set_text(&text);
                    self.slash_selected = 0;
                    return;
                }
                KeyCode::Enter if !shift && !alt => {
                    let s = items[self.slash_selected];
                    self.composer.take();
                    self.slash_selected = 0;
                    self.run_command(s.command, None);
                    return;
                }
                KeyCode::Esc => {
                    self.slash_dismissed = true;
                    return;
                }
                _ => {}
            }
        }
        match k.code {
            KeyCode::Enter if shift || alt => self.composer.textarea.insert_newline(),
            KeyCode::Char('j') if ctrl => self.composer.textarea.insert_newline(),
            KeyCode::Enter => self.submit(),
            KeyCode::Esc => {
                if self.busy() {
                    self.interrupt();
                }
            }
            KeyCode::Up if self.composer.cursor_on_first_line() && !ctrl => {
                if !self.composer.history_prev() {
                    self.composer.textarea.input(k);
                }
            }
            KeyCode::Down if self.composer.cursor_on_last_line() && !ctrl => {
                if !self.composer.history_next() {
                    self.composer.textarea.input(k);
                }
            }
            KeyCode::Tab => {
                self.composer.textarea.insert_str("    ");
            }
            _ => {
                self.composer.textarea.input(k);
                self.slash_dismissed = false;
                self.slash_selected = self
                    .slash_selected
                    .min(self.slash_items().map_or(0, |i| i.len().saturating_sub(1)));
            }
        }
    }

    fn ctrl_c(&mut self) {
        if let Some(note) = self.permissions.note.take() {
            drop(note);
            return;
        }
        if self.popup.take().is_some() {
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
        if let Some(parsed) = commands::parse(&text) {
            self.composer.take();
            match parsed {
                Ok((cmd, arg)) => self.run_command(cmd, arg),
                Err(e) => self.transcript.notice(NoticeLevel::Error, e),
            }
            return;
        }
        let text = self.composer.take();
        self.pending.push(PendingPrompt {
            text: text.clone(),
            queued: self.busy(),
        });
        self.send(Op::UserTurn { text });
        self.scroll_top = None;
        if !self.busy() {
            self.set_state(EngineState::Thinking, None);
        }
    }

    pub fn run_command(&mut self, cmd: Command, arg: Option<String>) {
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
            Command::New => self.send(Op::NewSession),
            Command::Export => self.send(Op::Export { path: arg }),
            Command::Help => self.popup = Some(Popup::Help { scroll: 0 }),
            Command::Quit => self.quit(),
        }
    }

    fn set_model(&mut self, model: String) {
        self.send(Op::SetModel {
            model: model.clone(),
        });
        self.model = model;
    }

    fn popup_key(&mut self, k: KeyEvent) {
        let Some(popup) = &mut self.popup else { return };
        match popup {
            Popup::Help { scroll } => match k.code {
                KeyCode::Up => *scroll = scroll.saturating_sub(1),
                KeyCode::Down => *scroll += 1,
                KeyCode::PageUp => *scroll = scroll.saturating_sub(10),
                KeyCode::PageDown => *scroll += 10,
                _ => self.popup = None,
            },
            Popup::Context(_) => self.popup = None,
            Popup::Picker(p) => {
                let n = p.visible().len();
                match k.code {
                    KeyCode::Esc => self.popup = None,
                    KeyCode::Up => p.selected = p.selected.saturating_sub(1),
                    KeyCode::Down => p.selected = (p.selected + 1).min(n.saturating_sub(1)),
                    KeyCode::PageUp => p.selected = p.selected.saturating_sub(10),
                    KeyCode::PageDown => p.selected = (p.selected + 10).min(n.saturating_sub(1)),
                    KeyCode::Backspace => {
                        p.filter.pop();
                        p.selected = 0;
                    }
                    KeyCode::Char(c) if !k.modifiers.contains(KeyModifiers::CONTROL) => {
                        p.filter.push(c);
                        p.selected = 0;
                    }
                    KeyCode::Enter => {
                        let chosen = p.visible().get(p.selected).map(|i| i.id.clone());
                        let kind = p.kind.clone();
                        self.popup = None;
                        if let Some(id) = chosen {
                            match kind {
                                PickerKind::Model => self.set_model(id),
                                PickerKind::Sessions => self.send(Op::ResumeSession { id }),
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
    }

    fn permission_key(&mut self, k: KeyEvent) {
        if let Some(note) = &mut self.permissions.note {
            match k.code {
                KeyCode::Enter => {
                    let text = note.lines().join(" ").trim().to_string();
                    self.answer_permission(
                        PermissionReply::Deny,
                        (!text.is_empty()).then_some(text),
                    );
                }
                KeyCode::Esc => self.permissions.note = None,
                _ => {
                    note.input(k);
                }
            }
            return;
        }
        match k.code {
            KeyCode::Up | KeyCode::Left | KeyCode::BackTab => {
                self.permissions.selected = (self.permissions.selected + 2) % 3
            }
            KeyCode::Down | KeyCode::Right | KeyCode::Tab => {
                self.permissions.selected = (self.permissions.selected + 1) % 3
            }
            KeyCode::Char('1') | KeyCode::Char('y') => {
                self.answer_permission(PermissionReply::Once, None)
            }
            KeyCode::Char('2') | KeyCode::Char('a') => {
                self.answer_permission(PermissionReply::Always, None)
            }
            KeyCode::Char('3') | KeyCode::Char('n') | KeyCode::Char('d') => self.open_note(),
            KeyCode::Esc => self.answer_permission(PermissionReply::Deny, None),
            KeyCode::Enter => match self.permissions.selected {
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

    /// Called by the view after layout: keep a scrolled position valid.
    pub fn set_layout(&mut self, area: Rect, total: usize) {
        self.transcript_area = area;
        self.total_lines = total;
        if let Some(t) = self.scroll_top
            && t >= self.max_top()
        {
            self.scroll_top = None;
        }
    }
}

fn is_long_user(cell: &super::transcript::Cell) -> bool {
    matches!(cell.part().map(|p| &p.kind), Some(PartKind::Text { text, synthetic: false }) if text.lines().count() > 8)
}

/// Non-synthetic user prompts of a history, oldest first.
fn user_prompts(messages: &[Message]) -> Vec<String> {
    messages
        .iter()
        .filter(|m| m.role == Role::User && m.compaction().is_none())
        .filter_map(|m| {
            let t: Vec<&str> = m
                .parts
                .iter()
                .filter_map(|p| match &p.kind {
                    PartKind::Text {
                        text,
                        synthetic: false,
                    } => Some(text.as_str()),
                    _ => None,
                })
                .collect();
            (!t.is_empty()).then(|| t.join("\n"))
        })
        .collect()
}

/// `2024-05-01 14:03` in local-agnostic UTC.
fn when(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|d| d.format("%Y-%m-%d %H:%M").to_string())
        .unwrap_or_default()
}
