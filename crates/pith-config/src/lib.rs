//! Configuration: types here; loading and merging in `load.rs`, the model catalog in `catalog.rs`.

pub mod agents;
pub mod catalog;
pub mod hooks;
pub mod keys;
pub mod known;
pub mod load;
pub mod mcp;
pub mod path;

pub use hooks::{HookConfig, HookEvent, HooksConfig};
pub use mcp::{McpServerConfig, ToolSearchConfig, ToolSearchMode};
pub mod trusted;
pub mod ui;

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    Openai,
    Anthropic,
    /// OpenAI's Responses API (`{base_url}/responses`).
    Responses,
}

impl ProviderKind {
    /// The name written in a config file (`kind = "…"`).
    pub fn as_str(&self) -> &'static str {
        match self {
            ProviderKind::Openai => "openai",
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::Responses => "responses",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderConfig {
    pub kind: ProviderKind,
    /// openai kind: includes the version (`https://api.openai.com/v1`); anthropic kind:
    /// `https://api.anthropic.com`.
    pub base_url: String,
    /// Name of the environment variable that holds the API key (never the key itself).
    #[serde(default)]
    pub api_key_env: Option<String>,
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Retries for rate limits, 5xx, timeouts and broken streams.
    #[serde(default)]
    pub max_retries: Option<u32>,
    /// Seconds to wait for a connection.
    #[serde(default)]
    pub connect_timeout_secs: Option<u64>,
    /// Seconds to wait for the first byte of an answer after sending the request (a local server
    /// reads the whole prompt first). `timeout_secs` is the older name.
    #[serde(default, alias = "timeout_secs")]
    pub first_byte_timeout_secs: Option<u64>,
    /// Seconds of silence tolerated in the middle of a streamed answer.
    #[serde(default)]
    pub idle_timeout_secs: Option<u64>,
    /// The longest wait before a retry: a server asking for longer (`retry-after`) gets the error
    /// reported instead.
    #[serde(default)]
    pub max_retry_wait_secs: Option<u64>,
    /// Which field carries the output cap (openai kind); unset: `max_completion_tokens` for
    /// api.openai.com, `max_tokens` for every other server.
    #[serde(default)]
    pub output_cap: Option<OutputCap>,
    /// Whether the server takes a reasoning effort (`reasoning_effort` on chat completions,
    /// `reasoning.effort` on the Responses API); unset: only api.openai.com.
    #[serde(default)]
    pub reasoning_effort: Option<bool>,
    /// Responses API: send `store: false` and carry the model's reasoning back encrypted
    /// (`include: ["reasoning.encrypted_content"]`), as OpenAI and Azure OpenAI take; unset:
    /// only api.openai.com.
    #[serde(default)]
    pub encrypted_reasoning: Option<bool>,
}

impl Default for ProviderConfig {
    fn default() -> Self {
        ProviderConfig {
            kind: ProviderKind::Openai,
            base_url: String::new(),
            api_key_env: None,
            headers: BTreeMap::new(),
            max_retries: None,
            connect_timeout_secs: None,
            first_byte_timeout_secs: None,
            idle_timeout_secs: None,
            max_retry_wait_secs: None,
            output_cap: None,
            reasoning_effort: None,
            encrypted_reasoning: None,
        }
    }
}

/// The request field that carries the output cap on an OpenAI-compatible server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutputCap {
    /// `max_tokens`: llama.cpp, Ollama, vLLM, OpenRouter and most other servers.
    MaxTokens,
    /// `max_completion_tokens`: OpenAI's own API (its newer models reject `max_tokens`).
    MaxCompletionTokens,
    /// Send no cap (a server that rejects both fields).
    None,
}

impl OutputCap {
    /// The field for a server at `base_url` when the config names none.
    pub fn default_for(base_url: &str) -> OutputCap {
        let host = url::Url::parse(base_url.trim())
            .ok()
            .and_then(|u| u.host_str().map(str::to_ascii_lowercase));
        match host.as_deref() {
            Some("api.openai.com") => OutputCap::MaxCompletionTokens,
            _ => OutputCap::MaxTokens,
        }
    }
}

/// Limits and prices of one model (`[models."provider/model"]` or the catalog).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct ModelConfig {
    /// Context window in tokens (0 = unknown: automatic compaction off).
    #[serde(default)]
    pub context: u64,
    /// Maximum input tokens, where the provider limits it separately.
    #[serde(default)]
    pub input: Option<u64>,
    /// Maximum output tokens.
    #[serde(default)]
    pub output: u64,
    /// USD per million input tokens.
    #[serde(default)]
    pub cost_input: f64,
    /// USD per million output tokens.
    #[serde(default)]
    pub cost_output: f64,
    #[serde(default)]
    pub cost_cache_read: Option<f64>,
    #[serde(default)]
    pub cost_cache_write: Option<f64>,
    /// Anthropic extended thinking budget in tokens.
    #[serde(default)]
    pub thinking_budget: Option<u32>,
    /// How hard the model reasons: "minimal", "low", "medium" or "high" (`--effort` and
    /// `/effort` override it for a session).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<pith_protocol::llm::ReasoningEffort>,
    /// `max_tokens` to request (defaults to min(output, 32000)).
    #[serde(default)]
    pub max_tokens: Option<u32>,
    /// The model takes images (attached with `@shot.png`); unset: pith's guess from the name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub images: Option<bool>,
}

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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PermissionAction {
    Allow,
    Ask,
    Deny,
}

