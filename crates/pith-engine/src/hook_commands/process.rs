//! Running one hook command: `bash -c` in the workspace, the event as JSON on stdin, stdout and
//! stderr captured (never the terminal's), bounded in time and size.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

/// The most of stdout, and of stderr, kept from one hook.
pub const MAX_OUTPUT: usize = 64 * 1024;
/// How long the pipes may stay open after the hook's process ended (a background process of
/// its own holding them).
const DRAIN: Duration = Duration::from_millis(500);
/// How long the reaper gets to end the tree before the group is killed.
const STOP_GRACE: Duration = Duration::from_millis(500);

/// How a hook's process ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Exit {
    /// Its exit code.
    Code(i32),
    /// Killed by this signal (not by pith).
    Signal(i32),
    /// It ran past its timeout and was killed, with everything it started.
    TimedOut,
    /// The turn was interrupted; it was killed.
    Cancelled,
    /// It could not be started.
    NotStarted(String),
}

/// What one hook did.
#[derive(Debug, Clone)]
pub(super) struct Ran {
    pub exit: Exit,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `command` with `input` on its stdin. `prepare` sets the environment and the process
/// setup (a session of its own under the reaper, pith's keys withheld).
pub(super) async fn run(
    command: &str,
    cwd: &Path,
    input: &[u8],
    timeout: Duration,
    cancel: &CancellationToken,
    prepare: &(dyn Fn(&mut tokio::process::Command) -> std::io::Result<()> + Sync),
) -> Ran {
    let not_started = |e: String| Ran {
        exit: Exit::NotStarted(e),
        stdout: String::new(),
        stderr: String::new(),
    };
    let mut cmd = tokio::process::Command::new("bash");
    cmd.arg("-c")
        .arg(command)
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if let Err(e) = prepare(&mut cmd) {
        return not_started(e.to_string());
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return not_started(format!("cannot start bash: {e}")),
    };
    let pid = child.id().map(|p| p as i32);
    // The input is written on the side: a hook that does not read it must not block pith.
    if let Some(mut stdin) = child.stdin.take() {
        let input = input.to_vec();
        tokio::spawn(async move {
            let _ = stdin.write_all(&input).await;
            let _ = stdin.shutdown().await;
        });
    }
    let out = tokio::spawn(read_capped(child.stdout.take()));
    let err = tokio::spawn(read_capped(child.stderr.take()));

    let exit = tokio::select! {
        biased;
        _ = cancel.cancelled() => None,
        r = tokio::time::timeout(timeout, child.wait()) => match r {
            Ok(Ok(status)) => Some(match (status.code(), std::os::unix::process::ExitStatusExt::signal(&status)) {
                (Some(c), _) => Exit::Code(c),
                (None, Some(s)) => Exit::Signal(s),
                _ => Exit::Code(-1),
            }),
            Ok(Err(e)) => Some(Exit::NotStarted(format!("waiting for it failed: {e}"))),
            Err(_) => Some(Exit::TimedOut),
        },
    };
    let exit = match exit {
        Some(Exit::TimedOut) | None => {
            stop(pid, &mut child).await;
            exit.unwrap_or(Exit::Cancelled)
        }
        Some(e) => e,
    };
    let stdout = drained(out).await;
    let stderr = drained(err).await;
    Ran {
        exit,
        stdout,
        stderr,
    }
}

/// Ends the hook's whole tree: the reaper is told to kill it, then the process group is killed.
async fn stop(pid: Option<i32>, child: &mut tokio::process::Child) {
    let Some(pid) = pid else { return };
    // SAFETY: kill has no memory-safety preconditions.
    unsafe {
        libc::kill(pid, pith_tools::sandbox::STOP_SIGNAL);
    }
    if tokio::time::timeout(STOP_GRACE, child.wait())
        .await
        .is_err()
    {
        // SAFETY: killpg has no memory-safety preconditions; the hook leads its own group.
        unsafe {
            libc::killpg(pid, libc::SIGKILL);
        }
        let _ = tokio::time::timeout(STOP_GRACE, child.wait()).await;
    }
}

async fn drained(task: tokio::task::JoinHandle<Vec<u8>>) -> String {
    let bytes = tokio::time::timeout(DRAIN, task)
        .await
        .ok()
        .and_then(Result::ok)
        .unwrap_or_default();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Reads to the end, keeping at most [`MAX_OUTPUT`] bytes (the rest is read and dropped, so the
/// hook never blocks on a full pipe).
async fn read_capped(pipe: Option<impl AsyncRead + Unpin>) -> Vec<u8> {
    let Some(mut pipe) = pipe else {
        return Vec::new();
    };
    let mut kept = Vec::new();
    let mut buf = vec![0u8; 8 * 1024];
    loop {
        match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = MAX_OUTPUT.saturating_sub(kept.len());
                kept.extend_from_slice(&buf[..n.min(room)]);
            }
        }
    }
    kept
}
