//! The runner owns one session: its view, the model, the tools, the context figures.

use std::sync::Arc;

use tokio::sync::mpsc;

use super::EngineOptions;
use super::compaction::{CompactRequest, CompactionError, Then, Trigger};
use super::prompt;
use super::shared::{Control, Prompt, Shared};
use crate::config::catalog;
use crate::context::budget::Budget;
use crate::context::overflow::{self, Limits};
use crate::context::tokens::Estimator;
use crate::context::tracker::ContextTracker;
use crate::event::{Breakdown, ContextUsage, EngineState, ErrorKind, Event, Op, TurnEnd};
use crate::llm::{AssistantContent, ChatMessage, ChatRequest, ToolSpec};
use crate::message::{Message, PartKind, Role, Session, ToolState, now_ms};
use crate::provider::retry::RetryPolicy;
use crate::provider::{self, Provider};
use crate::store::lock::SessionLock;
use crate::store::{PAGE_MESSAGES, Store};
use crate::tools::SessionToolState;
use crate::tools::permission::{DoomLoop, Permissions};
use crate::tools::registry::Registry;

/// The model a session talks to.
#[derive(Clone)]
pub(super) struct ModelSetup {
    /// "provider/model".
    pub name: String,
    pub provider: Arc<dyn Provider>,
    /// The id the provider knows.
    pub model_id: String,
    pub info: crate::config::ModelConfig,
    pub limits: Limits,
    /// Retries of its provider (`max_retries`, `max_retry_wait_secs`).
    pub retry: RetryPolicy,
    /// Its provider's timeouts, for saying what pith waits for.
    pub timeouts: provider::transport::Timeouts,
    /// The window is a guess (no config, not in the catalog): a local server is asked, and a
    /// window learned from a server replaces it.
    pub window_guessed: bool,
    /// Its server is on this machine or the local network.
    pub local: bool,
}

impl ModelSetup {
    pub fn build(
        config: &crate::config::Config,
        name: &str,
    ) -> anyhow::Result<(Self, Option<String>)> {
        let (provider, model_id) = provider::factory::build(config, name)?;
        let pc = provider::factory::split_model(name)
            .ok()
            .and_then(|(p, _)| config.provider.get(p));
        let retry = RetryPolicy::for_provider(pc);
        let timeouts = pc
            .map(provider::transport::Timeouts::from_config)
            .unwrap_or_default();
        let local = pc.is_some_and(|p| provider::openai::is_local(&p.base_url));
        let resolved = catalog::resolve(config, name);
        let info = resolved.info;
        let limits = Limits::from(&info);
        Ok((
            ModelSetup {
                name: name.to_string(),
                provider,
                model_id,
                info,
                limits,
                retry,
                timeouts,
                window_guessed: resolved.window_guessed,
                local,
            },
            resolved.warning,
        ))
    }
}

/// Counts are exact (tiktoken) once the context reaches this many tokens at the latest.
const EXACT_FROM: u64 = 16_000;

