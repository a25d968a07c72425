//! What front ends send to the engine (`Op`) and what the engine reports back (`Event`).

use serde::{Deserialize, Serialize};

use crate::message::{FinishReason, Message, Part, Usage};

mod window;

pub use window::WindowSource;

/// How tool calls are let through, on top of the permission rules (deny rules and the sandbox
/// hold in every mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PermissionMode {
    /// The rules decide; what they ask about is asked.
    #[default]
    Default,
    /// Look, don't touch: only tools that read run; the model ends with a plan to accept.
    Plan,
    /// Edits and writes inside the workspace need no question.
    AcceptEdits,
    /// Nothing is asked (as `--yes`): what the rules ask about runs.
    Bypass,
}

impl PermissionMode {
    pub const ALL: [PermissionMode; 4] = [
        PermissionMode::Default,
        PermissionMode::Plan,
        PermissionMode::AcceptEdits,
        PermissionMode::Bypass,
    ];

    /// The name on the command line and in the status bar.
    pub fn name(self) -> &'static str {
        match self {
            PermissionMode::Default => "default",
            PermissionMode::Plan => "plan",
            PermissionMode::AcceptEdits => "accept-edits",
            PermissionMode::Bypass => "bypass",
        }
    }

    pub fn parse(s: &str) -> Option<PermissionMode> {
        Self::ALL.into_iter().find(|m| m.name() == s.trim())
    }

    /// The next mode Shift+Tab gives: default → accept-edits → plan → default (bypass is only
    /// ever chosen on purpose, and Shift+Tab leaves it for default).
    pub fn next(self) -> PermissionMode {
        match self {
            PermissionMode::Default => PermissionMode::AcceptEdits,
            PermissionMode::AcceptEdits => PermissionMode::Plan,
            PermissionMode::Plan | PermissionMode::Bypass => PermissionMode::Default,
        }
    }
}

