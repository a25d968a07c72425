//! Overlays: the slash-command popup, help, the /context breakdown, pickers (the permission
//! question is `permission.rs`).

use crate::keymap::{Action, Keymap};
use crate::theme::theme;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Padding, Paragraph};

use crate::event::{Breakdown, ContextUsage, McpServerStatus, McpState};

use super::super::app::{Picker, PickerKind};
use super::super::format::{self, truncate};
use super::super::mcp::SlashItem;
use crate::commands::Command;

pub(super) fn block(title: &str) -> Block<'static> {
    Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(Style::default().fg(theme().accent))
        .title(Span::styled(
            format!(" {title} "),
            Style::default().add_modifier(Modifier::BOLD),
        ))
}

/// A rectangle of at most `w`×`h` centred in `area`.
pub fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width);
    let h = h.min(area.height);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

fn selected_style() -> Style {
    Style::default()
        .fg(theme().on_accent)
        .bg(theme().accent)
        .add_modifier(Modifier::BOLD)
}

/// The slash-command list, drawn just above the composer (`anchor` is the composer's area).
pub fn slash(
    frame: &mut Frame,
    items: &[SlashItem],
    selected: usize,
    anchor: Rect,
    limit_top: u16,
) {
    let rows = items.len().min(8) as u16;
    let Some(area) = above(anchor, limit_top, rows) else {
        return;
    };
    let first = selected.saturating_sub(rows as usize - 1);
    let name_w = items
        .iter()
        .map(|c| format::width(&c.name()) + format::width(&c.args()) + 2)
        .max()
        .unwrap_or(0);
    let inner_w = area.width.saturating_sub(2) as usize;
    let lines: Vec<Line> = items
        .iter()
        .enumerate()
        .skip(first)
        .take(rows as usize)
        .map(|(i, c)| {
            let head = if c.args().is_empty() {
                format!("/{}", c.name())
            } else {
                format!("/{} {}", c.name(), c.args())
            };
            let text = format!("{head:<name_w$}  {}", c.about());
            let text = format!(" {}", truncate(&text, inner_w.saturating_sub(1)));
            if i == selected {
                Line::from(Span::styled(format!("{text:<inner_w$}"), selected_style()))
            } else {
                Line::from(Span::raw(text))
            }
        })
        .collect();
    frame.render_widget(Clear, area);
    frame.render_widget(
        Paragraph::new(lines).block(block("commands · tab completes · enter runs")),
        area,
    );
}

/// `/mcp`: every server, its state, tools, cost and prompts.
pub fn mcp(frame: &mut Frame, area: Rect, servers: &[McpServerStatus]) {
    let mut lines: Vec<Line> = Vec::new();
    if servers.is_empty() {
        lines.push(Line::from(Span::styled(
            " No MCP servers. Add one as [mcp.NAME] in the config (see config.example.toml).",
            Style::default().fg(theme().dim),
        )));
    }
    let name_w = servers
        .iter()
        .map(|s| format::width(&s.name))
        .max()
        .unwrap_or(0);
    let inner_w = area.width.saturating_sub(6).min(94) as usize;
    for s in servers {
        let (mark, color) = match &s.state {
            McpState::Ready => ("●", theme().ok),
            McpState::Starting => ("◌", theme().warn),
            McpState::Disabled => ("○", theme().dim),
            McpState::Failed { .. } | McpState::Exited { .. } => ("✗", theme().err),
        };
        let head = format!(" {:<name_w$}  {:<5}  ", s.name, s.transport);
        let rest = truncate(
            &super::super::mcp::describe(s),
            inner_w.saturating_sub(format::width(&head) + 3),
        );
        lines.push(Line::from(vec![
            Span::styled(format!(" {mark}"), Style::default().fg(color)),
            Span::styled(head, Style::default().add_modifier(Modifier::BOLD)),
            Span::raw(rest),
        ]));
        if !s.prompts.is_empty() {
            let prompts: Vec<String> = s
                .prompts
                .iter()
                .map(|p| format!("/{}:{}", s.name, p.name))
                .collect();
            let text = format!("     prompts: {}", prompts.join(" "));
            lines.push(Line::from(Span::styled(
                truncate(&text, inner_w),
                Style::default().fg(theme().dim),
            )));
        }
        if s.resources && s.state == McpState::Ready {
            lines.push(Line::from(Span::styled(
                "     resources: /resource to attach one",
                Style::default().fg(theme().dim),
            )));
        }
    }
    lines.push(Line::default());
    lines.push(Line::from(Span::styled(
        " /mcp restart NAME restarts a server · its log is in pith's log file · any key closes",
        Style::default().fg(theme().dim),
    )));
    let h = (lines.len() as u16 + 2).min(area.height);
    let r = centered(area, (inner_w as u16 + 4).max(40), h);
    frame.render_widget(Clear, r);
    frame.render_widget(Paragraph::new(lines).block(block("mcp servers")), r);
}