pub struct Runner {
    pub(super) opts: EngineOptions,
    pub(super) store: Arc<Store>,
    pub(super) session: Session,
    pub(super) events: super::emitter::Emitter,
    pub(super) shared: Arc<Shared>,
    /// The main agent, or a sub-agent and how deep it is (ARCHITECTURE.md §13).
    pub(super) role: super::subagent::AgentRole,
    /// What this session's sub-agents used (`/context`, the status bar).
    pub(super) subagents: crate::event::SubagentTotals,
    /// Input and output tokens of every request this runner made (a sub-agent's report).
    pub(super) spent_tokens: u64,
    /// The text of the last step's reply (a sub-agent's answer, whatever a compaction did to
    /// the view after it).
    pub(super) last_answer: String,
    /// The last error reported to the front end (a failed sub-agent's result says it).
    pub(super) last_error: std::sync::Mutex<Option<String>>,
    /// The model's view of the history in model order: from the latest completed compaction
    /// (its message, the summary, the verbatim tail) to the newest message (ARCHITECTURE.md §4.1).
    pub(super) view: Vec<Message>,
    pub(super) model: ModelSetup,
    pub(super) estimator: Estimator,
    pub(super) tracker: ContextTracker,
    pub(super) registry: Registry,
    pub(super) permissions: Permissions,
    pub(super) doom: DoomLoop,
    pub(super) tool_state: Arc<SessionToolState>,
    pub(super) system: Vec<String>,
    pub(super) tool_specs: Vec<ToolSpec>,
    /// Compactions in the current user turn (the breaker's count).
    pub(super) compactions_this_turn: u32,
    /// The first store write that failed in this turn.
    pub(super) store_failure: super::persist::StoreFailure,
    /// This engine is the session's only writer while it holds this.
    pub(super) lock: SessionLock,
    /// What the last compaction cost (`/context`).
    pub(super) last_compaction: Option<crate::event::CompactionCost>,
    /// Said when the local server asked for the window cannot tell it either.
    pub(super) window_warning: Option<String>,
    /// A summary being written ahead of the threshold.
    pub(super) background: Option<super::background::Background>,
    /// A local server being asked for its window (see `window.rs`).
    pub(super) window_probe: Option<tokio::task::JoinHandle<Option<(u64, String)>>>,
    /// The MCP servers' tools, status and attachments (see `mcp.rs`).
    pub(super) mcp: super::mcp::McpSession,
}

impl Runner {
    pub fn new(
        opts: EngineOptions,
        store: Arc<Store>,
        session: Session,
        events: mpsc::UnboundedSender<Event>,
        shared: Arc<Shared>,
    ) -> anyhow::Result<Self> {
        let events = super::emitter::Emitter::direct(events);
        let role = super::subagent::AgentRole::main();
        Self::build(opts, store, session, events, shared, role, None)
    }

    /// A runner for the main agent (`child: None`) or a sub-agent.
    pub(super) fn build(
        opts: EngineOptions,
        store: Arc<Store>,
        session: Session,
        events: super::emitter::Emitter,
        shared: Arc<Shared>,
        role: super::subagent::AgentRole,
        child: Option<super::subagent::ChildSetup>,
    ) -> anyhow::Result<Self> {
        let lock = SessionLock::acquire(&opts.data_dir, &session.id)?;
        let (model, warning) = ModelSetup::build(&opts.config, &session.model)?;
        let (registry, permissions) = super::subagent::tools_for(&opts.config, &role, child);
        let estimator = Estimator::lazy(&model.model_id);
        let mut runner = Runner {
            role,
            subagents: Default::default(),
            spent_tokens: 0,
            last_answer: String::new(),
            last_error: Default::default(),
            permissions,
            doom: DoomLoop::default(),
            tool_state: Arc::new(SessionToolState::default()),
            registry,
            tool_specs: Vec::new(),
            system: Vec::new(),
            estimator,
            tracker: ContextTracker::default(),
            view: Vec::new(),
            model,
            opts,
            store,
            session,
            events,
            shared,
            compactions_this_turn: 0,
            store_failure: Default::default(),
            lock,
            window_probe: None,
            mcp: Default::default(),
            last_compaction: None,
            background: None,
            window_warning: None,
        };
        runner.start_window(warning);
        runner.fit_prompt();
        runner.load_view()?;
        Ok(runner)
    }

    /// Estimated tokens of the system prompt and tool definitions, corrected by the learned
    /// ratio like every other estimate (a fixed figure would leave the bulk of a small request
    /// uncorrected after a compaction, a prune or a resume).
    pub(super) fn overhead(&mut self) -> u64 {
        self.estimator
            .request_overhead(&self.system, &self.tool_specs)
    }

    pub(super) fn emit(&self, event: Event) {
        if let Event::Error { message, .. } = &event
            && let Ok(mut last) = self.last_error.lock()
        {
            *last = Some(message.clone());
        }
        let _ = self.events.send(event);
    }

    pub(super) fn state(&self, state: EngineState, detail: Option<String>) {
        self.emit(Event::State { state, detail });
    }