/// Where the context stands: what the status bar shows.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
pub struct ContextUsage {
    /// Tokens the next request is expected to occupy.
    pub used: u64,
    /// Tokens usable before an automatic compaction fires.
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PermissionReply {
    Once,
    Always,
    Deny,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PermissionRequest {
    pub id: String,
    pub tool: String,
    pub call_id: String,
    /// Short human description: the command, the path, …
    pub title: String,
    /// The pattern an "always" reply would allow for the rest of the session.
    pub patterns: Vec<String>,
    /// The sub-agent that asks (`None`: the main agent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
}

/// The id a front end gives what it submits (a prompt, a command, a `!` command); the events that
/// answer it name it.
pub type SubmissionId = String;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Op {
    /// A user message. While a turn runs it is queued and delivered mid-turn
    /// (ARCHITECTURE.md §4.4). `id` is the front end's: the stored message carries it back as
    /// `submission_id`.
    UserTurn {
        id: String,
        text: String,
        /// What of `text` the user pasted (a bracketed paste the TUI showed as a chip), as byte
        /// spans: compaction carries those as pasted blocks, whatever their shape.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pasted: Vec<crate::message::Span>,
    },
    /// `/compact [focus]`.
    Compact {
        focus: Option<String>,
    },
    /// Stop the running stream and tools; history stays valid.
    Interrupt,
    PermissionReply {
        id: String,
        reply: PermissionReply,
        #[serde(default)]
        message: Option<String>,
    },
    /// Switch the session's model ("provider/model").
    SetModel {
        model: String,
    },
    /// Switch the permission mode (`--permission-mode`, Shift+Tab in the TUI). Answered by
    /// `PermissionModeChanged`.
    SetPermissionMode {
        mode: PermissionMode,
    },
    /// Set the session's reasoning effort (`/effort`); `None`: back to the model's own
    /// (`reasoning_effort` in its config, else none). Answered by `EffortChanged`.
    SetEffort {
        effort: Option<crate::llm::ReasoningEffort>,
    },
    /// Start a fresh session in the same workspace (`/new`).
    NewSession,
    /// Switch to a stored session (`/sessions` picker); answered by `SessionLoaded`.
    ResumeSession {
        id: String,
    },
    /// The page of `session_id`'s history before message `before` (the TUI scrolled up to the
    /// oldest message it holds); answered by `History`.
    LoadHistory {
        session_id: String,
        before: String,
    },
    /// Ask for the stored sessions; answered by `Sessions`.
    ListSessions,
    /// Ask for the sub-agent sessions `session_id` started (`/agents`); answered by `Sessions`.
    ListSubagents {
        session_id: String,
    },
    /// Ask for the `/context` breakdown; answered by `ContextBreakdown`.
    ContextBreakdown,
    /// Write the whole session to a file (`/export [path]`); answered by `Info`.
    Export {
        path: Option<String>,
    },
    /// Run the MCP prompt `/SERVER:NAME args`: its text becomes a user message (paired by `id`
    /// like `UserTurn`).
    McpPrompt {
        id: String,
        server: String,
        prompt: String,
        /// The text after the command; split over the prompt's arguments.
        #[serde(default)]
        args: String,
    },
    /// Ask for the resources of every ready MCP server; answered by `McpResources`.
    ListMcpResources,
    /// Read an MCP resource now and attach it to the next user message; answered by `Info` (or
    /// an `Error` of kind `mcp`).
    AttachMcpResource {
        server: String,
        uri: String,
    },
    /// Start an MCP server again (after it failed or exited, or to pick up its new tools).
    RestartMcpServer {
        name: String,
    },
    /// A command the user runs in the shell (`!cmd`), through the bash tool's rules; its
    /// output joins the context as the user's own. `id` is stored as the message's
    /// `submission_id`. Answered by the message, then `TurnFinished`.
    Shell {
        id: String,
        command: String,
    },
    /// Take back the last turn: its file changes and its messages (`/undo`). Answered by
    /// `Undone` (or an error of kind `undo`).
    Undo,
    /// Put back the turn the last `Undo` took back (`/redo`). Answered by `Redone`.
    Redo,
    /// Go back to just before the user message `message_id` (`/rewind`): every turn from it on
    /// is undone. Answered by `Undone`.
    Rewind {
        message_id: String,
    },
    /// A custom slash command the front end expanded: `text` becomes the user's message
    /// (labelled `label`, e.g. `/review src/a.rs`), run with `model` and as `agent` when set —
    /// for this turn only. Paired by `id` like `UserTurn`.
    RunCommand {
        id: String,
        label: String,
        text: String,
        #[serde(default)]
        model: Option<String>,
        #[serde(default)]
        agent: Option<String>,
    },
    /// Allow every call the rules would ask about (`--yes`, an editor's "yes" mode) or ask
    /// again; applies from the next call the runner checks. Leaving the sandbox and what
    /// `Permissions::yes_refusal` names stay refused.
    SetAutoYes {
        on: bool,
    },
    Shutdown,
}

/// An op as a front end submits it: `id` names it, and what answers it (an `Event::Error`, a
/// `PromptRefused`) names it back. An op that carries its own id (a prompt, a command, a `!`
/// command) is submitted under that id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Submission {
    pub id: SubmissionId,
    pub op: Op,
}

impl Submission {
    /// `op` submitted under its own id, else a fresh one.
    pub fn new(op: Op) -> Submission {
        let id = op
            .own_id()
            .map_or_else(crate::message::new_id, str::to_string);
        Submission { id, op }
    }
}

impl From<Op> for Submission {
    fn from(op: Op) -> Submission {
        Submission::new(op)
    }
}

impl Op {
    /// The id the op carries itself: the front end's id of a prompt, a command or a `!` command.
    pub fn own_id(&self) -> Option<&str> {
        match self {
            Op::UserTurn { id, .. }
            | Op::McpPrompt { id, .. }
            | Op::Shell { id, .. }
            | Op::RunCommand { id, .. } => Some(id),
            Op::Compact { .. }
            | Op::Interrupt
            | Op::PermissionReply { .. }
            | Op::SetModel { .. }
            | Op::SetPermissionMode { .. }
            | Op::SetEffort { .. }
            | Op::NewSession
            | Op::ResumeSession { .. }
            | Op::LoadHistory { .. }
            | Op::ListSessions
            | Op::ListSubagents { .. }
            | Op::ContextBreakdown
            | Op::Export { .. }
            | Op::ListMcpResources
            | Op::AttachMcpResource { .. }
            | Op::RestartMcpServer { .. }
            | Op::Undo
            | Op::Redo
            | Op::Rewind { .. }
            | Op::SetAutoYes { .. }
            | Op::Shutdown => None,
        }
    }

