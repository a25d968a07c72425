//! One ACP session: a pith session, its engine (started once the workspace's trust is
//! settled), the pump that turns the engine's events into `session/update`s, and the prompt
//! waiting for its turn to end.

mod elicitation;
mod permission;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use agent_client_protocol_schema::v1::{
    FileSystemCapabilities, SessionNotification, SessionUpdate, StopReason,
};
use tokio::sync::{mpsc, oneshot};

use super::files::ClientFiles;
use super::replay::Pages;
use super::rpc::{Connection, RpcError};
use super::translate::{self, Translator};
use pith_config::mcp::McpServerConfig;
use pith_engine as engine;
use pith_launch::{FrontEnd, Setup};
use pith_protocol::event::{
    ContextEvent, Event, EventMsg, McpServerStatus, Op, OutputEvent, SessionEvent, SettingsEvent,
    Submission, SubmissionId, TurnEnd, TurnEvent,
};

/// What ends the prompt being answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Awaiting {
    /// A turn or a `/compact`: `TurnFinished`.
    Turn,
    /// `/context`, `/undo`, `/redo`, `/export`, `/model`: the first event that answers the op
    /// (names its submission): the breakdown, `Undone`, the notice, `ModelChanged`, an error.
    Answer,
}

struct Waiter {
    awaiting: Awaiting,
    /// The op it waits on.
    submission: SubmissionId,
    tx: oneshot::Sender<Result<StopReason, RpcError>>,
    /// Errors reported during the turn, and a refused prompt's message.
    errors: Vec<String>,
    refused: Option<String>,
}

pub struct Session {
    pub id: String,
    pub conn: Arc<Connection>,
    pub setup: tokio::sync::Mutex<Setup>,
    pub workspace: PathBuf,
    /// MCP servers the client asked for, added to the configuration.
    pub client_mcp: Vec<(String, McpServerConfig)>,
    ops: Mutex<Option<mpsc::UnboundedSender<pith_protocol::event::Submission>>>,
    waiter: Mutex<Option<Waiter>>,
    busy: AtomicBool,
    cancelled: AtomicBool,
    pub auto_yes: AtomicBool,
    /// The permission mode the editor chose (`session/set_mode`), applied when the engine starts.
    pub mode: Mutex<pith_protocol::event::PermissionMode>,
    /// The MCP servers as last reported (their prompts are slash commands).
    pub mcp: Mutex<Vec<McpServerStatus>>,
    /// What of its file system the client offers (`initialize`): the file tools use it.
    fs: FileSystemCapabilities,
}

impl Session {
    pub fn new(
        id: String,
        conn: Arc<Connection>,
        setup: Setup,
        client_mcp: Vec<(String, McpServerConfig)>,
        fs: FileSystemCapabilities,
    ) -> Session {
        Session {
            id,
            conn,
            workspace: setup.workspace.clone(),
            setup: tokio::sync::Mutex::new(setup),
            client_mcp,
            ops: Mutex::new(None),
            waiter: Mutex::new(None),
            busy: AtomicBool::new(false),
            cancelled: AtomicBool::new(false),
            auto_yes: AtomicBool::new(false),
            mode: Mutex::new(Default::default()),
            mcp: Mutex::new(Vec::new()),
            fs,
        }
    }

    pub fn update(&self, update: SessionUpdate) {
        self.conn.notify(
            "session/update",
            SessionNotification::new(self.id.clone(), update),
        );
    }

    pub fn send(&self, op: Op) -> Result<(), RpcError> {
        self.submit(op.into())
    }

    fn submit(&self, submission: Submission) -> Result<(), RpcError> {
        let ops = self.ops.lock().ok().and_then(|o| o.clone());
        match ops {
            Some(tx) => tx
                .send(submission)
                .map_err(|_| RpcError::internal("the session's engine has stopped")),
            None => Err(RpcError::internal("the session's engine is not running")),
        }
    }

    pub fn engine_started(&self) -> bool {
        self.ops.lock().is_ok_and(|o| o.is_some())
    }

