//! Background jobs (ARCHITECTURE.md §5.3): commands `bash` started with `background: true`
//! that keep running after the call returned (a dev server, a watcher, a long test run).
//!
//! A job starts exactly as any command does (`bash::start`: the same permission check before
//! it, the same sandbox, reaper and guard); only the waiting differs. A watcher task
//! (`watch.rs`) copies its output to a bounded log under the tool-output folder (`log.rs`) and
//! records how it ended. The session's table ([`Jobs`]) caps how many run at once, and ends
//! them all when the session ends or the engine stops; when pith dies however it dies, each
//! job's reaper ends its tree as it does for every command (`sandbox/reaper.rs`).

mod entry;
mod log;
pub(crate) mod start;
pub mod tools;
mod watch;

use std::sync::{Arc, Mutex};
use std::time::Duration;

pub(crate) use entry::Entry;
use pith_protocol::event::Job;

/// How long a stop may take before the job is reported as still ending.
const STOP_WAIT: Duration = Duration::from_secs(6);
/// Ended jobs kept in the table (for `/ps` and a last `job_output`), beyond the running ones.
const KEEP_ENDED: usize = 16;

/// Told the whole list whenever a job starts, ends or is stopped.
pub type OnChange = Arc<dyn Fn(Vec<Job>) + Send + Sync>;

/// A session's background jobs. Dropped, it stops every job still running.
pub struct Jobs {
    max: usize,
    table: Mutex<Table>,
    on_change: Mutex<Option<OnChange>>,
}

#[derive(Default)]
struct Table {
    last_id: u32,
    jobs: Vec<Arc<Entry>>,
}

impl std::fmt::Debug for Jobs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Jobs")
            .field("max", &self.max)
            .field("jobs", &self.list().len())
            .finish()
    }
}

impl Default for Jobs {
    fn default() -> Jobs {
        Jobs::new(pith_config::JobsConfig::default().max)
    }
}

impl Jobs {
    /// A table for at most `max` jobs running at once (`[jobs] max`).
    pub fn new(max: usize) -> Jobs {
        Jobs {
            max,
            table: Mutex::new(Table::default()),
            on_change: Mutex::new(None),
        }
    }

    /// Who is told when the list changes (the engine: an event for the front end).
    pub fn on_change(&self, f: OnChange) {
        *self.on_change.lock().unwrap_or_else(|e| e.into_inner()) = Some(f);
    }

    fn table(&self) -> std::sync::MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Every job still in the table, oldest first.
    pub fn list(&self) -> Vec<Job> {
        self.entries().iter().map(|e| e.info()).collect()
    }

    fn entries(&self) -> Vec<Arc<Entry>> {
        self.table().jobs.clone()
    }

    /// How many run now.
    pub fn running(&self) -> usize {
        self.entries().iter().filter(|e| e.is_running()).count()
    }

    /// Tells the listener the list as it now is.
    pub(crate) fn changed(&self) {
        let f = self
            .on_change
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        if let Some(f) = f {
            f(self.list());
        }
    }

    /// A new running job of `command` logging to `log`, unless `max` already run (the `Err`
    /// is for the model).
    pub(crate) fn admit(
        &self,
        command: &str,
        log: std::path::PathBuf,
    ) -> Result<Arc<Entry>, String> {
        let mut table = self.table();
        let running: Vec<&Arc<Entry>> = table.jobs.iter().filter(|e| e.is_running()).collect();
        if running.len() >= self.max {
            let names: Vec<String> = running
                .iter()
                .map(|e| format!("{} `{}`", e.id, e.short_command()))
                .collect();
            return Err(format!(
                "bash: {} background jobs are running, the most this session allows ([jobs] max = {}): {}. Stop one with job_kill, or run the command in the foreground.",
                running.len(),
                self.max,
                names.join(", ")
            ));
        }
        table.last_id += 1;
        let entry = Arc::new(Entry::new(table.last_id, command, log));
        table.jobs.push(entry.clone());
        // the oldest ended ones go first
        let ended = table.jobs.iter().filter(|e| !e.is_running()).count();
        if ended > KEEP_ENDED {
            let mut drop_n = ended - KEEP_ENDED;
            table.jobs.retain(|e| {
                if drop_n > 0 && !e.is_running() {
                    drop_n -= 1;
                    false
                } else {
                    true
                }
            });
        }
        Ok(entry)
    }

    /// Takes back a job that never started.
    pub(crate) fn forget(&self, id: u32) {
        self.table().jobs.retain(|e| e.id != id);
    }

    /// The job numbered `id`; the `Err` (for the model) names the jobs there are.
    pub(crate) fn get(&self, id: u32) -> Result<Arc<Entry>, String> {
        let entries = self.entries();
        if let Some(e) = entries.iter().find(|e| e.id == id) {
            return Ok(e.clone());
        }
        let known: Vec<String> = entries
            .iter()
            .map(|e| {
                format!(
                    "{} `{}` ({})",
                    e.id,
                    e.short_command(),
                    e.state().describe()
                )
            })
            .collect();
        Err(if known.is_empty() {
            format!("There is no background job {id}: this session has none.")
        } else {
            format!(
                "There is no background job {id}. This session's jobs: {}.",
                known.join(", ")
            )
        })
    }

    /// Stops job `id` and waits (a few seconds at most) until its tree is gone. `Ok(false)`:
    /// it had already ended.
    pub async fn kill(&self, id: u32) -> Result<bool, String> {
        let entry = self.get(id)?;
        if !entry.is_running() {
            return Ok(false);
        }
        entry.stop.cancel();
        let _ = tokio::time::timeout(STOP_WAIT, entry.gone.cancelled()).await;
        Ok(true)
    }

    /// Tells every running job to stop (at once, without waiting); the commands it stopped.
    pub fn stop_all(&self) -> Vec<String> {
        let mut stopped = Vec::new();
        for e in self.entries() {
            if e.is_running() && !e.stop.is_cancelled() {
                e.stop.cancel();
                stopped.push(e.command.clone());
            }
        }
        stopped
    }

    /// Stops every running job and waits (a few seconds at most) until their trees are gone:
    /// the session ends. The commands it stopped.
    pub async fn end_all(&self) -> Vec<String> {
        let entries = self.entries();
        let stopped = self.stop_all();
        for e in entries {
            let _ = tokio::time::timeout(STOP_WAIT, e.gone.cancelled()).await;
        }
        stopped
    }
}

impl Drop for Jobs {
    fn drop(&mut self) {
        self.stop_all();
    }
}

/// "ended 2 background jobs: npm run dev, cargo watch" (what `pith run` says at exit).
pub fn ended_line(commands: &[String]) -> Option<String> {
    if commands.is_empty() {
        return None;
    }
    let n = commands.len();
    let names: Vec<String> = commands
        .iter()
        .map(|c| pith_protocol::text::one_line_max(c, 60))
        .collect();
    Some(format!(
        "ended {n} background job{}: {}",
        if n == 1 { "" } else { "s" },
        names.join(", ")
    ))
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