    /// A user message with a fresh id.
    pub fn user_turn(text: impl Into<String>) -> Op {
        Op::UserTurn {
            id: crate::message::new_id(),
            text: text.into(),
            pasted: Vec::new(),
        }
    }
}

/// Why a turn (or a `/compact`) ended. Serialized as a snake_case string.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnEnd {
    /// The model answered and stopped.
    Stop,
    /// The model's answer hit the output limit.
    Length,
    /// The provider withheld the answer.
    ContentFilter,
    /// The step limit was reached while the model still called tools.
    MaxSteps,
    /// The user interrupted the turn.
    Interrupted,
    /// The turn failed; an `Event::Error` said why.
    Error,
    /// A `/compact` finished.
    Compacted,
    /// A `/compact` found nothing worth compacting and changed nothing (an `Event::Info` said why).
    NothingToCompact,
    /// The model stopped for a reason pith has no name for (as the provider reported it).
    #[serde(untagged)]
    Other(String),
}

impl From<FinishReason> for TurnEnd {
    /// The end of a turn whose last step finished this way.
    fn from(finish: FinishReason) -> TurnEnd {
        match finish {
            FinishReason::Stop => TurnEnd::Stop,
            FinishReason::Length => TurnEnd::Length,
            FinishReason::ContentFilter => TurnEnd::ContentFilter,
            FinishReason::Interrupted => TurnEnd::Interrupted,
            FinishReason::ToolCalls => TurnEnd::MaxSteps,
            FinishReason::Other(reason) => TurnEnd::Other(reason),
        }
    }
}

/// What an `Event::Error` is about, so a front end can react without reading the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The model request failed (after the retries).
    Provider,
    /// The conversation does not fit the model's context window, even after compacting.
    ContextOverflow,
    /// A compaction failed or was stopped.
    Compaction,
    /// The model asked for (`Op::SetModel`) cannot be used; the previous one stays.
    Model,
    /// A session could not be created, found, listed or read.
    Session,
    /// `/export` could not write the session.
    Export,
    /// No model is configured.
    NoModel,
    /// The session store could not be written (a full disk, a read-only data directory): what
    /// streamed was shown but is not all saved.
    Store,
    /// The model kept making calls that cannot run (or are refused): the turn was stopped.
    Loop,
    /// A bug stopped the engine.
    Internal,
    /// `/undo`, `/redo` or `/rewind` could not be done (nothing to undo, a compaction in the
    /// way, a file that cannot be restored).
    Undo,
    /// A `!` command could not be run (denied by the rules, or it failed to start).
    Shell,
    /// An MCP prompt or resource could not be fetched.
    Mcp,
    /// A custom command names a model or agent that cannot be used; nothing was sent.
    Command,
}

/// Where an MCP server stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum McpState {
    /// `enabled = false` in the config.
    Disabled,
    /// Starting (or restarting) and listing its tools.
    Starting,
    Ready,
    /// It could not be started; restarted on the next call of one of its tools.
    Failed {
        reason: String,
    },
    /// It stopped after starting; restarted on the next call of one of its tools.
    Exited {
        reason: String,
    },
}

/// One argument of an MCP prompt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpPromptArg {
    pub name: String,
    #[serde(default)]
    pub required: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// An MCP prompt: offered as the slash command `/SERVER:NAME`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpPrompt {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub arguments: Vec<McpPromptArg>,
}

/// How pith talks to an MCP server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum McpTransport {
    /// A child process, over its stdin and stdout.
    Stdio,
    /// Streamable HTTP (`url`).
    Http,
}

impl McpTransport {
    pub fn as_str(self) -> &'static str {
        match self {
            McpTransport::Stdio => "stdio",
            McpTransport::Http => "http",
        }
    }
}

