//! The task that watches one background job: it copies the job's output to its log, waits for
//! the job to end or to be stopped, ends its tree the way a stopped command's is ended
//! (`bash::settle`: the reaper SIGKILLs the namespace or the group), runs the sandbox guard's
//! last check, and records how the job ended.

use std::os::fd::OwnedFd;
use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::io::AsyncReadExt;

use super::{Entry, Jobs};
use crate::bash::{End, Started, settle};
use crate::editor::BackgroundHold;
use pith_protocol::event::JobState;

/// After the job's shell ended, how long to keep reading while something still holds the pipe.
const DRAIN_IDLE: Duration = Duration::from_millis(200);
const DRAIN_MAX: Duration = Duration::from_secs(2);
/// How often the sandbox guard checks a running job (besides each `job_output`, `job_kill`,
/// the end of every foreground command, and the job's end).
const GUARD_EVERY: Duration = Duration::from_secs(30);

/// Starts the watcher of `entry`, whose command `started` is; `hold` is let go once the tree
/// is gone.
pub(super) fn spawn(entry: Arc<Entry>, started: Started, hold: BackgroundHold, jobs: Weak<Jobs>) {
    let Started {
        mut child,
        guard,
        reader,
        ..
    } = started;
    tokio::spawn(async move {
        let mut rx = tokio::net::unix::pipe::Receiver::from_owned_fd(OwnedFd::from(reader)).ok();
        let mut buf = vec![0u8; 16 * 1024];
        let mut eof = rx.is_none();
        let mut status = None;
        let mut guard_tick = tokio::time::interval(GUARD_EVERY);
        guard_tick.tick().await;
        let stopped = loop {
            if status.is_some() {
                break false;
            }
            tokio::select! {
                biased;
                _ = entry.stop.cancelled() => break true,
                n = read(&mut rx, &mut buf), if !eof => match n {
                    0 => eof = true,
                    n => entry.push(&buf[..n]),
                },
                st = child.wait() => status = Some(st.ok()),
                _ = guard_tick.tick() => {
                    let e = entry.clone();
                    // (off the async workers, and without holding up the reading)
                    drop(tokio::task::spawn_blocking(move || e.check_guard()));
                }
            }
        };
        let end = if stopped { End::Cancelled } else { End::Exited };
        let status = settle(guard, &mut child, end, status.flatten()).await;
        if !eof && let Some(rx) = &mut rx {
            drain(rx, &mut buf, &entry).await;
        }
        let e = entry.clone();
        let _ = tokio::task::spawn_blocking(move || e.last_check()).await;
        let state = if stopped {
            JobState::Killed
        } else {
            JobState::Exited {
                code: status.and_then(|s| s.code()),
                signal: status.and_then(|s| std::os::unix::process::ExitStatusExt::signal(&s)),
            }
        };
        tracing::debug!(job = entry.id, ?state, "background job ended");
        drop(hold);
        entry.finish(state);
        if let Some(jobs) = jobs.upgrade() {
            jobs.changed();
        }
    });
}

/// One read of the pipe; 0 at its end (or when it cannot be read).
async fn read(rx: &mut Option<tokio::net::unix::pipe::Receiver>, buf: &mut [u8]) -> usize {
    match rx {
        Some(rx) => rx.read(buf).await.unwrap_or(0),
        None => 0,
    }
}

/// Reads what is still in the pipe once the job's shell is gone.
async fn drain(rx: &mut tokio::net::unix::pipe::Receiver, buf: &mut [u8], entry: &Entry) {
    let started = tokio::time::Instant::now();
    while started.elapsed() < DRAIN_MAX {
        match tokio::time::timeout(DRAIN_IDLE, rx.read(buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) | Err(_) => break,
            Ok(Ok(n)) => entry.push(&buf[..n]),
        }
    }
}
