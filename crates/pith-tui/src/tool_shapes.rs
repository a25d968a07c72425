//! What a finished tool call shows instead of its output, by tool: an edit's diff, the todo
//! list as a checklist, how much a read read.

use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use pith_protocol::tool::{Builtin, ReadExtent, SearchHit, Todo, TodoStatus, ToolName};

use super::format::{sanitize, truncate};
use super::theme::theme;
use super::wrap::wrap_chars;

/// Search hits shown while a web search's cell is folded.
pub(crate) const HIT_LINES: usize = 5;
/// Diff lines shown while an edit's cell is folded.
pub(crate) const DIFF_LINES: usize = 8;
/// Never render more than this many lines of one tool output.
pub(crate) const MAX_EXPANDED_LINES: usize = 5_000;

fn dim() -> Style {
    Style::default().fg(theme().dim)
}

/// How a finished call's output shows, by tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shows {
    /// The change it made, as a diff (when it reported one).
    Diff,
    /// The todo list it set, as a checklist.
    Checklist,
    /// A command's output, its exit trailer left to the header while folded.
    Command,
    /// How much it read, while folded.
    Extent,
    /// The hits of a web search: titles and addresses.
    Hits,
    /// Its output's first lines.
    Output,
}

impl Shows {
    pub(crate) fn of(tool: &ToolName) -> Shows {
        let Some(b) = tool.builtin() else {
            return Shows::Output;
        };
        match b {
            Builtin::Edit | Builtin::Write => Shows::Diff,
            Builtin::TodoWrite => Shows::Checklist,
            Builtin::Bash => Shows::Command,
            Builtin::Read => Shows::Extent,
            Builtin::WebSearch => Shows::Hits,
            Builtin::Glob
            | Builtin::Grep
            | Builtin::List
            | Builtin::Recall
            | Builtin::WebFetch
            | Builtin::Task
            | Builtin::ToolSearch
            | Builtin::ExitPlanMode
            | Builtin::Remember
            | Builtin::Skill
            | Builtin::JobOutput
            | Builtin::JobKill => Shows::Output,
        }
    }
}

/// A web search's hits: folded, a title and its address on one line each, the first few;
/// unfolded, every hit with its address on a line of its own.
pub(crate) fn search_hits(hits: &[SearchHit], width: usize, expanded: bool) -> Vec<Line<'static>> {
    let t = theme();
    let shown = if expanded || hits.len() <= HIT_LINES + 1 {
        hits.len()
    } else {
        HIT_LINES
    };
    let mut out = Vec::new();
    for (i, hit) in hits.iter().take(shown).enumerate() {
        let gutter = if i == 0 { "  ⎿ " } else { "    " };
        let url = sanitize(&hit.url);
        let room = width.saturating_sub(4);
        // a page the provider names by its address only
        if hit.title.trim().is_empty() {
            out.push(Line::from(vec![
                Span::styled(gutter, dim()),
                Span::styled(truncate(&url, room), Style::default().fg(t.muted)),
            ]));
            continue;
        }
        let title = sanitize(&hit.title);
        if expanded {
            out.push(Line::from(vec![
                Span::styled(gutter, dim()),
                Span::styled(truncate(&title, room), Style::default().fg(t.muted)),
            ]));
            out.push(Line::from(vec![
                Span::styled("      ", dim()),
                Span::styled(truncate(&url, room.saturating_sub(2)), dim()),
            ]));
            continue;
        }
        let title_room = room.saturating_sub(2 + super::format::width(&url).min(room / 2));
        let title = truncate(&title, title_room);
        let url_room = room.saturating_sub(super::format::width(&title) + 2);
        out.push(Line::from(vec![
            Span::styled(gutter, dim()),
            Span::styled(title, Style::default().fg(t.muted)),
            Span::styled(format!("  {}", truncate(&url, url_room)), dim()),
        ]));
    }
    if hits.len() > shown {
        out.push(Line::from(Span::styled(
            truncate(
                &format!(
                    "    … +{} results ({})",
                    hits.len() - shown,
                    super::keymap::expand_key()
                ),
                width,
            ),
            dim(),
        )));
    }
    out
}