    /// Loads the view from the store: only the messages from the session's compaction point on,
    /// reordered so that the compaction message and its summary come before the verbatim tail.
    /// What a crash left in them is repaired first (this engine holds the session's lock).
    pub(super) fn load_view(&mut self) -> anyhow::Result<()> {
        self.background = None;
        let (loaded, repairs) = self
            .store
            .open_view(&self.session.id, self.session.compaction_point.as_deref())?;
        if repairs.steps + repairs.tools > 0 {
            self.emit(Event::Info {
                message: "the last session ended before a step finished (pith was stopped); what was cut off is marked interrupted".into(),
            });
        }
        self.view = crate::context::view::model_order(loaded);
        self.reset_estimate();
        self.resume_from_last_report();
        Ok(())
    }

    /// On a resumed session the provider's last report is still the count of record: the
    /// figure is that report plus an estimate of what was added after it. A report from before
    /// the latest compaction no longer describes the context, so it is not used.
    fn resume_from_last_report(&mut self) {
        let after = match crate::context::view::compaction_point(&self.view) {
            Some(p) => self.view[p.summary].id.clone(),
            None => String::new(),
        };
        let Some(i) = self.view.iter().rposition(|m| {
            m.role == Role::Assistant && !m.summary && m.id > after && m.usage.context_tokens() > 0
        }) else {
            return;
        };
        let usage = self.view[i].usage;
        let mut added = 0;
        for m in &self.view[i + 1..] {
            added += self.estimator.message(m);
        }
        // The estimate of the request that report answered (everything before the reply).
        let mut estimated = self.overhead();
        for m in &self.view[..i] {
            estimated += self.estimator.message(m);
        }
        self.tracker.on_report(&usage, estimated);
        self.tracker.on_added(added);
    }

    /// Recomputes the context figure as an estimate of the next request.
    pub(super) fn reset_estimate(&mut self) {
        let estimate = self.estimate_request();
        self.tracker.on_reset(estimate);
    }

    /// An estimate of what the next request would occupy.
    pub(super) fn estimate_request(&mut self) -> u64 {
        self.overhead() + self.estimate_content()
    }

    /// An estimate of the next request's messages (without system prompt and tools).
    pub(super) fn estimate_content(&mut self) -> u64 {
        let mut total = 0;
        for m in &self.view {
            total += self.estimator.message(m);
        }
        total
    }

    /// The window-dependent figures of context management for the session's model.
    pub(super) fn budget(&self) -> Budget {
        Budget::new(&self.model.limits, &self.opts.config.compaction)
    }

    /// The limits of one tool output: as configured, and never more than about a quarter of
    /// the usable window (a 50 KB output would fill a 4k window four times over).
    pub(super) fn tool_output(&self) -> crate::config::ToolOutputConfig {
        let mut out = self.opts.config.tool_output.clone();
        out.max_bytes = out.max_bytes.min(self.budget().tool_output_bytes);
        out
    }

    pub(super) fn usable(&self) -> u64 {
        overflow::usable(&self.model.limits, &self.opts.config.compaction)
    }

    pub(super) fn context_usage(&self) -> ContextUsage {
        self.tracker
            .usage(&self.model.limits, &self.opts.config.compaction)
    }

    pub(super) fn emit_context(&mut self) {
        self.tune_estimator();
        self.emit(Event::ContextUsage(self.context_usage()));
        // a `/context` asked for during the turn is answered here, between steps and tools
        self.answer_breakdown();
    }

    fn answer_breakdown(&mut self) {
        if self
            .shared
            .breakdown_wanted
            .swap(false, std::sync::atomic::Ordering::SeqCst)
        {
            let b = self.breakdown();
            self.emit(Event::ContextBreakdown(b));
        }
    }

    /// The context size from which counts are exact: far below every threshold a decision
    /// depends on (the overflow point, the prune-protect window), and at most `EXACT_FROM`.
    fn exact_from(&self) -> u64 {
        let mut from = EXACT_FROM.min(self.budget().prune_protect / 2);
        let usable = self.usable();
        if usable > 0 {
            from = from.min(usable / 4);
        }
        from
    }

