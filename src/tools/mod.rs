//! Tools the model can call. One file per tool; the registry, permissions and output truncation
//! sit beside them.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::config::ToolOutputConfig;

/// Per-session state tools share (files read and when, the todo list).
#[derive(Debug, Default)]
pub struct SessionToolState {
    /// Path → file modification time (ms) when the session last read it.
    pub read_files: std::sync::Mutex<std::collections::HashMap<PathBuf, i64>>,
    /// The agent's task list (JSON array as `todowrite` received it).
    pub todos: std::sync::Mutex<Value>,
}

/// Everything a tool needs to run one call.
#[derive(Clone)]
pub struct ToolContext {
    /// Absolute, canonical workspace root.
    pub workspace: PathBuf,
    /// The data directory (`tool-output/` lives below it).
    pub data_dir: PathBuf,
    pub session_id: String,
    pub call_id: String,
    /// Cancelled on interrupt: the tool must stop (and kill any process group) promptly.
    pub cancel: CancellationToken,
    pub state: Arc<SessionToolState>,
    pub output: ToolOutputConfig,
}

/// A successful tool result.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    /// Short title shown in the UI ("ls -la", "src/main.rs").
    pub title: String,
    /// What the model sees.
    pub output: String,
    /// Extra structured data for the UI (diff, exit code, …).
    pub metadata: Value,
}

#[async_trait::async_trait]
pub trait Tool: Send + Sync {
    fn name(&self) -> &'static str;
    /// A description the model can act on.
    fn description(&self) -> &'static str;
    /// JSON schema of the input object.
    fn parameters(&self) -> Value;
    /// Runs the call. An `Err` is a message the model sees as an error result.
    async fn run(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, String>;
}
