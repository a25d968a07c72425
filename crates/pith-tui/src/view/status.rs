//! The status bar: model · context figure and gauge · cost · state · workspace.

use std::path::Path;
use std::time::Instant;

use crate::theme::theme;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use pith_protocol::event::{
    BudgetUnit, CompactionNotice, ContextUsage, EngineState, Goal, GoalStatus, McpServerStatus,
    PermissionMode,
};
use pith_protocol::llm::ReasoningEffort;

use super::super::activity::Activity;
use super::super::format;

/// What the status bar shows, read from the app at each draw: the bar sees nothing else.
pub(crate) struct StatusView<'a> {
    pub(crate) model: &'a str,
    pub(crate) effort: Option<ReasoningEffort>,
    pub(crate) permission_mode: PermissionMode,
    pub(crate) context: &'a ContextUsage,
    /// The session's cost.
    pub(crate) cost: f64,
    /// The sub-agents' tokens and cost, apart from the main context.
    pub(crate) agents_tokens: u64,
    pub(crate) agents_cost: f64,
    pub(crate) mcp: &'a [McpServerStatus],
    pub(crate) workspace: &'a Path,
    pub(crate) git_branch: Option<&'a str>,
    pub(crate) state: EngineState,
    pub(crate) activity: &'a Activity,
    pub(crate) engine_gone: bool,
    /// An interrupt was asked for and the engine is still busy.
    pub(crate) interrupting: bool,
    /// The tool the permission question in front asks about.
    pub(crate) asking: Option<&'a str>,
    pub(crate) spinner: usize,
    pub(crate) now: Instant,
    /// A compaction coming that can still be steered.
    pub(crate) notice: Option<CompactionNotice>,
    /// The session's goal (`/goal`).
    pub(crate) goal: Option<&'a Goal>,
    /// Background jobs running (`/ps` lists them).
    pub(crate) jobs: usize,
}

impl StatusView<'_> {
    /// Draws the status line on `area` (one row, its width the line's).
    pub(crate) fn render(&self, frame: &mut Frame, area: Rect) {
        frame.render_widget(Paragraph::new(status_line(self, area.width as usize)), area);
    }
}

pub(crate) const SPINNER: [&str; 4] = ["◐", "◓", "◑", "◒"];
const GAUGE_WIDTH: usize = 10;

/// Green below 90% of the auto-compact point, amber within 10% of it, red at or past it.
pub fn level_color(c: &ContextUsage) -> Color {
    let limit = if c.usable > 0 { c.usable } else { c.window };
    if limit == 0 {
        return theme().muted;
    }
    if c.used >= limit {
        theme().err
    } else if c.used.saturating_mul(10) >= limit.saturating_mul(9) {
        theme().warn
    } else {
        theme().ok
    }
}

/// `~41.2k / 200k (21%)`.
pub fn context_figure(c: &ContextUsage) -> String {
    let tilde = if c.estimated { "~" } else { "" };
    if c.window == 0 {
        return format!("{tilde}{} tokens", format::tokens(c.used));
    }
    let pct = if c.percent.is_finite() && c.percent > 0.0 {
        c.percent
    } else {
        c.used as f64 * 100.0 / c.window as f64
    };
    format!(
        "{tilde}{} / {} ({:.0}%)",
        format::tokens(c.used),
        format::tokens(c.window),
        pct.clamp(0.0, 999.0)
    )
}

/// A bar of `width` cells filled to `used / window`, with `┃` where auto-compaction fires.
pub fn gauge(c: &ContextUsage, width: usize) -> Vec<Span<'static>> {
    if c.window == 0 || width == 0 {
        return Vec::new();
    }
    let color = level_color(c);
    let frac = (c.used as f64 / c.window as f64).clamp(0.0, 1.0);
    let filled = (frac * width as f64).round() as usize;
    let marker = (c.usable > 0 && c.usable < c.window)
        .then(|| ((c.usable as f64 / c.window as f64) * width as f64).floor() as usize)
        .map(|m| m.min(width - 1));
    let mut spans = Vec::new();
    for i in 0..width {
        let (sym, st) = if Some(i) == marker {
            (
                "┃",
                Style::default()
                    .fg(if i < filled { color } else { theme().muted })
                    .add_modifier(Modifier::BOLD),
            )
        } else if i < filled {
            ("█", Style::default().fg(color))
        } else {
            ("░", Style::default().fg(theme().dim))
        };
        spans.push(Span::styled(sym, st));
    }
    spans
}

