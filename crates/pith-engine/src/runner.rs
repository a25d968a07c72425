//! The runner owns one session: its view, the model, the tools, the context figures.

use std::sync::Arc;

use tokio::sync::mpsc;

use super::EngineOptions;
use super::compaction::{CompactRequest, CompactionError, Then, Trigger};
use super::prompt;
use super::shared::{Control, Prompt, Shared};
use crate::error::{EngineError, with_causes};
use crate::model::ModelSetup;
use pith_context::overflow;
use pith_protocol::event::{EngineState, Event, Op, Submission, SubmissionId, TurnEnd};
use pith_protocol::llm::{AssistantContent, ChatMessage, ChatRequest};
use pith_protocol::message::{Message, PartKind, Role, Session};
use pith_store::Store;
use pith_store::lock::SessionLock;

pub struct Runner {
    pub(super) opts: EngineOptions,
    /// The session, its store, its view and where its events go.
    pub(super) log: super::session_log::SessionLog,
    pub(super) shared: Arc<Shared>,
    /// The main agent, or a sub-agent and how deep it is (ARCHITECTURE.md §13).
    pub(super) role: super::agent::AgentRole,
    /// What this runner did (a sub-agent's report) and what its sub-agents used.
    pub(super) record: super::agent::RunRecord,
    pub(super) model: ModelSetup,
    /// The context figure and the estimator behind it.
    pub(super) meter: super::meter::Meter,
    /// The tools, their permissions and the MCP servers' tools.
    pub(super) tools: super::tool_runtime::ToolRuntime,
    pub(super) system: Vec<String>,
    /// The breaker's count, the last compaction's cost, the summary written ahead.
    pub(super) compactor: super::compactor::Compactor,
    /// A local server being asked for the window (see `window.rs`).
    pub(super) window: super::window_probe::WindowProbe,
    /// The user's hooks and what they gave the model (see `hooks.rs`).
    pub(super) hooks: super::hook_state::HookState,
    /// The submission being handled: the errors reported meanwhile answer it.
    pub(super) answering: Option<SubmissionId>,
}

impl Runner {
    pub fn new(
        opts: EngineOptions,
        store: Arc<Store>,
        session: Session,
        events: mpsc::UnboundedSender<Event>,
        shared: Arc<Shared>,
    ) -> Result<Self, EngineError> {
        let events = super::emitter::Emitter::direct(events);
        let role = super::agent::AgentRole::main();
        Self::build(opts, store, session, events, shared, role, None)
    }

    /// Opens the session for the front end, whose events go to `events` from now on. A local
    /// server asked for its window answers first (within the probe's 2 s); then the front end
    /// gets the session with the newest page of its history and the context figure (with the
    /// window), and only then what starting said (`said`: a crash repaired, a model warning,
    /// the window learned).
    pub(crate) async fn open(
        &mut self,
        events: mpsc::UnboundedSender<Event>,
        mut said: mpsc::UnboundedReceiver<Event>,
    ) {
        self.settle_window().await;
        self.log.send_to(super::emitter::Emitter::direct(events));
        self.announce_session();
        while let Ok(event) = said.try_recv() {
            self.log.emit(event);
        }
    }

    /// A runner for the main agent (`child: None`) or a sub-agent.
    pub(super) fn build(
        opts: EngineOptions,
        store: Arc<Store>,
        session: Session,
        events: super::emitter::Emitter,
        shared: Arc<Shared>,
        role: super::agent::AgentRole,
        child: Option<super::agent::ChildSetup>,
    ) -> Result<Self, EngineError> {
        let lock = SessionLock::acquire(&opts.data_dir, &session.id)?;
        let (model, warning) = ModelSetup::build(&opts.config, &session.model)?;
        let (registry, permissions) = super::agent::tools_for(&opts.config, &role, child);
        let meter = super::meter::Meter::new(&model.model_id);
        let hooks = Arc::new(crate::hook_commands::Hooks::new(
            &opts.config,
            &opts.workspace,
            &opts.data_dir,
        ));
        let mut runner = Runner {
            hooks: super::hook_state::HookState::new(hooks),
            role,
            record: Default::default(),
            tools: super::tool_runtime::ToolRuntime::new(registry, permissions),
            system: Vec::new(),
            meter,
            log: super::session_log::SessionLog::new(store, session, lock, events),
            model,
            opts,
            shared,
            compactor: Default::default(),
            answering: None,
            window: Default::default(),
        };
        runner.start_window(warning);
        runner.fit_prompt();
        runner.load_view()?;
        Ok(runner)
    }

    /// Sends an event; one that answers an op names the submission being handled.
    pub(super) fn emit(&self, event: Event) {
        if let Event::Error { message, .. } | Event::PromptRefused { message, .. } = &event {
            self.record.note_error(message);
        }
        let event = match &self.answering {
            Some(id) => event.answering(id),
            None => event,
        };
        self.log.emit(event);
    }

    /// Reports an error to the front end, naming the submission being handled.
    pub(super) fn report(&self, e: EngineError) {
        self.emit(e.event_for(self.answering.clone()));
    }