    /// A lazy estimator loads the BPE in the background at half of `exact_from`, and counts
    /// exactly from `exact_from` on (the estimate is then recounted).
    fn tune_estimator(&mut self) {
        if self.estimator.is_exact() {
            return;
        }
        let used = self.tracker.used();
        let from = self.exact_from();
        if used >= from / 2 {
            self.estimator.prefetch();
        }
        if used >= from {
            self.estimator.want_exact();
            if self.tracker.is_estimate() {
                self.reset_estimate();
            }
        }
    }

    /// Persists a message header and every part.
    pub(super) fn save_message(&self, m: &Message) {
        if let Err(e) = self.store.save_message(m) {
            self.store_failed(&format!("save message {}", m.id), &e);
        }
    }

    pub(super) fn save_part(&self, part: &crate::message::Part) {
        if let Err(e) = self.store.upsert_part(&self.session.id, part) {
            self.store_failed(&format!("save part {}", part.id), &e);
        }
    }

    pub(super) fn touch_session(&mut self) {
        self.session.time_updated = now_ms();
        if let Err(e) = self.store.update_session(&self.session) {
            self.store_failed("update the session", &e);
        }
    }

    /// Appends a message to the view, persists it and announces it.
    pub(super) fn push_message(&mut self, m: Message) -> usize {
        self.save_message(&m);
        self.emit(Event::Message { message: m.clone() });
        for p in &m.parts {
            self.emit(Event::PartUpdated { part: p.clone() });
        }
        let tokens = self.estimator.message(&m);
        self.tracker.on_added(tokens);
        self.view.push(m);
        self.view.len() - 1
    }

    /// Adds a user message with `text`; `synthetic` marks text pith wrote, not the user.
    pub(super) fn push_user_text(&mut self, text: &str, synthetic: bool) -> usize {
        let mut m = Message::new(&self.session.id, Role::User);
        m.push(PartKind::Text {
            text: text.to_string(),
            synthetic,
        });
        if self.session.title.is_empty() && !synthetic {
            self.session.title = title_from(text);
        }
        self.push_message(m)
    }

    /// Adds what the user typed, with the files it mentions; `mid_turn`: typed while the agent
    /// was working.
    pub(super) async fn push_prompt(&mut self, prompt: &Prompt, mid_turn: bool) -> usize {
        let mut m = Message::new(&self.session.id, Role::User);
        m.submission_id = Some(prompt.id.clone());
        m.mid_turn = mid_turn;
        m.command = prompt.label.clone();
        m.push(PartKind::Text {
            text: prompt.text.clone(),
            synthetic: false,
        });
        for part in self.attachment_parts() {
            m.push(part);
        }
        self.attach_mentions(&mut m, &prompt.text).await;
        if self.session.title.is_empty() {
            self.session.title = title_from(&prompt.text);
        }
        self.push_message(m)
    }

