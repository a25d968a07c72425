//! Hooks: the user's commands run at points of a session (`[[hooks.EVENT]]`, ARCHITECTURE.md
//! §5.1). The config types are in `pith-config` (`hooks.rs`); this runs them and reads what they
//! answer. The engine calls [`Hooks::run`] and acts on the [`Outcome`]; it never sees a process.
//!
//! Each hook gets the event as JSON on stdin, in Claude Code's shape (`session_id`,
//! `transcript_path`, `cwd`, `hook_event_name` and the event's own fields). Exit 0: go on (stdout
//! is context for the model where the event has some); exit 2: block, stderr is the reason;
//! another code: a warning. JSON on stdout (`decision`, `reason`, `additionalContext`,
//! `hookSpecificOutput`) is read as Claude Code reads it. Hooks run like the user's shell:
//! outside the sandbox, in the workspace, in a session of their own under the reaper (killed
//! whole at their timeout), with pith's keys withheld, their output captured and capped.

mod process;

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

pub use pith_config::{HookConfig, HookEvent, HooksConfig};
pub use process::MAX_OUTPUT;
use process::{Exit, Ran};

use pith_config::Config;
use pith_protocol::text::one_line;
use pith_tools::sandbox::CommandPolicy;

/// What the hooks of one event decided.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outcome {
    /// A hook blocked (exit 2, or `"decision": "block"`): the reason it gave.
    pub block: Option<String>,
    /// A `pre_tool_use` hook approved the call (`"decision": "approve"`): no permission
    /// question. A deny rule and the sandbox still hold.
    pub approve: bool,
    /// Text for the model's context (stdout, `additionalContext`), in hook order.
    pub context: Vec<String>,
    /// What went wrong (a failing or slow hook), one line each, for the user.
    pub warnings: Vec<String>,
}

struct Entry {
    event: HookEvent,
    hook: HookConfig,
    matcher: Option<regex::Regex>,
}

/// The session's hooks, ready to run.
pub struct Hooks {
    entries: Vec<Entry>,
    workspace: PathBuf,
    data_dir: PathBuf,
    policy: CommandPolicy,
}

impl Hooks {
    pub fn new(config: &Config, workspace: &Path, data_dir: &Path) -> Hooks {
        let entries = config
            .hooks
            .iter()
            .filter_map(|(event, hook)| {
                let matcher = match hook.matcher_regex() {
                    None => None,
                    Some(Ok(re)) => Some(re),
                    Some(Err(e)) => {
                        // loading rejects these; one made in code is skipped, not run for all
                        tracing::warn!(command = hook.command, "hook matcher is invalid: {e}");
                        return None;
                    }
                };
                Some(Entry {
                    event,
                    hook: hook.clone(),
                    matcher,
                })
            })
            .collect();
        Hooks {
            entries,
            workspace: workspace.to_path_buf(),
            data_dir: data_dir.to_path_buf(),
            policy: CommandPolicy::from_config(config),
        }
    }

    /// No hook at all (nothing to start).
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Whether a hook of `event` would run for `subject` (the tool name, the session's source,
    /// the compaction's trigger).
    pub fn has(&self, event: HookEvent, subject: Option<&str>) -> bool {
        self.matching(event, subject).next().is_some()
    }

    fn matching<'a>(
        &'a self,
        event: HookEvent,
        subject: Option<&'a str>,
    ) -> impl Iterator<Item = &'a Entry> + 'a {
        self.entries.iter().filter(move |e| {
            e.event == event
                && match (&e.matcher, subject) {
                    (None, _) => true,
                    (Some(re), Some(s)) => re.is_match(s),
                    (Some(_), None) => event.matches_on().is_none(),
                }
        })
    }