    pub(super) fn state(&self, state: EngineState, detail: Option<String>) {
        self.emit(Event::State { state, detail });
    }

    /// Applies the `--yes` and permission-mode changes the pump set aside, in order.
    pub(super) fn apply_settings(&mut self) {
        for Submission { id, op } in self.shared.take_settings() {
            let answering = self.answering.replace(id);
            match op {
                Op::SetAutoYes { on } => self.opts.auto_yes = on,
                Op::SetPermissionMode { mode } => self.set_permission_mode(mode),
                _ => {}
            }
            self.answering = answering;
        }
        // a sub-agent follows the mode its tree's user chose last, even mid-run
        if self.shared.parent_cancel.is_some()
            && let Some(mode) = self.shared.mode.lock().ok().and_then(|m| *m)
        {
            self.opts.config.permission_mode = mode;
        }
    }

    pub(super) fn set_permission_mode(&mut self, mode: pith_protocol::event::PermissionMode) {
        if let Ok(mut m) = self.shared.mode.lock() {
            *m = Some(mode);
        }
        if mode != self.opts.config.permission_mode {
            self.opts.config.permission_mode = mode;
            self.emit(Event::PermissionModeChanged {
                mode,
                submission: None,
            });
        }
    }

    pub(super) fn touch_session(&mut self) {
        // the one context figure, as the status bar shows it (ARCHITECTURE.md §6.3)
        self.log.touch(self.meter.used());
    }

    /// Appends a message to the view, persists it and announces it.
    pub(super) fn push_message(&mut self, m: Message) -> usize {
        self.meter.add_message(&m);
        self.log.push(m)
    }

    /// Adds a user message with `text`; `synthetic` marks text pith wrote, not the user.
    pub(super) fn push_user_text(&mut self, text: &str, synthetic: bool) -> usize {
        let mut m = Message::new(self.log.session_id(), Role::User);
        m.push(PartKind::Text {
            text: text.to_string(),
            synthetic,
        });
        if !synthetic {
            self.log
                .title_if_untitled(|| super::session_log::title_from(text));
        }
        self.push_message(m)
    }

    /// The main loop: runs until shutdown.
    pub async fn run(&mut self, mut ctl: mpsc::UnboundedReceiver<Control>) {
        // The front end has the session and its figure (`open`).
        self.warn_effort_not_sent();
        if let Some(effort) = self.effort() {
            self.emit(Event::EffortChanged {
                effort: Some(effort),
                submission: None,
            });
        }
        let mode = self.opts.config.permission_mode;
        if mode != pith_protocol::event::PermissionMode::Default {
            self.emit(Event::PermissionModeChanged {
                mode,
                submission: None,
            });
        }
        let source = if self.log.view().is_empty() {
            "startup"
        } else {
            "resume"
        };
        self.session_start_hooks(source).await;
        self.state(EngineState::Idle, None);
        loop {
            self.apply_settings();
            // Queued user messages start a turn.
            let queued = self.shared.take_queue();
            if !queued.is_empty() {
                self.user_turn(queued).await;
                continue;
            }
            let Some(control) = ctl.recv().await else {
                break;
            };
            match control {
                Control::Wake => {}
                Control::McpChanged => {
                    self.refresh_tools();
                    self.emit_context();
                }
                Control::Op(Submission {
                    op: Op::Shutdown, ..
                }) => break,
                Control::Op(submission) => {
                    self.answering = Some(submission.id);
                    self.handle_op(submission.op).await;
                    self.answering = None;
                }
            }
        }
        self.touch_session();
        if let Some(m) = self.tools.mcp().manager() {
            m.shutdown().await;
        }
    }

    /// The session this runner is on, as it ends. Left without a message, it is removed first
    /// when the front end asked for that (`remove_empty_sessions`), while this runner still
    /// holds its lock: a lock just let go can still look held for a moment, to a child process
    /// forked meanwhile that has not yet exec'd.
    pub(super) fn end(&self) -> super::Ended {
        let id = self.log.session_id();
        let count = self.log.store().message_count(id);
        if self.opts.remove_empty_sessions
            && count.as_ref().is_ok_and(|n| *n == 0)
            && let Err(e) = self.log.store().delete_session(id)
        {
            tracing::warn!("cannot remove the empty session {id}: {e}");
        }
        super::Ended {
            session_id: id.to_string(),
            has_messages: count.is_ok_and(|n| n > 0),
        }
    }

