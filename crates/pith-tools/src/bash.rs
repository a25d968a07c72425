//! `bash`: runs a command through bash (or the user's POSIX sh) in its own session, under a
//! reaper that ends every process it starts with the call, in the OS sandbox and without
//! secret environment variables (see `crate::sandbox`).

use std::io;
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::AsyncReadExt;

use super::{Tool, ToolContext, ToolError, ToolMeta, ToolOutput, parse_input};
use crate::sandbox::{Applied, CommandPolicy, Guard};
use pith_protocol::tool::BashMetadata;

pub(crate) const DEFAULT_TIMEOUT_MS: u64 = 120_000;
pub(crate) const MAX_TIMEOUT_MS: u64 = 600_000;
/// Output kept in memory; anything beyond is counted and dropped.
const MAX_CAPTURE: usize = 16 * 1024 * 1024;
/// How long to keep reading after the shell exits while a background process holds the pipe.
const DRAIN_IDLE: Duration = Duration::from_millis(200);
const DRAIN_MAX: Duration = Duration::from_secs(2);
/// How long the reaper gets to end the tree before it is killed itself.
const REAPER_GRACE: Duration = Duration::from_secs(5);

/// The bash tool; `policy` says how commands run (sandbox, environment).
#[derive(Default)]
pub struct Bash {
    policy: Arc<CommandPolicy>,
    /// It offers `background` (`[jobs] max` is not 0).
    background: bool,
}

impl Bash {
    pub fn new(policy: CommandPolicy) -> Bash {
        Bash {
            policy: Arc::new(policy),
            background: false,
        }
    }

    /// Offers `background: true` (ARCHITECTURE.md §5.3).
    pub fn with_background(mut self, on: bool) -> Bash {
        self.background = on;
        self
    }
}

#[derive(Deserialize)]
struct Input {
    command: String,
    #[serde(default)]
    timeout: Option<f64>,
    #[serde(default)]
    description: Option<String>,
    /// Run outside the sandbox (the permission check asks the user first).
    #[serde(default)]
    unsandboxed: Option<bool>,
    /// Keep it running as a background job (`crate::jobs`).
    #[serde(default)]
    background: Option<bool>,
}

#[async_trait::async_trait]
impl Tool for Bash {
    fn name(&self) -> &'static str {
        pith_protocol::tool::Builtin::Bash.as_str()
    }

    fn description(&self) -> &'static str {
        include_str!("../../../prompts/tools/bash.md")
    }

    fn time_limit(&self) -> Option<Duration> {
        // Its own `timeout` parameter bounds every call.
        None
    }

    fn describe(&self) -> String {
        let sandbox = self.policy.describe();
        let mut text = self.description().trim().to_string();
        if self.background {
            text.push('\n');
            text.push_str(include_str!("../../../prompts/tools/bash-background.md").trim_end());
        }
        if !sandbox.is_empty() {
            text.push('\n');
            text.push_str(&sandbox);
        }
        text
    }

    fn parameters(&self) -> Value {
        let mut schema = json!({
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "The command to run"},
                "timeout": {"type": "number", "description": "Timeout in milliseconds (default 120000, max 600000)"},
                "description": {"type": "string", "description": "What the command does, in 5-10 words"}
            },
            "required": ["command"],
            "additionalProperties": false
        });
        if self.background {
            schema["properties"]["background"] = json!({
                "type": "boolean",
                "description": "Keep it running as a background job (a dev server, a watcher, a long test run): returns at once with a job id and the first output"
            });
        }
        if self.policy.active() {
            schema["properties"]["unsandboxed"] = json!({
                "type": "boolean",
                "description": "Run outside the sandbox, after the sandbox stopped this command; the user must approve"
            });
        }
        schema
    }

    async fn run(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let input: Input = parse_input("bash", input)?;
        if input.command.trim().is_empty() {
            return Err(ToolError::Failed("bash: `command` is empty".into()));
        }
        let timeout_ms = timeout_ms(input.timeout)?;
        let title = input
            .description
            .as_deref()
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .map(str::to_string)
            .unwrap_or_else(|| command_title(&input.command));
        // Plan mode: the workspace is read-only too, and nothing runs outside the sandbox.
        let plan_policy;
        let (policy, unsandboxed) = if ctx.read_only_commands {
            plan_policy = self.policy.read_only();
            (&plan_policy, false)
        } else {
            (&*self.policy, input.unsandboxed == Some(true))
        };
        if input.background == Some(true) {
            if !self.background {
                return Err(tool_err!(
                    "bash: background jobs are off (`[jobs] max = 0`); run the command in the foreground"
                ));
            }
            let asked = crate::jobs::start::Asked {
                command: input.command,
                description: input.description,
                title,
            };
            return crate::jobs::start::background(asked, ctx, (policy, unsandboxed)).await;
        }
        let run = run_command(
            &input.command,
            ctx,
            Duration::from_millis(timeout_ms),
            (policy, unsandboxed),
        )
        .await?;
        report(run, input, title, timeout_ms)
    }
}

