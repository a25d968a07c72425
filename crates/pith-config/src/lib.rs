//! Configuration: types here; loading and merging in `load.rs`, the model catalog in `catalog.rs`.

pub mod agents;
pub mod catalog;
pub mod hooks;
pub mod images;
pub mod keys;
pub mod known;
pub mod load;
pub mod mcp;
pub mod path;
mod permission;
mod provider;
pub mod skills;
pub mod websearch;

pub use hooks::{HookConfig, HookEvent, HooksConfig};
pub use mcp::{McpServerConfig, ToolSearchConfig, ToolSearchMode};
pub use permission::{PermissionAction, PermissionSetting, permission_glob};
pub use provider::{ModelConfig, OutputCap, ProviderConfig, ProviderKind};
pub use websearch::{SearchBackend, WebsearchConfig};
pub mod trusted;
pub mod ui;

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompactionConfig {
    #[serde(default = "yes")]
    pub auto: bool,
    #[serde(default = "yes")]
    pub prune: bool,
    #[serde(default)]
    pub reserved: Option<u64>,
    /// Compact at this fraction of the window at the latest.
    #[serde(default)]
    pub threshold: Option<f64>,
    #[serde(default)]
    pub preserve_recent_tokens: Option<u64>,
    /// "provider/model" for the compaction agent; the session's model when unset.
    #[serde(default)]
    pub model: Option<String>,
    /// Start writing the summary in the background at this share of the usable window (0:
    /// never). Unset: 0.65, or never for a server on this machine or network.
    #[serde(default)]
    pub background: Option<f64>,
    /// With no summary written in the background, the status bar says a compaction is coming
    /// from this share of the usable window on (0: never). Unset: 0.8.
    #[serde(default)]
    pub notice: Option<f64>,
    /// Tools whose outputs are never pruned (none by default).
    #[serde(default)]
    pub protected_tools: Vec<String>,
    /// Tokens of the newest tool outputs never pruned (unset: a fifth of the usable window, at
    /// most 40,000).
    #[serde(default)]
    pub prune_protect: Option<u64>,
    /// A prune clears more than this many tokens or nothing (unset: a tenth of the usable
    /// window, at most 20,000).
    #[serde(default)]
    pub prune_minimum: Option<u64>,
    /// Standing instructions added to every summary request, manual or automatic (`/compact
    /// focus` adds to them for one compaction). Only from the user's config or a trusted
    /// workspace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
}

impl Default for CompactionConfig {
    fn default() -> Self {
        CompactionConfig {
            auto: true,
            prune: true,
            reserved: None,
            threshold: None,
            preserve_recent_tokens: None,
            model: None,
            background: None,
            notice: None,
            protected_tools: Vec::new(),
            prune_protect: None,
            prune_minimum: None,
            instructions: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolOutputConfig {
    #[serde(default = "default_max_lines")]
    pub max_lines: usize,
    #[serde(default = "default_max_bytes")]
    pub max_bytes: usize,
}

impl Default for ToolOutputConfig {
    fn default() -> Self {
        ToolOutputConfig {
            max_lines: default_max_lines(),
            max_bytes: default_max_bytes(),
        }
    }
}

/// The `webfetch` tool: on or off, and its bounds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebfetchConfig {
    /// `false` takes the tool away (no network from pith's tools at all).
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Redirects followed on the same host.
    #[serde(default = "default_max_redirects")]
    pub max_redirects: u32,
    /// Seconds for the whole fetch.
    #[serde(default = "default_fetch_timeout")]
    pub timeout_secs: u64,
    /// Bytes of a page read at most (then the usual truncation applies).
    #[serde(default = "default_fetch_bytes")]
    pub max_bytes: usize,
}

fn default_max_redirects() -> u32 {
    5
}
fn default_fetch_timeout() -> u64 {
    30
}
fn default_fetch_bytes() -> usize {
    5 * 1024 * 1024
}

impl Default for WebfetchConfig {
    fn default() -> Self {
        WebfetchConfig {
            enabled: true,
            max_redirects: default_max_redirects(),
            timeout_secs: default_fetch_timeout(),
            max_bytes: default_fetch_bytes(),
        }
    }
}

/// The most a provider timeout or retry wait may be set to, in seconds.
pub const MAX_TIMEOUT_SECS: u64 = 3600;

/// Whether a header or setting name looks like it holds a secret (its value is redacted by
/// `pith config` and scrubbed from everything pith writes).
pub fn is_secret_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    [
        "auth",
        "key",
        "token",
        "secret",
        "cookie",
        "password",
        "credential",
    ]
    .iter()
    .any(|s| n.contains(s))
}

/// The OS sandbox around the commands the `bash` tool runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// Writes only in the workspace, the temp dir and pith's tool-output folder.
    #[default]
    WorkspaceWrite,
    /// No writes anywhere.
    ReadOnly,
    /// No sandbox: only the permission rules stand.
    Off,
}