/// What the engine is doing. No timer here: the composer's title times the turn.
fn state_text(app: &StatusView) -> (String, Style) {
    let spin = SPINNER[app.spinner % SPINNER.len()];
    let busy = Style::default().fg(theme().warn);
    if app.engine_gone {
        return ("✗ engine stopped".into(), Style::default().fg(theme().err));
    }
    if app.interrupting {
        return (format!("{spin} interrupting…"), busy);
    }
    if let Some(tool) = app.asking {
        return (format!("? permission · {tool}"), busy);
    }
    match app.state {
        EngineState::Idle => ("● idle".into(), Style::default().fg(theme().dim)),
        EngineState::Thinking if app.activity.responding() => (format!("{spin} responding"), busy),
        EngineState::Thinking => match app.activity.detail() {
            // What the provider is being waited for, once the wait is long.
            Some(d) => (format!("{spin} thinking · {d}"), busy),
            None => (format!("{spin} thinking"), busy),
        },
        EngineState::Running => {
            let tool = app
                .activity
                .detail()
                .or(app.activity.running_tool())
                .cloned()
                .unwrap_or_else(|| "tool".into());
            (format!("{spin} running {tool}"), busy)
        }
        EngineState::Compacting => (
            match app.activity.detail() {
                Some(d) => format!("{spin} compacting · {d}"),
                None => format!("{spin} compacting"),
            },
            Style::default().fg(theme().summary),
        ),
        EngineState::Retrying => {
            let s = match app.activity.retry() {
                Some(r) => {
                    let wait = r.at.saturating_duration_since(app.now).as_secs();
                    let reason = pith_protocol::text::one_line(&r.reason);
                    let reason = format::truncate(&reason, 48);
                    format!("↻ retry {}/{} in {wait}s · {reason}", r.attempt, r.max)
                }
                None => format!("{spin} retrying"),
            };
            (s, Style::default().fg(theme().err))
        }
    }
}

/// `mcp 2/3`: servers ready of those enabled; amber while one starts, red when one failed.
fn mcp_span(app: &StatusView) -> Option<Span<'static>> {
    use pith_protocol::event::McpState;
    let enabled: Vec<_> = app
        .mcp
        .iter()
        .filter(|s| s.state != McpState::Disabled)
        .collect();
    if enabled.is_empty() {
        return None;
    }
    let ready = enabled
        .iter()
        .filter(|s| s.state == McpState::Ready)
        .count();
    let color = if enabled
        .iter()
        .any(|s| matches!(s.state, McpState::Failed { .. } | McpState::Exited { .. }))
    {
        theme().err
    } else if ready < enabled.len() {
        theme().warn
    } else {
        theme().muted
    };
    Some(Span::styled(
        format!("mcp {ready}/{}", enabled.len()),
        Style::default().fg(color),
    ))
}

fn workspace_text(app: &StatusView) -> String {
    let ws = super::super::format::home_short(&app.workspace.display().to_string());
    match app.git_branch {
        Some(b) if !b.is_empty() => format!("{ws}  {b}"),
        _ => ws,
    }
}

/// What the status line can show, before a layout picks among it.
struct StatusPieces {
    model_full: String,
    model_short: String,
    /// The context figure, coloured by its level.
    figure: Span<'static>,
    state: String,
    state_style: Style,
    /// The session's cost, with the sub-agents' work when there was some.
    cost: String,
    /// The workspace (home-shortened) and its branch.
    ws: String,
    /// The workspace's last component and its branch.
    ws_short: String,
}