/// The `@` file picker, just above the composer.
pub fn files(
    frame: &mut Frame,
    query: &str,
    items: &[String],
    selected: usize,
    anchor: Rect,
    limit_top: u16,
) {
    let rows = items.len().min(super::super::mentions::SHOWN) as u16;
    let Some(area) = above(anchor, limit_top, rows) else {
        return;
    };
    let first = selected.saturating_sub(rows as usize - 1);
    let inner_w = area.width.saturating_sub(2) as usize;
    let lines: Vec<Line> = items
        .iter()
        .enumerate()
        .skip(first)
        .take(rows as usize)
        .map(|(i, p)| {
            let text = format!(" {}", truncate(p, inner_w.saturating_sub(1)));
            if i == selected {
                Line::from(Span::styled(format!("{text:<inner_w$}"), selected_style()))
            } else if p.ends_with('/') {
                Line::from(Span::styled(text, Style::default().fg(theme().user)))
            } else {
                Line::from(Span::raw(text))
            }
        })
        .collect();
    let title = if query.is_empty() {
        "attach a file · tab/enter picks · esc".to_string()
    } else {
        format!(
            "@{query} · {} match{}",
            items.len(),
            if items.len() == 1 { "" } else { "es" }
        )
    };
    frame.render_widget(Clear, area);
    frame.render_widget(Paragraph::new(lines).block(block(&title)), area);
}

/// The mouse's part in the help.
const MOUSE_HELP: &[(&str, &str)] = &[
    ("wheel", "scroll the transcript"),
    ("click", "fold / unfold one cell"),
    ("shift+drag", "select text with the mouse"),
];

/// Draws the help; returns the scroll position actually used (clamped to the content).
pub fn help(
    frame: &mut Frame,
    area: Rect,
    scroll: usize,
    keymap: &Keymap,
    custom: &crate::custom_commands::Commands,
) -> usize {
    let custom_rows = if custom.list.is_empty() {
        0
    } else {
        custom.list.len() + 2
    };
    // As wide as the longest description needs (a wide terminal shows them whole), 84 at least.
    let longest = Command::all()
        .map(|c| format::width(c.about()))
        .chain(custom.list.iter().map(|c| format::width(&c.about())))
        .chain(Action::all().map(|a| format::width(a.about()) + 3 + a.name().len()))
        .max()
        .unwrap_or(0);
    let width = (longest + 30).clamp(84, 140) as u16;
    let r = centered(
        area,
        width,
        (Command::all().count() + custom_rows + Action::all().count() + MOUSE_HELP.len() + 13)
            as u16,
    );
    let lines = help_lines(keymap, custom, r.width.saturating_sub(4) as usize);
    let visible = r.height.saturating_sub(2) as usize;
    let max_scroll = lines.len().saturating_sub(visible);
    let scroll = scroll.min(max_scroll);
    let title = if max_scroll > 0 {
        "help · ↑↓ scroll · esc closes"
    } else {
        "help · any key closes"
    };
    let mut b = block(title).padding(Padding::horizontal(1));
    if scroll < max_scroll {
        b = b.title_bottom(
            Line::from(Span::styled(
                format!(" ↓ {} more ", max_scroll - scroll),
                Style::default().fg(theme().dim),
            ))
            .right_aligned(),
        );
    }
    frame.render_widget(Clear, r);
    frame.render_widget(Paragraph::new(lines).scroll((scroll as u16, 0)).block(b), r);
    scroll
}

