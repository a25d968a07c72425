//! `/context`: the window's use as a stacked bar and a row per segment, with notes.

use super::{block, centered};
use crate::format;
use crate::theme::theme;
use pith_protocol::event::{
    Breakdown, ContextUsage, InstructionFile, InstructionOrigin, McpServerStatus, Pin,
};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

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
    // the pins travel in the system prompt: one segment with it in the bar
    let parts = [
        b.system + b.pinned,
        b.tools,
        b.summary,
        b.messages,
        b.tool_outputs,
    ];
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

/// Draws the /context breakdown (or that it is being measured): as wide as its longest line
/// (at least 64 columns), so that no line is cut where the terminal has room; a narrower
/// terminal wraps them.
pub fn context(
    frame: &mut Frame,
    area: Rect,
    b: Option<&Breakdown>,
    usage: &ContextUsage,
    mcp: &[McpServerStatus],
    pins: &[Pin],
    instructions: &[InstructionFile],
) {
    let mcp: Vec<&McpServerStatus> = mcp.iter().filter(|s| s.tools > 0).collect();
    let Some(b) = b else {
        let r = centered(area, 64, 3);
        frame.render_widget(Clear, r);
        frame.render_widget(
            Paragraph::new("measuring the context…").block(block("context")),
            r,
        );
        return;
    };
    let mut body = context_rows(b, usage, &mcp);
    // the pinned row and each pin under it, after the system prompt's row
    body.splice(1..1, pinned_rows(b, pins));
    // the instruction files, each under the system prompt's row (they are part of it)
    body.splice(1..1, instruction_rows(instructions));
    body.extend(context_notes(b));
    body.extend(left_section(b));
    body.push(Line::default());
    body.push(Line::from(Span::styled(
        " /compact [focus] summarises now · any key closes",
        Style::default().fg(theme().dim),
    )));
    let head_w = context_head(b, usage, 0)[0].width();
    let widest = body.iter().map(Line::width).max().unwrap_or(0).max(head_w);
    let width = (widest as u16 + 3).max(64).min(area.width);
    let inner_w = width.saturating_sub(4) as usize;
    let mut lines = context_head(b, usage, inner_w);
    lines.extend(body);
    let text_w = width.saturating_sub(2).max(1) as usize;
    let rows: usize = lines
        .iter()
        .map(|l| l.width().max(1).div_ceil(text_w))
        .sum();
    let r = centered(area, width, rows as u16 + 2);
    frame.render_widget(Clear, r);
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(ratatui::widgets::Wrap { trim: false })
            .block(block("context")),
        r,
    );
}

/// The breakdown's first lines: the tokens in use, where auto-compaction starts, the bar.
fn context_head(b: &Breakdown, usage: &ContextUsage, inner_w: usize) -> Vec<Line<'static>> {
    let used = b.system + b.pinned + b.summary + b.messages + b.tool_outputs + b.tools;
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
                } else if b.window > 0 {
                    " · auto-compaction off".into()
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
        if usage.usable > 0 {
            "reserved (reply + auto-compact)"
        } else {
            "reserved (reply)"
        },
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

/// What the user pinned (`/pin`): its row, then each pin as it is carried (cut to a line) with
/// its number for `/unpin` and its cost. Nothing when nothing is pinned.
fn pinned_rows(b: &Breakdown, pins: &[Pin]) -> Vec<Line<'static>> {
    if b.pinned == 0 && pins.is_empty() {
        return Vec::new();
    }
    let pct = if b.window > 0 {
        format!("{:>5.1}%", b.pinned as f64 * 100.0 / b.window as f64)
    } else {
        String::new()
    };
    let mut lines = vec![context_row(
        "█",
        theme().ctx_system,
        "pinned by you (/pin)",
        b.pinned,
        pct,
    )];
    for (i, p) in pins.iter().enumerate() {
        let text = format::truncate(&pith_protocol::text::one_line(&p.text), 29);
        lines.push(context_row(
            " ",
            theme().dim,
            &format!("  {}. {text}", i + 1),
            p.tokens,
            String::new(),
        ));
    }
    lines
}

/// One line per instruction file in the system prompt: where it comes from and its cost.
fn instruction_rows(files: &[InstructionFile]) -> Vec<Line<'static>> {
    files
        .iter()
        .map(|f| {
            let from = match f.origin {
                InstructionOrigin::User => "yours",
                InstructionOrigin::Workspace => "workspace",
                InstructionOrigin::Nested => "loaded",
            };
            let path = format::truncate(&pith_protocol::text::one_line(&f.path), 18);
            context_row(
                " ",
                theme().dim,
                &format!("  ↳ {path} ({from})"),
                f.tokens,
                String::new(),
            )
        })
        .collect()
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
                pith_protocol::text::count(b.subagents.tokens),
                format::cost(b.subagents.cost),
            ),
            Style::default().fg(theme().dim),
        )));
    }
    if let Some(c) = &b.last_compaction {
        let share = (c.cache_read * 100).checked_div(c.input).unwrap_or(0);
        lines.push(Line::from(Span::styled(
            format!(
                " last compaction: read {} tokens, {share}% cached, {}{}",
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

/// What the compactions took out of the view, in counts (`Breakdown.left`), and the key that
/// lists them; nothing when nothing left.
fn left_section(b: &Breakdown) -> Vec<Line<'static>> {
    let items = pith_protocol::compaction_note::left_items(&b.left);
    if items.is_empty() {
        return Vec::new();
    }
    let key = crate::keymap::left_key();
    let how = if key.is_empty() {
        "recall brings any back".to_string()
    } else {
        format!("{key} lists them, recall brings any back")
    };
    vec![
        Line::default(),
        Line::from(vec![
            Span::styled(
                " left the view",
                Style::default().add_modifier(Modifier::BOLD),
            ),
            Span::styled(format!(" · {how}"), Style::default().fg(theme().dim)),
        ]),
        Line::from(Span::raw(format!("   {}", items.join(" · ")))),
    ]
}