/// A permission entry: one action for the whole tool, or patterns mapped to actions
/// (`[permission.bash] "git status*" = "allow"`). The most specific (longest) matching pattern wins.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum PermissionSetting {
    Action(PermissionAction),
    Patterns(BTreeMap<String, PermissionAction>),
}

impl<'de> Deserialize<'de> for PermissionSetting {
    /// By hand, so a wrong value says what is expected (an untagged enum can only say that
    /// nothing matched).
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = PermissionSetting;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(
                    "\"allow\", \"ask\" or \"deny\", or a table of \"pattern\" = \"allow\" | \"ask\" | \"deny\"",
                )
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
                parse_action(v).map(PermissionSetting::Action)
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Self::Value, A::Error> {
                let mut out = BTreeMap::new();
                while let Some((pattern, action)) = map.next_entry::<String, ActionField>()? {
                    out.insert(pattern, action.0);
                }
                Ok(PermissionSetting::Patterns(out))
            }
        }
        d.deserialize_any(Visitor)
    }
}

/// An action inside a pattern table, read on its own so an error points at its value.
struct ActionField(PermissionAction);

impl<'de> Deserialize<'de> for ActionField {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = ActionField;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("\"allow\", \"ask\" or \"deny\"")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
                parse_action(v).map(ActionField)
            }
        }
        d.deserialize_str(Visitor)
    }
}

fn parse_action<E: serde::de::Error>(v: &str) -> Result<PermissionAction, E> {
    match v {
        "allow" => Ok(PermissionAction::Allow),
        "ask" => Ok(PermissionAction::Ask),
        "deny" => Ok(PermissionAction::Deny),
        other => Err(E::custom(format!(
            "permission action must be \"allow\", \"ask\" or \"deny\", got \"{other}\""
        ))),
    }
}

/// A permission pattern as a glob whose `*` also crosses `/` (what the permission rules match
/// with); loading rejects a pattern this refuses, naming the file and line.
pub fn permission_glob(pattern: &str) -> Result<globset::GlobMatcher, globset::Error> {
    globset::GlobBuilder::new(pattern)
        .literal_separator(false)
        .backslash_escape(true)
        .build()
        .map(|g| g.compile_matcher())
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
    pub fn strictness(self) -> u8 {
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
            env_allow: Vec::new(),
            trusted_directories: Vec::new(),
            agent: BTreeMap::new(),
            task: TaskConfig::default(),
            theme: None,
            keys: BTreeMap::new(),
            notify: NotifyConfig::default(),
            hooks: HooksConfig::default(),
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
