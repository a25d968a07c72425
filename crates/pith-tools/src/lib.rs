//! Tools the model can call. One file per tool; the registry, permissions, permission modes and
//! output truncation sit beside them, and the OS sandbox every command runs in (`sandbox`).

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use pith_config::ToolOutputConfig;
use pith_protocol::tool::SavedOutput;

/// Per-session state tools share (files read and when, the todo list).
#[derive(Debug, Default)]
pub struct SessionToolState {
    /// Path → file modification time (ms) when the session last read it.
    pub read_files: std::sync::Mutex<std::collections::HashMap<PathBuf, i64>>,
    /// The agent's task list as `todowrite` last set it (empty until it does).
    pub todos: std::sync::Mutex<Vec<pith_protocol::tool::Todo>>,
    /// Call id → the path its permission check resolved, for the call to act on (`open`).
    pub checked: std::sync::Mutex<open::Kept>,
    /// The session's background jobs (`jobs`): the engine's table, kept across the tools'
    /// state of one session and the next (it ends the jobs when the session changes).
    pub jobs: Arc<jobs::Jobs>,
}

impl SessionToolState {
    /// A fresh state over the engine's job table.
    pub fn with_jobs(jobs: Arc<jobs::Jobs>) -> SessionToolState {
        SessionToolState {
            jobs,
            ..SessionToolState::default()
        }
    }
}

/// The session's stored tool outputs, for `recall`: pruning and compaction take outputs out of
/// the model's view, never out of the store.
pub trait OutputLookup: Send + Sync {
    /// The tool name and output (or error message) of call `call_id` in `session_id`.
    fn tool_output(&self, session_id: &str, call_id: &str) -> Option<(String, String)>;
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
    /// Where `recall` finds earlier outputs (`None`: nothing to recall from).
    pub outputs: Option<Arc<dyn OutputLookup>>,
    /// Told the output produced so far, piece by piece, by tools that stream it (bash), so a
    /// front end can show a running command's output. `None`: nobody is watching.
    pub progress: Option<Progress>,
    /// Where `read`, `write` and `edit` keep text when the front end is an editor that holds
    /// the files (its open buffers); `None`: the disk (§7.1).
    pub editor: Option<Arc<dyn editor::EditorFiles>>,
    /// What no tool may change without the user, and what no tool may touch (`policy`).
    pub policy: Arc<policy::Policy>,
    /// Commands run in a read-only sandbox (plan mode): no argument parser is the defence.
    pub read_only_commands: bool,
}

/// Receives a running tool's output as it arrives (valid UTF-8, in order).
pub type Progress = Arc<dyn Fn(&str) + Send + Sync>;

/// A successful tool result.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    /// Short title shown in the UI ("ls -la", "src/main.rs").
    pub title: String,
    /// What the model sees.
    pub output: String,
    /// Extra structured data for the UI (diff, exit code, …).
    pub metadata: Value,
    /// What the registry needs to know about the output, and what it did to it.
    pub meta: ToolMeta,
}

/// How an output is bounded: typed, beside the free-form `metadata` the UI reads.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolMeta {
    /// The tool paged its output itself (read): apart from a footer it is within the limits,
    /// and the file is on disk anyway, so the registry does not cut it again.
    pub bounded: bool,
    /// Where the registry saved the full output when it cut it to a preview.
    pub(crate) full_output: Option<PathBuf>,
}

impl ToolMeta {
    /// The meta of an output the tool paged itself.
    pub fn paged() -> ToolMeta {
        ToolMeta {
            bounded: true,
            full_output: None,
        }
    }
}

impl ToolOutput {
    /// The metadata stored with the call: the tool's, and where the full output was saved
    /// (`truncated`, `output_path`) when the registry cut it.
    pub fn stored_metadata(&self) -> Value {
        let mut metadata = self.metadata.clone();
        if let Some(path) = &self.meta.full_output {
            SavedOutput::at(path.to_string_lossy().into_owned()).add_to(&mut metadata);
        }
        metadata
    }
}

/// Why a tool call produced no output. The `Display` text is exactly what the model is told, so
/// every variant's message is written for the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    /// The arguments did not match the tool's input schema.
    #[error("Invalid input for {tool}: {detail}")]
    InvalidInput { tool: String, detail: String },
    /// No tool of that name is offered.
    #[error("Unknown tool `{name}`. Available tools: {}.", available.join(", "))]
    UnknownTool {
        name: String,
        available: Vec<String>,
    },
    /// The call ran past its time limit and was stopped.
    #[error(
        "{tool} did not finish within {secs} s and was stopped. Narrow it down (a smaller path, a more specific pattern, offset/limit), or use bash with its own timeout."
    )]
    TimedOut { tool: String, secs: u64 },
    /// A walk or search cut short by an interrupt or the time limit.
    #[error(
        "{tool}: stopped before it finished (interrupted, or over the {} s limit). Search a smaller directory or a narrower pattern.",
        bounds::TOOL_TIME_LIMIT.as_secs()
    )]
    Stopped { tool: String },
    /// The user interrupted the turn while the call was pending or running.
    #[error("Tool execution was interrupted")]
    Interrupted,
    /// The call was not run: a permission rule, the user or the doom-loop check refused it.
    #[error("{0}")]
    Refused(String),
    /// The call ran (or was checked) and failed; the message says why and what to do instead.
    #[error("{0}")]
    Failed(String),
}