/// How much of a file the user attached went in.
pub(crate) fn attached_extent(read: Option<ReadExtent>) -> String {
    match read {
        Some(ReadExtent::Directory { entries }) => format!("{entries} entries"),
        Some(ReadExtent::Image { .. }) => "image".to_string(),
        Some(ReadExtent::Lines { shown, total, .. }) => {
            let n = shown.unwrap_or(0);
            let total = total.unwrap_or(n);
            if n < total {
                format!("lines 1-{n} of {total}")
            } else {
                format!("{total} line{}", if total == 1 { "" } else { "s" })
            }
        }
        None => "0 lines".to_string(),
    }
}

/// A folded read says how much it read rather than showing the file's first lines.
pub(crate) fn read_summary(read: Option<ReadExtent>, width: usize) -> Vec<Line<'static>> {
    let text = match read {
        Some(ReadExtent::Directory { entries }) => format!("{entries} entries"),
        Some(ReadExtent::Image { .. }) => "an image".to_string(),
        Some(ReadExtent::Lines {
            shown,
            total,
            offset,
        }) => match (shown, total) {
            (Some(s), Some(t)) if s < t => {
                let from = offset.unwrap_or(1);
                format!("lines {from}-{} of {t}", from + s.saturating_sub(1))
            }
            (_, Some(t)) => format!("{t} line{}", if t == 1 { "" } else { "s" }),
            _ => return Vec::new(),
        },
        None => return Vec::new(),
    };
    vec![Line::from(Span::styled(
        truncate(&format!("  ⎿ {text}"), width),
        dim(),
    ))]
}

/// A unified diff, coloured; folded to its first lines (the `---`/`+++` header is left out).
pub(crate) fn diff_lines(diff: &str, width: usize, expanded: bool) -> Vec<Line<'static>> {
    let t = theme();
    let diff = sanitize(diff);
    let lines: Vec<&str> = diff
        .lines()
        .filter(|l| !l.starts_with("--- ") && !l.starts_with("+++ "))
        .collect();
    let limit = if expanded {
        MAX_EXPANDED_LINES
    } else {
        DIFF_LINES
    };
    let shown = if lines.len() <= limit + 1 {
        lines.len()
    } else {
        limit
    };
    let mut out = Vec::new();
    for (i, l) in lines.iter().take(shown).enumerate() {
        let style = match l.chars().next() {
            Some('+') => Style::default().fg(t.added),
            Some('-') => Style::default().fg(t.removed),
            Some('@') => dim(),
            _ => Style::default().fg(t.muted),
        };
        let gutter = if i == 0 { "  ⎿ " } else { "    " };
        out.extend(wrap_chars(
            &[Span::styled(l.to_string(), style)],
            width,
            &[Span::styled(gutter, dim())],
            &[Span::raw("    ")],
        ));
    }
    if lines.len() > shown {
        out.push(Line::from(Span::styled(
            format!(
                "    … +{} lines ({})",
                lines.len() - shown,
                super::keymap::expand_key()
            ),
            dim(),
        )));
    }
    out
}

/// A todo list as a checklist.
pub(crate) fn checklist(todos: &[Todo], width: usize) -> Vec<Line<'static>> {
    let t = theme();
    let mut out = Vec::new();
    for (i, todo) in todos.iter().enumerate() {
        let content = &todo.content;
        let (mark, style) = match todo.status {
            TodoStatus::Completed => (
                "☑ ",
                Style::default()
                    .fg(t.dim)
                    .add_modifier(Modifier::CROSSED_OUT),
            ),
            TodoStatus::InProgress => (
                "◐ ",
                Style::default().fg(t.warn).add_modifier(Modifier::BOLD),
            ),
            TodoStatus::Cancelled => ("☒ ", dim().add_modifier(Modifier::CROSSED_OUT)),
            TodoStatus::Pending => ("☐ ", Style::default()),
        };
        let gutter = if i == 0 { "  ⎿ " } else { "    " };
        out.push(Line::from(vec![
            Span::styled(gutter, dim()),
            Span::styled(mark, style),
            Span::styled(truncate(&sanitize(content), width.saturating_sub(6)), style),
        ]));
    }
    if out.is_empty() {
        out.push(Line::from(Span::styled("  ⎿ (empty list)", dim())));
    }
    out
}
