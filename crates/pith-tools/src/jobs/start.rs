//! `bash` with `background: true`: the command starts as any command does (`bash::start`, in
//! the sandbox the call's policy says, after the same permission check), a watcher takes it
//! over (`watch.rs`), and the call returns once its first output settled: at most
//! [`SETTLE_MAX`], or [`SETTLE_IDLE`] after the first output, or when it ended.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use super::entry::GuardSpec;
use crate::bash::start;
use crate::editor::{BackgroundHold, command_turn};
use crate::sandbox::CommandPolicy;
use crate::{ToolContext, ToolError, ToolMeta, ToolOutput};
use pith_protocol::event::JobState;
use pith_protocol::tool::BashMetadata;

/// The longest a call waits for a job's first output.
pub(crate) const SETTLE_MAX: Duration = Duration::from_millis(1500);
/// After output arrived, the quiet that ends the wait.
const SETTLE_IDLE: Duration = Duration::from_millis(300);

/// What the call was asked: the command, its description, the title shown.
pub(crate) struct Asked {
    pub command: String,
    pub description: Option<String>,
    pub title: String,
}

/// Starts `asked.command` as a background job of the session and returns its first output.
pub(crate) async fn background(
    asked: Asked,
    ctx: &ToolContext,
    (policy, unsandboxed): (&CommandPolicy, bool),
) -> Result<ToolOutput, ToolError> {
    let jobs = ctx.state.jobs.clone();
    // (a command's share of the editor section, held while it starts: see `editor.rs`)
    let turn = command_turn(ctx).await?;
    let log =
        crate::truncate::output_dir(&ctx.data_dir).join(format!("job_{}.log", ulid::Ulid::new()));
    let entry = jobs.admit(&asked.command, log).map_err(ToolError::Failed)?;
    let hold = BackgroundHold::take(&ctx.workspace, &turn);
    let mut started = match start(&asked.command, ctx, policy, unsandboxed) {
        Ok(s) => s,
        Err(e) => {
            jobs.forget(entry.id);
            return Err(e);
        }
    };
    drop(turn);
    let sandbox = started.sandbox.clone();
    if let Some(g) = started.guard_files.take() {
        let spec = GuardSpec {
            workspace: ctx.workspace.clone(),
            repair: !sandbox.namespaces,
            writable: sandbox.writable.clone(),
        };
        entry.hold_guard(g, spec);
    }
    tracing::debug!(job = entry.id, command = %asked.command, "background job started");
    super::watch::spawn(entry.clone(), started, hold, Arc::downgrade(&jobs));
    jobs.changed();
    settle(&entry, ctx).await;
    if ctx.cancel.is_cancelled() {
        let _ = jobs.kill(entry.id).await;
        return Err(tool_err!(
            "The command was interrupted by the user and killed before it got going."
        ));
    }
    Ok(first_report(&entry, asked, &sandbox))
}

/// Waits for the first output to settle (see the module comment), the job's end, or the
/// call's interruption.
async fn settle(entry: &super::Entry, ctx: &ToolContext) {
    let deadline = Instant::now() + SETTLE_MAX;
    let mut written = entry.written.subscribe();
    let mut quiet_from: Option<Instant> = None;
    loop {
        let until = match quiet_from {
            Some(t) => (t + SETTLE_IDLE).min(deadline),
            None => deadline,
        };
        tokio::select! {
            _ = entry.gone.cancelled() => return,
            _ = ctx.cancel.cancelled() => return,
            _ = tokio::time::sleep_until(until) => return,
            changed = written.changed() => {
                if changed.is_err() {
                    return;
                }
                quiet_from = Some(Instant::now());
            }
        }
    }
}

/// What the model is told when the call returns: the job's id and first output, or, when it
/// already ended, its output and how it ended.
fn first_report(
    entry: &super::Entry,
    asked: Asked,
    sandbox: &crate::sandbox::Applied,
) -> ToolOutput {
    let new = entry.read_new();
    let state = entry.state();
    let mut out = String::new();
    let first = new.text.trim_end();
    let (exit_code, signal) = match state {
        JobState::Exited { code, signal } => (code, signal),
        _ => (None, None),
    };
    if state.running() {
        out.push_str(&format!(
            "Background job {} started and keeps running: {}\n",
            entry.id,
            entry.short_command()
        ));
        if first.is_empty() {
            out.push_str("No output yet.\n");
        } else {
            out.push_str(&format!("Its first output:\n{first}\n"));
        }
        out.push_str(&format!(
            "\nRead what it prints next with job_output {{\"id\": {id}}}; stop it with job_kill {{\"id\": {id}}}. It ends when the session ends. Full log: {}",
            entry.log_path().display(),
            id = entry.id
        ));
        if sandbox.blocked_network {
            out.push_str("\n\nNote: the sandbox blocks the network for commands: a server cannot listen on a port and other commands cannot reach it (the user can set `sandbox_network = true`).");
        }
    } else {
        out.push_str(if first.is_empty() {
            "(no output)"
        } else {
            first
        });
        out.push_str(&format!(
            "\n\nThe command ended within its first {} s, so it is not running in the background. {}",
            SETTLE_MAX.as_secs_f32(),
            ended_words(state)
        ));
        if exit_code != Some(0) && sandbox.likely_denied(&out) {
            out.push_str("\n\n");
            out.push_str(&sandbox.denial_note());
        }
    }
    for note in sandbox.notes.iter().chain(&entry.take_notes()) {
        out.push_str("\n\n[sandbox] ");
        out.push_str(note);
    }
    let metadata = BashMetadata {
        command: asked.command,
        description: asked.description,
        exit_code,
        signal,
        timed_out: false,
        interrupted: false,
        sandboxed: sandbox.sandboxed(),
        sandbox_denied: false,
        job: state.running().then_some(entry.id),
    };
    ToolOutput {
        title: asked.title,
        output: out,
        metadata: metadata.into(),
        meta: ToolMeta::default(),
    }
}

/// How a job ended, as a sentence.
pub(crate) fn ended_words(state: JobState) -> String {
    match state {
        JobState::Running => "It is running.".to_string(),
        JobState::Exited {
            code: Some(code), ..
        } => pith_protocol::tool::exit_line(code.into()),
        JobState::Exited {
            signal: Some(sig), ..
        } => format!("Killed by signal {sig}"),
        JobState::Exited { .. } => "Exit status unknown".to_string(),
        JobState::Killed => {
            "It was stopped: it and every process it started were killed.".to_string()
        }
    }
}