/// `ToolError::Failed` with a `format!` message (in scope in the tool modules declared below).
macro_rules! tool_err {
    ($($arg:tt)*) => {
        $crate::ToolError::Failed(format!($($arg)*))
    };
}

#[async_trait::async_trait]
pub trait Tool: Send + Sync {
    fn name(&self) -> &str;
    /// A description the model can act on.
    fn description(&self) -> &str;
    /// The description as offered to the model; a tool whose text depends on settings (the
    /// bash sandbox) adds to it.
    fn describe(&self) -> String {
        self.description().trim().to_string()
    }
    /// JSON schema of the input object.
    fn parameters(&self) -> Value;
    /// Runs the call. An `Err` is what the model sees as an error result (its `Display`).
    async fn run(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError>;
    /// How long one call may run before it is stopped (its `ctx.cancel` fires); `None` for a
    /// tool that bounds itself (bash has a per-call timeout).
    fn time_limit(&self) -> Option<std::time::Duration> {
        Some(bounds::TOOL_TIME_LIMIT)
    }
    /// What would make the call fail whatever the user answers, checked before the user is
    /// asked for permission (an edit of a file the session has not read): the user is never
    /// asked to approve a call that cannot succeed. Quick checks only.
    fn precheck(&self, _input: &Value, _ctx: &ToolContext) -> Result<(), ToolError> {
        Ok(())
    }
}

pub mod bash;
pub mod bash_parse;
pub mod bounds;
pub mod edit;
pub mod editor;
pub mod glob;
pub mod grep;
pub mod jobs;
pub mod list;
pub mod mode;
pub mod open;
/// Path resolution lives with the config (the TUI resolves `@` mentions with it too).
pub use pith_config::path;
pub mod permission;
pub mod policy;

pub mod read;
pub mod recall;
pub mod registry;
pub mod remember;
pub mod sandbox;
pub mod skill;
pub mod task;
pub mod todo;
pub mod truncate;
pub mod webfetch;
pub mod websearch;
pub mod write;

pub use permission::{Decision, DoomLoop, Permissions};
pub use registry::Registry;

/// Parses a tool's input object, turning serde's error into a one-line message for the model.
pub fn parse_input<T: serde::de::DeserializeOwned>(
    tool: &str,
    input: Value,
) -> Result<T, ToolError> {
    let input = match input {
        // Some models send no arguments at all for tools whose parameters are all optional.
        Value::Null => Value::Object(Default::default()),
        other => other,
    };
    serde_json::from_value(input).map_err(|e| ToolError::InvalidInput {
        tool: tool.to_string(),
        detail: e.to_string(),
    })
}

/// A temp workspace and a `ToolContext` over it, for tests (here, and in crates that use the
/// tools with the `test-support` feature).
#[cfg(any(test, feature = "test-support"))]
#[allow(clippy::unwrap_used, clippy::new_without_default)] // test support: a setup that fails should panic
pub mod testutil {
    use super::*;

    /// The live (not zombie) processes whose argv[0] starts with `marker` (seen from outside
    /// any PID namespace).
    pub fn running(marker: &str) -> Vec<i32> {
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        dir.flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
            .filter(|pid| {
                let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
                let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
                    .map(|s| {
                        s.rsplit(')')
                            .next()
                            .is_some_and(|r| r.trim_start().starts_with('Z'))
                    })
                    .unwrap_or(true);
                cmd.starts_with(marker.as_bytes()) && !zombie
            })
            .collect()
    }

    /// Whether `what` holds within 10 s (checked every 50 ms).
    pub async fn wait_for(what: impl Fn() -> bool) -> bool {
        let start = std::time::Instant::now();
        while start.elapsed() < std::time::Duration::from_secs(10) {
            if what() {
                return true;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        false
    }

    /// Sets a file's modification time `secs_ago` seconds into the past.
    pub fn touch(p: &std::path::Path, secs_ago: u64) {
        let t = std::time::SystemTime::now() - std::time::Duration::from_secs(secs_ago);
        std::fs::File::options()
            .write(true)
            .open(p)
            .unwrap()
            .set_modified(t)
            .unwrap();
    }

    /// A temp workspace and data dir, and a context over them.
    pub struct Ws {
        pub _dir: tempfile::TempDir,
        pub ctx: ToolContext,
    }

    impl Ws {
        pub fn new() -> Ws {
            let dir = tempfile::tempdir().unwrap();
            let root = dir.path().canonicalize().unwrap();
            let workspace = root.join("ws");
            let data_dir = root.join("data");
            std::fs::create_dir_all(&workspace).unwrap();
            std::fs::create_dir_all(&data_dir).unwrap();
            let ctx = ToolContext {
                workspace: workspace.clone(),
                data_dir: data_dir.clone(),
                session_id: "ses_test".into(),
                call_id: "call_test".into(),
                cancel: CancellationToken::new(),
                state: Arc::new(SessionToolState::default()),
                output: ToolOutputConfig::default(),
                outputs: None,
                progress: None,
                editor: None,
                policy: Arc::new(policy::Policy::new(&workspace, &data_dir)),
                read_only_commands: false,
            };
            Ws { _dir: dir, ctx }
        }

        pub fn root(&self) -> PathBuf {
            self.ctx.workspace.parent().unwrap().to_path_buf()
        }

        pub fn path(&self, rel: &str) -> PathBuf {
            self.ctx.workspace.join(rel)
        }

        pub fn write(&self, rel: &str, content: impl AsRef<[u8]>) -> PathBuf {
            let p = self.path(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, content).unwrap();
            p
        }
    }
}