    /// Starts the engine on the stored session (once). `replay` (`session/load`): the
    /// session's history is shown first, as the engine gives it.
    pub async fn start_engine(self: &Arc<Self>, replay: bool) -> Result<(), RpcError> {
        if self.engine_started() {
            return Ok(());
        }
        let mut handle = {
            let setup = self.setup.lock().await;
            let row = setup
                .store
                .find_session(&self.id)
                .map_err(|e| RpcError::internal(format!("{e:#}")))?
                .ok_or_else(|| RpcError::invalid_params(format!("no session {}", self.id)))?;
            let opts = setup.engine_options(FrontEnd::Editor {
                auto_yes: self.auto_yes.load(Ordering::Relaxed),
                mode: self.mode.lock().map(|m| *m).unwrap_or_default(),
                mcp: self.client_mcp.clone(),
                files: ClientFiles::offered(self.conn.clone(), &self.id, &self.fs),
            });
            engine::spawn(opts, setup.store.clone(), row).map_err(|e| {
                RpcError::internal(format!(
                    "cannot start the engine: {:#}",
                    anyhow::Error::from(e)
                ))
            })?
        };
        if let Ok(mut ops) = self.ops.lock() {
            *ops = Some(handle.ops.clone());
        }
        let (pages, read) = self.opening(&mut handle, replay).await?;
        if replay {
            self.replay(pages.messages());
        }
        tokio::spawn(pump(self.clone(), handle, read, pages.cost));
        Ok(())
    }

    /// Reads the engine's first events up to the session it opened and, for `replay`, asks
    /// for every older page of its history (`Op::LoadHistory`). Returns the history and every
    /// event read, for the pump to handle in order.
    async fn opening(
        &self,
        handle: &mut engine::EngineHandle,
        replay: bool,
    ) -> Result<(Pages, Vec<EventMsg>), RpcError> {
        let mut pages = Pages::default();
        let mut read = Vec::new();
        let mut asked: Option<String> = None;
        loop {
            if pages.opened() {
                let before = pages.before().filter(|_| replay).map(str::to_string);
                // a page that brought nothing older ends the asking
                if before.is_none() || before == asked {
                    return Ok((pages, read));
                }
                self.send(Op::LoadHistory {
                    session_id: self.id.clone(),
                    before: before.clone().unwrap_or_default(),
                })?;
                asked = before;
            }
            loop {
                let Some(event) = handle.events.recv().await else {
                    return Err(RpcError::internal("the session's engine stopped"));
                };
                let page = pages.absorb(&event.event);
                read.push(event);
                if page {
                    break;
                }
            }
        }
    }

    /// Shows `messages` (a stored session's history) as updates.
    pub fn replay(&self, messages: &[pith_protocol::message::Message]) {
        for update in super::replay::updates(&self.workspace, messages) {
            self.update(update);
        }
    }

    pub fn shutdown(&self) {
        let _ = self.send(Op::Shutdown);
    }

    /// `session/cancel`: the running turn is interrupted; its prompt answers `cancelled`.
    pub fn cancel(&self) {
        if self.busy.load(Ordering::SeqCst) {
            self.cancelled.store(true, Ordering::SeqCst);
            let _ = self.send(Op::Interrupt);
        }
    }

    /// Sends `op` and waits for what ends it. One prompt at a time.
    pub async fn run(&self, op: Op, awaiting: Awaiting) -> Result<StopReason, RpcError> {
        let (tx, rx) = oneshot::channel();
        let submission = Submission::new(op);
        if let Ok(mut w) = self.waiter.lock() {
            *w = Some(Waiter {
                awaiting,
                submission: submission.id.clone(),
                tx,
                errors: Vec::new(),
                refused: None,
            });
        }
        self.submit(submission)?;
        let end = rx
            .await
            .unwrap_or_else(|_| Err(RpcError::internal("the session's engine stopped")));
        if self.cancelled.load(Ordering::SeqCst) {
            return Ok(StopReason::Cancelled);
        }
        end
    }

    /// Marks the session busy for the life of the guard; `None` when a prompt already runs.
    pub fn begin(&self) -> Option<BusyGuard<'_>> {
        if self.busy.swap(true, Ordering::SeqCst) {
            return None;
        }
        self.cancelled.store(false, Ordering::SeqCst);
        Some(BusyGuard(&self.busy))
    }

    /// Ends the waiting prompt when `msg` is what it waits for.
    fn settle(&self, msg: &EventMsg) {
        let Ok(mut slot) = self.waiter.lock() else {
            return;
        };
        let Some(w) = slot.as_mut() else { return };
        let end = match (w.awaiting, &msg.event) {
            (Awaiting::Turn, Event::Turn(TurnEvent::Error { message, .. })) => {
                w.errors.push(message.clone());
                None
            }
            (Awaiting::Turn, Event::Session(SessionEvent::PromptRefused { message, .. })) => {
                w.refused = Some(message.clone());
                None
            }
            (Awaiting::Turn, Event::Turn(TurnEvent::TurnFinished { reason })) => {
                Some(turn_end(w, reason))
            }
            (Awaiting::Answer, _) if msg.submission() == Some(&w.submission) => {
                Some(Ok(StopReason::EndTurn))
            }
            _ => None,
        };
        if let Some(end) = end
            && let Some(w) = slot.take()
        {
            let _ = w.tx.send(end);
        }
    }

    fn awaiting(&self) -> Option<Awaiting> {
        self.waiter.lock().ok()?.as_ref().map(|w| w.awaiting)
    }
}

