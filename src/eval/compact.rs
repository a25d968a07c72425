//! The `pith` strategy: the scenario stored as a fresh session in a temporary data directory,
//! compacted by pith's own engine (`Op::Compact`, the configured model as summariser, at the
//! scenario's window), and the context the next request would carry read back from the store.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, bail};
use pith_launch::{FrontEnd, Setup};
use pith_protocol::event::{Event, Op, TurnEnd, TurnEvent};
use pith_store::Store;

use super::ask::Model;
use super::scenario::Scenario;

/// A directory removed when dropped.
struct TempDir(PathBuf);

/// The prefix of an eval's temporary directories: `pith-eval-PID-N`.
const PREFIX: &str = "pith-eval-";

impl TempDir {
    fn new() -> anyhow::Result<TempDir> {
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if n == 0 {
            sweep_stale(&std::env::temp_dir());
        }
        let dir = std::env::temp_dir().join(format!("{PREFIX}{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        Ok(TempDir(dir))
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Removes the directories an eval killed before it could clean up left in `tmp` (a process
/// that no longer runs). Only where a process can be looked up by its id (Linux's `/proc`).
fn sweep_stale(tmp: &Path) {
    if !cfg!(target_os = "linux") {
        return;
    }
    let Ok(entries) = std::fs::read_dir(tmp) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let pid = name
            .strip_prefix(PREFIX)
            .and_then(|rest| rest.split('-').next())
            .and_then(|p| p.parse::<u32>().ok());
        let Some(pid) = pid else {
            continue;
        };
        let alive = Path::new(&format!("/proc/{pid}")).exists();
        if !alive && e.file_type().is_ok_and(|t| t.is_dir()) {
            tracing::info!("removing {} left by an eval that ended", e.path().display());
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// What pith's compaction of `s` leaves in the request, as text.
pub(super) async fn context(setup: &Setup, model: &Model, s: &Scenario) -> anyhow::Result<String> {
    let dir = TempDir::new()?;
    let store = Arc::new(Store::open(dir.path())?);
    let directory = setup.workspace.to_string_lossy().into_owned();
    let session = store.create_session(&directory, &model.name)?;
    for m in super::seed::messages(s, &session.id, &model.name) {
        store.save_message(&m)?;
    }
    let opts = options(setup, model, s.window(), dir.path());
    let mut handle = pith_engine::spawn(opts, store.clone(), session.clone())?;
    let _ = handle.ops.send(Op::Compact { focus: None }.into());
    let mut error = None;
    let end = loop {
        let Some(msg) = handle.events.recv().await else {
            break TurnEnd::Error;
        };
        match msg.event {
            Event::Turn(TurnEvent::Error { message, .. }) => error = Some(message),
            Event::Turn(TurnEvent::TurnFinished { reason }) => break reason,
            // what the compaction leaves is read from the store afterwards
            Event::Turn(_)
            | Event::Output(_)
            | Event::Context(_)
            | Event::Session(_)
            | Event::Settings(_)
            | Event::Subagent(_) => {}
        }
    };
    let _ = handle.ops.send(Op::Shutdown.into());
    let _ = handle.done.await;
    match end {
        // too little to compact: the next request carries the history as it is
        TurnEnd::Compacted | TurnEnd::NothingToCompact => {}
        _ => bail!(
            "{}",
            error.unwrap_or_else(|| format!("{}: the compaction did not finish", s.name))
        ),
    }
    let session = store.get_session(&session.id)?;
    let view = store.load_view(&session.id, session.compaction_point.as_deref())?;
    Ok(super::transcript::of_view(
        &pith_context::view::model_order(view),
    ))
}

/// The headless engine's options over a temporary data directory, the model's window set to
/// `window`, with no MCP servers or hooks (an eval starts nothing of the user's).
fn options(
    setup: &Setup,
    model: &Model,
    window: u64,
    data_dir: &Path,
) -> pith_engine::EngineOptions {
    let mut opts = setup.engine_options(FrontEnd::Headless {
        auto_yes: false,
        allow_unsandboxed: false,
    });
    opts.data_dir = data_dir.to_path_buf();
    opts.config.model = Some(model.name.clone());
    opts.config.mcp.clear();
    opts.config.hooks = Default::default();
    // the measurement is the same on every machine: no global instruction files
    opts.user_dirs = Default::default();
    opts.skills = Default::default();
    let mut info = model.info.clone();
    info.context = window;
    info.input = None;
    opts.config.models.insert(model.name.clone(), info);
    opts
}