    /// Runs the hooks of `event` matching `subject`, in order, until one blocks. `fields` are
    /// the event's own (`tool_name`, `tool_input`, `prompt`, …), added to the common ones.
    pub async fn run(
        &self,
        event: HookEvent,
        subject: Option<&str>,
        session_id: &str,
        fields: Map<String, Value>,
        cancel: &CancellationToken,
    ) -> Outcome {
        let mut outcome = Outcome::default();
        let entries: Vec<&Entry> = self.matching(event, subject).collect();
        if entries.is_empty() {
            return outcome;
        }
        let mut input = Map::new();
        input.insert("session_id".into(), session_id.into());
        input.insert("transcript_path".into(), "".into());
        input.insert(
            "cwd".into(),
            self.workspace.to_string_lossy().into_owned().into(),
        );
        input.insert("hook_event_name".into(), event.name().into());
        input.extend(fields);
        let input = Value::Object(input).to_string();
        let outputs = pith_tools::truncate::output_dir(&self.data_dir);
        let prepare = |cmd: &mut tokio::process::Command| {
            cmd.env("PITH_PROJECT_DIR", &self.workspace)
                .env("CLAUDE_PROJECT_DIR", &self.workspace)
                .env("PITH_HOOK_EVENT", event.name());
            // Like the user's shell: no sandbox; in a session of its own under the reaper, keys
            // withheld as for every command.
            pith_tools::sandbox::apply(
                cmd,
                &self.policy,
                &self.workspace,
                (&self.data_dir, &outputs),
                true,
            )
            .map(|_| ())
        };
        for entry in entries {
            let hook = &entry.hook;
            tracing::debug!(event = event.key(), command = hook.command, "hook started");
            let ran = process::run(
                &hook.command,
                &self.workspace,
                input.as_bytes(),
                hook.timeout(),
                cancel,
                &prepare,
            )
            .await;
            if ran.exit == Exit::Cancelled {
                break;
            }
            read_result(event, hook, ran, &mut outcome);
            if outcome.block.is_some() {
                break;
            }
        }
        for w in &outcome.warnings {
            tracing::warn!("{w}");
        }
        outcome
    }
}

/// Whether the plain stdout of a hook of `event` that exits 0 goes to the model.
fn stdout_is_context(event: HookEvent) -> bool {
    matches!(
        event,
        HookEvent::SessionStart | HookEvent::UserPromptSubmit | HookEvent::PostCompact
    )
}

/// Adds what one hook did to `outcome`.
fn read_result(event: HookEvent, hook: &HookConfig, ran: Ran, outcome: &mut Outcome) {
    let name = || format!("{} hook `{}`", event.key(), short(&hook.command));
    match ran.exit {
        Exit::Code(0) => {
            let out = ran.stdout.trim();
            match serde_json::from_str::<Value>(out) {
                Ok(Value::Object(answer)) => read_json(&answer, outcome),
                _ if stdout_is_context(event) && !out.is_empty() => {
                    outcome.context.push(out.to_string());
                }
                _ => {}
            }
        }
        Exit::Code(2) => {
            let reason = ran.stderr.trim();
            outcome.block = Some(if reason.is_empty() {
                format!("blocked by the {}", name())
            } else {
                reason.to_string()
            });
        }
        Exit::Code(code) => outcome.warnings.push(format!(
            "{} exited with {code}{}",
            name(),
            first_line(&ran.stderr)
        )),
        Exit::Signal(sig) => outcome
            .warnings
            .push(format!("{} was killed by signal {sig}", name())),
        Exit::TimedOut => outcome.warnings.push(format!(
            "{} ran past its timeout of {} s and was stopped; going on without it",
            name(),
            hook.timeout().as_secs()
        )),
        Exit::NotStarted(e) => {
            outcome
                .warnings
                .push(format!("{} could not run: {}", name(), one_line(&e)))
        }
        Exit::Cancelled => {}
    }
}

/// A JSON answer: `decision` (`block`, `approve`), `reason`, `additionalContext`, and
/// `hookSpecificOutput` (`additionalContext`, `permissionDecision` allow/deny with
/// `permissionDecisionReason`).
fn read_json(answer: &Map<String, Value>, outcome: &mut Outcome) {
    let str_of = |m: &Map<String, Value>, k: &str| {
        m.get(k)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    let specific = answer.get("hookSpecificOutput").and_then(Value::as_object);
    let reason = str_of(answer, "reason")
        .or_else(|| specific.and_then(|s| str_of(s, "permissionDecisionReason")));
    let decision = str_of(answer, "decision")
        .or_else(|| specific.and_then(|s| str_of(s, "permissionDecision")))
        .map(|d| d.to_ascii_lowercase());
    match decision.as_deref() {
        Some("block" | "deny") => {
            outcome.block = Some(reason.unwrap_or_else(|| "blocked by a hook".to_string()));
        }
        Some("approve" | "allow") => outcome.approve = true,
        _ => {}
    }
    for context in [
        str_of(answer, "additionalContext"),
        specific.and_then(|s| str_of(s, "additionalContext")),
    ]
    .into_iter()
    .flatten()
    {
        outcome.context.push(context);
    }
}

fn first_line(stderr: &str) -> String {
    match stderr.lines().map(str::trim).find(|l| !l.is_empty()) {
        Some(l) => format!(": {}", short(l)),
        None => String::new(),
    }
}

/// A command or line shortened for a one-line notice.
fn short(s: &str) -> String {
    let s = one_line(s);
    let mut out: String = s.chars().take(80).collect();
    if s.chars().count() > 80 {
        out.push('…');
    }
    out
}

// `/hooks`' lines are the config's (the TUI shows them without the engine).
pub use pith_config::hooks::listing;

#[cfg(test)]
mod tests;
