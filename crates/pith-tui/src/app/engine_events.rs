//! Engine events turned into TUI state: the transcript, the status, pickers fed by the engine,
//! a session loaded or undone.

use std::time::Instant;

use pith_protocol::event::{
    ContextEvent, Event, EventMsg, OutputEvent, SessionEvent, SettingsEvent, SubagentEvent,
    SubmissionId, TurnEnd, TurnEvent,
};
use pith_protocol::message::{Message, Session};

use crate::transcript::{CompactionStats, NoticeLevel};

use crate::app::{App, Permissions, Picker, PickerKind, Popup, home_short, plural, user_prompts};

impl App {
    /// An engine event, handed to the method for its group.
    pub(crate) fn on_engine(&mut self, msg: impl Into<EventMsg>) {
        let EventMsg { submission, event } = msg.into();
        // the status bar takes its figures first; a setting it saw change is said here
        if let Some(note) = self.status.on_event(&event) {
            self.transcript.notice(NoticeLevel::Info, note);
        }
        match event {
            Event::Output(e) => self.on_output(e),
            Event::Subagent(e) => self.on_subagent(e),
            Event::Context(e) => self.on_context(e),
            Event::Turn(e) => self.on_turn_state(e, submission),
            Event::Session(e) => self.on_history(e),
            Event::Settings(e) => self.on_settings(e),
        }
    }

    /// What a step produces: messages and their parts, streamed text, tools.
    fn on_output(&mut self, ev: OutputEvent) {
        match ev {
            OutputEvent::Message { message } => {
                self.transcript.upsert_message(&message);
                if let Some(id) = &message.submission_id {
                    self.transcript.drop_pending(id);
                }
            }
            OutputEvent::PartUpdated { part } => self.transcript.upsert_part(part),
            OutputEvent::MessageRemoved { message_id } => {
                self.transcript.remove_message(&message_id)
            }
            OutputEvent::PartsRemoved { part_ids, .. } => self.transcript.remove_parts(&part_ids),
            OutputEvent::TextDelta {
                message_id,
                part_id,
                delta,
            } => self
                .transcript
                .append_delta(&message_id, &part_id, &delta, false),
            OutputEvent::ReasoningDelta {
                message_id,
                part_id,
                delta,
            } => self
                .transcript
                .append_delta(&message_id, &part_id, &delta, true),
            OutputEvent::ToolOutput { call_id, output } => {
                self.transcript.tool_output(&call_id, &output)
            }
            OutputEvent::ToolStarted { call_id, .. } => self.transcript.tool_started(&call_id),
            OutputEvent::ToolFinished {
                call_id,
                duration_ms,
                ..
            } => {
                self.subagents.finished(&call_id);
                self.transcript.tool_finished(&call_id, duration_ms);
            }
            // the status bar counts it
            OutputEvent::StepFinished { .. } => {}
        }
    }

    /// A sub-agent's event: its live cell under the parent's `task` call.
    fn on_subagent(&mut self, ev: SubagentEvent) {
        let ev = Event::Subagent(ev);
        if let Some((call_id, text)) = self.subagents.on_event(self.session.id(), &ev) {
            self.transcript.tool_live(&call_id, text);
        }
    }

    /// The context window: its use, compaction, pruning, the breakdown.
    fn on_context(&mut self, ev: ContextEvent) {
        match ev {
            ContextEvent::CompactionStarted { .. } => self.transcript.compaction_started(),
            ContextEvent::CompactionFinished {
                before,
                after,
                model_calls,
                cost,
                kept,
                left,
                ..
            } => self.compaction_finished(CompactionStats {
                before,
                after,
                model_calls,
                cost,
                kept,
                left,
            }),
            // The engine says it in an Info line; the status bar follows ContextUsage.
            ContextEvent::ContextWindow { .. } | ContextEvent::ContextUsage(_) => {}
            ContextEvent::Pruned { parts, tokens } => self.transcript.notice(
                NoticeLevel::Info,
                format!(
                    "pruned {parts} old tool output{} (~{} tokens) from the context; still shown here, marked pruned",
                    if parts == 1 { "" } else { "s" },
                    crate::format::tokens(tokens)
                ),
            ),
            // a breakdown answered late (asked during a turn) fills the popup if it is still open
            ContextEvent::ContextBreakdown {
                breakdown: b,
                pins,
                instructions,
            } => {
                if let Some(Popup::Context(popup)) = &mut self.popup {
                    popup.answered(b);
                    popup.pinned(pins);
                    popup.instructions(instructions);
                }
            }
            ContextEvent::InstructionsLoaded { file } => self.transcript.notice(
                NoticeLevel::Info,
                format!(
                    "↳ loaded {} ({} tokens)",
                    file.path,
                    pith_protocol::text::count(file.tokens)
                ),
            ),
            // the status bar shows it
            ContextEvent::CompactionAhead { .. } => {}
        }
    }

