//! The status bar's state: the model (and one asked for, not yet confirmed), the reasoning
//! effort, the permission mode, the context window's use, the session's cost, the git branch,
//! the engine's state and what it is doing, and a compaction coming that can still be steered. `App` routes the engine's events here
//! (`on_event`); the bar says what the transcript should note about a change.
//!
//! The bar takes no keys, so it does not implement `Component`: its API is `on_event`, the
//! session-wide changes `App` makes (a session loaded, a model asked for, a turn ended) and
//! `render`.

use std::path::Path;
use std::time::{Duration, Instant};

use ratatui::Frame;
use ratatui::layout::Rect;

use pith_protocol::event::{
    CompactionNotice, ContextEvent, ContextUsage, EngineState, ErrorKind, Event, Goal,
    McpServerStatus, OutputEvent, PermissionMode, SessionEvent, SettingsEvent, TurnEvent,
};
use pith_protocol::llm::ReasoningEffort;
use pith_protocol::message::{Message, Session};

use super::activity::{Activity, Retry};
use super::view::status::StatusView;

pub(crate) struct StatusBar {
    model: String,
    /// Asked for with /model, not yet confirmed by the engine.
    pending_model: Option<String>,
    /// The reasoning effort requests carry (shown when set).
    effort: Option<ReasoningEffort>,
    /// The permission mode (shown when not the default).
    permission_mode: PermissionMode,
    context: ContextUsage,
    /// What the session has cost.
    cost: f64,
    git_branch: Option<String>,
    state: EngineState,
    /// The state's detail, the tool running, a retry, streaming.
    activity: Activity,
    /// When the running turn started (one timer, in the composer's title).
    turn_started: Option<Instant>,
    /// An interrupt was asked for and the turn has not ended.
    interrupting: bool,
    /// The spinner's frame, advanced by the ticks while something runs.
    spinner: usize,
    /// The engine has stopped: nothing sent reaches it any more.
    engine_gone: bool,
    /// The clock as of the last tick: what running times are measured to.
    now: Instant,
    /// A compaction is coming and can still be steered (`/compact FOCUS`, `/pin`): shown until
    /// it finishes or the engine withdraws the notice.
    notice: Option<CompactionNotice>,
    /// The session's goal (`/goal`), as the engine last reported it.
    goal: Option<Goal>,
    /// Background jobs running (`/ps`), as the engine last listed them.
    jobs: usize,
}

/// What drawing the bar needs from the rest of the app.
pub(crate) struct StatusContext<'a> {
    /// The sub-agents' tokens and cost, apart from the main context.
    pub agents_tokens: u64,
    pub agents_cost: f64,
    pub mcp: &'a [McpServerStatus],
    pub workspace: &'a Path,
    /// The tool the permission question in front asks about.
    pub asking: Option<&'a str>,
}

/// What a session has cost: the stored total (pages of history hold only part of the messages).
pub(super) fn session_cost(session: &Session, messages: &[Message]) -> f64 {
    let loaded: f64 = messages.iter().map(|m| m.cost).sum();
    session.cost.max(loaded)
}

impl StatusBar {
    pub(crate) fn new(
        model: String,
        context: ContextUsage,
        cost: f64,
        git_branch: Option<String>,
    ) -> Self {
        StatusBar {
            model,
            pending_model: None,
            effort: None,
            permission_mode: PermissionMode::default(),
            context,
            cost,
            git_branch,
            state: EngineState::Idle,
            activity: Activity::default(),
            turn_started: None,
            interrupting: false,
            spinner: 0,
            engine_gone: false,
            now: Instant::now(),
            notice: None,
            goal: None,
            jobs: 0,
        }
    }

    /// The engine stopped; `false` when it was known already.
    pub(crate) fn engine_stopped(&mut self) -> bool {
        !std::mem::replace(&mut self.engine_gone, true)
    }

    /// The clock as of the last tick.
    pub(crate) fn now(&self) -> Instant {
        self.now
    }

    /// A tick: running times are measured to `now` from here on.
    pub(crate) fn set_now(&mut self, now: Instant) {
        self.now = now;
    }

    pub(crate) fn model(&self) -> &str {
        &self.model
    }

    #[cfg(test)]
    pub(crate) fn pending_model(&self) -> Option<&str> {
        self.pending_model.as_deref()
    }

    /// The session's goal, as the engine last reported it.
    pub(crate) fn goal(&self) -> Option<&Goal> {
        self.goal.as_ref()
    }

    pub(crate) fn effort(&self) -> Option<ReasoningEffort> {
        self.effort
    }

    pub(crate) fn permission_mode(&self) -> PermissionMode {
        self.permission_mode
    }

    pub(crate) fn context(&self) -> &ContextUsage {
        &self.context
    }

