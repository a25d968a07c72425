//! The session loop: ops in, events out. Knows nothing of terminals.
//!
//! `spawn` starts two tasks: an op pump that handles what must be answered at once (interrupts,
//! permission replies, messages typed mid-turn) and the runner that owns the session.

mod accounting;
mod admit;
mod agent;
mod causes;
mod command_turn;
mod compaction;
mod compaction_host;
mod compaction_notice;
mod compactor;
mod emitter;
mod error;
pub mod factory;
mod goal;
pub mod hook_commands;
mod hook_state;
mod hooks;
mod hosted_search;
mod images;
mod instructions;
mod mcp;
mod mcp_error;
mod mcp_login;
mod mcp_ops;
mod mcp_session;
mod memory;
mod memory_ops;
mod mentions;
mod meter;
mod model;
mod nested_load;
mod ops;
mod pins;
pub mod prompt;
mod reader;
mod recall;
mod request;
mod request_frame;
mod runner;
mod sampling;
mod server_questions;
mod session_log;
mod session_ops;
mod session_parts;
mod shared;
mod shell;
pub mod shown_warnings;
mod skills;
pub mod snapshot;
mod step;
pub mod stored_history;
#[cfg(test)]
mod stored_view_tests;
mod subagent;
#[cfg(test)]
mod test_parts;
mod tool_exec;
mod tool_runtime;
mod turn;
mod turn_context;
mod undo;
mod window;
mod window_probe;

use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::mpsc;

use pith_config::Config;
use pith_protocol::event::{Event, EventMsg, SessionEvent, Submission, TurnEvent};
use pith_protocol::message::Session;
use pith_store::Store;

pub use compaction::CompactionError;
pub use error::EngineError;
pub use mcp_error::McpOpError;
pub use mcp_ops::Attachment;
pub use runner::Runner;

/// A running engine as a front end sees it.
pub struct EngineHandle {
    /// What the front end submits (`Submission::new(op)`, or `op.into()`).
    pub ops: mpsc::UnboundedSender<Submission>,
    /// What the engine reports: each event, and the op it answers when it answers one.
    pub events: mpsc::UnboundedReceiver<EventMsg>,
    /// Resolves when the engine has shut down: with the session it was on last (`None`: the
    /// engine failed).
    pub done: tokio::task::JoinHandle<Option<Ended>>,
}

/// The session an engine was on when it shut down.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ended {
    pub session_id: String,
    /// It holds messages (it is kept, and can be resumed).
    pub has_messages: bool,
    /// The commands of the background jobs the end stopped (ARCHITECTURE.md §5.3).
    pub jobs_ended: Vec<String>,
}

/// How the engine is set up.
#[derive(Clone)]
pub struct EngineOptions {
    pub config: Config,
    /// Canonical workspace root.
    pub workspace: PathBuf,
    pub data_dir: PathBuf,
    /// No one can answer permission questions: `ask` becomes deny unless `auto_yes`.
    pub headless: bool,
    /// `--yes`: every `ask` is allowed, except leaving the sandbox (and what
    /// [`pith_tools::permission::Permissions::yes_refusal`] names).
    pub auto_yes: bool,
    /// `--allow-unsandboxed`: `--yes` may approve running a command outside the sandbox.
    pub allow_unsandboxed: bool,
    /// The front end's editor, when it holds the files: the file tools read and write through
    /// it (`tools::editor`, ARCHITECTURE.md §7.1). `None`: the disk.
    pub editor: Option<Arc<dyn pith_tools::editor::EditorFiles>>,
    /// At shutdown, the workspace's sessions left without a message (and open nowhere) are
    /// removed: the TUI's `/new` and a start left at once leave no empty sessions behind. An
    /// editor (ACP) keeps them: it may load one by id later.
    pub remove_empty_sessions: bool,
    /// The user's folders global instruction files and the user's memory live in
    /// (`UserDirs::from_env()`; none in tests unless given).
    pub user_dirs: prompt::UserDirs,
    /// The skills found for this workspace (ARCHITECTURE.md §4.7); empty: no `skill` tool.
    pub skills: Arc<pith_config::skills::Skills>,
}