impl std::fmt::Display for McpTransport {
    /// As written in the JSON; padded as asked (`{:<5}` lines listings up).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

/// One MCP server as front ends show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpServerStatus {
    pub name: String,
    pub transport: McpTransport,
    #[serde(flatten)]
    pub state: McpState,
    /// Tools offered to the model (after `enabled_tools` / `disabled_tools`).
    pub tools: usize,
    /// Estimated tokens of their definitions, as sent when not deferred.
    pub tokens: u64,
    /// Its definitions are behind `tool_search` (only loaded ones are sent).
    #[serde(default)]
    pub deferred: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prompts: Vec<McpPrompt>,
    /// It offers resources (`/resource`).
    #[serde(default)]
    pub resources: bool,
}

/// A resource an MCP server offers (`/resource`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpResource {
    pub server: String,
    pub uri: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime: Option<String>,
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EngineState {
    Idle,
    Thinking,
    Running,
    Compacting,
    Retrying,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// A message was created or its header (usage, finish, error) changed. `parts` may be empty.
    Message {
        message: Message,
    },
    /// A part was created or changed (tool state transitions, text finalised).
    PartUpdated {
        part: Part,
    },
    /// A message was removed (a step that is tried again, a turn taken back).
    MessageRemoved {
        message_id: String,
    },
    /// Parts of a message were removed (a failed attempt's partial output before a retry).
    PartsRemoved {
        message_id: String,
        part_ids: Vec<String>,
    },
    /// Streamed text appended to a text part.
    TextDelta {
        message_id: String,
        part_id: String,
        delta: String,
    },
    /// Streamed reasoning appended to a reasoning part.
    ReasoningDelta {
        message_id: String,
        part_id: String,
        delta: String,
    },
    ToolStarted {
        call_id: String,
        tool: String,
        input: serde_json::Value,
    },
    /// Output a running tool has produced so far arrived (bash streams its output): `output`
    /// is appended to what came before.
    ToolOutput {
        call_id: String,
        output: String,
    },
    ToolFinished {
        call_id: String,
        tool: String,
        title: String,
        error: Option<String>,
        duration_ms: u64,
    },
    StepFinished {
        usage: Usage,
        finish: FinishReason,
        cost: f64,
    },
    ContextUsage(ContextUsage),
    CompactionStarted {
        auto: bool,
        overflow: bool,
        focus: Option<String>,
    },
    CompactionFinished {
        summary_message_id: String,
        /// Context tokens before and after (after is an estimate until the next report).
        before: u64,
        after: u64,
        model_calls: u32,
        /// What the summary requests cost.
        #[serde(default)]
        cost: CompactionCost,
    },
    Pruned {
        parts: usize,
        tokens: u64,
    },
    /// The model's real context window differs from the one pith was using: a server error
    /// stated it, or the local server was asked. Used (and remembered for the model) from now on.
    ContextWindow {
        model: String,
        window: u64,
        /// The window used before (0: unknown).
        previous: u64,
        /// Where the figure came from.
        source: WindowSource,
    },
    PermissionAsked(PermissionRequest),
    Retrying {
        attempt: u32,
        max: u32,
        delay_ms: u64,
        message: String,
    },
    State {
        state: EngineState,
        detail: Option<String>,
    },
    /// The engine switched to a session; `messages` is the newest page of its stored history
    /// (`more_history`: older messages remain, fetched with `Op::LoadHistory`).
    SessionLoaded {
        session: crate::message::Session,
        messages: Vec<Message>,
        #[serde(default)]
        more_history: bool,
        /// The op this answers, when it answers one (§2): a front end waiting for its answer
        /// matches on it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        submission: Option<SubmissionId>,
    },
    /// An older page of a session's history, oldest message first (`Op::LoadHistory`).
    History {
        session_id: String,
        messages: Vec<Message>,
        /// Older messages remain before these.
        more: bool,
        /// The op this answers, when it answers one (§2): a front end waiting for its answer
        /// matches on it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        submission: Option<SubmissionId>,
    },
    Sessions {
        sessions: Vec<crate::message::Session>,
        /// The op this answers, when it answers one (§2): a front end waiting for its answer
        /// matches on it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        submission: Option<SubmissionId>,
    },
    /// What fills the context (`Op::ContextBreakdown`).
    ContextBreakdown {
        #[serde(flatten)]
        breakdown: Breakdown,
        /// The op this answers, when it answers one (§2): a front end waiting for its answer
        /// matches on it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        submission: Option<SubmissionId>,
    },
    /// The MCP servers changed state or tools (every server, each time).
    McpStatus {
        servers: Vec<McpServerStatus>,
    },
    /// The resources of the ready MCP servers (`Op::ListMcpResources`).
    McpResources {
        resources: Vec<McpResource>,
        /// The op this answers, when it answers one (§2): a front end waiting for its answer
        /// matches on it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        submission: Option<SubmissionId>,
    },
    /// The session now talks to this model ("provider/model"), after `Op::SetModel`.
    ModelChanged {
        model: String,
        /// The op this answers, when it answers one (§2): a front end waiting for its answer
        /// matches on it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        submission: Option<SubmissionId>,
    },
    /// The reasoning effort requests now carry (`None`: none), after `Op::SetEffort`, a model
    /// change, or at start when one is set.
    EffortChanged {
        effort: Option<crate::llm::ReasoningEffort>,
        /// The op this answers, when it answers one (§2): a front end waiting for its answer
        /// matches on it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        submission: Option<SubmissionId>,
    },
    /// The permission mode calls are now judged in, after `Op::SetPermissionMode`, the user
    /// accepting a plan, or at start when it is not the default.
    PermissionModeChanged {
        mode: PermissionMode,
        /// The op this answers, when it answers one (§2): a front end waiting for its answer
        /// matches on it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        submission: Option<SubmissionId>,
    },
    /// A prompt pith refused before storing it: on its own (with the system prompt and tools)
    /// it does not fit what the model can use, so no compaction could make room for it. Nothing
    /// of it is in the session, nor in any later request. `id` is the `Op::UserTurn` id, `text`
    /// what was sent (for the front end to give back), `tokens` its estimate with the system
    /// prompt and tools, `usable` the line it crossed; `message` is for people. A prompt a
    /// `user_prompt_submit` hook refused comes the same way, with `tokens` and `usable` 0.
    PromptRefused {
        id: String,
        text: String,
        tokens: u64,
        usable: u64,
        message: String,
    },
    /// Messages from `message_id` on were taken back (`Op::Undo`, `Op::Rewind`): removed from
    /// the session and the context, kept for `Op::Redo`. `prompt` is the text of the first
    /// (the user message that started it), `files` the files put back as they were.
    Undone {
        message_id: String,
        prompt: String,
        files: Vec<String>,
        /// Turns `Op::Redo` can now put back.
        redo: usize,
        /// The op this answers, when it answers one (§2): a front end waiting for its answer
        /// matches on it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        submission: Option<SubmissionId>,
    },
    /// A turn taken back is back (`Op::Redo`): its messages, oldest first, and the files put back
    /// as the turn left them.
    Redone {
        messages: Vec<Message>,
        files: Vec<String>,
        redo: usize,
        /// The op this answers, when it answers one (§2): a front end waiting for its answer
        /// matches on it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        submission: Option<SubmissionId>,
    },
    /// A one-line notice for the user (export written, a warning, …).
    Info {
        message: String,
        /// The op this answers, when it answers one (§2): a front end waiting for its answer
        /// matches on it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        submission: Option<SubmissionId>,
    },
    Error {
        kind: ErrorKind,
        message: String,
        /// The submission this error answers (the id of the op that asked for what failed),
        /// when it answers one: a front end matches on it, never on the message.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        submission: Option<SubmissionId>,
        /// The assistant message whose step failed with this error (it records the error too),
        /// when one did.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        failed_message: Option<crate::message::MessageId>,
    },
    TurnFinished {
        reason: TurnEnd,
    },
    /// An event of a sub-agent's session, started by the `task` call `call_id` of session
    /// `parent_session_id` (ARCHITECTURE.md §13). Its permission questions come as plain
    /// `PermissionAsked` events naming the agent.
    Subagent {
        session_id: String,
        parent_session_id: String,
        agent: String,
        call_id: String,
        event: Box<Event>,
    },
}