fn status_pieces(app: &StatusView) -> StatusPieces {
    let c = app.context;
    let model_short = pith_protocol::model_name::id(app.model).to_string();
    let figure = Span::styled(
        context_figure(c),
        Style::default()
            .fg(level_color(c))
            .add_modifier(Modifier::BOLD),
    );
    let (state, state_style) = state_text(app);
    let mut cost = format::cost(app.cost);
    if app.agents_tokens > 0 {
        // sub-agents' work, apart from the main context figure
        cost.push_str(&format!(
            " · agents {} {}",
            format::tokens(app.agents_tokens),
            format::cost(app.agents_cost)
        ));
    }
    let ws_short = {
        let name = app
            .workspace
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        match app.git_branch {
            Some(b) if !b.is_empty() => format!("{name}  {b}"),
            _ => name,
        }
    };
    StatusPieces {
        model_full: app.model.to_string(),
        model_short,
        figure,
        state,
        state_style,
        cost,
        ws: workspace_text(app),
        ws_short,
    }
}

fn status_sep() -> Span<'static> {
    Span::styled(" │ ", Style::default().fg(theme().dim))
}

/// The status line's left part in one layout: model, effort, mode, context figure (and
/// gauge), cost and MCP, state.
fn status_left(
    app: &StatusView,
    p: &StatusPieces,
    full: bool,
    with_gauge: bool,
    with_cost: bool,
) -> Vec<Span<'static>> {
    let c = app.context;
    let model = if full { &p.model_full } else { &p.model_short };
    let mut left: Vec<Span<'static>> = vec![Span::styled(
        format!(" {model}"),
        Style::default().add_modifier(Modifier::BOLD),
    )];
    if let Some(effort) = app.effort {
        left.push(Span::styled(
            format!(" {effort}"),
            Style::default().fg(theme().muted),
        ));
    }
    if app.permission_mode != PermissionMode::Default {
        left.push(status_sep());
        left.push(Span::styled(
            format!("⏵ {}", app.permission_mode.name()),
            Style::default().fg(theme().warn),
        ));
    }
    left.push(status_sep());
    left.push(p.figure.clone());
    if with_gauge && c.window > 0 {
        left.push(Span::raw(" "));
        left.extend(gauge(c, GAUGE_WIDTH));
    }
    if with_cost {
        left.push(status_sep());
        left.push(Span::styled(
            p.cost.clone(),
            Style::default().fg(theme().muted),
        ));
        if let Some(m) = mcp_span(app) {
            left.push(status_sep());
            left.push(m);
        }
    }
    left.push(status_sep());
    left.push(Span::styled(p.state.clone(), p.state_style));
    if app.jobs > 0 {
        left.push(status_sep());
        left.push(Span::styled(
            format!(
                "⚙ {} job{} /ps",
                app.jobs,
                super::super::format::plural(app.jobs)
            ),
            Style::default().fg(theme().accent),
        ));
    }
    if let Some(g) = app.goal {
        left.push(status_sep());
        left.push(goal_span(g));
    }
    // last, so that a narrow bar cuts it first
    if let Some(n) = app.notice {
        left.push(status_sep());
        left.push(Span::styled(
            notice_text(n),
            Style::default().fg(theme().summary),
        ));
    }
    left
}

/// Characters of the goal's text the bar shows (a narrow bar cuts more).
const GOAL_CHARS: usize = 28;

/// `◎ goal 3/20 · make the tests pass…`: where the goal stands, its budget used, its text.
pub(crate) fn goal_text(g: &Goal) -> String {
    let text = format::truncate(&pith_protocol::text::one_line(&g.text), GOAL_CHARS);
    let used = match g.budget.unit {
        BudgetUnit::Turns => format!("{}/{}", g.turns, g.budget.limit),
        BudgetUnit::Tokens => format!(
            "{}/{} tok",
            format::tokens(g.tokens),
            format::tokens(g.budget.limit)
        ),
    };
    match g.status {
        GoalStatus::Active => format!("◎ goal {used} · {text}"),
        GoalStatus::Paused => format!("⏸ goal paused {used} · {text}"),
        GoalStatus::Met => format!("✓ goal met · {text}"),
        GoalStatus::BudgetReached => format!("◎ goal budget spent {used} · {text}"),
    }
}

fn goal_span(g: &Goal) -> Span<'static> {
    let color = match g.status {
        GoalStatus::Active => theme().summary,
        GoalStatus::Paused => theme().muted,
        GoalStatus::Met => theme().ok,
        GoalStatus::BudgetReached => theme().warn,
    };
    Span::styled(goal_text(g), Style::default().fg(color))
}

