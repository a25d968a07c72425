//! What the ops that reach the runner do (the pump answers the rest itself): `/compact`,
//! `/model`, `/effort`, `/new`, a resume, `/context`, `/export`, MCP prompts, `!command`,
//! custom commands, undo, redo and rewind.

use crate::compaction::{CompactRequest, CompactionError, Then, Trigger};
use crate::error::EngineError;
use crate::model::ModelSetup;
use crate::shared::Prompt;
use crate::turn_context::Turn;
use pith_protocol::event::{EngineState, Event, Op, SettingsEvent, TurnEnd, TurnEvent};

impl Turn<'_> {
    /// The session starts (the front end has it and its figure, see `Runner::open`): says the
    /// effort and a permission mode other than the default, runs the `session_start` hooks and
    /// goes idle.
    pub(crate) async fn start(&mut self) {
        // The front end has the session and its figure (`open`).
        self.warn_effort_not_sent();
        if let Some(effort) = self.effort() {
            self.emit(SettingsEvent::EffortChanged {
                effort: Some(effort),
            });
        }
        let mode = self.opts.config.permission_mode;
        if mode != pith_protocol::event::PermissionMode::Default {
            self.emit(SettingsEvent::PermissionModeChanged { mode });
        }
        let source = if self.log.view().is_empty() {
            "startup"
        } else {
            "resume"
        };
        self.session_start_hooks(source).await;
        self.announce_goal();
        self.state(EngineState::Idle, None);
    }

    pub(crate) async fn handle_op(&mut self, op: Op) {
        match op {
            Op::Compact { focus } => self.manual_compact(focus).await,
            Op::Pin { text } => self.pin(text),
            Op::Unpin { number } => self.unpin(number),
            Op::SetEffort { effort } => {
                self.opts.config.effort = effort;
                self.warn_effort_not_sent();
                self.emit(SettingsEvent::EffortChanged {
                    effort: self.effort(),
                });
            }
            Op::SetModel { model } => self.switch_model(model),
            Op::NewSession => self.new_session().await,
            Op::ResumeSession { id } => self.resume_session(&id).await,
            // answered here unless a step boundary of the turn already did
            Op::ContextBreakdown => self.answer_breakdown(),
            Op::Export { path } => self.export(path),
            Op::McpPrompt {
                id,
                server,
                prompt,
                args,
            } => self.mcp_prompt_turn(id, &server, &prompt, &args).await,
            Op::Shell { id, command } => self.shell(id, command).await,
            Op::RunCommand {
                id,
                label,
                text,
                model,
                agent,
            } => {
                let prompt = Prompt {
                    id,
                    text,
                    label: Some(label),
                    pasted: Vec::new(),
                };
                self.command_turn(prompt, model, agent).await
            }
            Op::Undo => self.undo().await,
            Op::Redo => self.redo().await,
            Op::Rewind { message_id } => self.rewind(&message_id).await,
            Op::Goal { id, action } => self.goal_op(id, action).await,
            Op::Remember { text, scope } => self.remember(&text, scope),
            Op::ListMemory => self.list_memory(),
            // the pump answers these itself, or sets them aside for `apply_settings`, or queues
            // them: none reaches the runner
            Op::UserTurn { .. }
            | Op::LoadHistory { .. }
            | Op::Recall { .. }
            | Op::ListSessions
            | Op::ListSubagents { .. }
            | Op::SetAutoYes { .. }
            | Op::SetPermissionMode { .. }
            | Op::Interrupt
            | Op::PermissionReply { .. }
            | Op::Shutdown
            | Op::ListMcpResources
            | Op::AttachMcpResource { .. }
            | Op::RestartMcpServer { .. }
            | Op::ListJobs
            | Op::KillJob { .. }
            | Op::ElicitationReply { .. }
            | Op::McpLogin { .. } => {}
        }
    }

    /// `/compact [focus]`: compacts now, and ends the turn it is with what came of it.
    pub(crate) async fn manual_compact(&mut self, focus: Option<String>) {
        self.compactor.start_turn();
        // A summary written ahead knows nothing of the focus: this one is written with it.
        self.compactor.drop_background();
        let cancel = self.shared.fresh_cancel();
        self.settle_window().await;
        let req = CompactRequest {
            trigger: Trigger::Manual { focus },
            then: Then::Stop,
        };
        let result = self.compact(req, &cancel).await;
        let reason = match result {
            Ok(_) => TurnEnd::Compacted,
            Err(CompactionError::NothingToCompact(message)) => {
                self.emit(Event::info(message));
                TurnEnd::NothingToCompact
            }
            Err(CompactionError::Interrupted) => TurnEnd::Interrupted,
            Err(e) => {
                self.report(EngineError::Compaction(e));
                TurnEnd::Error
            }
        };
        // A write that failed meanwhile is the error to report.
        let reason = match self.log.take_failure() {
            Some(e) => {
                self.report(e);
                TurnEnd::Error
            }
            None => reason,
        };
        self.update_compaction_notice();
        self.emit(TurnEvent::TurnFinished { reason });
        self.state(EngineState::Idle, None);
    }

    /// `/model`: the session goes on with `model`.
    fn switch_model(&mut self, model: String) {
        match ModelSetup::build(&self.opts.config, &model) {
            Ok((setup, warning)) => {
                *self.model = setup;
                self.meter.use_model(&self.model.model_id);
                self.start_window(warning);
                self.fit_prompt();
                self.log.set_model(model.clone());
                self.touch_session();
                self.reset_estimate();
                self.refresh_tools();
                self.emit(SettingsEvent::ModelChanged { model });
                self.emit(SettingsEvent::EffortChanged {
                    effort: self.effort(),
                });
                self.emit_context();
            }
            Err(source) => self.report(EngineError::SwitchModel { model, source }),
        }
    }

    /// `/new`: a new session, with the `session_start` hooks of a cleared one.
    async fn new_session(&mut self) {
        match self
            .log
            .store()
            .create_session(&self.opts.workspace.to_string_lossy(), &self.model.name)
        {
            Ok(s) => {
                self.switch_session(s);
                self.session_start_hooks("clear").await;
            }
            Err(e) => self.report(EngineError::CreateSession(e)),
        }
    }

    /// Goes on with the stored session `id`.
    async fn resume_session(&mut self, id: &str) {
        match self.log.store().find_session(id) {
            Ok(Some(s)) => {
                self.switch_session(s);
                self.session_start_hooks("resume").await;
            }
            Ok(None) => self.report(EngineError::NoSession(id.to_string())),
            Err(e) => self.report(EngineError::ReadSession {
                id: id.to_string(),
                source: e,
            }),
        }
    }

    /// An MCP prompt: its text, from the server, is the user's turn.
    async fn mcp_prompt_turn(&mut self, id: String, server: &str, prompt: &str, args: &str) {
        match self.mcp_prompt_text(server, prompt, args).await {
            Ok(text) => {
                self.user_turn(vec![Prompt {
                    id,
                    text,
                    label: None,
                    pasted: Vec::new(),
                }])
                .await;
            }
            Err(e) => self.report(e.into()),
        }
    }
}