impl SandboxMode {
    /// How much it confines: off < workspace-write < read-only.
    pub(crate) fn strictness(self) -> u8 {
        match self {
            SandboxMode::Off => 0,
            SandboxMode::WorkspaceWrite => 1,
            SandboxMode::ReadOnly => 2,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::WorkspaceWrite => "workspace-write",
            SandboxMode::ReadOnly => "read-only",
            SandboxMode::Off => "off",
        }
    }
}

/// The whole configuration after merging every source.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Default model, "provider/model".
    #[serde(default)]
    pub model: Option<String>,
    /// The session's reasoning effort from `--effort`, over the model's `reasoning_effort`; not
    /// a key of the file.
    #[serde(skip)]
    pub effort: Option<pith_protocol::llm::ReasoningEffort>,
    /// The permission mode from `--permission-mode` (Shift+Tab in the TUI changes it); not a
    /// key of the file, so a repository cannot turn questions off.
    #[serde(skip)]
    pub permission_mode: pith_protocol::event::PermissionMode,
    /// The `--config` / `PITH_CONFIG` file, absolute and real (the tools' policy protects it, the
    /// sandbox binds it read-only); not a key.
    #[serde(skip)]
    pub config_file: Option<PathBuf>,
    #[serde(default)]
    pub provider: BTreeMap<String, ProviderConfig>,
    /// Per-model limits and prices, keyed "provider/model"; overrides the catalog.
    #[serde(default)]
    pub models: BTreeMap<String, ModelConfig>,
    #[serde(default)]
    pub compaction: CompactionConfig,
    #[serde(default)]
    pub tool_output: ToolOutputConfig,
    #[serde(default)]
    pub webfetch: WebfetchConfig,
    /// Tool name (or `external_directory`) → setting.
    #[serde(default)]
    pub permission: BTreeMap<String, PermissionSetting>,
    /// Extra instruction files added to the system prompt.
    #[serde(default)]
    pub instructions: Vec<PathBuf>,
    /// Maximum agent steps per user turn.
    #[serde(default = "default_max_steps")]
    pub max_steps: u32,
    /// MCP servers by name (`[mcp.NAME]`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub mcp: BTreeMap<String, McpServerConfig>,
    /// When MCP tool definitions are deferred behind `tool_search`.
    #[serde(default)]
    pub tool_search: ToolSearchConfig,
    /// The OS sandbox around commands.
    #[serde(default)]
    pub sandbox: SandboxMode,
    /// Commands may reach the network inside the sandbox.
    #[serde(default)]
    pub sandbox_network: bool,
    /// More directories commands may write to inside the sandbox.
    #[serde(default)]
    pub sandbox_writable: Vec<PathBuf>,
    /// More paths commands may not read inside the sandbox (beyond pith's own state and the
    /// usual secrets under the home directory).
    #[serde(default)]
    pub sandbox_deny_read: Vec<PathBuf>,
    /// Processes a sandboxed command may run at once (root included, through a pids cgroup).
    #[serde(default = "default_max_processes")]
    pub sandbox_max_processes: u64,
    /// Bytes of memory a sandboxed command's processes may use together (a memory cgroup);
    /// unset: no cap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox_memory_max: Option<u64>,
    /// Bytes a sandboxed command may keep in its private `/tmp`; unset: the kernel's default
    /// for a tmpfs (half the memory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox_tmp_size: Option<u64>,
    /// Environment variables passed to commands although their name looks secret.
    #[serde(default)]
    pub env_allow: Vec<String>,
    /// Directories (and everything below them) whose `pith.toml` is trusted. Read from the
    /// global config only.
    #[serde(default)]
    pub trusted_directories: Vec<PathBuf>,
    /// `[agent.NAME]`: sub-agents the `task` tool can start, besides the built-in ones (and
    /// those defined in Markdown files, merged in by `load`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub agent: BTreeMap<String, AgentConfig>,
    /// How sub-agents run.
    #[serde(default)]
    pub task: TaskConfig,
    /// The TUI's colours: `dark`, `light`, or a theme file `themes/NAME.toml` beside the global
    /// config; unset: the one last picked with `/theme`, else dark.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<String>,
    /// `[keys]`: action name → key(s), replacing the action's default keys.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub keys: BTreeMap<String, ui::KeyList>,
    /// The bell / desktop notification when a long turn ends or a question waits.
    #[serde(default)]
    pub notify: NotifyConfig,
    /// `[[hooks.EVENT]]`: commands run at points of the session. Every file's hooks are kept,
    /// in load order; an untrusted workspace file sets none.
    #[serde(default, skip_serializing_if = "HooksConfig::is_empty")]
    pub hooks: HooksConfig,
    /// `[goal]`: how `/goal` decides a goal is met and when it stops (ARCHITECTURE.md §5.2).
    #[serde(default)]
    pub goal: GoalConfig,
    /// `[memory]`: the `remember` tool (README "Instructions and memory").
    #[serde(default)]
    pub memory: MemoryConfig,
    /// `[skills]` (ARCHITECTURE.md §4.7).
    #[serde(default)]
    pub skills: SkillsConfig,
    /// `[jobs]`: background jobs (`bash` with `background: true`; ARCHITECTURE.md §5.3).
    #[serde(default)]
    pub jobs: JobsConfig,
    /// `[websearch]`: the `websearch` tool's backend, off until configured (README "Web
    /// search").
    #[serde(default)]
    pub websearch: WebsearchConfig,
}

