//! Runs one clipboard tool, bounded: its own process group (ended whole when it overstays or
//! writes too much), no stdin, only the variables of its [`ClipEnv`], stdout read up to a limit
//! (reading stops past it), stderr kept for the error line. The TUI calls this off its thread.

use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::tools::ClipEnv;

/// Stderr kept for the error line.
const STDERR_KEPT: u64 = 8 * 1024;

/// What a tool that ended said.
#[derive(Debug)]
pub(crate) struct Output {
    /// At most the limit asked for.
    pub stdout: Vec<u8>,
    /// It wrote more than the limit (and was ended).
    pub over: bool,
    pub success: bool,
    pub stderr: String,
}

impl Output {
    /// The first non-empty line of stderr, or how it exited.
    pub(crate) fn first_line(&self) -> String {
        self.stderr
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .map(|l| pith_protocol::text::escape_one_line(l, 200))
            .unwrap_or_else(|| "it failed without saying why".to_string())
    }
}

/// Why a tool gave no output.
#[derive(Debug)]
pub(crate) enum RunError {
    /// It could not be started.
    Spawn(std::io::Error),
    /// It ran past the timeout and was ended.
    TimedOut,
}

/// Runs `program args` under `env`; stdout is read up to `limit` bytes.
pub(crate) fn run(
    program: &Path,
    args: &[&str],
    env: &ClipEnv,
    limit: usize,
) -> Result<Output, RunError> {
    let mut cmd = Command::new(program);
    cmd.args(args)
        .env_clear()
        .env("PATH", &env.path)
        .envs(env.vars.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let mut child = spawn(&mut cmd).map_err(RunError::Spawn)?;
    let deadline = Instant::now() + env.timeout;
    let (out_tx, out_rx) = mpsc::channel();
    if let Some(stdout) = child.stdout.take() {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let read = stdout.take(limit as u64 + 1).read_to_end(&mut buf);
            let over = buf.len() > limit;
            buf.truncate(limit);
            let _ = out_tx.send(read.map(|_| (buf, over)));
        });
    }
    let (err_tx, err_rx) = mpsc::channel();
    if let Some(stderr) = child.stderr.take() {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = stderr.take(STDERR_KEPT).read_to_end(&mut buf);
            let _ = err_tx.send(String::from_utf8_lossy(&buf).into_owned());
        });
    }
    let left = deadline.saturating_duration_since(Instant::now());
    let (stdout, over) = match out_rx.recv_timeout(left) {
        Ok(Ok(read)) => read,
        Ok(Err(_)) => (Vec::new(), false),
        Err(_) => {
            end_group(&mut child);
            return Err(RunError::TimedOut);
        }
    };
    if over {
        end_group(&mut child);
    }
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            Ok(None) => {
                end_group(&mut child);
                return Err(RunError::TimedOut);
            }
            Err(_) => break None,
        }
    };
    // stderr closes with the tool; a helper it left behind holding it open is not waited for
    let stderr = err_rx
        .recv_timeout(Duration::from_millis(200))
        .unwrap_or_default();
    Ok(Output {
        stdout,
        over,
        success: status.is_some_and(|s| s.success()),
        stderr,
    })
}

/// Ends the tool's whole process group (a shell script's children too), then reaps the tool.
fn end_group(child: &mut Child) {
    #[cfg(unix)]
    if let Ok(pid) = libc::pid_t::try_from(child.id()) {
        // SAFETY: killpg only sends a signal; the group is the child's own (process_group(0)),
        // and the child is not reaped yet, so its id names it still.
        unsafe {
            libc::killpg(pid, libc::SIGKILL);
        }
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// Starts `cmd`, again a few times while its program is busy being written (ETXTBSY: a tool
/// just installed or upgraded, or a file another thread's fork still holds open for writing).
fn spawn(cmd: &mut Command) -> std::io::Result<Child> {
    let mut tries = 0;
    loop {
        match cmd.spawn() {
            Err(e) if e.raw_os_error() == Some(ETXTBSY) && tries < 5 => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(20 * tries));
            }
            other => return other,
        }
    }
}

/// `ETXTBSY` ("Text file busy"), 26 on Linux and macOS alike.
const ETXTBSY: i32 = 26;