    /// Where the turn stands: questions, retries, the engine's state, notices, its end; the
    /// op an error answers.
    fn on_turn_state(&mut self, ev: TurnEvent, submission: Option<SubmissionId>) {
        match ev {
            TurnEvent::PermissionAsked(req) => {
                self.notify_waiting(&req.tool);
                self.permissions.ask(req);
            }
            TurnEvent::ElicitationAsked(request) => self.form_asked(request),
            TurnEvent::Info { message } => self.transcript.notice(NoticeLevel::Info, message),
            TurnEvent::Error {
                kind: _,
                message,
                failed_message,
            } => self.engine_error(message, submission, failed_message),
            TurnEvent::TurnFinished { reason } => self.turn_finished(reason),
            TurnEvent::GoalChecked { met, by, detail } => self.goal_checked(met, by, &detail),
            // the status bar shows them
            TurnEvent::Retrying { .. } | TurnEvent::State { .. } => {}
        }
    }

    /// The session shown: loaded, paged, listed, a prompt refused, turns undone and redone.
    fn on_history(&mut self, ev: SessionEvent) {
        match ev {
            SessionEvent::SessionLoaded {
                session,
                messages,
                more_history,
            } => {
                self.subagents.clear();
                self.load_session(session, messages, more_history)
            }
            SessionEvent::History {
                session_id,
                messages,
                more,
            } => self.older_history(&session_id, &messages, more),
            SessionEvent::Sessions { sessions } => self.sessions_listed(&sessions),
            SessionEvent::PinsChanged { pins, .. } => self.pins_listed(&pins),
            SessionEvent::Recalled {
                id,
                found,
                kind,
                text,
            } => self.recalled(&id, found, kind, &text),
            SessionEvent::PromptRefused {
                id, text, message, ..
            } => self.prompt_refused(&id, &text, message),
            SessionEvent::Undone {
                message_id,
                prompt,
                files,
                ..
            } => self.undone(&message_id, prompt, &files),
            SessionEvent::Redone {
                messages, files, ..
            } => self.redone(&messages, &files),
            SessionEvent::GoalChanged { goal } => self.goal_changed(goal),
            SessionEvent::MemoryFiles { files } => self.memory_listed(files),
            SessionEvent::Jobs { jobs } => self.jobs_listed(jobs),
        }
    }

    /// Settings the engine changed or reports: MCP servers, the model, effort, permission mode.
    fn on_settings(&mut self, ev: SettingsEvent) {
        match ev {
            SettingsEvent::McpStatus { servers } => self.mcp_status(servers),
            SettingsEvent::McpResources { resources } => self.mcp_resources(resources),
            // the model, the effort and the permission mode are the status bar's
            SettingsEvent::ModelChanged { .. }
            | SettingsEvent::EffortChanged { .. }
            | SettingsEvent::PermissionModeChanged { .. } => {}
        }
    }

    /// The pins, as `/pin` or `/unpin` left them: numbered (as `/unpin N` takes them), word
    /// for word, each with its cost in every request.
    fn pins_listed(&mut self, pins: &[pith_protocol::event::Pin]) {
        let text = pith_protocol::text::count;
        let message = if pins.is_empty() {
            "nothing pinned · /pin TEXT carries TEXT word for word into every request".to_string()
        } else {
            let total: u64 = pins.iter().map(|p| p.tokens).sum();
            let mut m = format!(
                "pinned ({} tokens in every request · /unpin N or /unpin all):",
                text(total)
            );
            for (i, p) in pins.iter().enumerate() {
                m.push_str(&format!(
                    "\n  {}. {} ({} tokens)",
                    i + 1,
                    p.text,
                    text(p.tokens)
                ));
            }
            m
        };
        self.transcript.notice(NoticeLevel::Info, message);
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
        let line = pith_protocol::compaction_note::one_line(
            stats.before,
            stats.after,
            &stats.kept,
            &stats.left,
        );
        if !self.transcript.compaction_finished(stats) {
            self.transcript.notice(NoticeLevel::Info, line);
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
        // and its servers' forms (the engine withdrew them: an answer would find nothing)
        self.forms.close_all();
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