pub struct BusyGuard<'a>(&'a AtomicBool);

impl Drop for BusyGuard<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::SeqCst);
    }
}

/// How a turn's end answers the prompt: an error the turn ended with is a JSON-RPC error; a
/// refused prompt is a refusal (its reason shown).
fn turn_end(w: &mut Waiter, reason: &TurnEnd) -> Result<StopReason, RpcError> {
    if let Some(refused) = w.refused.take() {
        return Err(RpcError::internal(refused));
    }
    Ok(match reason {
        TurnEnd::Error => {
            let message = if w.errors.is_empty() {
                "the turn failed (details in pith's log)".to_string()
            } else {
                w.errors.join("\n")
            };
            return Err(RpcError::internal(message));
        }
        TurnEnd::Length => StopReason::MaxTokens,
        TurnEnd::MaxSteps => StopReason::MaxTurnRequests,
        TurnEnd::Interrupted => StopReason::Cancelled,
        TurnEnd::ContentFilter => StopReason::Refusal,
        _ => StopReason::EndTurn,
    })
}

/// Text a front end shows for an answer that is not streamed (`/context`, `/undo`, …).
fn answer_text(event: &Event) -> Option<String> {
    Some(match event {
        Event::Turn(TurnEvent::Info { message }) => message.clone(),
        Event::Turn(TurnEvent::Error { message, .. }) => format!("Error: {message}"),
        Event::Settings(SettingsEvent::ModelChanged { model }) => format!("Now using {model}."),
        Event::Session(SessionEvent::Undone { prompt, files, .. }) => format!(
            "Took back the turn \"{}\" ({} files restored).",
            pith_protocol::text::one_line(prompt),
            files.len()
        ),
        Event::Session(SessionEvent::Redone { files, .. }) => {
            format!("Put the turn back ({} files).", files.len())
        }
        Event::Context(ContextEvent::ContextBreakdown {
            breakdown: b,
            pins,
            instructions,
        }) => super::commands::context_text(b, pins, instructions),
        Event::Session(SessionEvent::MemoryFiles { files }) => super::commands::memory_text(files),
        Event::Session(SessionEvent::Jobs { jobs }) => super::commands::jobs_text(jobs),
        Event::Session(SessionEvent::PinsChanged { pins, .. }) => super::commands::pins_text(pins),
        Event::Session(SessionEvent::GoalChanged { goal }) => {
            super::commands::goal_text(goal.as_ref())
        }
        Event::Turn(TurnEvent::GoalChecked { met, detail, .. }) => format!(
            "Goal check: {} ({detail})",
            if *met { "met" } else { "not met yet" }
        ),
        // streamed, or no answer of an editor's command
        Event::Turn(
            TurnEvent::PermissionAsked(_)
            | TurnEvent::ElicitationAsked(_)
            | TurnEvent::Retrying { .. }
            | TurnEvent::State { .. }
            | TurnEvent::TurnFinished { .. },
        )
        | Event::Settings(
            SettingsEvent::McpStatus { .. }
            | SettingsEvent::McpResources { .. }
            | SettingsEvent::EffortChanged { .. }
            | SettingsEvent::PermissionModeChanged { .. },
        )
        | Event::Session(
            SessionEvent::SessionLoaded { .. }
            | SessionEvent::History { .. }
            | SessionEvent::Sessions { .. }
            | SessionEvent::Recalled { .. }
            | SessionEvent::PromptRefused { .. },
        )
        | Event::Context(
            ContextEvent::ContextUsage(_)
            | ContextEvent::CompactionStarted { .. }
            | ContextEvent::CompactionFinished { .. }
            | ContextEvent::CompactionAhead { .. }
            | ContextEvent::Pruned { .. }
            | ContextEvent::ContextWindow { .. }
            | ContextEvent::InstructionsLoaded { .. },
        )
        | Event::Output(_)
        | Event::Subagent(_) => return None,
    })
}

