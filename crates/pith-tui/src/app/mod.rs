//! `App`: the routing between the components (transcript, composer, status bar, popups, the
//! permission prompt) and `update`, which every terminal and engine event goes through. Nothing in
//! this module touches the terminal, so tests drive it directly.
//!
//! `App`'s fields are private to this module; its children route one kind of thing each: keys
//! and the mouse (`input`, `popup_keys`), engine events (`engine_events`), slash commands
//! (`run_command`, `mcp`, `login`, `theme`), drawing (`render`), the terminal work queued for the
//! run loop (`effects`) and what the run loop asks (`run_loop`). Its own small parts: the session
//! on screen (`session_view`) and leaving (`quit`). The tests read and set state through
//! `test_access`.

use std::time::Instant;

use crossterm::event::{Event as TermEvent, MouseEvent, MouseEventKind};
use tokio::sync::mpsc::UnboundedSender;

use pith_protocol::event::{EventMsg, Op, Submission};
use pith_protocol::message::{Message, PartKind, Role};

use super::TuiInit;
pub use super::activity::Retry;
use super::composer::Composer;
// What engine_events formats with, where it has always found it.
pub(crate) use super::format::{home_short, plural};
pub use super::help::Help;
pub use super::permission_prompt::Permissions;
pub use super::picker::{PickItem, Picker, PickerKind};
use super::status_bar::session_cost;
use super::transcript::{NoticeLevel, Transcript};

mod effects;
mod engine_events;
mod forms;
mod goal;
mod input;
mod jobs;
mod login;
mod mcp;
mod memory;
mod paste_image;
mod popup_keys;
mod quit;
mod recall;
mod render;
mod run_command;
mod run_loop;
mod session_view;
mod skills;
#[cfg(test)]
mod test_access;
mod theme;

/// Everything `update` reacts to.
#[derive(Debug, Clone)]
#[allow(clippy::large_enum_variant)] // one at a time, never stored
pub enum Msg {
    Term(TermEvent),
    Engine(EventMsg),
    /// Periodic: animates the spinner and expires the quit prompt.
    Tick,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Popup {
    Help(Help),
    /// `/context`: the window's use and its breakdown.
    Context(super::info_popup::ContextPopup),
    Picker(Picker),
    /// `/mcp`: the servers, their state, tools and cost.
    Mcp(super::info_popup::McpPopup),
    /// `/login`, or `/model` for a provider with no key: the key dialog.
    Key(super::login::KeyDialog),
    /// One item that left the view, in full (from the `left_list` list).
    Recall(super::left_view::RecallView),
}

pub struct App {
    ops: UnboundedSender<Submission>,
    transcript: Transcript,
    composer: Composer,
    /// The session on screen and the directory it works in.
    session: session_view::SessionView,
    /// The status bar: model, effort, mode, context, cost, branch, the engine's state.
    status: super::status_bar::StatusBar,
    models: Vec<String>,
    /// Which providers have a key, and how to store one (`/login`).
    keys: super::login::KeyAccess,
    /// Sub-agents: their live cells, their tokens and cost apart from the main context.
    subagents: super::subagents::Subagents,
    popup: Option<Popup>,
    permissions: Permissions,
    /// MCP servers' forms waiting for the user (the first on screen).
    forms: super::elicit_form::Forms,
    /// The custom slash commands.
    custom_commands: pith_commands::custom_commands::Commands,
    /// The `/` and `@` completion popup over the composer.
    completion: super::completion::Completion,
    /// Ctrl+C's armed quit, whether the TUI is leaving and with which exit code.
    quit: quit::Quit,
    /// The sessions list asked for is `/agents`' (its sub-agents), not `/sessions`'.
    listing_agents: bool,
    /// Something changed since the last draw.
    dirty: bool,
    /// The MCP servers as the engine last reported them.
    mcp: crate::mcp::McpServers,
    /// What each key does.
    keymap: super::keymap::Keymap,
    /// The colour theme and `/theme`'s state.
    appearance: super::appearance::Appearance,
    /// Terminal work for the run loop between frames (clipboard, bell, editor).
    effects: Vec<super::effects::Effect>,
    /// `[notify]` and whether the terminal has focus.
    notifier: super::notify::Notifier,
    /// The hooks in force, for `/hooks`.
    hooks: pith_config::HooksConfig,
    /// What the transcript last said of the session's goal (`/goal`).
    goal: goal::GoalNotes,
    /// Images from the clipboard: where they go, and the read under way.
    images: paste_image::ImagePaste,
}

impl App {
    pub fn new(init: TuiInit, ops: UnboundedSender<Submission>) -> Self {
        let mut transcript = Transcript::resumed(&init.messages, init.more_history);
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
        App {
            ops,
            transcript,
            composer,
            status: super::status_bar::StatusBar::new(
                init.model,
                init.context,
                session_cost(&init.session, &init.messages),
                init.git_branch,
            ),
            session: session_view::SessionView::new(init.session, init.workspace),
            models: init.models,
            keys: init.keys,
            custom_commands: init.custom_commands,
            subagents: Default::default(),
            popup: None,
            permissions: Permissions::default(),
            forms: Default::default(),
            completion: Default::default(),
            quit: Default::default(),
            listing_agents: false,
            dirty: true,
            mcp: Default::default(),
            keymap: init.keymap,
            appearance: init.appearance,
            effects: Vec::new(),
            notifier: super::notify::Notifier::new(init.notify),
            hooks: init.hooks,
            goal: Default::default(),
            images: paste_image::ImagePaste::new(init.images),
        }
    }

    pub fn busy(&self) -> bool {
        self.status.busy()
    }

    pub(super) fn send(&mut self, op: Op) {
        if self.ops.send(Submission::new(op)).is_err() && self.status.engine_stopped() {
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
                self.status.set_now(Instant::now());
                if self.busy() || self.transcript.running_tools() > 0 {
                    self.status.tick();
                    self.transcript
                        .tick_running(pith_protocol::message::now_ms());
                    self.dirty = true;
                }
                if self.quit.expire(self.status.now()) {
                    self.dirty = true;
                }
                self.poll_clipboard();
            }
        }
    }

    // ---------------------------------------------------------------- engine events
}

/// Non-synthetic user prompts of a history, oldest first.
pub(super) fn user_prompts(messages: &[Message]) -> Vec<String> {
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