/// Starts an engine on `session` (already created or loaded from `store`).
pub fn spawn(
    opts: EngineOptions,
    store: Arc<Store>,
    session: Session,
) -> Result<EngineHandle, EngineError> {
    // Saved full tool outputs older than a week are removed, off the start-up path.
    let data_dir = opts.data_dir.clone();
    tokio::task::spawn_blocking(move || pith_tools::truncate::cleanup(&data_dir));
    let (op_tx, op_rx) = mpsc::unbounded_channel();
    let (ev_tx, ev_rx) = mpsc::unbounded_channel();
    let shared = Arc::new(shared::Shared {
        jobs: Arc::new(pith_tools::jobs::Jobs::new(opts.config.jobs.max)),
        ..shared::Shared::default()
    });
    let jobs_changed = ev_tx.clone();
    shared.jobs.on_change(Arc::new(move |jobs| {
        let _ = jobs_changed.send(Event::Session(SessionEvent::Jobs { jobs }).into());
    }));
    let jobs = shared.jobs.clone();
    let (ctl_tx, ctl_rx) = mpsc::unbounded_channel();
    let mcp = start_mcp(&opts, &ev_tx, &shared, ctl_tx.clone());
    let history = shared::HistorySource {
        store: store.clone(),
        events: ev_tx.clone(),
        mcp: (!mcp.is_empty()).then(|| mcp.clone()),
    };
    let sweep = opts.remove_empty_sessions.then(|| EmptySessions {
        store: store.clone(),
        directory: opts.workspace.to_string_lossy().into_owned(),
        data_dir: opts.data_dir.clone(),
    });
    // What building the runner says waits until it has opened the session (`Runner::open`).
    let (held, said) = mpsc::unbounded_channel();
    let mut runner = Runner::new(opts, store, session, held, shared.clone())?;
    runner.turn().attach_mcp(mcp);
    let on_panic = ev_tx.clone();
    let done = tokio::spawn(async move {
        let run = tokio::spawn(async move {
            runner.open(ev_tx, said).await;
            // ops wait until the front end has the session: its first events are the opening
            tokio::spawn(shared::pump(op_rx, shared, ctl_tx, history));
            runner.run(ctl_rx).await;
            // every job ends with the engine (and, if pith dies first, with pith: the reaper)
            let jobs_ended = jobs.end_all().await;
            Ended {
                jobs_ended,
                ..runner.end()
            }
        });
        let ended = run.await;
        if let Err(e) = &ended {
            report_panic(e, &on_panic);
        }
        // the runner is gone and its session's lock with it
        if let Some(sweep) = sweep {
            let _ = tokio::task::spawn_blocking(move || sweep.remove()).await;
        }
        ended.ok()
    });
    Ok(EngineHandle {
        ops: op_tx,
        events: ev_rx,
        done,
    })
}

/// The engine's MCP servers, started: a change of theirs wakes the runner, their questions
/// (elicitation, sampling) go to this engine's front end, and stored sign-ins are used.
fn start_mcp(
    opts: &EngineOptions,
    events: &mpsc::UnboundedSender<EventMsg>,
    shared: &Arc<shared::Shared>,
    notify: mpsc::UnboundedSender<shared::Control>,
) -> Arc<pith_mcp::McpManager> {
    let mcp = pith_mcp::McpManager::new(
        &opts.config,
        &opts.workspace,
        Arc::new(move || {
            let _ = notify.send(shared::Control::McpChanged);
        }),
    );
    mcp.set_questions(server_questions::for_engine(opts, events, shared));
    mcp.use_sign_ins(&opts.data_dir);
    mcp.start_all();
    mcp
}

/// A bug that panics the runner must not leave the front end waiting for the turn's end.
fn report_panic(e: &tokio::task::JoinError, events: &mpsc::UnboundedSender<EventMsg>) {
    if !e.is_panic() {
        return;
    }
    tracing::error!("the engine panicked: {e}");
    let _ = events.send(EngineError::Panicked.event().into());
    let _ = events.send(
        TurnEvent::TurnFinished {
            reason: pith_protocol::event::TurnEnd::Error,
        }
        .into(),
    );
}

/// The sessions an engine removes at shutdown when they have no message.
struct EmptySessions {
    store: Arc<Store>,
    directory: String,
    data_dir: PathBuf,
}

impl EmptySessions {
    fn remove(self) {
        if let Err(e) = self
            .store
            .remove_empty_sessions(&self.directory, &self.data_dir)
        {
            tracing::warn!("cannot remove the empty sessions: {e}");
        }
    }
}