    /// The main loop: runs until shutdown.
    pub async fn run(&mut self, mut ctl: mpsc::UnboundedReceiver<Control>) {
        // Front ends start with the session they opened (the TUI has its transcript already):
        // the history is sent again only when the session changes.
        self.emit_context();
        self.state(EngineState::Idle, None);
        loop {
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
                Control::Op(Op::Shutdown) => break,
                Control::Op(op) => self.handle_op(op).await,
            }
        }
        self.touch_session();
        if let Some(m) = &self.mcp.manager {
            m.shutdown().await;
        }
    }

    async fn handle_op(&mut self, op: Op) {
        match op {
            // the pump answers these itself; one reaching the runner is answered the same way
            Op::LoadHistory { session_id, before } => {
                for event in super::shared::history_page(&self.store, &session_id, &before) {
                    self.emit(event);
                }
            }
            Op::Compact { focus } => {
                self.compactions_this_turn = 0;
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
                        self.emit(Event::Info { message });
                        TurnEnd::NothingToCompact
                    }
                    Err(CompactionError::Interrupted) => TurnEnd::Interrupted,
                    Err(e) => {
                        let kind = ErrorKind::Compaction;
                        self.emit(Event::Error {
                            kind,
                            message: e.to_string(),
                        });
                        TurnEnd::Error
                    }
                };
                // A write that failed meanwhile is the error to report.
                let reason = match self.take_store_failure() {
                    Some(message) => {
                        self.emit(Event::Error {
                            kind: ErrorKind::Store,
                            message,
                        });
                        TurnEnd::Error
                    }
                    None => reason,
                };
                self.emit(Event::TurnFinished { reason });
                self.state(EngineState::Idle, None);
            }
            Op::SetModel { model } => match ModelSetup::build(&self.opts.config, &model) {
                Ok((setup, warning)) => {
                    self.model = setup;
                    self.estimator = Estimator::lazy(&self.model.model_id);
                    self.start_window(warning);
                    self.fit_prompt();
                    self.session.model = model.clone();
                    self.touch_session();
                    self.reset_estimate();
                    self.refresh_tools();
                    self.emit(Event::ModelChanged { model });
                    self.emit_context();
                }
                Err(e) => self.emit(Event::Error {
                    kind: ErrorKind::Model,
                    message: format!("cannot switch to {model}: {e:#}"),
                }),
            },
            Op::NewSession => {
                match self
                    .store
                    .create_session(&self.opts.workspace.to_string_lossy(), &self.model.name)
                {
                    Ok(s) => self.switch_session(s),
                    Err(e) => self.emit(Event::Error {
                        kind: ErrorKind::Session,
                        message: format!("cannot create a session: {e:#}"),
                    }),
                }
            }
            Op::ResumeSession { id } => match self.store.find_session(&id) {
                Ok(Some(s)) => self.switch_session(s),
                Ok(None) => self.emit(Event::Error {
                    kind: ErrorKind::Session,
                    message: format!("no session {id}"),
                }),
                Err(e) => self.emit(Event::Error {
                    kind: ErrorKind::Session,
                    message: format!("cannot load session {id}: {e:#}"),
                }),
            },
            Op::ListSessions => match self.store.list_sessions() {
                Ok(sessions) => self.emit(Event::Sessions { sessions }),
                Err(e) => self.emit(Event::Error {
                    kind: ErrorKind::Session,
                    message: format!("cannot list sessions: {e:#}"),
                }),
            },
            Op::ListSubagents { session_id } => match self.store.children(&session_id) {
                Ok(sessions) => self.emit(Event::Sessions { sessions }),
                Err(e) => self.emit(Event::Error {
                    kind: ErrorKind::Session,
                    message: format!("cannot list sub-agent sessions: {e:#}"),
                }),
            },
            // answered here unless a step boundary of the turn already did
            Op::ContextBreakdown => self.answer_breakdown(),
            Op::Export { path } => self.export(path),
            Op::McpPrompt {
                id,
                server,
                prompt,
                args,
            } => match self.mcp_prompt_text(&server, &prompt, &args).await {
                Ok(text) => {
                    self.user_turn(vec![Prompt {
                        id,
                        text,
                        label: None,
                    }])
                    .await;
                }
                Err(message) => self.emit(Event::Error {
                    kind: ErrorKind::Mcp,
                    message,
                }),
            },
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
                };
                self.command_turn(prompt, model, agent).await
            }
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

    fn switch_session(&mut self, session: Session) {
        let lock = match SessionLock::acquire(&self.opts.data_dir, &session.id) {
            Ok(lock) => lock,
            Err(e) => {
                self.emit(Event::Error {
                    kind: ErrorKind::Session,
                    message: e.to_string(),
                });
                return;
            }
        };
        self.touch_session();
        self.lock = lock;
        self.session = session;
        self.enter_session_directory();
        self.tool_state = Arc::new(SessionToolState::default());
        self.permissions = Permissions::new(&self.opts.config.permission);
        self.doom = DoomLoop::default();
        // The correction ratio is per session: the new one learns its own from its reports.
        self.estimator = Estimator::lazy(&self.model.model_id);
        if self.session.model != self.model.name {
            match ModelSetup::build(&self.opts.config, &self.session.model) {
                Ok((setup, _)) => {
                    self.estimator = Estimator::lazy(&setup.model_id);
                    self.model = setup;
                }
                Err(e) => {
                    self.emit(Event::Info {
                        message: format!(
                            "model {} of that session is not available ({e:#}); using {}",
                            self.session.model, self.model.name
                        ),
                    });
                    self.session.model = self.model.name.clone();
                }
            }
        }
        self.tracker = ContextTracker::default();
        self.reset_mcp();
        if let Err(e) = self.load_view() {
            self.emit(Event::Error {
                kind: ErrorKind::Session,
                message: format!("cannot load session: {e:#}"),
            });
        }
        let page = self
            .store
            .load_page(&self.session.id, None, PAGE_MESSAGES)
            .unwrap_or_default();
        self.emit(Event::SessionLoaded {
            session: self.session.clone(),
            messages: page.messages,
            more_history: page.more,
        });
        self.emit_context();
    }

    /// A session resumed from another directory runs there: its tools, its instructions. A
    /// directory that is gone leaves the session here, and says so.
    fn enter_session_directory(&mut self) {
        let dir = std::path::PathBuf::from(&self.session.directory);
        let canonical = dir.canonicalize().ok().filter(|d| d.is_dir());
        match canonical {
            Some(d) if d == self.opts.workspace => {}
            Some(d) => {
                tracing::info!(dir = %d.display(), "resumed session: working in its directory");
                self.opts.workspace = d;
                self.fit_prompt();
            }
            None if self.session.directory.is_empty() => {}
            None => {
                self.emit(Event::Info {
                    message: format!(
                        "the session's directory {} is gone; it continues in {}",
                        self.session.directory,
                        self.opts.workspace.display()
                    ),
                });
                self.session.directory = self.opts.workspace.to_string_lossy().into_owned();
            }
        }
    }

    fn export(&self, path: Option<String>) {
        let messages = match self.store.load_all(&self.session.id) {
            Ok(m) => m,
            Err(e) => {
                self.emit(Event::Error {
                    kind: ErrorKind::Export,
                    message: format!("cannot export: {e:#}"),
                });
                return;
            }
        };
        let path = export_path(
            path.as_deref(),
            &self.opts.workspace,
            &self.opts.data_dir,
            &self.session.id,
        );
        if let Some(dir) = path.parent()
            && let Err(e) = std::fs::create_dir_all(dir)
        {
            self.emit(Event::Error {
                kind: ErrorKind::Export,
                message: format!("cannot create {}: {e}", dir.display()),
            });
            return;
        }
        let text = if path.extension().is_some_and(|e| e == "json") {
            serde_json::to_string_pretty(&crate::store::export::export_json(
                &self.session,
                &messages,
            ))
            .unwrap_or_default()
        } else {
            crate::store::export::export_markdown(&self.session, &messages)
        };
        match std::fs::write(&path, text) {
            Ok(()) => self.emit(Event::Info {
                message: format!("exported to {}", path.display()),
            }),
            Err(e) => self.emit(Event::Error {
                kind: ErrorKind::Export,
                message: format!("cannot write {}: {e}", path.display()),
            }),
        }
    }

    /// What the context is made of, for `/context`.
    pub(super) fn breakdown(&mut self) -> Breakdown {
        self.refresh_tools();
        let mut b = Breakdown {
            window: self.model.limits.context,
            last_compaction: self.last_compaction,
            subagents: self.subagents,
            ..Breakdown::default()
        };
        b.system = self.system.iter().map(|s| self.estimator.text(s)).sum();
        b.tools = self.overhead().saturating_sub(b.system);
        for m in &self.view {
            for p in &m.parts {
                let t = self.estimator.part(p);
                match &p.kind {
                    PartKind::Tool {
                        state: ToolState::Completed { time, output, .. },
                        ..
                    } => {
                        if time.compacted.is_some() {
                            b.pruned += self.estimator.text(output);
                            b.tool_outputs += t;
                        } else {
                            b.tool_outputs += t;
                        }
                    }
                    _ if m.summary => b.summary += t,
                    _ => b.messages += t,
                }
            }
        }
        let used = self.context_usage().used;
        let usable = self.usable();
        b.reserved = b.window.saturating_sub(usable);
        b.free = usable.saturating_sub(used);
        b
    }

    /// The request for the next step of the main agent.
    pub(super) fn build_request(&self, last_step: bool) -> ChatRequest {
        let images = self.takes_images();
        let refs: Vec<&Message> = self.view.iter().collect();
        let mut messages = crate::context::view::convert(&refs, &mut |path, mime| {
            super::mentions::image_content(path, mime, images)
        });
        if last_step {
            messages.push(ChatMessage::Assistant {
                content: vec![AssistantContent::Text {
                    text: prompt::MAX_STEPS_PROMPT.trim_end().to_string(),
                }],
            });
        }
        ChatRequest {
            model: self.model.model_id.clone(),
            system: self.system.clone(),
            messages,
            tools: if last_step {
                Vec::new()
            } else {
                self.tool_specs.clone()
            },
            max_tokens: self.max_tokens(),
            temperature: None,
            thinking_budget: self.model.info.thinking_budget,
        }
    }

    /// The output cap of every request: the room the overflow test keeps for the reply, so the
    /// reserve is real (the provider picks the field that carries it).
    pub(super) fn max_tokens(&self) -> Option<u32> {
        Some(overflow::max_output(&self.model.limits).min(u64::from(u32::MAX)) as u32)
    }
}

