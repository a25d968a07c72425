//! `job_output` and `job_kill`: what a background job printed since the last read, and
//! stopping one. Both act only on the session's own jobs; their outputs are bounded (a read
//! returns at most `log::MAX_READ`, then the registry cuts it like any output) and pruned like
//! every tool output.

use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};

use super::Entry;
use super::start::ended_words;
use crate::{Tool, ToolContext, ToolError, ToolMeta, ToolOutput, parse_input};
use pith_protocol::tool::Builtin;

/// The longest `job_output` waits (`wait_secs`).
const MAX_WAIT_SECS: u64 = 120;

#[derive(Deserialize)]
struct OutputInput {
    id: u32,
    #[serde(default)]
    wait_secs: Option<u64>,
}

#[derive(Deserialize)]
struct KillInput {
    id: u32,
}

pub struct JobOutput;
pub struct JobKill;

#[async_trait::async_trait]
impl Tool for JobOutput {
    fn name(&self) -> &'static str {
        Builtin::JobOutput.as_str()
    }

    fn description(&self) -> &'static str {
        include_str!("../../../../prompts/tools/job_output.md")
    }

    fn time_limit(&self) -> Option<Duration> {
        // its own `wait_secs` bounds it
        None
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "id": {"type": "integer", "description": "The job's id, as bash gave it"},
                "wait_secs": {"type": "integer", "description": "Wait up to this many seconds (at most 120) for the job to end before reading; default 0"}
            },
            "required": ["id"],
            "additionalProperties": false
        })
    }

    async fn run(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let input: OutputInput = parse_input(self.name(), input)?;
        let entry = ctx.state.jobs.get(input.id).map_err(ToolError::Failed)?;
        let wait = Duration::from_secs(input.wait_secs.unwrap_or(0).min(MAX_WAIT_SECS));
        if !wait.is_zero() {
            tokio::select! {
                _ = entry.gone.cancelled() => {}
                _ = tokio::time::sleep(wait) => {}
                _ = ctx.cancel.cancelled() => return Err(ToolError::Interrupted),
            }
        }
        check_guard(&entry).await;
        let mut out = new_output(&entry);
        out.push_str(&format!("\n\n{}", status_line(&entry)));
        push_notes(&mut out, &entry);
        Ok(output(&entry, out))
    }
}

#[async_trait::async_trait]
impl Tool for JobKill {
    fn name(&self) -> &'static str {
        Builtin::JobKill.as_str()
    }

    fn description(&self) -> &'static str {
        include_str!("../../../../prompts/tools/job_kill.md")
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "id": {"type": "integer", "description": "The job's id, as bash gave it"}
            },
            "required": ["id"],
            "additionalProperties": false
        })
    }

    async fn run(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let input: KillInput = parse_input(self.name(), input)?;
        let jobs = &ctx.state.jobs;
        let entry = jobs.get(input.id).map_err(ToolError::Failed)?;
        let stopped = jobs.kill(input.id).await.map_err(ToolError::Failed)?;
        let mut out = if stopped && entry.is_running() {
            format!(
                "Job {} was told to stop but has not ended yet: {}",
                entry.id,
                entry.short_command()
            )
        } else if stopped {
            format!(
                "Stopped job {}: {}. It and every process it started were killed.",
                entry.id,
                entry.short_command()
            )
        } else {
            format!(
                "Job {} had already ended ({}): {}",
                entry.id,
                entry.state().describe(),
                entry.short_command()
            )
        };
        let new = new_output(&entry);
        if new != "(no new output)" {
            out.push_str(&format!("\n\nIts output since the last read:\n{new}"));
        }
        push_notes(&mut out, &entry);
        Ok(output(&entry, out))
    }
}

/// Runs the sandbox guard's check of a running job (off the async workers: it walks).
async fn check_guard(entry: &std::sync::Arc<Entry>) {
    let e = entry.clone();
    let _ = tokio::task::spawn_blocking(move || e.check_guard()).await;
}

/// What the job printed since the last read, with what was skipped.
fn new_output(entry: &Entry) -> String {
    let new = entry.read_new();
    let mut out = String::new();
    if new.skipped > 0 {
        out.push_str(&format!(
            "[{} earlier bytes of new output skipped; the log keeps the newest: {}]\n",
            new.skipped,
            entry.log_path().display()
        ));
    }
    if new.text.trim().is_empty() && new.skipped == 0 {
        out.push_str("(no new output)");
    } else {
        out.push_str(new.text.trim_end());
    }
    out
}

/// `[job 1 running for 2 min: npm run dev]`, or how it ended.
fn status_line(entry: &Entry) -> String {
    let state = entry.state();
    if state.running() {
        format!(
            "[job {} running for {}: {}]",
            entry.id,
            entry.age(),
            entry.short_command()
        )
    } else {
        format!(
            "[job {} ended: {} ({})]",
            entry.id,
            ended_words(state),
            entry.short_command()
        )
    }
}

fn push_notes(out: &mut String, entry: &Entry) {
    for note in entry.take_notes() {
        out.push_str("\n\n[sandbox] ");
        out.push_str(&note);
    }
}

fn output(entry: &Entry, text: String) -> ToolOutput {
    ToolOutput {
        title: format!("job {}: {}", entry.id, entry.short_command()),
        output: text,
        metadata: json!({"job": entry.id, "state": entry.state()}),
        meta: ToolMeta::default(),
    }
}