    async fn handle_op(&mut self, op: Op) {
        match op {
            // the pump answers these itself; one reaching the runner is answered the same way
            Op::LoadHistory { session_id, before } => {
                for event in super::shared::history_page(self.log.store(), &session_id, &before) {
                    self.emit(event);
                }
            }
            Op::Compact { focus } => self.manual_compact(focus).await,
            Op::SetPermissionMode { mode } => self.set_permission_mode(mode),
            Op::SetEffort { effort } => {
                self.opts.config.effort = effort;
                self.warn_effort_not_sent();
                self.emit(Event::EffortChanged {
                    effort: self.effort(),
                    submission: None,
                });
            }
            Op::SetModel { model } => self.switch_model(model),
            Op::NewSession => self.new_session().await,
            Op::ResumeSession { id } => self.resume_session(&id).await,
            Op::ListSessions => self.list_sessions(),
            Op::ListSubagents { session_id } => self.list_subagents(&session_id),
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
            Op::SetAutoYes { on } => self.opts.auto_yes = on,
            Op::Undo => self.undo().await,
            Op::Redo => self.redo().await,
            Op::Rewind { message_id } => self.rewind(&message_id).await,
            Op::UserTurn { .. }
            | Op::Interrupt
            | Op::PermissionReply { .. }
            | Op::Shutdown
            | Op::ListMcpResources
            | Op::AttachMcpResource { .. }
            | Op::RestartMcpServer { .. } => {}
        }
    }

    /// `/compact [focus]`: compacts now, and ends the turn it is with what came of it.
    async fn manual_compact(&mut self, focus: Option<String>) {
        self.compactor.start_turn();
        let cancel = self.shared.fresh_cancel();
        self.settle_window().await;
        let req = CompactRequest {
            trigger: Trigger::Manual { focus },
            then: Then::Stop,
        };
        let result = super::compactor::compact(self, req, &cancel).await;
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
        self.emit(Event::TurnFinished { reason });
        self.state(EngineState::Idle, None);
    }

    /// `/model`: the session goes on with `model`.
    fn switch_model(&mut self, model: String) {
        match ModelSetup::build(&self.opts.config, &model) {
            Ok((setup, warning)) => {
                self.model = setup;
                self.meter.use_model(&self.model.model_id);
                self.start_window(warning);
                self.fit_prompt();
                self.log.set_model(model.clone());
                self.touch_session();
                self.reset_estimate();
                self.refresh_tools();
                self.emit(Event::ModelChanged {
                    model,
                    submission: None,
                });
                self.emit(Event::EffortChanged {
                    effort: self.effort(),
                    submission: None,
                });
                self.emit_context();
            }
            Err(e) => self.report(EngineError::SwitchModel {
                cause: with_causes(&e),
                model,
            }),
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
            Err(e) => self.report(EngineError::CreateSession(format!("{e:#}"))),
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
                cause: format!("{e:#}"),
            }),
        }
    }

    fn list_sessions(&self) {
        match self.log.store().list_sessions() {
            Ok(sessions) => self.emit(Event::Sessions {
                sessions,
                submission: None,
            }),
            Err(e) => self.report(EngineError::ListSessions(format!("{e:#}"))),
        }
    }

    fn list_subagents(&self, session_id: &str) {
        match self.log.store().children(session_id) {
            Ok(sessions) => self.emit(Event::Sessions {
                sessions,
                submission: None,
            }),
            Err(e) => self.report(EngineError::ListSubagents(format!("{e:#}"))),
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

    /// The request for the next step of the main agent.
    pub(super) fn build_request(&self, last_step: bool) -> ChatRequest {
        let images = self.takes_images();
        let refs: Vec<&Message> = self.log.view().iter().collect();
        let mut messages = pith_context::view::convert(&refs, &mut |path, mime| {
            super::images::image_content(path, mime, images)
        });
        if last_step {
            messages.push(ChatMessage::Assistant {
                content: vec![AssistantContent::Text {
                    text: prompt::MAX_STEPS_PROMPT.trim_end().to_string(),
                }],
            });
        }
        let (system, tools) = self.request_frame();
        ChatRequest {
            model: self.model.model_id.clone(),
            system: system.into_owned(),
            messages,
            tools: if last_step {
                Vec::new()
            } else {
                tools.into_owned()
            },
            max_tokens: self.max_tokens(),
            temperature: None,
            thinking_budget: self.model.info.thinking_budget,
            reasoning_effort: self.effort(),
        }
    }

    /// The reasoning effort of every request: the session's (`--effort`, `/effort`), else the
    /// model's; none when the provider does not take one (it would never be sent).
    pub(super) fn effort(&self) -> Option<pith_protocol::llm::ReasoningEffort> {
        self.opts
            .config
            .effort
            .or(self.model.info.reasoning_effort)
            .filter(|_| self.model.provider.takes_effort())
    }

    /// The session asks for a reasoning effort its provider does not take: says it is not sent.
    fn warn_effort_not_sent(&mut self) {
        if self.opts.config.effort.is_none() || self.model.provider.takes_effort() {
            return;
        }
        let provider = self.model.name.split('/').next().unwrap_or_default();
        let message = format!(
            "not sent: {provider} does not take a reasoning effort (set reasoning_effort = true in [provider.{provider}] if it does)"
        );
        self.emit(Event::Info {
            message,
            submission: None,
        });
    }

    /// The output cap of every request: the room the overflow test keeps for the reply, so the
    /// reserve is real (the provider picks the field that carries it).
    pub(super) fn max_tokens(&self) -> Option<u32> {
        Some(overflow::max_output(&self.model.limits).min(u64::from(u32::MAX)) as u32)
    }
}