/// What the pump does with an event besides updating the client: a permission question goes to
/// the user, the MCP servers' status renews the command list. Every event is named, so a new one
/// is decided here (the translator, `translate.rs`, decides its updates).
async fn react(session: &Arc<Session>, event: &Event) {
    match event {
        Event::Turn(TurnEvent::PermissionAsked(req)) => {
            tokio::spawn(permission::ask(session.clone(), req.clone()));
        }
        Event::Turn(TurnEvent::ElicitationAsked(req)) => {
            tokio::spawn(elicitation::ask(session.clone(), req.clone()));
        }
        Event::Settings(SettingsEvent::McpStatus { servers }) => {
            if let Ok(mut m) = session.mcp.lock() {
                *m = servers.clone();
            }
            super::commands::announce(session).await;
        }
        // the rest only updates the client (the pump's translator) or ends a prompt (`settle`)
        Event::Turn(
            TurnEvent::Retrying { .. }
            | TurnEvent::State { .. }
            | TurnEvent::Info { .. }
            | TurnEvent::Error { .. }
            | TurnEvent::TurnFinished { .. }
            | TurnEvent::GoalChecked { .. },
        )
        | Event::Settings(
            SettingsEvent::McpResources { .. }
            | SettingsEvent::ModelChanged { .. }
            | SettingsEvent::EffortChanged { .. }
            | SettingsEvent::PermissionModeChanged { .. },
        )
        | Event::Output(
            OutputEvent::Message { .. }
            | OutputEvent::PartUpdated { .. }
            | OutputEvent::MessageRemoved { .. }
            | OutputEvent::PartsRemoved { .. }
            | OutputEvent::TextDelta { .. }
            | OutputEvent::ReasoningDelta { .. }
            | OutputEvent::ToolStarted { .. }
            | OutputEvent::ToolOutput { .. }
            | OutputEvent::ToolFinished { .. }
            | OutputEvent::StepFinished { .. },
        )
        | Event::Context(
            ContextEvent::ContextUsage(_)
            | ContextEvent::CompactionStarted { .. }
            | ContextEvent::CompactionFinished { .. }
            | ContextEvent::CompactionAhead { .. }
            | ContextEvent::Pruned { .. }
            | ContextEvent::ContextWindow { .. }
            | ContextEvent::ContextBreakdown { .. }
            | ContextEvent::InstructionsLoaded { .. },
        )
        | Event::Session(
            SessionEvent::SessionLoaded { .. }
            | SessionEvent::History { .. }
            | SessionEvent::PinsChanged { .. }
            | SessionEvent::GoalChanged { .. }
            | SessionEvent::MemoryFiles { .. }
            | SessionEvent::Jobs { .. }
            | SessionEvent::Sessions { .. }
            | SessionEvent::Recalled { .. }
            | SessionEvent::PromptRefused { .. }
            | SessionEvent::Undone { .. }
            | SessionEvent::Redone { .. },
        )
        // a sub-agent's question arrives unwrapped, as a `PermissionAsked` naming its agent
        // (pith-engine's emitter.rs): what comes wrapped only updates the client
        | Event::Subagent(_) => {}
    }
}

/// Reads the engine's events until it stops: updates to the client, questions to the user,
/// ends to the waiting prompt.
async fn pump(
    session: Arc<Session>,
    mut handle: engine::EngineHandle,
    read: Vec<EventMsg>,
    cost: f64,
) {
    let mut t = Translator::new(session.workspace.clone(), cost);
    let mut read = read.into_iter();
    loop {
        let msg = match read.next() {
            Some(msg) => msg,
            None => match handle.events.recv().await {
                Some(msg) => msg,
                None => break,
            },
        };
        let event = &msg.event;
        react(&session, event).await;
        for update in t.updates(event) {
            session.update(update);
        }
        // a turn's errors end it (the prompt's error); its notices are shown as they come
        let shown = match session.awaiting() {
            // and a goal's checks, as its turns go on
            Some(Awaiting::Turn) => matches!(
                event,
                Event::Turn(TurnEvent::Info { .. } | TurnEvent::GoalChecked { .. })
            ),
            // the goal a session starts with is no answer to anything
            None => !matches!(event, Event::Session(SessionEvent::GoalChanged { .. })),
            Some(Awaiting::Answer) => true,
        };
        if shown
            && !super::commands::unasked_jobs(&msg)
            && let Some(text) = answer_text(event)
        {
            session.update(translate::message_chunk(format!("\n\n{text}\n")));
        }
        session.settle(&msg);
    }
    if let Ok(mut ops) = session.ops.lock() {
        *ops = None;
    }
    if let Ok(mut w) = session.waiter.lock()
        && let Some(w) = w.take()
    {
        let _ =
            w.tx.send(Err(RpcError::internal("the session's engine stopped")));
    }
}
