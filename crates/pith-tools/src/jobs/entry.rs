//! One background job as the table holds it: what it runs, its log, how it stands, and the
//! handles that stop it and say it is gone.

use std::path::PathBuf;
use std::sync::Mutex;

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::log::{JobLog, NewOutput};
use crate::sandbox::Guard;
use pith_protocol::event::{Job, JobState};

/// What the sandbox guard of a job checks against, to take a fresh record after each check.
pub(crate) struct GuardSpec {
    pub(crate) workspace: PathBuf,
    pub(crate) repair: bool,
    pub(crate) writable: Vec<PathBuf>,
}

pub(crate) struct Entry {
    pub(crate) id: u32,
    pub(crate) command: String,
    /// Unix milliseconds.
    pub(crate) started: i64,
    log: Mutex<JobLog>,
    state: Mutex<JobState>,
    /// What the sandbox guard found and the model was not yet told.
    notes: Mutex<Vec<String>>,
    /// The guard held while the job runs (sandboxed jobs only), and how to take it again.
    guard: Mutex<Option<(Guard, GuardSpec)>>,
    /// Cancelled to stop the job's tree.
    pub(crate) stop: CancellationToken,
    /// Cancelled once the tree is gone and the state is final.
    pub(crate) gone: CancellationToken,
    /// Bytes written to the log so far (watched while the call that started it settles).
    pub(crate) written: watch::Sender<u64>,
}

impl Entry {
    pub(super) fn new(id: u32, command: &str, log: PathBuf) -> Entry {
        Entry {
            id,
            command: command.to_string(),
            started: pith_protocol::message::now_ms(),
            log: Mutex::new(JobLog::new(log)),
            state: Mutex::new(JobState::Running),
            notes: Mutex::new(Vec::new()),
            guard: Mutex::new(None),
            stop: CancellationToken::new(),
            gone: CancellationToken::new(),
            written: watch::Sender::new(0),
        }
    }

    pub(crate) fn state(&self) -> JobState {
        *self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn is_running(&self) -> bool {
        self.state().running()
    }

    /// The command on one line, bounded (for lists and titles).
    pub(crate) fn short_command(&self) -> String {
        pith_protocol::text::one_line_max(&self.command, 60)
    }

    pub(crate) fn info(&self) -> Job {
        Job {
            id: self.id,
            command: self.command.clone(),
            started: self.started,
            state: self.state(),
            last_line: self.log().last_line(),
        }
    }

    fn log(&self) -> std::sync::MutexGuard<'_, JobLog> {
        self.log.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn log_path(&self) -> PathBuf {
        self.log().path().to_path_buf()
    }

    /// Output read from the job's pipe.
    pub(super) fn push(&self, chunk: &[u8]) {
        let total = {
            let mut log = self.log();
            log.push(chunk);
            log.total()
        };
        self.written.send_replace(total);
    }

    /// What the job printed since the last read (at most a bounded tail of it).
    pub(crate) fn read_new(&self) -> NewOutput {
        self.log().read_new()
    }

    /// Arms the sandbox guard the job's command was started with.
    pub(super) fn hold_guard(&self, guard: Guard, spec: GuardSpec) {
        *self.guard.lock().unwrap_or_else(|e| e.into_inner()) = Some((guard, spec));
    }

    /// Checks now what the job may have planted (see `sandbox/guard.rs`) and takes a fresh
    /// record for the rest of its run. Blocking (it walks the writable roots).
    pub(crate) fn check_guard(&self) {
        let mut held = self.guard.lock().unwrap_or_else(|e| e.into_inner());
        let Some((guard, spec)) = held.take() else {
            return;
        };
        let found = guard.after();
        if self.is_running() {
            let fresh = Guard::before(&spec.workspace, spec.repair).scanning(&spec.writable);
            *held = Some((fresh, spec));
        }
        drop(held);
        self.note(found);
    }

    /// The final check, once the tree is gone. Blocking.
    pub(super) fn last_check(&self) {
        let held = self.guard.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some((guard, _)) = held {
            self.note(guard.after());
        }
    }

    pub(super) fn note(&self, notes: Vec<String>) {
        self.notes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend(notes);
    }

    /// The guard's findings not yet told, taken.
    pub(crate) fn take_notes(&self) -> Vec<String> {
        std::mem::take(&mut *self.notes.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// The job ended: its tree is gone.
    pub(super) fn finish(&self, state: JobState) {
        self.log().flush();
        *self.state.lock().unwrap_or_else(|e| e.into_inner()) = state;
        self.gone.cancel();
    }

    /// How long it has run (or ran until now), in words: `12 s`, `3 min`, `2 h 5 min`.
    pub(crate) fn age(&self) -> String {
        pith_protocol::event::age(pith_protocol::message::now_ms() - self.started)
    }
}
