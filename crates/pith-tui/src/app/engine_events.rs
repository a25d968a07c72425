//! Engine events turned into TUI state: the transcript, the status, pickers fed by the engine,
//! a session loaded or undone.

use std::time::Instant;

use pith_protocol::event::{
    ContextEvent, Event, OutputEvent, SessionEvent, SettingsEvent, SubagentEvent, TurnEnd,
    TurnEvent,
};
use pith_protocol::message::{Message, Session};

use crate::transcript::{CompactionStats, NoticeLevel};

use crate::app::{App, Permissions, Picker, PickerKind, Popup, home_short, plural, user_prompts};

impl App {
    /// An engine event, handed to the method for its group.
    pub(crate) fn on_engine(&mut self, ev: Event) {
        // the status bar takes its figures first; a setting it saw change is said here
        if let Some(note) = self.status.on_event(&ev) {
            self.transcript.notice(NoticeLevel::Info, note);
        }
        match ev {
            Event::Output(OutputEvent::Message { .. })
            | Event::Output(OutputEvent::PartUpdated { .. })
            | Event::Output(OutputEvent::MessageRemoved { .. })
            | Event::Output(OutputEvent::PartsRemoved { .. })
            | Event::Output(OutputEvent::TextDelta { .. })
            | Event::Output(OutputEvent::ReasoningDelta { .. })
            | Event::Output(OutputEvent::ToolStarted { .. })
            | Event::Output(OutputEvent::ToolOutput { .. })
            | Event::Output(OutputEvent::ToolFinished { .. })
            | Event::Output(OutputEvent::StepFinished { .. })
            | Event::Subagent(SubagentEvent { .. }) => self.on_output(ev),
            Event::Context(ContextEvent::ContextUsage(_))
            | Event::Context(ContextEvent::CompactionStarted { .. })
            | Event::Context(ContextEvent::CompactionFinished { .. })
            | Event::Context(ContextEvent::Pruned { .. })
            | Event::Context(ContextEvent::ContextWindow { .. })
            | Event::Context(ContextEvent::ContextBreakdown { .. }) => self.on_context(ev),
            Event::Turn(TurnEvent::PermissionAsked(_))
            | Event::Turn(TurnEvent::Retrying { .. })
            | Event::Turn(TurnEvent::State { .. })
            | Event::Turn(TurnEvent::Info { .. })
            | Event::Turn(TurnEvent::Error { .. })
            | Event::Turn(TurnEvent::TurnFinished { .. }) => self.on_turn_state(ev),
            Event::Session(SessionEvent::SessionLoaded { .. })
            | Event::Session(SessionEvent::History { .. })
            | Event::Session(SessionEvent::Sessions { .. })
            | Event::Session(SessionEvent::PromptRefused { .. })
            | Event::Session(SessionEvent::Undone { .. })
            | Event::Session(SessionEvent::Redone { .. }) => self.on_history(ev),
            Event::Settings(SettingsEvent::McpStatus { .. })
            | Event::Settings(SettingsEvent::McpResources { .. })
            | Event::Settings(SettingsEvent::ModelChanged { .. })
            | Event::Settings(SettingsEvent::EffortChanged { .. })
            | Event::Settings(SettingsEvent::PermissionModeChanged { .. }) => self.on_settings(ev),
        }
    }

    /// What a step produces: messages and their parts, streamed text, tools and sub-agents.
    fn on_output(&mut self, ev: Event) {
        match ev {
            Event::Output(OutputEvent::Message { message }) => {
                self.transcript.upsert_message(&message);
                if let Some(id) = &message.submission_id {
                    self.transcript.drop_pending(id);
                }
            }
            Event::Output(OutputEvent::PartUpdated { part }) => self.transcript.upsert_part(part),
            Event::Output(OutputEvent::MessageRemoved { message_id }) => {
                self.transcript.remove_message(&message_id)
            }
            Event::Output(OutputEvent::PartsRemoved { part_ids, .. }) => {
                self.transcript.remove_parts(&part_ids)
            }
            Event::Output(OutputEvent::TextDelta {
                message_id,
                part_id,
                delta,
            }) => self
                .transcript
                .append_delta(&message_id, &part_id, &delta, false),
            Event::Output(OutputEvent::ReasoningDelta {
                message_id,
                part_id,
                delta,
            }) => self
                .transcript
                .append_delta(&message_id, &part_id, &delta, true),
            Event::Output(OutputEvent::ToolOutput { call_id, output }) => {
                self.transcript.tool_output(&call_id, &output)
            }
            Event::Output(OutputEvent::ToolStarted { call_id, .. }) => {
                self.transcript.tool_started(&call_id)
            }
            Event::Output(OutputEvent::ToolFinished {
                call_id,
                duration_ms,
                ..
            }) => {
                self.subagents.finished(&call_id);
                self.transcript.tool_finished(&call_id, duration_ms);
            }
            ev @ Event::Subagent(SubagentEvent { .. }) => {
                if let Some((call_id, text)) = self.subagents.on_event(self.session.id(), &ev) {
                    self.transcript.tool_live(&call_id, text);
                }
            }
            // `on_engine` routes only a step's output here
            _ => {}
        }
    }