/// `[jobs]`: commands the model starts in the background (dev servers, watchers).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobsConfig {
    /// Background jobs a session may have running at once; `0`: none (`bash` offers no
    /// `background` parameter).
    #[serde(default = "default_jobs_max")]
    pub max: usize,
}

fn default_jobs_max() -> usize {
    8
}

impl Default for JobsConfig {
    fn default() -> Self {
        JobsConfig {
            max: default_jobs_max(),
        }
    }
}

/// `[goal]`: the check after each turn toward a goal, and the budget of one set without any.
/// An untrusted workspace file sets none of it (a check is a command).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GoalConfig {
    /// A command whose exit code 0 says the goal is met (`cargo test`), run after each turn
    /// toward a goal through the bash tool's permission rules and sandbox. Unset: the model is
    /// asked in a small side request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<String>,
    /// Seconds the check command may run (at most 600).
    #[serde(default = "default_goal_check_timeout")]
    pub check_timeout_secs: u64,
    /// Turns a goal may take when `/goal` names no `--budget`.
    #[serde(default = "default_goal_turns")]
    pub max_turns: u64,
}

impl Default for GoalConfig {
    fn default() -> Self {
        GoalConfig {
            check: None,
            check_timeout_secs: default_goal_check_timeout(),
            max_turns: default_goal_turns(),
        }
    }
}

fn default_goal_check_timeout() -> u64 {
    300
}

fn default_goal_turns() -> u64 {
    30
}

/// `[memory]`: whether the model may propose memory lines (`remember`; the user is always
/// asked). `/remember`, `#TEXT` and `/memory` are the user's and always there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemoryConfig {
    /// `false` takes the `remember` tool away.
    #[serde(default = "yes")]
    pub tool: bool,
}