/// The call's time limit in milliseconds: the default, or the one asked for up to the maximum.
fn timeout_ms(timeout: Option<f64>) -> Result<u64, ToolError> {
    match timeout {
        None => Ok(DEFAULT_TIMEOUT_MS),
        Some(t) if t.is_finite() && t >= 1.0 => Ok((t as u64).min(MAX_TIMEOUT_MS)),
        Some(t) => Err(tool_err!(
            "bash: `timeout` must be a positive number of milliseconds, got {t}"
        )),
    }
}

/// What the model is told of a finished command: its output, how it ended, and what the
/// sandbox stopped or noted; an error when the user interrupted it.
fn report(
    run: RunResult,
    input: Input,
    title: String,
    timeout_ms: u64,
) -> Result<ToolOutput, ToolError> {
    let mut text = String::from_utf8_lossy(&run.output).into_owned();
    if run.dropped > 0 {
        text.push_str(&format!(
            "\n[{} more bytes of output were discarded]",
            run.dropped
        ));
    }
    let exit_code = run.status.and_then(|s| s.code());
    let signal = run
        .status
        .and_then(|s| std::os::unix::process::ExitStatusExt::signal(&s));
    let mut metadata = BashMetadata {
        command: input.command,
        description: input.description,
        exit_code,
        signal,
        timed_out: run.end == End::TimedOut,
        interrupted: run.end == End::Cancelled,
        sandboxed: run.sandbox.sandboxed(),
        sandbox_denied: false,
        job: None,
    };
    if run.end == End::Cancelled {
        let partial = if text.trim().is_empty() {
            String::new()
        } else {
            format!(" Output so far:\n{text}")
        };
        return Err(tool_err!(
            "The command was interrupted by the user and killed.{partial}"
        ));
    }
    let mut out = if text.trim().is_empty() {
        "(no output)".to_string()
    } else {
        text
    };
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&end_line(run.end, exit_code, signal, timeout_ms));
    if exit_code != Some(0) && run.sandbox.likely_denied(&out) {
        out.push_str("\n\n");
        out.push_str(&run.sandbox.denial_note());
        metadata.sandbox_denied = true;
    }
    for note in &run.notes {
        out.push_str("\n\n[sandbox] ");
        out.push_str(note);
    }
    Ok(ToolOutput {
        title,
        output: out,
        metadata: metadata.into(),
        meta: ToolMeta::default(),
    })
}

/// The line that says how the command ended (after a blank line).
fn end_line(end: End, exit_code: Option<i32>, signal: Option<i32>, timeout_ms: u64) -> String {
    match end {
        End::TimedOut => format!(
            "\nCommand timed out after {timeout_ms} ms; it and its child processes were killed."
        ),
        _ => match (exit_code, signal) {
            (Some(code), _) => format!("\n{}", pith_protocol::tool::exit_line(code.into())),
            (None, Some(sig)) => format!("\nKilled by signal {sig}"),
            _ => "\nExit status unknown".to_string(),
        },
    }
}