/// Converts messages already in model order to wire messages (ARCHITECTURE.md §4.2).
pub(super) fn to_wire(messages: &[Message]) -> Vec<ChatMessage> {
    let refs: Vec<&Message> = messages.iter().collect();
    crate::context::view::convert(&refs, &mut |_, _| None)
}

/// Where `/export [path]` writes: `~/…` is the home directory, a relative path is relative to the
/// workspace, and with no path the export goes to `<data_dir>/exports/` (never into the
/// repository unasked).
pub(super) fn export_path(
    path: Option<&str>,
    workspace: &std::path::Path,
    data_dir: &std::path::Path,
    session_id: &str,
) -> std::path::PathBuf {
    match path.map(str::trim).filter(|p| !p.is_empty()) {
        Some(p) => crate::tools::path::resolve(workspace, p).path,
        None => data_dir
            .join("exports")
            .join(format!("pith-session-{session_id}.md")),
    }
}

/// A session title from the first user message.
pub(super) fn title_from(text: &str) -> String {
    let line = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    let mut title: String = line.chars().take(60).collect();
    if line.chars().count() > 60 {
        title.push('…');
    }
    title
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn export_paths() {
        let ws = std::path::Path::new("/nonexistent-ws");
        let data = std::path::Path::new("/nonexistent-data");
        assert_eq!(
            export_path(None, ws, data, "S1"),
            data.join("exports/pith-session-S1.md")
        );
        assert_eq!(
            export_path(Some("out/x.md"), ws, data, "S1"),
            ws.join("out/x.md")
        );
        if let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
            let home = std::path::PathBuf::from(home);
            let got = export_path(Some("~/x.md"), ws, data, "S1");
            assert!(got.ends_with("x.md") && !got.starts_with(ws), "{got:?}");
            assert!(
                got.starts_with(home.canonicalize().unwrap_or(home.clone()))
                    || got.starts_with(&home),
                "{got:?}"
            );
        }
    }

    #[test]
    fn titles_are_cut() {
        assert_eq!(title_from("\n  fix the bug  \nmore"), "fix the bug");
        assert_eq!(title_from(&"x".repeat(80)).chars().count(), 61);
    }
}
