//! What the engine is doing beyond its state, as the status bar says it: the state's detail,
//! the tool running, a retry being waited out, whether the answer is streaming.

use std::time::Instant;

use pith_protocol::event::EngineState;

/// A retry the engine announced.
#[derive(Debug, Clone, PartialEq)]
pub struct Retry {
    pub attempt: u32,
    pub max: u32,
    /// Why: the provider's error.
    pub reason: String,
    /// When the retry starts.
    pub at: Instant,
}

#[derive(Debug, Default)]
pub(crate) struct Activity {
    /// What the engine said of its state (the tool, what is waited for).
    detail: Option<String>,
    running_tool: Option<String>,
    /// A provider fault being retried: shown in the status bar until the retry starts.
    retry: Option<Retry>,
    /// The model's answer is streaming (the status says "responding", not "thinking").
    responding: bool,
}

impl Activity {
    pub(crate) fn detail(&self) -> Option<&String> {
        self.detail.as_ref()
    }

    pub(crate) fn running_tool(&self) -> Option<&String> {
        self.running_tool.as_ref()
    }

    pub(crate) fn retry(&self) -> Option<&Retry> {
        self.retry.as_ref()
    }

    pub(crate) fn responding(&self) -> bool {
        self.responding
    }

    pub(crate) fn tool_started(&mut self, tool: String) {
        self.running_tool = Some(tool);
    }

    /// The tool finished, or the turn did: no tool is running.
    pub(crate) fn tool_finished(&mut self) {
        self.running_tool = None;
    }

    /// The engine will retry the provider at `retry.at`.
    pub(crate) fn retrying(&mut self, retry: Retry) {
        self.retry = Some(retry);
    }

    /// The retry being waited out is over.
    pub(crate) fn retry_over(&mut self) {
        self.retry = None;
    }

    /// The engine is now in `state`, said with `detail`: a retry is over unless it is still
    /// retrying, and the answer has not started streaming.
    pub(crate) fn state_changed(&mut self, state: EngineState, detail: Option<String>) {
        if state != EngineState::Retrying {
            self.retry = None;
        }
        self.responding = false;
        self.detail = detail;
    }

    /// Streamed output arrived; `text`: the answer's text (not its reasoning).
    pub(crate) fn streaming(&mut self, text: bool) {
        self.responding = text;
    }
}
