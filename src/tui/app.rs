//! Application state and `update`: every terminal and engine event goes through here. Nothing in
//! this file touches the terminal, so tests drive it directly.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crossterm::event::{Event as TermEvent, MouseEvent, MouseEventKind};
use ratatui::layout::Rect;
use ratatui_textarea::TextArea;
use tokio::sync::mpsc::UnboundedSender;

use crate::event::{
    Breakdown, ContextUsage, EngineState, ErrorKind, Event, Op, PermissionRequest, TurnEnd,
};
use crate::message::{Message, PartKind, Role, Session};

use super::TuiInit;
use super::composer::Composer;
use super::transcript::{CompactionStats, NoticeLevel, Transcript};

/// How long a first Ctrl+C waits for the second.
pub(super) const QUIT_WINDOW: Duration = Duration::from_secs(2);

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
    /// MCP resources (`/resource`); the id is `server:uri`.
    Resource,
    /// An earlier prompt to go back to (`/rewind`).
    Rewind,
    /// The colour theme (`/theme`): moving the selection previews it.
    Theme,
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
    Help {
        scroll: usize,
    },
    Context(Option<Breakdown>),
    Picker(Picker),
    /// `/mcp`: the servers, their state, tools and cost.
    Mcp,
}

/// Pending permission questions; the first is on screen.
#[derive(Default)]
pub struct Permissions {
    pub queue: VecDeque<PermissionRequest>,
    pub selected: usize,
    /// Deny-with-note input, open after choosing "deny".
    pub note: Option<TextArea<'static>>,
    /// When the question on screen appeared (`None`: long enough ago).
    pub shown_at: Option<Instant>,
    /// When the last key went to the composer rather than to a question.
    pub typed_at: Option<Instant>,
}

impl Permissions {
    /// Whether keys may answer the question on screen: it has been up for a moment and the
    /// user has paused typing since. Until then keys go to the composer, so a prompt being
    /// typed as the question pops up (its `a`, `y`, `n`, Enter) answers nothing.
    pub fn armed(&self, now: Instant) -> bool {
        let quiet =
            |t: Option<Instant>| t.is_none_or(|t| now.duration_since(t) >= PERMISSION_GUARD);
        quiet(self.shown_at) && quiet(self.typed_at)
    }
}

/// How long a new permission question, or one the user was typing over, ignores answer keys.
pub(super) const PERMISSION_GUARD: Duration = Duration::from_millis(400);

/// A retry the engine announced.
#[derive(Debug, Clone, PartialEq)]
pub struct Retry {
    pub attempt: u32,
    pub max: u32,
    /// Why: the provider's error.
    pub reason: String,
    /// When the retry starts.
    pub at: Instant,
}

/// A prompt sent but not yet seen back from the engine.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingPrompt {
    /// The id sent with `Op::UserTurn`; the stored message carries it back.
    pub id: String,
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
    /// Asked for with /model, not yet confirmed by the engine.
    pub pending_model: Option<String>,
    pub models: Vec<String>,
    pub workspace: PathBuf,
    pub git_branch: Option<String>,
    pub context: ContextUsage,
    pub cost: f64,
    pub state: EngineState,
    pub state_detail: Option<String>,
    pub state_since: Instant,
    pub running_tool: Option<String>,
    /// Sub-agents: their live cells, their tokens and cost apart from the main context.
    pub subagents: super::subagents::Subagents,
    /// A provider fault being retried: shown in the status bar until the retry starts.
    pub retry: Option<Retry>,
    /// The model's answer is streaming (the status says "responding", not "thinking").
    pub responding: bool,
    /// When the running turn started (one timer, in the composer's title).
    pub turn_started: Option<Instant>,
    /// Turns `/redo` can put back.
    pub redo_available: usize,
    pub interrupting: bool,
    pub popup: Option<Popup>,
    pub permissions: Permissions,
    pub pending: Vec<PendingPrompt>,
    /// The custom slash commands.
    pub custom_commands: crate::custom_commands::Commands,
    pub slash_selected: usize,
    pub slash_dismissed: bool,
    /// The workspace's files for the `@` picker (read when it first opens).
    pub files: Option<super::mentions::FileIndex>,
    pub mention_selected: usize,
    pub mention_dismissed: bool,
    /// First transcript line on screen; `None` follows the bottom.
    pub scroll_top: Option<usize>,
    /// The part of a long session's history not loaded yet.
    pub history: HistoryPaging,
    pub expand_all: bool,
    pub quit_armed: Option<Instant>,
    pub should_quit: bool,
    /// The exit code when the TUI ends: 130 when the user left with Ctrl-C, as a shell expects.
    pub exit_code: i32,
    pub engine_gone: bool,
    pub now: Instant,
    pub spinner: usize,
    /// The terminal reports Shift+Enter (kitty keyboard protocol).
    pub keyboard_enhanced: bool,
    /// Set by the view at each draw.
    pub transcript_area: Rect,
    pub total_lines: usize,
    /// Lines of the banner above the transcript at the last draw.
    pub banner_lines: usize,
    /// Something changed since the last draw.
    pub dirty: bool,
    /// The MCP servers as the engine last reported them.
    pub mcp: Vec<crate::event::McpServerStatus>,
    /// What each key does.
    pub keymap: super::keymap::Keymap,
    /// The colour theme and `/theme`'s state.
    pub appearance: super::appearance::Appearance,
    /// Terminal work for the run loop between frames (clipboard, bell, editor).
    pub effects: Vec<super::effects::Effect>,
    /// `[notify]` and whether the terminal has focus.
    pub notifier: super::notify::Notifier,
}