/// The help's lines at `inner_w` columns: the commands, the custom commands, the keys by
/// context, the mouse, the keymap's warnings.
fn help_lines(
    keymap: &Keymap,
    custom: &crate::custom_commands::Commands,
    inner_w: usize,
) -> Vec<Line<'static>> {
    let key_w = 24.min(inner_w / 2);
    let row = |k: String, v: &str| help_row(k, v, key_w, inner_w);
    let mut lines = vec![Line::from(Span::styled(
        "Commands",
        Style::default().add_modifier(Modifier::BOLD),
    ))];
    for c in Command::all() {
        lines.extend(row(format!("/{} {}", c.name(), c.args()), c.about()));
    }
    if !custom.list.is_empty() {
        lines.push(Line::default());
        lines.push(Line::from(Span::styled(
            "Custom commands",
            Style::default().add_modifier(Modifier::BOLD),
        )));
        for c in &custom.list {
            lines.extend(row(format!("/{} {}", c.name, c.argument_hint), &c.about()));
        }
    }
    lines.push(Line::default());
    lines.push(Line::from(Span::styled(
        "Keys  ([keys] in the config rebinds them: action = \"key\")",
        Style::default().add_modifier(Modifier::BOLD),
    )));
    let mut context = None;
    for a in Action::all() {
        if context != Some(a.context()) {
            context = Some(a.context());
            lines.push(Line::from(Span::styled(
                a.context().title(),
                Style::default().fg(theme().dim),
            )));
        }
        lines.extend(row(
            keymap.describe(a),
            &format!("{} · {}", a.about(), a.name()),
        ));
    }
    for (k, v) in MOUSE_HELP {
        lines.extend(row(k.to_string(), v));
    }
    for w in keymap.warnings() {
        let warning = [Span::styled(
            w.to_string(),
            Style::default().fg(theme().warn),
        )];
        lines.extend(crate::wrap::wrap(&warning, inner_w, &[], &[]));
    }
    lines
}

/// One row of the help: a key (or command) in its column, what it does beside it.
///
/// A description too long for the line wraps under itself (an 80-column terminal shows it
/// whole), never cut; so does a key list too long for its column: it gets a line of its own.
fn help_row(k: String, v: &str, key_w: usize, inner_w: usize) -> Vec<Line<'static>> {
    let style = Style::default().fg(theme().accent);
    let indent = Span::raw(" ".repeat(key_w + 2));
    let text = [Span::raw(v.to_string())];
    if format::width(&k) < key_w {
        let key = Span::styled(format!("  {k:<key_w$}"), style);
        return crate::wrap::wrap(&text, inner_w, &[key], &[indent]);
    }
    let two = Span::raw("  ");
    let mut lines = crate::wrap::wrap(
        &[Span::styled(k, style)],
        inner_w,
        std::slice::from_ref(&two),
        std::slice::from_ref(&two),
    );
    lines.extend(crate::wrap::wrap(
        &text,
        inner_w,
        std::slice::from_ref(&indent),
        std::slice::from_ref(&indent),
    ));
    lines
}

/// The breakdown's segments and their colours in the theme.
fn segments() -> [(&'static str, Color); 5] {
    let t = theme();
    [
        ("system prompt", t.ctx_system),
        ("tool definitions", t.ctx_tools),
        ("summary", t.ctx_summary),
        ("messages", t.ctx_messages),
        ("tool outputs", t.ctx_outputs),
    ]
}

/// The stacked bar of a breakdown: one cell per `window / width` tokens.
pub fn breakdown_bar(b: &Breakdown, width: usize) -> Vec<Span<'static>> {
    if b.window == 0 || width == 0 {
        return Vec::new();
    }
    let parts = [b.system, b.tools, b.summary, b.messages, b.tool_outputs];
    let mut spans = Vec::new();
    let mut acc = 0u64;
    let mut cells_done = 0usize;
    let cells_for =
        |tokens: u64| ((tokens as f64 / b.window as f64) * width as f64).round() as usize;
    for (i, t) in parts.iter().enumerate() {
        acc += t;
        let upto = cells_for(acc).min(width);
        if upto > cells_done {
            spans.push(Span::styled(
                "█".repeat(upto - cells_done),
                Style::default().fg(segments()[i].1),
            ));
            cells_done = upto;
        }
    }
    let reserved_cells = cells_for(b.reserved).min(width - cells_done);
    let free_cells = width - cells_done - reserved_cells;
    if free_cells > 0 {
        spans.push(Span::styled(
            "░".repeat(free_cells),
            Style::default().fg(theme().dim),
        ));
    }
    if reserved_cells > 0 {
        spans.push(Span::styled(
            "▒".repeat(reserved_cells),
            Style::default().fg(theme().warn),
        ));
    }
    spans
}

