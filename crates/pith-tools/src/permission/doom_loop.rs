//! The loop guards: the same call again and again (the doom-loop check), and a model that keeps
//! sending calls that cannot run (the broken-call guard).

use serde_json::Value;

use super::cut;
use crate::ToolContext;
use pith_protocol::event::PermissionRequest;
use pith_protocol::tool::{ToolInput, ToolName};

/// Identical calls in a row that count as a doom loop.
pub const DOOM_LOOP_THRESHOLD: usize = 3;

/// The request the doom-loop check raises.
pub(crate) fn doom_loop_request(
    tool: &str,
    input: &Value,
    count: usize,
    ctx: &ToolContext,
) -> PermissionRequest {
    let name = ToolName::parse(tool);
    let view = ToolInput::of(&name, input);
    let what = match view.command().or_else(|| view.path()) {
        Some(s) => format!(" `{}`", cut(s, 120)),
        None => String::new(),
    };
    PermissionRequest {
        id: format!("perm_{}", ulid::Ulid::new()),
        tool: tool.to_string(),
        call_id: ctx.call_id.clone(),
        title: format!(
            "{tool}{what} called {count} times in a row with the same input: run it again?"
        ),
        patterns: Vec::new(),
        agent: None,
    }
}

/// Broken calls in a row (arguments that are not JSON, a tool that does not exist), whatever
/// their arguments, that stop a turn.
pub(crate) const BROKEN_CALLS_LIMIT: usize = 5;

fn broken_why(input: &Value) -> &'static str {
    if input.is_string() {
        "its arguments are not valid JSON"
    } else {
        "no tool has that name"
    }
}

/// Why a turn stops because the model is looping; the text is what the user is shown.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoopStop {
    /// The same call that cannot run, [`DOOM_LOOP_THRESHOLD`] times in a row.
    #[error(
        "stopped: the model sent the same call to `{tool}` {count} times in a row, and it cannot run ({why}). Ask again in other words, or try another model"
    )]
    SameBrokenCall {
        tool: String,
        count: usize,
        why: &'static str,
    },
    /// [`BROKEN_CALLS_LIMIT`] calls in a row that cannot run.
    #[error(
        "stopped: the model sent {count} tool calls in a row that cannot run (the last to `{tool}`: {why}). Ask again in other words, or try another model"
    )]
    BrokenCalls {
        tool: String,
        count: usize,
        why: &'static str,
    },
    /// A repeated call with no one to allow it (headless).
    #[error(
        "stopped: the model called `{tool}` {count} times in a row with the same input, and this run has no one to allow it"
    )]
    Unattended { tool: String, count: usize },
}

/// Detects the same tool called with the same input several times in a row, and a model that
/// keeps sending calls that cannot run.
#[derive(Debug, Clone, Default)]
pub struct DoomLoop {
    last: Option<(String, Value)>,
    count: usize,
    /// Broken calls in a row.
    broken: usize,
}

impl DoomLoop {
    /// Records a call; true when it is the third (or later) identical call in a row.
    pub fn record(&mut self, tool: &str, input: &Value) -> bool {
        self.broken = 0;
        // waiting on a background job again (`wait_secs`) takes real time: progress, not a
        // loop (reading it again and again without waiting still counts)
        let waits = input.get("wait_secs").and_then(Value::as_u64).unwrap_or(0) > 0;
        if waits && tool == pith_protocol::tool::Builtin::JobOutput.as_str() {
            self.last = None;
            self.count = 0;
            return false;
        }
        self.count_identical(tool, input)
    }

    fn count_identical(&mut self, tool: &str, input: &Value) -> bool {
        match &self.last {
            Some((t, i)) if t == tool && i == input => self.count += 1,
            _ => {
                self.last = Some((tool.to_string(), input.clone()));
                self.count = 1;
            }
        }
        self.count >= DOOM_LOOP_THRESHOLD
    }

    /// Records a call that cannot run (`input` is the raw text of arguments that are not JSON,
    /// or the tool does not exist). Returns why the turn must stop when this is a loop: the
    /// third identical broken call, or the [`BROKEN_CALLS_LIMIT`]th broken call in a row.
    pub fn record_broken(&mut self, tool: &str, input: &Value) -> Option<LoopStop> {
        let identical = self.count_identical(tool, input);
        self.broken += 1;
        if identical {
            Some(LoopStop::SameBrokenCall {
                tool: tool.to_string(),
                count: self.count,
                why: broken_why(input),
            })
        } else if self.broken >= BROKEN_CALLS_LIMIT {
            Some(LoopStop::BrokenCalls {
                tool: tool.to_string(),
                count: self.broken,
                why: broken_why(input),
            })
        } else {
            None
        }
    }

    /// How many identical calls in a row were recorded last.
    pub fn count(&self) -> usize {
        self.count
    }
}
