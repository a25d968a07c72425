//! Where the context stands and what fills it: the status bar's usage, the `/context`
//! breakdown, what a compaction and the sub-agents cost.

use serde::{Deserialize, Serialize};

/// Where the context stands: what the status bar shows.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
pub struct ContextUsage {
    /// Tokens the next request is expected to occupy.
    pub used: u64,
    /// Tokens usable before an automatic compaction fires; 0 when none fires
    /// (`compaction.auto = false`, or the window is unknown).
    pub usable: u64,
    /// The model's context window.
    pub window: u64,
    /// `used / window` in percent.
    pub percent: f64,
    /// `used` is an estimate (no provider report since the last change).
    pub estimated: bool,
    /// Of `used`, tokens read from the provider's prompt cache at the last report.
    #[serde(default)]
    pub cached: u64,
}

/// What a compaction's summary requests cost.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
pub struct CompactionCost {
    /// Input tokens of the summary requests (cache reads and writes included).
    pub input: u64,
    /// Of `input`, tokens read from the provider's prompt cache.
    pub cache_read: u64,
    /// USD.
    pub cost: f64,
    /// The session's own request with the instruction appended (its cached prefix reused),
    /// rather than the compaction agent's dedicated one.
    pub cache_friendly: bool,
    /// Written in the background before the threshold was reached, and swapped in there.
    #[serde(default)]
    pub background: bool,
}

/// What the context is made of (`/context`), in tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
pub struct Breakdown {
    pub system: u64,
    pub tools: u64,
    pub summary: u64,
    pub messages: u64,
    pub tool_outputs: u64,
    /// Tool outputs cleared by pruning (shown to the user, not sent to the model).
    pub pruned: u64,
    pub free: u64,
    pub reserved: u64,
    pub window: u64,
    /// The last compaction of this session's run, if any.
    #[serde(default)]
    pub last_compaction: Option<CompactionCost>,
    /// What this session's sub-agents used, apart from the context above.
    #[serde(default)]
    pub subagents: SubagentTotals,
    /// A row of its own: tokens of what the user pinned (`/pin`), carried into every request
    /// (in the system prompt, but not counted in `system`).
    #[serde(default)]
    pub pinned: u64,
    /// What the compactions of this session took out of the view, in counts.
    #[serde(default)]
    pub left: crate::carried::LeftCounts,
    /// The rows were counted with the model's tokenizer (always, for `/context`), not estimated.
    #[serde(default)]
    pub exact: bool,
}

/// Tokens and cost of the sub-agents a session started (their own contexts, never the
/// parent's).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct SubagentTotals {
    /// Sub-agent runs.
    pub runs: u32,
    /// Input and output tokens of all their requests.
    pub tokens: u64,
    pub cost: f64,
}

/// What the user pinned (`/pin`): carried word for word into every request of the session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pin {
    pub text: String,
    /// What it costs in every request.
    pub tokens: u64,
}

/// A compaction is coming while it can still be steered (`/compact FOCUS`, `/pin`): what the
/// status bar says until it happens or the notice is withdrawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactionNotice {
    /// The summary is being written in the background (ARCHITECTURE.md §6.6).
    Writing,
    /// No summary is written ahead, and the context passed `compaction.notice` of the usable
    /// window: the compaction comes at the threshold.
    Soon,
    /// The summary written in the background is ready: it goes in at the next compaction
    /// point (`/compact FOCUS` still writes another).
    Ready,
}