    #[cfg(test)]
    pub(crate) fn cost(&self) -> f64 {
        self.cost
    }

    pub(crate) fn busy(&self) -> bool {
        self.state != EngineState::Idle
    }

    /// How long the running turn has run at `now` (`None` when idle).
    pub(crate) fn turn_time(&self, now: Instant) -> Option<Duration> {
        self.turn_started.map(|t| now.saturating_duration_since(t))
    }

    #[cfg(test)]
    pub(crate) fn started_at(&mut self, t: Instant) {
        self.turn_started = Some(t);
    }

    /// An interrupt is asked for: true the first time in a turn (the engine is to be told).
    pub(crate) fn interrupt(&mut self) -> bool {
        !std::mem::replace(&mut self.interrupting, true)
    }

    /// An interrupt was asked for and the turn has not ended.
    pub(crate) fn interrupting(&self) -> bool {
        self.interrupting
    }

    /// A tick while something runs: the spinner turns.
    pub(crate) fn tick(&mut self) {
        self.spinner = self.spinner.wrapping_add(1);
    }

    /// The spinner's frame now.
    pub(crate) fn spinner_frame(&self) -> &'static str {
        super::view::status::SPINNER[self.spinner % super::view::status::SPINNER.len()]
    }

    /// `/model NAME` was sent: the bar keeps the model shown until the engine confirms.
    pub(crate) fn model_asked(&mut self, model: String) {
        self.pending_model = Some(model);
    }

    /// The session shown now is `session` (with `messages` loaded): its cost, its context use
    /// as stored (an estimate until the engine reports), its model.
    pub(crate) fn session_loaded(&mut self, session: &Session, messages: &[Message]) {
        self.cost = session_cost(session, messages);
        self.notice = None;
        // the engine says the new session's goal, if it has one
        self.goal = None;
        self.context.used = session.tokens;
        self.context.estimated = true;
        self.context.percent = if self.context.window > 0 {
            session.tokens as f64 * 100.0 / self.context.window as f64
        } else {
            0.0
        };
        self.session_model(session);
    }

    /// The session's model, when it names one.
    pub(crate) fn session_model(&mut self, session: &Session) {
        if !session.model.is_empty() {
            self.model = session.model.clone();
        }
    }

    /// The workspace moved to `dir`: its branch is shown.
    pub(crate) fn moved_to(&mut self, dir: &Path) {
        self.git_branch = super::git::git_branch(dir);
    }

    /// The turn ended: nothing runs or retries, the engine is idle.
    pub(crate) fn turn_finished(&mut self) {
        self.interrupting = false;
        self.activity.tool_finished();
        self.activity.retry_over();
        self.set_state(EngineState::Idle, None);
    }

    /// An engine event: the bar takes what it shows from it, and returns what the transcript
    /// should say about a setting that changed. The turn's end comes through `turn_finished`,
    /// after `App` has timed the turn.
    pub(crate) fn on_event(&mut self, ev: &Event) -> Option<String> {
        match ev {
            Event::Output(e) => self.on_output(e),
            Event::Context(e) => self.on_context(e),
            Event::Turn(e) => self.on_turn(e),
            Event::Settings(e) => return self.on_setting(e),
            Event::Session(SessionEvent::GoalChanged { goal }) => self.goal = goal.clone(),
            Event::Session(SessionEvent::Jobs { jobs }) => {
                self.jobs = jobs.iter().filter(|j| j.state.running()).count()
            }
            // nothing the bar shows: a sub-agent's figures are its cell's
            Event::Session(_) | Event::Subagent(_) => {}
        }
        None
    }

    /// Streamed output, tools starting and ending, a step's cost.
    fn on_output(&mut self, ev: &OutputEvent) {
        match ev {
            OutputEvent::TextDelta { .. } => self.streaming(true),
            OutputEvent::ReasoningDelta { .. } => self.streaming(false),
            OutputEvent::ToolStarted { tool, .. } => self.activity.tool_started(tool.clone()),
            OutputEvent::ToolFinished { .. } => self.activity.tool_finished(),
            OutputEvent::StepFinished { cost, .. } => {
                if cost.is_finite() && *cost > 0.0 {
                    self.cost += cost;
                }
            }
            OutputEvent::Message { .. }
            | OutputEvent::PartUpdated { .. }
            | OutputEvent::MessageRemoved { .. }
            | OutputEvent::PartsRemoved { .. }
            | OutputEvent::ToolOutput { .. } => {}
        }
    }

    /// The context's use, a compaction running.
    fn on_context(&mut self, ev: &ContextEvent) {
        match ev {
            ContextEvent::ContextUsage(u) => self.context = *u,
            ContextEvent::CompactionStarted { .. } => self.set_state(EngineState::Compacting, None),
            ContextEvent::CompactionFinished { .. } => {
                self.notice = None;
                if self.state == EngineState::Compacting {
                    self.set_state(EngineState::Thinking, None);
                }
            }
            ContextEvent::CompactionAhead { notice } => self.notice = *notice,
            ContextEvent::Pruned { .. }
            | ContextEvent::ContextWindow { .. }
            | ContextEvent::ContextBreakdown { .. }
            | ContextEvent::InstructionsLoaded { .. } => {}
        }
    }

    /// What the engine is doing: its state, a retry; a model that could not be used.
    fn on_turn(&mut self, ev: &TurnEvent) {
        match ev {
            TurnEvent::Retrying {
                attempt,
                max,
                delay_ms,
                message,
            } => {
                self.activity.retrying(Retry {
                    attempt: *attempt,
                    max: *max,
                    reason: message.clone(),
                    at: Instant::now() + Duration::from_millis(*delay_ms),
                });
                self.set_state(EngineState::Retrying, None);
            }
            TurnEvent::State { state, detail } => {
                if *state != EngineState::Retrying {
                    self.activity.retry_over();
                }
                if *state == EngineState::Idle {
                    self.interrupting = false;
                    self.activity.tool_finished();
                }
                self.set_state(*state, detail.clone());
            }
            TurnEvent::Error { kind, .. } => {
                if *kind == ErrorKind::Model {
                    self.pending_model = None;
                }
            }
            // the turn's end comes through `turn_finished`
            TurnEvent::PermissionAsked(_)
            | TurnEvent::ElicitationAsked(_)
            | TurnEvent::Info { .. }
            | TurnEvent::TurnFinished { .. }
            | TurnEvent::GoalChecked { .. } => {}
        }
    }

    /// The model, the effort or the permission mode changed: what the transcript says of it.
    fn on_setting(&mut self, ev: &SettingsEvent) -> Option<String> {
        match ev {
            SettingsEvent::ModelChanged { model } => {
                self.pending_model = None;
                self.model = model.clone();
                Some(format!("model: {model}"))
            }
            SettingsEvent::EffortChanged { effort } => {
                let changed = *effort != self.effort;
                self.effort = *effort;
                let text = effort.map_or("the model's default", |e| e.as_str());
                changed.then(|| format!("reasoning effort: {text}"))
            }
            SettingsEvent::PermissionModeChanged { mode } => {
                let changed = *mode != self.permission_mode;
                self.permission_mode = *mode;
                changed.then(|| mode_changed(*mode))
            }
            SettingsEvent::McpStatus { .. } | SettingsEvent::McpResources { .. } => None,
        }
    }

    fn set_state(&mut self, state: EngineState, detail: Option<String>) {
        self.activity.state_changed(state, detail);
        if state == EngineState::Idle {
            self.turn_started = None;
        } else if self.turn_started.is_none() {
            self.turn_started = Some(Instant::now());
        }
        self.state = state;
    }

    /// Streamed output arrived: whatever was being retried has recovered.
    fn streaming(&mut self, text: bool) {
        if matches!(self.state, EngineState::Retrying) {
            self.set_state(EngineState::Thinking, None);
        }
        self.activity.streaming(text);
    }

    /// Draws the bar on `area` (one row).
    pub(crate) fn render(&self, frame: &mut Frame, area: Rect, cx: StatusContext<'_>) {
        self.view(cx).render(frame, area);
    }

    /// What the bar shows: its state and `cx`.
    pub(crate) fn view<'a>(&'a self, cx: StatusContext<'a>) -> StatusView<'a> {
        StatusView {
            model: &self.model,
            effort: self.effort,
            permission_mode: self.permission_mode,
            context: &self.context,
            cost: self.cost,
            agents_tokens: cx.agents_tokens,
            agents_cost: cx.agents_cost,
            mcp: cx.mcp,
            workspace: cx.workspace,
            git_branch: self.git_branch.as_deref(),
            state: self.state,
            activity: &self.activity,
            engine_gone: self.engine_gone,
            interrupting: self.interrupting && self.busy(),
            asking: cx.asking,
            spinner: self.spinner,
            now: self.now,
            notice: self.notice,
            goal: self.goal.as_ref(),
            jobs: self.jobs,
        }
    }
}

/// The transcript's line for a new permission mode.
fn mode_changed(mode: PermissionMode) -> String {
    let about = match mode {
        PermissionMode::Default => "the rules decide and ask",
        PermissionMode::Plan => "only tools that read run",
        PermissionMode::AcceptEdits => "edits in the workspace are not asked about",
        PermissionMode::Bypass => "nothing is asked",
    };
    format!("permission mode: {} — {about}", mode.name())
}