/// What the bar says of a compaction coming, and how to steer it.
pub(crate) fn notice_text(notice: CompactionNotice) -> &'static str {
    match notice {
        CompactionNotice::Writing => "summary being written · /compact FOCUS or /pin to steer",
        CompactionNotice::Ready => "summary written ahead · /compact FOCUS to write another",
        CompactionNotice::Soon => "compaction soon · /compact FOCUS or /pin to steer",
    }
}

/// The status line for `width` columns; drops the least important pieces when narrow.
pub(crate) fn status_line(app: &StatusView, width: usize) -> Line<'static> {
    let pieces = status_pieces(app);
    // (full model, gauge, cost, workspace: 0 none / 1 short / 2 full), richest first
    const LAYOUTS: [(bool, bool, bool, u8); 8] = [
        (true, true, true, 2),
        (true, true, true, 1),
        (false, true, true, 1),
        (true, true, true, 0),
        (false, true, true, 0),
        (false, false, true, 1),
        (false, false, true, 0),
        (false, false, false, 0),
    ];
    let mut best = Line::default();
    for (full, with_gauge, with_cost, ws_kind) in LAYOUTS {
        let mut left = status_left(app, &pieces, full, with_gauge, with_cost);
        let lw: usize = left.iter().map(|s| s.width()).sum();
        let ws_text = match ws_kind {
            2 => Some(&pieces.ws),
            1 => Some(&pieces.ws_short),
            _ => None,
        };
        best = Line::from(left.clone());
        match ws_text {
            Some(w) => {
                let rw = format::width(w) + 1;
                if lw + 2 + rw <= width {
                    left.push(Span::raw(" ".repeat(width - lw - rw)));
                    left.push(Span::styled(
                        format!("{w} "),
                        Style::default().fg(theme().dim),
                    ));
                    return Line::from(left);
                }
            }
            None if lw <= width => return Line::from(left),
            None => {}
        }
    }
    state_cut(best, width)
}

/// Even the plainest layout is too wide: the state (a retry's reason, a long tool name) gives
/// way at its end, so what pith is doing still shows ("↻ retry 2/4 in 3s · cannot re…").
fn state_cut(plainest: Line<'static>, width: usize) -> Line<'static> {
    let mut spans = plainest.spans;
    if let Some(last) = spans.pop() {
        let before: usize = spans.iter().map(|s| s.width()).sum();
        let room = width.saturating_sub(before + 1);
        spans.push(Span::styled(
            format::truncate(&last.content, room),
            last.style,
        ));
    }
    Line::from(spans)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(used: u64) -> ContextUsage {
        ContextUsage {
            used,
            usable: 180_000,
            window: 200_000,
            percent: used as f64 / 2_000.0,
            estimated: false,
            cached: 0,
        }
    }

    #[test]
    fn levels() {
        assert_eq!(level_color(&usage(20_000)), theme().ok);
        assert_eq!(level_color(&usage(161_999)), theme().ok);
        assert_eq!(level_color(&usage(162_000)), theme().warn);
        assert_eq!(level_color(&usage(180_000)), theme().err);
        assert_eq!(level_color(&ContextUsage::default()), theme().muted);
    }

    #[test]
    fn figures() {
        assert_eq!(context_figure(&usage(41_200)), "41.2k / 200k (21%)");
        let mut u = usage(41_200);
        u.estimated = true;
        assert_eq!(context_figure(&u), "~41.2k / 200k (21%)");
        let unknown = ContextUsage {
            used: 1_500,
            ..Default::default()
        };
        assert_eq!(context_figure(&unknown), "1.5k tokens");
    }

    #[test]
    fn gauge_marks_the_compaction_point() {
        let g: String = gauge(&usage(100_000), 10)
            .iter()
            .map(|s| s.content.as_ref())
            .collect();
        assert_eq!(g, "█████░░░░┃");
        let g: String = gauge(&usage(200_000), 10)
            .iter()
            .map(|s| s.content.as_ref())
            .collect();
        assert_eq!(g, "█████████┃");
        assert!(gauge(&ContextUsage::default(), 10).is_empty());
    }
}