/// Matches the events that answer an op (their `submission` field bound to `$s`): `$found`
/// for those, `None` for the others. The one list of them.
macro_rules! answer_field {
    ($event:expr, $s:ident => $found:expr) => {
        match $event {
            Event::SessionLoaded { submission: $s, .. }
            | Event::History { submission: $s, .. }
            | Event::Sessions { submission: $s, .. }
            | Event::ContextBreakdown { submission: $s, .. }
            | Event::McpResources { submission: $s, .. }
            | Event::ModelChanged { submission: $s, .. }
            | Event::EffortChanged { submission: $s, .. }
            | Event::PermissionModeChanged { submission: $s, .. }
            | Event::Undone { submission: $s, .. }
            | Event::Redone { submission: $s, .. }
            | Event::Info { submission: $s, .. }
            | Event::Error { submission: $s, .. } => $found,
            _ => None,
        }
    };
}

impl Event {
    /// This event as the answer to submission `id`: the events that answer an op (and errors)
    /// name it, unless they name one already; the others are unchanged.
    pub fn answering(mut self, id: &SubmissionId) -> Event {
        if let Some(slot) = self.submission_mut()
            && slot.is_none()
        {
            *slot = Some(id.clone());
        }
        self
    }

    /// The op this event answers, for the events that answer one.
    pub fn submission(&self) -> Option<&SubmissionId> {
        answer_field!(self, submission => submission.as_ref())
    }