/// Draws the /context breakdown (or that it is being measured).
pub fn context(
    frame: &mut Frame,
    area: Rect,
    b: Option<&Breakdown>,
    usage: &ContextUsage,
    mcp: &[McpServerStatus],
) {
    let mcp: Vec<&McpServerStatus> = mcp.iter().filter(|s| s.tools > 0).collect();
    let base = 17
        + u16::from(b.is_some_and(|b| b.last_compaction.is_some()))
        + u16::from(b.is_some_and(|b| b.subagents.runs > 0));
    let r = centered(area, 64, base + mcp.len() as u16);
    frame.render_widget(Clear, r);
    let Some(b) = b else {
        frame.render_widget(
            Paragraph::new("measuring the context…").block(block("context")),
            r,
        );
        return;
    };
    let inner_w = r.width.saturating_sub(4) as usize;
    let mut lines = context_head(b, usage, inner_w);
    lines.extend(context_rows(b, usage, &mcp));
    lines.extend(context_notes(b));
    lines.push(Line::default());
    lines.push(Line::from(Span::styled(
        " /compact [focus] summarises now · any key closes",
        Style::default().fg(theme().dim),
    )));
    frame.render_widget(Paragraph::new(lines).block(block("context")), r);
}

/// The breakdown's first lines: the tokens in use, where auto-compaction starts, the bar.
fn context_head(b: &Breakdown, usage: &ContextUsage, inner_w: usize) -> Vec<Line<'static>> {
    let used = b.system + b.summary + b.messages + b.tool_outputs + b.tools;
    vec![
        Line::from(vec![
            Span::styled(
                format!(
                    " {} / {} tokens in use",
                    format::tokens(used),
                    format::tokens(b.window)
                ),
                Style::default().add_modifier(Modifier::BOLD),
            ),
            Span::styled(
                if usage.usable > 0 {
                    format!(" · auto-compacts at {}", format::tokens(usage.usable))
                } else {
                    String::new()
                },
                Style::default().fg(theme().dim),
            ),
        ]),
        Line::from(
            std::iter::once(Span::raw(" "))
                .chain(breakdown_bar(b, inner_w))
                .collect::<Vec<_>>(),
        ),
        Line::default(),
    ]
}

/// One row of the breakdown: its mark, name, tokens and share of the window.
fn context_row(sym: &str, color: Color, name: &str, v: u64, p: String) -> Line<'static> {
    Line::from(vec![
        Span::styled(format!(" {sym} "), Style::default().fg(color)),
        Span::raw(format!("{name:<34}")),
        Span::styled(
            format!("{:>8}", format::tokens(v)),
            Style::default().add_modifier(Modifier::BOLD),
        ),
        Span::styled(format!("  {p}"), Style::default().fg(theme().dim)),
    ])
}

/// The breakdown's rows: each segment (the tools' with each MCP server's share), free,
/// reserved, the window, pruned, cached.
fn context_rows(
    b: &Breakdown,
    usage: &ContextUsage,
    mcp: &[&McpServerStatus],
) -> Vec<Line<'static>> {
    let pct = |t: u64| {
        if b.window > 0 {
            format!("{:>5.1}%", t as f64 * 100.0 / b.window as f64)
        } else {
            String::new()
        }
    };
    let mut lines = Vec::new();
    let values = [b.system, b.tools, b.summary, b.messages, b.tool_outputs];
    for (i, (name, color)) in segments().iter().enumerate() {
        lines.push(context_row("█", *color, name, values[i], pct(values[i])));
        if i == 1 {
            // The tools' share of each MCP server (as sent whole; deferred ones cost their
            // index line until loaded).
            for s in mcp {
                let name = format!(
                    "  mcp {}{}",
                    s.name,
                    if s.deferred { " (deferred)" } else { "" }
                );
                lines.push(context_row(
                    " ",
                    theme().dim,
                    &name,
                    s.tokens,
                    String::new(),
                ));
            }
        }
    }
    lines.push(context_row("░", theme().dim, "free", b.free, pct(b.free)));
    lines.push(context_row(
        "▒",
        theme().warn,
        "reserved (reply + auto-compact)",
        b.reserved,
        pct(b.reserved),
    ));
    lines.push(context_row(
        " ",
        theme().dim,
        "window",
        b.window,
        String::new(),
    ));
    lines.push(context_row(
        "·",
        theme().summary,
        "pruned (kept on screen, not sent)",
        b.pruned,
        String::new(),
    ));
    if usage.cached > 0 {
        lines.push(context_row(
            "·",
            theme().dim,
            "read from prompt cache",
            usage.cached,
            String::new(),
        ));
    }
    lines
}