    /// The context window: its use, compaction, pruning, the breakdown.
    fn on_context(&mut self, ev: Event) {
        match ev {
            Event::Context(ContextEvent::CompactionStarted { .. }) => self.transcript.compaction_started(),
            Event::Context(ContextEvent::CompactionFinished {
                before,
                after,
                model_calls,
                cost,
                ..
            }) => self.compaction_finished(CompactionStats {
                before,
                after,
                model_calls,
                cost,
            }),
            // The engine says it in an Info line; the status bar follows ContextUsage.
            Event::Context(ContextEvent::ContextWindow { .. }) => {}
            Event::Context(ContextEvent::Pruned { parts, tokens }) => self.transcript.notice(
                NoticeLevel::Info,
                format!(
                    "pruned {parts} old tool output{} (~{} tokens) from the context; still shown here, marked pruned",
                    if parts == 1 { "" } else { "s" },
                    crate::format::tokens(tokens)
                ),
            ),
            // a breakdown answered late (asked during a turn) fills the popup if it is still open
            Event::Context(ContextEvent::ContextBreakdown { breakdown: b, .. }) => {
                if let Some(Popup::Context(popup)) = &mut self.popup {
                    popup.answered(b);
                }
            }
            // `on_engine` routes only the context's events here
            _ => {}
        }
    }

    /// Where the turn stands: questions, retries, the engine's state, notices, its end.
    fn on_turn_state(&mut self, ev: Event) {
        match ev {
            Event::Turn(TurnEvent::PermissionAsked(req)) => {
                self.notify_waiting(&req.tool);
                self.permissions.ask(req);
            }
            Event::Turn(TurnEvent::Info { message, .. }) => {
                self.transcript.notice(NoticeLevel::Info, message)
            }
            Event::Turn(TurnEvent::Error {
                kind: _,
                message,
                submission,
                failed_message,
            }) => self.engine_error(message, submission, failed_message),
            Event::Turn(TurnEvent::TurnFinished { reason }) => self.turn_finished(reason),
            // `on_engine` routes only the turn's state here
            _ => {}
        }
    }

    /// The session shown: loaded, paged, listed, a prompt refused, turns undone and redone.
    fn on_history(&mut self, ev: Event) {
        match ev {
            Event::Session(SessionEvent::SessionLoaded {
                session,
                messages,
                more_history,
                ..
            }) => {
                self.subagents.clear();
                self.load_session(session, messages, more_history)
            }
            Event::Session(SessionEvent::History {
                session_id,
                messages,
                more,
                ..
            }) => self.older_history(&session_id, &messages, more),
            Event::Session(SessionEvent::Sessions { sessions, .. }) => {
                self.sessions_listed(&sessions)
            }
            Event::Session(SessionEvent::PromptRefused {
                id, text, message, ..
            }) => self.prompt_refused(&id, &text, message),
            Event::Session(SessionEvent::Undone {
                message_id,
                prompt,
                files,
                ..
            }) => self.undone(&message_id, prompt, &files),
            Event::Session(SessionEvent::Redone {
                messages, files, ..
            }) => self.redone(&messages, &files),
            // `on_engine` routes only the session's history here
            _ => {}
        }
    }

    /// Settings the engine changed or reports: MCP servers, the model, effort, permission mode.
    fn on_settings(&mut self, ev: Event) {
        match ev {
            Event::Settings(SettingsEvent::McpStatus { servers }) => self.mcp_status(servers),
            Event::Settings(SettingsEvent::McpResources { resources, .. }) => {
                self.mcp_resources(resources)
            }
            // the model, the effort and the permission mode are the status bar's
            // `on_engine` routes only settings here
            _ => {}
        }
    }

    /// Undone turns came back (`/redo`): their messages return, the files put back are said.
    fn redone(&mut self, messages: &[Message], files: &[String]) {
        for m in messages {
            self.transcript.upsert_message(m);
        }
        let what = match files.len() {
            0 => "no files changed".to_string(),
            n => format!("{n} file{} put back: {}", plural(n), files.join(", ")),
        };
        self.transcript
            .notice(NoticeLevel::Info, format!("redone · {what}"));
        self.transcript.follow();
    }

    fn compaction_finished(&mut self, stats: CompactionStats) {
        let (before, after) = (stats.before, stats.after);
        if !self.transcript.compaction_finished(stats) {
            self.transcript.notice(
                NoticeLevel::Info,
                format!(
                    "context compacted {} → {} tokens",
                    crate::format::tokens(before),
                    crate::format::tokens(after)
                ),
            );
        }
    }