/// A resumed session is shown from its end, a page at a time: scrolling near the top of what is
/// loaded asks the engine for the page before it (`Op::LoadHistory`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HistoryPaging {
    /// Older messages remain in the store.
    pub more: bool,
    /// A page was asked for and has not arrived.
    pub loading: bool,
    /// The oldest message loaded: the next page ends before it.
    pub oldest: Option<String>,
}

impl HistoryPaging {
    fn new(messages: &[Message], more: bool) -> Self {
        HistoryPaging {
            more,
            loading: false,
            oldest: messages.first().map(|m| m.id.clone()),
        }
    }
}

/// What a session has cost: the stored total (pages of history hold only part of the messages).
fn session_cost(session: &Session, messages: &[Message]) -> f64 {
    let loaded: f64 = messages.iter().map(|m| m.cost).sum();
    session.cost.max(loaded)
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
        if let Some(e) = &init.appearance.error {
            transcript.notice(NoticeLevel::Error, e.clone());
        }
        let mut composer = Composer::default();
        if let Some(log) = init.prompt_log {
            composer.set_log(log);
        }
        composer.set_history(user_prompts(&init.messages));
        let now = Instant::now();
        App {
            ops,
            transcript,
            composer,
            cost: session_cost(&init.session, &init.messages),
            history: HistoryPaging::new(&init.messages, init.more_history),
            session: init.session,
            model: init.model,
            pending_model: None,
            models: init.models,
            custom_commands: init.custom_commands,
            workspace: init.workspace,
            git_branch: init.git_branch,
            context: init.context,
            state: EngineState::Idle,
            state_detail: None,
            state_since: now,
            running_tool: None,
            subagents: Default::default(),
            retry: None,
            responding: false,
            turn_started: None,
            redo_available: 0,
            interrupting: false,
            popup: None,
            permissions: Permissions::default(),
            pending: Vec::new(),
            slash_selected: 0,
            slash_dismissed: false,
            files: None,
            mention_selected: 0,
            mention_dismissed: false,
            scroll_top: None,
            expand_all: false,
            quit_armed: None,
            should_quit: false,
            exit_code: 0,
            engine_gone: false,
            now,
            spinner: 0,
            keyboard_enhanced: false,
            transcript_area: Rect::default(),
            total_lines: 0,
            banner_lines: 0,
            dirty: true,
            mcp: Vec::new(),
            keymap: init.keymap,
            appearance: init.appearance,
            effects: Vec::new(),
            notifier: super::notify::Notifier::new(init.notify),
        }
    }

    pub fn busy(&self) -> bool {
        busy_state(self.state)
    }

    pub(super) fn send(&mut self, op: Op) {
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
                    self.transcript.tick_running(crate::message::now_ms());
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
                if let Some(id) = &message.submission_id {
                    self.pending.retain(|p| &p.id != id);
                }
            }
            Event::PartUpdated { part } => self.transcript.upsert_part(part),
            Event::MessageRemoved { message_id } => self.transcript.remove_message(&message_id),
            Event::PartsRemoved { part_ids, .. } => self.transcript.remove_parts(&part_ids),
            Event::TextDelta {
                message_id,
                part_id,
                delta,
            } => {
                self.streaming(true);
                self.transcript
                    .append_delta(&message_id, &part_id, &delta, false)
            }
            Event::ReasoningDelta {
                message_id,
                part_id,
                delta,
            } => {
                self.streaming(false);
                self.transcript
                    .append_delta(&message_id, &part_id, &delta, true)
            }
            Event::ToolOutput { call_id, output } => {
                self.transcript.tool_output(&call_id, &output)
            }
            Event::Undone {
                message_id,
                prompt,
                files,
                redo,
            } => self.undone(&message_id, prompt, &files, redo),
            Event::Redone {
                messages,
                files,
                redo,
            } => {
                for m in &messages {
                    self.transcript.upsert_message(m);
                }
                self.redo_available = redo;
                let what = match files.len() {
                    0 => "no files changed".to_string(),
                    n => format!("{n} file{} put back: {}", plural(n), files.join(", ")),
                };
                self.transcript
                    .notice(NoticeLevel::Info, format!("redone · {what}"));
                self.scroll_top = None;
            }
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
                self.subagents.finished(&call_id);
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
                cost,
                ..
            } => {
                let stats = CompactionStats {
                    before,
                    after,
                    model_calls,
                    cost,
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
            // The engine says it in an Info line; the status bar follows ContextUsage.
            Event::ContextWindow { .. } => {}
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
                    self.permissions.shown_at = Some(Instant::now());
                }
                self.notify_waiting(&req.tool);
                self.permissions.queue.push_back(req);
            }
            Event::Retrying {
                attempt,
                max,
                delay_ms,
                message,
            } => {
                self.retry = Some(Retry {
                    attempt,
                    max,
                    reason: message,
                    at: Instant::now() + Duration::from_millis(delay_ms),
                });
                self.set_state(EngineState::Retrying, None);
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
            Event::SessionLoaded {
                session,
                messages,
                more_history,
            } => {
                self.subagents.clear();
                self.load_session(session, messages, more_history)
            }
            Event::History {
                session_id,
                messages,
                more,
            } => self.older_history(&session_id, &messages, more),
            Event::Sessions { sessions } => {
                let items = self.session_items(&sessions);
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
            // a breakdown answered late (asked during a turn) fills the popup if it is still open
            Event::ContextBreakdown(b) => {
                if matches!(self.popup, Some(Popup::Context(_))) {
                    self.popup = Some(Popup::Context(Some(b)));
                }
            }
            Event::McpStatus { servers } => self.mcp_status(servers),
            Event::McpResources { resources } => self.mcp_resources(resources),
            Event::ModelChanged { model } => {
                self.pending_model = None;
                self.transcript
                    .notice(NoticeLevel::Info, format!("model: {model}"));
                self.model = model;
            }
            Event::Info { message } => self.transcript.notice(NoticeLevel::Info, message),
            Event::Error { kind, message } => {
                if kind == ErrorKind::Model {
                    self.pending_model = None;
                }
                if kind == ErrorKind::Command {
                    // the command was not sent: its label (the error's start) goes
                    self.pending
                        .retain(|p| !message.starts_with(&format!("{}:", p.text)));
                }
                // A failed step already shows its error under the message: say it once.
                if !self.transcript.ends_with_error(&message) {
                    self.transcript.notice(NoticeLevel::Error, message)
                }
            }
            ev @ Event::Subagent { .. } => {
                if let Some((call_id, text)) = self.subagents.on_event(&self.session.id, &ev) {
                    self.transcript.tool_live(&call_id, text);
                }
            }
            Event::TurnFinished { reason } => {
                if reason == TurnEnd::Interrupted && !self.transcript.ends_interrupted() {
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
                self.notify_turn_end(Instant::now());
                self.set_state(EngineState::Idle, None);
            }
        }
    }

    pub(super) fn set_state(&mut self, state: EngineState, detail: Option<String>) {
        if state != self.state {
            self.state_since = Instant::now();
        }
        if state != EngineState::Retrying {
            self.retry = None;
        }
        self.responding = false;
        if state == EngineState::Idle {
            self.turn_started = None;
        } else if self.turn_started.is_none() {
            self.turn_started = Some(Instant::now());
        }
        self.state = state;
        self.state_detail = detail;
    }

    /// Streamed output arrived: whatever was being retried has recovered.
    fn streaming(&mut self, text: bool) {
        if matches!(self.state, EngineState::Retrying) {
            self.set_state(EngineState::Thinking, None);
        }
        self.responding = text;
    }

    /// Turns were taken back from `message_id` on: their cells go, the prompt that started them
    /// comes back to an empty composer to be edited and sent again.
    fn undone(&mut self, message_id: &str, prompt: String, files: &[String], redo: usize) {
        self.transcript.truncate_from(message_id);
        self.redo_available = redo;
        if self.composer.is_empty() && !prompt.trim().is_empty() {
            self.composer.set_text(&prompt);
        }
        let what = match files.len() {
            0 => "no files to restore".to_string(),
            n => format!("{n} file{} restored: {}", plural(n), files.join(", ")),
        };
        self.transcript.notice(
            NoticeLevel::Info,
            format!("undone · {what} · /redo puts it back"),
        );
        self.scroll_top = None;
    }

    /// A page of older history arrived: it goes above the transcript, and a scrolled view keeps
    /// showing the lines it showed.
    fn older_history(&mut self, session_id: &str, messages: &[Message], more: bool) {
        if session_id != self.session.id {
            return; // asked for a session no longer shown
        }
        self.history.loading = false;
        // the start of the session is loaded now: the banner goes above it
        let banner = if self.history.more && !more {
            super::view::BANNER_LINES
        } else {
            0
        };
        self.history.more = more;
        if let Some(first) = messages.first() {
            self.history.oldest = Some(first.id.clone());
        }
        let added = self.transcript.prepend(messages);
        self.composer.prepend_history(user_prompts(messages));
        if added > 0
            && let Some(top) = self.scroll_top
            && self.transcript_area.width > 0
        {
            let total = self
                .transcript
                .layout(self.transcript_area.width, self.expand_all);
            let shift = self.transcript.offset(added).unwrap_or(total) + banner;
            self.scroll_top = Some(top + shift);
            self.total_lines += shift;
        }
    }

    /// The sessions picker: this directory's sessions first (newest first), then the others,
    /// each saying where it belongs.
    fn session_items(&self, sessions: &[Session]) -> Vec<PickItem> {
        let here = self.workspace.to_string_lossy();
        let (mut mine, others): (Vec<&Session>, Vec<&Session>) =
            sessions.iter().partition(|s| s.directory == here);
        mine.extend(others);
        mine.into_iter()
            .map(|s| {
                let elsewhere = s.directory != here;
                let mut detail = format!(
                    "{}{} · {}",
                    if s.id == self.session.id {
                        "current · "
                    } else {
                        ""
                    },
                    when(s.time_updated),
                    super::format::tokens(s.tokens),
                );
                if elsewhere {
                    detail.push_str(&format!(" · in {}", home_short(&s.directory)));
                }
                if let Some(agent) = &s.agent {
                    detail = format!("{} · {detail}", super::format::sanitize(agent));
                }
                PickItem {
                    id: s.id.clone(),
                    label: if s.title.trim().is_empty() {
                        "(untitled)".to_string()
                    } else {
                        s.title.clone()
                    },
                    detail,
                }
            })
            .collect()
    }

    fn load_session(&mut self, session: Session, messages: Vec<Message>, more_history: bool) {
        if session.id == self.session.id {
            // The engine announces the session it started with (the one the TUI was built
            // from): keep the transcript and its notices (the first-run hint), take the figures.
            if !session.model.is_empty() {
                self.model = session.model.clone();
            }
            self.session = session;
            if matches!(self.popup, Some(Popup::Picker(_))) {
                self.popup = None;
            }
            return;
        }
        self.transcript = Transcript::new(&messages);
        self.cost = session_cost(&session, &messages);
        self.history = HistoryPaging::new(&messages, more_history);
        if std::path::Path::new(&session.directory).is_dir() {
            self.composer.set_project(&session.directory);
        }
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
        // a session from another directory runs there (the engine moved to it)
        let dir = std::path::PathBuf::from(&session.directory);
        if !session.directory.is_empty() && dir != self.workspace && dir.is_dir() {
            self.git_branch = crate::interactive::git_branch(&dir);
            self.transcript.notice(
                NoticeLevel::Info,
                format!(
                    "working in {} (the session's directory)",
                    home_short(&session.directory)
                ),
            );
            self.workspace = dir;
        }
        // A fresh session shows the welcome screen; a resumed one says which it is.
        if !messages.is_empty() {
            let title = if session.title.trim().is_empty() {
                "(untitled)"
            } else {
                session.title.trim()
            };
            self.transcript
                .notice(NoticeLevel::Info, format!("resumed session: {title}"));
        }
        self.session = session;
        if matches!(self.popup, Some(Popup::Picker(_))) {
            self.popup = None;
        }
    }
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

/// `~/x` for a path under the home directory.
pub fn home_short(path: &str) -> String {
    if let Ok(home) = std::env::var("HOME")
        && !home.is_empty()
        && let Some(rest) = path.strip_prefix(&home)
        && (rest.is_empty() || rest.starts_with('/'))
    {
        return format!("~{rest}");
    }
    path.to_string()
}

pub(super) fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// `2024-05-01 14:03` in local-agnostic UTC.
fn when(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|d| d.format("%Y-%m-%d %H:%M").to_string())
        .unwrap_or_default()
}