fn command_title(command: &str) -> String {
    let first = command.trim().lines().next().unwrap_or("");
    let mut t: String = first.chars().take(80).collect();
    if t.len() < first.len() || command.trim().lines().nth(1).is_some() {
        t.push('…');
    }
    t
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum End {
    Exited,
    TimedOut,
    Cancelled,
}

struct RunResult {
    output: Vec<u8>,
    dropped: usize,
    status: Option<ExitStatus>,
    end: End,
    /// How the sandbox confined the command.
    sandbox: Applied,
    /// What the sandbox could not protect as planned, and what its guard put right.
    notes: Vec<String>,
}

/// The user's shell when it is bash or a POSIX sh (the permission check reads commands with a
/// bash grammar; zsh or fish would run some of them differently, e.g. zsh glob qualifiers run
/// code), else bash, else /bin/sh.
pub(crate) fn shell() -> PathBuf {
    if let Some(s) = std::env::var_os("SHELL") {
        let p = PathBuf::from(s);
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if p.is_absolute() && p.is_file() && matches!(name, "bash" | "sh" | "dash") {
            return p;
        }
    }
    ["/bin/bash", "/usr/bin/bash", "/usr/local/bin/bash"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from("/bin/sh"))
}

/// The command's reaper and its session's process group (the same number): tells the reaper
/// to end the whole tree when dropped (a dropped tool future must not leave processes behind).
pub(crate) struct GroupGuard(pub(crate) Option<i32>);

impl GroupGuard {
    /// Signals every process of the reaper's group (the last resort: the command's processes
    /// are in a group of their own).
    pub(crate) fn signal_group(&self, sig: i32) {
        if let Some(pgid) = self.0 {
            // SAFETY: killpg has no memory-safety preconditions.
            unsafe {
                libc::killpg(pgid, sig);
            }
        }
    }

    /// Tells the reaper to kill the whole tree (PID namespace or orphans included) and exit.
    pub(crate) fn stop_tree(&self) {
        if let Some(pid) = self.0 {
            // SAFETY: kill has no memory-safety preconditions.
            unsafe {
                libc::kill(pid, crate::sandbox::STOP_SIGNAL);
            }
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.stop_tree();
    }
}

/// Passes output on to `ctx.progress` as it arrives, whole characters only (a character split
/// between two reads waits for its other half).
struct Live {
    sink: Option<super::Progress>,
    partial: Vec<u8>,
}

impl Live {
    fn new(sink: Option<super::Progress>) -> Live {
        Live {
            sink,
            partial: Vec::new(),
        }
    }

    fn push(&mut self, chunk: &[u8]) {
        let Some(sink) = &self.sink else { return };
        self.partial.extend_from_slice(chunk);
        let valid = match std::str::from_utf8(&self.partial) {
            Ok(_) => self.partial.len(),
            // an incomplete character at the end waits; invalid bytes go through as U+FFFD
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(_) => self.partial.len(),
        };
        if valid > 0 {
            sink(&String::from_utf8_lossy(&self.partial[..valid]));
            self.partial.drain(..valid);
        }
    }
}

/// The command's output as it is read: kept up to [`MAX_CAPTURE`], the rest counted, all of it
/// passed on to the progress sink.
struct Capture {
    output: Vec<u8>,
    dropped: usize,
    live: Live,
}

impl Capture {
    fn push(&mut self, chunk: &[u8]) {
        self.live.push(chunk);
        let room = MAX_CAPTURE.saturating_sub(self.output.len());
        let take = room.min(chunk.len());
        self.output.extend_from_slice(&chunk[..take]);
        self.dropped += chunk.len() - take;
    }
}

/// A command started in its session under its reaper.
pub(crate) struct Started {
    pub(crate) child: tokio::process::Child,
    /// Ends the tree when dropped.
    pub(crate) guard: GroupGuard,
    /// The read end of the pipe the command writes stdout and stderr to.
    pub(crate) reader: io::PipeReader,
    pub(crate) sandbox: Applied,
    /// What the sandbox guard checks after the command.
    pub(crate) guard_files: Option<Guard>,
}

async fn run_command(
    command: &str,
    ctx: &ToolContext,
    timeout: Duration,
    (policy, unsandboxed): (&CommandPolicy, bool),
) -> Result<RunResult, ToolError> {
    // held until every process of the command has ended: no editor file call meanwhile
    let _turn = crate::editor::command_turn(ctx).await?;
    let Started {
        mut child,
        guard,
        reader,
        sandbox,
        guard_files,
    } = start(command, ctx, policy, unsandboxed)?;
    let mut rx = tokio::net::unix::pipe::Receiver::from_owned_fd(OwnedFd::from(reader))
        .map_err(|e| tool_err!("bash: could not read the command's output: {e}"))?;
    let mut capture = Capture {
        output: Vec::new(),
        dropped: 0,
        live: Live::new(ctx.progress.clone()),
    };
    let mut buf = vec![0u8; 16 * 1024];
    let mut eof = false;
    let mut status: Option<ExitStatus> = None;
    let deadline = tokio::time::sleep(timeout);
    tokio::pin!(deadline);

    let end = loop {
        if status.is_some() {
            break End::Exited;
        }
        tokio::select! {
            biased;
            _ = ctx.cancel.cancelled() => break End::Cancelled,
            _ = &mut deadline => break End::TimedOut,
            n = rx.read(&mut buf), if !eof => match n {
                Ok(0) | Err(_) => eof = true,
                Ok(n) => capture.push(&buf[..n]),
            },
            st = child.wait() => match st {
                Ok(st) => status = Some(st),
                Err(e) => return Err(tool_err!("bash: waiting for the command failed: {e}")),
            },
        }
    };

    let status = settle(guard, &mut child, end, status).await;
    if !eof {
        drain(&mut rx, &mut buf, &mut capture).await;
    }
    let mut notes = sandbox.notes.clone();
    if let Some(g) = guard_files {
        // (It walks the writable roots: off the async runtime.)
        notes.extend(
            tokio::task::spawn_blocking(move || g.after())
                .await
                .unwrap_or_default(),
        );
    }
    Ok(RunResult {
        output: capture.output,
        dropped: capture.dropped,
        status,
        end,
        sandbox,
        notes,
    })
}

/// Starts `command` through the shell in its own session (no terminal) under a reaper that ends
/// the whole tree with the call and with pith; in the sandbox unless `unsandboxed`.
pub(crate) fn start(
    command: &str,
    ctx: &ToolContext,
    policy: &CommandPolicy,
    unsandboxed: bool,
) -> Result<Started, ToolError> {
    let spawn_err = |e: io::Error| tool_err!("bash: could not start the shell: {e}");
    // One pipe for both stdout and stderr keeps their relative order.
    let (reader, writer) = io::pipe().map_err(spawn_err)?;
    let writer2 = writer.try_clone().map_err(spawn_err)?;
    let mut cmd = tokio::process::Command::new(shell());
    cmd.arg("-c")
        .arg(command)
        .current_dir(&ctx.workspace)
        .stdin(Stdio::null())
        .stdout(Stdio::from(writer))
        .stderr(Stdio::from(writer2))
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_PAGER", "cat")
        .env("PAGER", "cat");
    let outputs = super::truncate::output_dir(&ctx.data_dir);
    let sandbox = crate::sandbox::apply(
        &mut cmd,
        policy,
        &ctx.workspace,
        (&ctx.data_dir, &outputs),
        unsandboxed,
    )
    .map_err(|e| tool_err!("bash: could not set up the sandbox: {e}"))?;
    let guard_files = sandbox
        .sandboxed()
        .then(|| Guard::before(&ctx.workspace, !sandbox.namespaces).scanning(&sandbox.writable));
    let spawned = cmd.spawn();
    // The Command holds the parent's copies of the pipe's write end: drop them so the read side
    // sees end-of-file when the command's processes exit.
    drop(cmd);
    let child = spawned.map_err(spawn_err)?;
    let guard = GroupGuard(child.id().map(|p| p as i32));
    tracing::debug!(pid = ?child.id(), command, "bash started");
    Ok(Started {
        child,
        guard,
        reader,
        sandbox,
        guard_files,
    })
}

/// Once the command `end`ed: a timed-out or interrupted command's tree is ended at once (the
/// reaper SIGKILLs it: no SIGTERM, which a shell can outlive and go on to its next statement;
/// then SIGKILL to the reaper's group if the reaper hangs). Returns the shell's status when it
/// is known.
pub(crate) async fn settle(
    mut guard: GroupGuard,
    child: &mut tokio::process::Child,
    end: End,
    mut status: Option<ExitStatus>,
) -> Option<ExitStatus> {
    match end {
        End::Exited => {
            // The reaper exited after the command: nothing of the tree is left.
            guard.0 = None;
        }
        End::TimedOut | End::Cancelled => {
            tracing::debug!(?end, "bash: stopping the command's processes");
            guard.stop_tree();
            status = tokio::time::timeout(REAPER_GRACE, child.wait())
                .await
                .ok()
                .and_then(Result::ok);
            if status.is_none() {
                tracing::warn!("bash: the reaper did not exit; killing its group");
                guard.signal_group(libc::SIGKILL);
                status = child.wait().await.ok();
            }
            guard.0 = None;
        }
    }
    status
}

/// Collects what is still in the pipe after the shell exited (a background process may hold
/// it open: reading stops when it is idle for [`DRAIN_IDLE`], or after [`DRAIN_MAX`]).
async fn drain(rx: &mut tokio::net::unix::pipe::Receiver, buf: &mut [u8], capture: &mut Capture) {
    let started = tokio::time::Instant::now();
    while started.elapsed() < DRAIN_MAX {
        match tokio::time::timeout(DRAIN_IDLE, rx.read(buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) | Err(_) => break,
            Ok(Ok(n)) => capture.push(&buf[..n]),
        }
    }
}

#[cfg(test)]
#[path = "bash_tests.rs"]
mod tests;