    /// The sessions list arrived: it fills the sessions picker, or opens one.
    fn sessions_listed(&mut self, sessions: &[Session]) {
        let waiting =
            matches!(&self.popup, Some(Popup::Picker(p)) if *p.kind() == PickerKind::Sessions);
        if sessions.is_empty() {
            // nothing to pick: say so, and leave the next key to the composer
            if waiting {
                self.popup = None;
            }
            let what = if std::mem::take(&mut self.listing_agents) {
                "no sub-agents have run in this session (the model starts them with the task tool)"
            } else {
                "no stored sessions in this directory yet"
            };
            self.transcript.notice(NoticeLevel::Info, what);
            return;
        }
        let items = self.session.picker_items(sessions);
        match &mut self.popup {
            Some(Popup::Picker(p)) if *p.kind() == PickerKind::Sessions => p.fill(items),
            _ => self.popup = Some(Popup::Picker(Picker::new(PickerKind::Sessions, items, 0))),
        }
    }

    fn engine_error(
        &mut self,
        message: String,
        submission: Option<String>,
        failed_message: Option<String>,
    ) {
        if let Some(id) = submission {
            // what was submitted as `id` was refused: it is no longer pending
            self.transcript.drop_pending(&id);
        }
        // A failed step already shows its error under the message: say it once.
        let shown = failed_message.is_some_and(|id| self.transcript.ends_with_failed_step(&id));
        if !shown {
            self.transcript.notice(NoticeLevel::Error, message)
        }
    }

    fn turn_finished(&mut self, reason: TurnEnd) {
        if reason == TurnEnd::Interrupted && !self.transcript.ends_interrupted() {
            self.transcript.notice(NoticeLevel::Info, "interrupted");
        }
        self.transcript.settle();
        // the turn's questions ended with it: a late answer must not apply
        self.permissions.close_all();
        // prompts still waiting become the next turn: they are no longer "queued"
        self.transcript.pending_start_next_turn();
        self.notify_turn_end(Instant::now());
        self.status.turn_finished();
    }

    /// The engine refused a prompt before storing it: it leaves the pending list and comes back
    /// to the composer (as typed, chips folded) to be shortened; the reason is said.
    fn prompt_refused(&mut self, id: &str, text: &str, message: String) {
        self.transcript.drop_pending(id);
        let back = self.composer.give_back(text);
        let note = if back {
            "your prompt is back in the composer"
        } else {
            "the composer was not empty: recall the prompt with ↑"
        };
        self.transcript
            .notice(NoticeLevel::Error, format!("{message} · {note}"));
        self.transcript.follow();
    }

    /// Turns were taken back from `message_id` on: their cells go, the prompt that started them
    /// comes back to an empty composer to be edited and sent again.
    pub(crate) fn undone(&mut self, message_id: &str, prompt: String, files: &[String]) {
        self.transcript.truncate_from(message_id);
        self.composer.give_back(&prompt);
        let what = match files.len() {
            0 => "no files to restore".to_string(),
            n => format!("{n} file{} restored: {}", plural(n), files.join(", ")),
        };
        self.transcript.notice(
            NoticeLevel::Info,
            format!("undone · {what} · /redo puts it back"),
        );
        self.transcript.follow();
    }

    /// A page of older history arrived: it goes above the transcript, and a scrolled view keeps
    /// showing the lines it showed.
    pub(crate) fn older_history(&mut self, session_id: &str, messages: &[Message], more: bool) {
        if !self.session.is(session_id) {
            return; // asked for a session no longer shown
        }
        self.transcript.older_page(messages, more);
        self.composer.prepend_history(user_prompts(messages));
    }

    pub(crate) fn load_session(
        &mut self,
        session: Session,
        messages: Vec<Message>,
        more_history: bool,
    ) {
        if self.session.is(&session.id) {
            // The engine announces the session it started with (the one the TUI was built
            // from): keep the transcript and its notices (the first-run hint), take the figures.
            self.status.session_model(&session);
            self.session.set(session);
            if matches!(self.popup, Some(Popup::Picker(_))) {
                self.popup = None;
            }
            return;
        }
        self.transcript.reload(&messages, more_history);
        self.status.session_loaded(&session, &messages);
        if std::path::Path::new(&session.directory).is_dir() {
            self.composer.set_project(&session.directory);
        }
        self.composer.set_history(user_prompts(&messages));
        self.permissions = Permissions::default();
        self.transcript.follow();
        // a session from another directory runs there (the engine moved to it)
        let dir = std::path::PathBuf::from(&session.directory);
        if !session.directory.is_empty() && dir != self.session.workspace() && dir.is_dir() {
            self.status.moved_to(&dir);
            self.transcript.notice(
                NoticeLevel::Info,
                format!(
                    "working in {} (the session's directory)",
                    home_short(&session.directory)
                ),
            );
            self.session.set_workspace(dir);
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
        self.session.set(session);
        if matches!(self.popup, Some(Popup::Picker(_))) {
            self.popup = None;
        }
    }
}