    fn submission_mut(&mut self) -> Option<&mut Option<SubmissionId>> {
        answer_field!(self, submission => Some(submission))
    }

    /// A one-line notice that answers no op.
    pub fn info(message: impl Into<String>) -> Event {
        Event::Info {
            message: message.into(),
            submission: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Stored and printed as the strings earlier builds wrote; listings pad it.
    #[test]
    fn mcp_transports_keep_their_names() {
        for (t, text) in [(McpTransport::Stdio, "stdio"), (McpTransport::Http, "http")] {
            assert_eq!(serde_json::to_value(t).unwrap(), serde_json::json!(text));
            assert_eq!(
                serde_json::from_value::<McpTransport>(text.into()).unwrap(),
                t
            );
        }
        assert_eq!(format!("[{:<5}]", McpTransport::Http), "[http ]");
    }

    /// `--format json` prints these: the reasons are the strings earlier builds printed.
    #[test]
    fn turn_ends_print_as_before() {
        for (end, text) in [
            (TurnEnd::Stop, "stop"),
            (TurnEnd::Length, "length"),
            (TurnEnd::ContentFilter, "content_filter"),
            (TurnEnd::MaxSteps, "max_steps"),
            (TurnEnd::Interrupted, "interrupted"),
            (TurnEnd::Error, "error"),
            (TurnEnd::Compacted, "compacted"),
            (TurnEnd::Other("pause_turn".into()), "pause_turn"),
        ] {
            let event = Event::TurnFinished {
                reason: end.clone(),
            };
            let json = serde_json::to_value(&event).unwrap();
            assert_eq!(
                json,
                serde_json::json!({"type": "turn_finished", "reason": text})
            );
            assert_eq!(serde_json::from_value::<Event>(json).unwrap(), event);
        }
        assert_eq!(TurnEnd::from(FinishReason::Length), TurnEnd::Length);
        assert_eq!(
            TurnEnd::from(FinishReason::Other("x".into())),
            TurnEnd::Other("x".into())
        );
    }

    #[test]
    fn a_submission_takes_the_id_its_op_carries() {
        let turn = Op::UserTurn {
            id: "P1".into(),
            text: "hi".into(),
            pasted: Vec::new(),
        };
        assert_eq!(Submission::new(turn.clone()).id, "P1");
        assert_eq!(Submission::from(turn.clone()).op, turn);
        let a = Submission::new(Op::Undo);
        let b = Submission::new(Op::Undo);
        assert!(!a.id.is_empty() && a.id != b.id);
    }

    #[test]
    fn errors_say_what_they_are_about() {
        let event = Event::Error {
            kind: ErrorKind::ContextOverflow,
            message: "too big".into(),
            submission: None,
            failed_message: None,
        };
        assert_eq!(
            serde_json::to_value(&event).unwrap(),
            serde_json::json!({"type": "error", "kind": "context_overflow", "message": "too big"})
        );
    }
}