/// The breakdown's notes: sub-agents run, the last compaction's cost.
fn context_notes(b: &Breakdown) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    if b.subagents.runs > 0 {
        lines.push(Line::from(Span::styled(
            format!(
                " sub-agents: {} run{}, {} tokens, {} (in their own contexts)",
                b.subagents.runs,
                if b.subagents.runs == 1 { "" } else { "s" },
                format::tokens(b.subagents.tokens),
                format::cost(b.subagents.cost),
            ),
            Style::default().fg(theme().dim),
        )));
    }
    if let Some(c) = &b.last_compaction {
        let share = (c.cache_read * 100).checked_div(c.input).unwrap_or(0);
        lines.push(Line::from(Span::styled(
            format!(
                " last compaction: {} in, {share}% from cache, {}{}",
                format::tokens(c.input),
                format::cost(c.cost),
                if c.background {
                    " (written in the background)"
                } else if c.cache_friendly {
                    ""
                } else {
                    " (dedicated request)"
                }
            ),
            Style::default().fg(theme().dim),
        )));
    }
    lines
}

pub fn picker(frame: &mut Frame, area: Rect, p: &Picker) {
    let title = match p.kind() {
        PickerKind::Sessions => "resume a session",
        PickerKind::Model => "switch model",
        PickerKind::Resource => "attach an MCP resource to your next message",
        PickerKind::Rewind => "go back to before this prompt (files and conversation)",
        PickerKind::Theme => "colour theme · moving previews · enter keeps · esc puts back",
    };
    let items = p.visible();
    let rows = (area.height.saturating_sub(6) as usize).clamp(1, 14);
    let h = (items.len().clamp(1, rows) + 4) as u16;
    let r = centered(area, 110, h);
    frame.render_widget(Clear, r);
    let inner_w = r.width.saturating_sub(2) as usize;
    let mut lines = vec![Line::from(vec![
        Span::styled(" filter: ", Style::default().fg(theme().dim)),
        Span::raw(p.filter().to_string()),
        Span::styled("▏", Style::default().fg(theme().accent)),
    ])];
    if p.is_loading() {
        lines.push(Line::from(Span::styled(
            " loading…",
            Style::default().fg(theme().dim),
        )));
    } else if items.is_empty() {
        lines.push(Line::from(Span::styled(
            " nothing matches",
            Style::default().fg(theme().dim),
        )));
    }
    let first = p.selected().saturating_sub(rows - 1);
    for (i, it) in items.iter().enumerate().skip(first).take(rows) {
        // the detail (when, where) keeps its room; the title takes what is left
        let detail = truncate(&it.detail, inner_w.saturating_sub(18));
        let label_w = inner_w.saturating_sub(format::width(&detail) + 3).max(1);
        let label = truncate(&it.label, label_w);
        let pad = label_w.saturating_sub(format::width(&label));
        let text = format!(" {label}{} {detail}", " ".repeat(pad));
        let text = truncate(&text, inner_w);
        lines.push(if i == p.selected() {
            Line::from(Span::styled(format!("{text:<inner_w$}"), selected_style()))
        } else {
            Line::from(Span::raw(text))
        });
    }
    lines.push(Line::from(Span::styled(
        " ↑↓ choose · enter select · esc cancel · type to filter",
        Style::default().fg(theme().dim),
    )));
    frame.render_widget(Paragraph::new(lines).block(block(title)), r);
}

/// The area of a popup of `rows` lines just above the composer (`anchor`), or `None` when it
/// does not fit below `limit_top` or the composer is too narrow.
fn above(anchor: Rect, limit_top: u16, rows: u16) -> Option<Rect> {
    let h = rows + 2;
    if anchor.y < limit_top + h || anchor.width < 10 {
        return None;
    }
    Some(Rect {
        x: anchor.x,
        y: anchor.y - h,
        width: anchor.width,
        height: h,
    })
}