impl Default for MemoryConfig {
    fn default() -> Self {
        MemoryConfig { tool: true }
    }
}

/// `[skills]`: Agent Skills found in the skills folders.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SkillsConfig {
    /// `false`: no skills are read, listed or offered (no `skill` tool, no `/NAME`).
    #[serde(default = "default_true")]
    pub enabled: bool,
}

impl Default for SkillsConfig {
    fn default() -> Self {
        SkillsConfig { enabled: true }
    }
}

/// `[notify]`: telling the user the agent is done or waiting.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NotifyConfig {
    /// Ring the terminal bell.
    #[serde(default = "default_true")]
    pub bell: bool,
    /// A desktop notification through the terminal (OSC 9, or OSC 777 in foot and urxvt).
    #[serde(default)]
    pub desktop: bool,
    /// A turn that ran at least this long notifies when it ends.
    #[serde(default = "default_notify_after")]
    pub after_secs: u64,
}

impl Default for NotifyConfig {
    fn default() -> Self {
        NotifyConfig {
            bell: true,
            desktop: false,
            after_secs: default_notify_after(),
        }
    }
}

fn default_notify_after() -> u64 {
    10
}

fn default_true() -> bool {
    true
}

/// A sub-agent (`[agent.NAME]`, or a Markdown file in `.pith/agents/`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct AgentConfig {
    /// When to use it: the model reads this in the `task` tool's description.
    #[serde(default)]
    pub description: String,
    /// "provider/model"; unset: the model of the session that starts it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The tools it may use (never more than its parent has); unset: all of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<String>>,
    /// Its system prompt; unset: pith's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// Hides an agent (a built-in one too).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub disable: bool,
}

/// `[task]`: how sub-agents run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskConfig {
    /// How deep sub-agents may nest: 1 lets the main agent start sub-agents that cannot start
    /// their own; 0 turns the `task` tool off.
    #[serde(default = "default_max_depth")]
    pub max_depth: u32,
    /// Sub-agents of one step that run at the same time; more wait for a free slot.
    #[serde(default = "default_max_parallel")]
    pub max_parallel: usize,
}

impl Default for TaskConfig {
    fn default() -> Self {
        TaskConfig {
            max_depth: default_max_depth(),
            max_parallel: default_max_parallel(),
        }
    }
}

fn default_max_depth() -> u32 {
    1
}
fn default_max_parallel() -> usize {
    4
}

impl Default for Config {
    fn default() -> Self {
        Config {
            model: None,
            effort: None,
            permission_mode: Default::default(),
            config_file: None,
            provider: BTreeMap::new(),
            models: BTreeMap::new(),
            compaction: CompactionConfig::default(),
            tool_output: ToolOutputConfig::default(),
            webfetch: WebfetchConfig::default(),
            permission: BTreeMap::new(),
            instructions: Vec::new(),
            max_steps: default_max_steps(),
            mcp: BTreeMap::new(),
            tool_search: ToolSearchConfig::default(),
            sandbox: SandboxMode::default(),
            sandbox_network: false,
            sandbox_writable: Vec::new(),
            sandbox_deny_read: Vec::new(),
            sandbox_max_processes: default_max_processes(),
            sandbox_memory_max: None,
            sandbox_tmp_size: None,
            env_allow: Vec::new(),
            trusted_directories: Vec::new(),
            agent: BTreeMap::new(),
            task: TaskConfig::default(),
            theme: None,
            keys: BTreeMap::new(),
            notify: NotifyConfig::default(),
            hooks: HooksConfig::default(),
            goal: GoalConfig::default(),
            memory: MemoryConfig::default(),
            skills: SkillsConfig::default(),
            jobs: JobsConfig::default(),
            websearch: WebsearchConfig::default(),
        }
    }
}

fn yes() -> bool {
    true
}
fn default_max_lines() -> usize {
    2000
}
fn default_max_bytes() -> usize {
    50 * 1024
}
fn default_max_steps() -> u32 {
    100
}
fn default_max_processes() -> u64 {
    4096
}
