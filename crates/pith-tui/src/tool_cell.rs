//! Rendering a tool call's cell: a header line (state, tool, the gist of its input, how long it
//! took, the user's permission answer), then what it produced — a running command's latest
//! output, an edit's diff, a todo list as a checklist, the first lines of anything else — folded
//! to a few lines until the user unfolds it.

use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use serde_json::Value;

use pith_protocol::event::PermissionReply;
use pith_protocol::message::ToolState;
use pith_protocol::tool::{Builtin, Todo, ToolInput, ToolMetadata, ToolName};

use super::cell_text::dim;
use super::format::{self, sanitize, truncate};
use super::theme::theme;
use super::tool_shapes::{
    MAX_EXPANDED_LINES, Shows, attached_extent, checklist, diff_lines, read_summary, search_hits,
};
use super::wrap::wrap_chars;

/// Output lines shown while a cell is folded.
const PREVIEW_LINES: usize = 3;
/// A command the user ran with `!` is theirs to read: more of it shows before it folds.
const USER_PREVIEW_LINES: usize = 12;
/// Lines of a running command's output shown while it runs.
const LIVE_LINES: usize = 5;

/// What a tool cell shows.
pub struct Call<'a> {
    /// The tool's name as stored (the cell's label).
    pub tool: &'a str,
    /// That name, parsed.
    pub name: ToolName,
    pub input: &'a Value,
    pub state: &'a ToolState,
    /// Duration reported by `ToolFinished` (used when the part lacks times).
    pub reported_ms: Option<u64>,
    pub decision: Option<PermissionReply>,
    /// Output streamed while it runs.
    pub live: Option<&'a str>,
    pub elapsed_secs: u64,
}

/// The one-line gist of a tool call's input.
pub fn short_input(tool: &ToolName, input: &Value) -> String {
    let out = match ToolInput::of(tool, input) {
        ToolInput::Exec { command } => command.map(str::to_string),
        ToolInput::Read { path, .. }
        | ToolInput::Edit { path, .. }
        | ToolInput::Write { path, .. }
        | ToolInput::List { path } => path.map(str::to_string),
        ToolInput::Search {
            pattern, within, ..
        } => pattern.map(|p| match within {
            Some(path) => format!("{p}  in {path}"),
            None => p.to_string(),
        }),
        ToolInput::Fetch { url } => url.map(str::to_string),
        ToolInput::WebSearch { query } => query.map(str::to_string),
        ToolInput::Task { description, agent } => description.map(|d| match agent {
            Some(agent) => format!("{agent}: {d}"),
            None => d.to_string(),
        }),
        ToolInput::Todos { todos } => {
            todos.map(|t| format!("{} item{}", t.len(), if t.len() == 1 { "" } else { "s" }))
        }
        ToolInput::Mcp { .. } | ToolInput::Other => None,
    };
    // the first string argument, else compact JSON
    let out = out.or_else(|| ToolInput::first_string(input).map(str::to_string));
    let out = out.unwrap_or_else(|| match input {
        Value::Null => String::new(),
        Value::Object(o) if o.is_empty() => String::new(),
        v => v.to_string(),
    });
    sanitize(&out).replace('\n', " ⏎ ")
}

fn duration(call: &Call) -> Option<u64> {
    match call.state {
        ToolState::Completed { time, .. } if time.end > time.start => {
            Some((time.end - time.start) as u64)
        }
        ToolState::Error {
            start: Some(s),
            end: Some(e),
            ..
        } if e > s => Some((e - s) as u64),
        _ => None,
    }
    .or(call.reported_ms)
}

/// The exit code a finished command reported.
fn exit_code(call: &Call) -> Option<i64> {
    call.state.outcome(&call.name).and_then(|o| o.exit_code())
}

/// The header's status: pending, running (with its title and time), the duration.
fn header_status(call: &Call) -> String {
    let mut status = match call.state {
        ToolState::Pending => "pending".to_string(),
        ToolState::Running { title, .. } => {
            let mut s = match title {
                Some(t) if !t.is_empty() => format!("running · {t}"),
                _ => "running".to_string(),
            };
            if call.elapsed_secs > 0 {
                s.push_str(&format!(
                    " · {}",
                    format::duration_ms(call.elapsed_secs * 1000)
                ));
            }
            s
        }
        ToolState::Completed { .. } | ToolState::Error { .. } => String::new(),
    };
    if let Some(d) = duration(call) {
        if !status.is_empty() {
            status.push_str(" · ");
        }
        status.push_str(&format::duration_ms(d));
    }
    // a denied call never ran: its duration means nothing
    if matches!(call.decision, Some(PermissionReply::Deny))
        && matches!(call.state, ToolState::Error { .. })
    {
        status.clear();
    }
    status
}

/// The header: `✓ tool gist  1.2s · allowed once · pruned`, cut to `width`. `label` replaces
/// the tool's name (a shell command the user ran shows `$`).
fn header(call: &Call, label: &str, gist: &str, width: usize) -> Line<'static> {
    let t = theme();
    let (icon, icon_style) = match call.state {
        ToolState::Pending => ("○", dim()),
        ToolState::Running { .. } => ("◐", Style::default().fg(t.warn)),
        ToolState::Completed { .. } => ("✓", Style::default().fg(t.ok)),
        ToolState::Error { .. } => ("✗", Style::default().fg(t.err)),
    };
    let pruned =
        matches!(call.state, ToolState::Completed { time, .. } if time.compacted.is_some());
    let status = header_status(call);
    // a command that failed says so in its header
    let exit = exit_code(call)
        .filter(|c| *c != 0)
        .map(|c| format!("exit {c}"));
    let verdict = match call.decision {
        Some(r) if call.name.is(Builtin::ExitPlanMode) => Some(crate::view::plan_box::verdict(r)),
        Some(PermissionReply::Once) => Some(("allowed once", t.ok)),
        Some(PermissionReply::Always) => Some(("always allowed", t.ok)),
        Some(PermissionReply::AlwaysExact) => Some(("always allowed as written", t.ok)),
        Some(PermissionReply::Deny) => Some(("denied", t.err)),
        None => None,
    };
    let tail_w = format::width(&status)
        + exit.as_ref().map_or(0, |e| format::width(e) + 3)
        + if pruned { 9 } else { 0 }
        + verdict.map_or(0, |(v, _)| format::width(v) + 3)
        + 2;
    let head_w = 2 + format::width(label) + 1;
    let room = width.saturating_sub(head_w + tail_w);
    let mut spans = vec![
        Span::styled(format!("{icon} "), icon_style),
        Span::styled(
            label.to_string(),
            Style::default().add_modifier(Modifier::BOLD),
        ),
        Span::raw(" "),
        Span::styled(truncate(gist, room), Style::default().fg(t.muted)),
    ];
    if !status.is_empty() {
        spans.push(Span::styled(format!("  {status}"), dim()));
    }
    if let Some(e) = exit {
        let sep = if status.is_empty() { "  " } else { " · " };
        spans.push(Span::styled(sep, dim()));
        spans.push(Span::styled(e, Style::default().fg(t.err)));
    }
    if let Some((v, color)) = verdict {
        let sep = if status.is_empty() { "  " } else { " · " };
        spans.push(Span::styled(sep, dim()));
        spans.push(Span::styled(v, Style::default().fg(color)));
    }
    if pruned {
        spans.push(Span::styled(" · pruned", Style::default().fg(t.summary)));
    }
    Line::from(spans)
}

/// A tool call the model made.
pub fn render(call: &Call, width: usize, expanded: bool) -> Vec<Line<'static>> {
    let gist = short_input(&call.name, call.input);
    let mut out = vec![header(call, call.tool, &gist, width)];
    if expanded {
        let head_room = width.saturating_sub(4 + format::width(call.tool));
        out.extend(input_lines(
            call.input,
            format::width(&gist) > head_room,
            width,
        ));
    }
    out.extend(body(call, &gist, width, expanded, PREVIEW_LINES));
    out
}

/// A tool part in a user message: a file the user attached with `@`, or a command the user ran
/// with `!`.
pub fn by_user(call: &Call, width: usize, expanded: bool) -> Vec<Line<'static>> {
    match call.name.builtin() {
        Some(Builtin::Read) => {
            let path = short_input(&call.name, call.input);
            let what = match call.state {
                ToolState::Error { .. } => "not attached".to_string(),
                state => state
                    .outcome(&call.name)
                    .map(|o| attached_extent(o.read_extent()))
                    .unwrap_or_default(),
            };
            let t = theme();
            let (mark, style) = match call.state {
                ToolState::Error { .. } => ("  ✗ ", Style::default().fg(t.err)),
                _ => ("  ◇ ", Style::default().fg(t.user)),
            };
            let room = width.saturating_sub(6 + format::width(&what));
            let mut out = vec![Line::from(vec![
                Span::styled(mark, style),
                Span::styled(truncate(&path, room), style.add_modifier(Modifier::BOLD)),
                Span::styled(format!("  {what}"), dim()),
            ])];
            if let ToolState::Error { message, .. } = call.state {
                out.extend(output_lines(
                    message,
                    width,
                    expanded,
                    PREVIEW_LINES,
                    Style::default().fg(t.err),
                ));
            } else if expanded {
                out.extend(body(call, &path, width, true, PREVIEW_LINES));
            }
            out
        }
        Some(Builtin::Bash) => {
            let command = short_input(&call.name, call.input);
            let mut out = vec![header(call, "$", &command, width)];
            out.extend(body(call, &command, width, expanded, USER_PREVIEW_LINES));
            out
        }
        _ => render(call, width, expanded),
    }
}

/// The input as JSON, when the header could not show it all.
fn input_lines(input: &Value, cut: bool, width: usize) -> Vec<Line<'static>> {
    let several = input.as_object().is_some_and(|o| o.len() > 1);
    let text = match input {
        Value::Object(o) if !o.is_empty() && (cut || several) => {
            serde_json::to_string_pretty(input).unwrap_or_default()
        }
        _ => return Vec::new(),
    };
    let first = [Span::styled("  ⎿ ", dim())];
    let rest = [Span::styled("    ", dim())];
    let mut out = Vec::new();
    for (i, l) in sanitize(&text).lines().enumerate() {
        let p: &[Span<'static>] = if i == 0 { &first } else { &rest };
        out.extend(wrap_chars(
            &[Span::styled(l.to_string(), dim())],
            width,
            p,
            &rest,
        ));
    }
    out
}

/// What the call produced.
/// `preview`: how many output lines show while the cell is folded.
fn body(
    call: &Call,
    gist: &str,
    width: usize,
    expanded: bool,
    preview: usize,
) -> Vec<Line<'static>> {
    let t = theme();
    match call.state {
        ToolState::Running { .. } | ToolState::Pending => match call.live {
            Some(live) if !live.trim().is_empty() => live_lines(live, width, expanded),
            _ => Vec::new(),
        },
        ToolState::Error { message, .. } => output_lines(
            message,
            width,
            expanded,
            preview,
            Style::default().fg(t.err),
        ),
        ToolState::Completed {
            output,
            title,
            metadata,
            time,
        } => {
            let pruned = time.compacted.is_some();
            let shows = Shows::of(&call.name);
            if !pruned && let Some(lines) = shaped(call, shows, metadata, width, expanded) {
                return lines;
            }
            let mut text = String::new();
            if expanded && !title.is_empty() && title != gist {
                text.push_str(title);
                text.push('\n');
            }
            let shown = if shows == Shows::Command && !expanded {
                // the exit trailer is in the header when it matters
                strip_exit_trailer(output, exit_code(call))
            } else {
                output.trim_end()
            };
            text.push_str(shown);
            let style = if pruned {
                dim()
            } else {
                Style::default().fg(t.muted)
            };
            let mut out = output_lines(&text, width, expanded, preview, style);
            if out.is_empty() && expanded {
                out.push(Line::from(Span::styled("  ⎿ (no output)", dim())));
            }
            if pruned && expanded {
                out.push(Line::from(Span::styled(
                    "    (pruned: cleared from the model's context, kept here)",
                    dim(),
                )));
            }
            out
        }
    }
}

/// What a finished call that was not pruned shows instead of its output: an edit's diff, the
/// todo list as set (or as asked, when the metadata holds none), a folded read's extent.
fn shaped(
    call: &Call,
    shows: Shows,
    metadata: &Value,
    width: usize,
    expanded: bool,
) -> Option<Vec<Line<'static>>> {
    let outcome = ToolMetadata::read(&call.name, metadata);
    match shows {
        Shows::Diff => {
            let diff = outcome.as_ref().and_then(ToolMetadata::diff)?;
            (!diff.trim().is_empty()).then(|| diff_lines(diff, width, expanded))
        }
        Shows::Checklist => {
            let set = outcome.as_ref().and_then(ToolMetadata::todos);
            let asked = || match ToolInput::of(&call.name, call.input) {
                ToolInput::Todos { todos } => Some(todos?.iter().map(Todo::read).collect()),
                _ => None,
            };
            let todos: Vec<Todo> = set.map(<[Todo]>::to_vec).or_else(asked)?;
            Some(checklist(&todos, width))
        }
        Shows::Extent if !expanded => {
            Some(read_summary(outcome.and_then(|o| o.read_extent()), width))
        }
        Shows::Hits => {
            let hits = &outcome.as_ref().and_then(ToolMetadata::search)?.hits;
            (!hits.is_empty()).then(|| search_hits(hits, width, expanded))
        }
        Shows::Extent | Shows::Command | Shows::Output => None,
    }
}

/// The output without the line bash ends it with for the model when the command exited with
/// `exit_code` (`Exit code: 0`) and the blank line before it.
fn strip_exit_trailer(output: &str, exit_code: Option<i64>) -> &str {
    let t = output.trim_end();
    let Some(line) = exit_code.map(pith_protocol::tool::exit_line) else {
        return t;
    };
    match t.strip_suffix(line.as_str()) {
        Some(rest) if rest.is_empty() || rest.ends_with('\n') => rest.trim_end(),
        _ => t,
    }
}

/// Lines of text under a gutter; folded: the first few, and a count of the rest (a single hidden
/// line is shown rather than counted).
fn output_lines(
    text: &str,
    width: usize,
    expanded: bool,
    preview: usize,
    style: Style,
) -> Vec<Line<'static>> {
    let text = sanitize(text);
    let lines: Vec<&str> = text.trim_end().lines().collect();
    if lines.iter().all(|l| l.trim().is_empty()) {
        return Vec::new();
    }
    let limit = if expanded {
        MAX_EXPANDED_LINES
    } else {
        preview
    };
    let shown = if lines.len() <= limit + 1 {
        lines.len()
    } else {
        limit
    };
    let first = [Span::styled("  ⎿ ", dim())];
    let rest = [Span::styled("    ", dim())];
    let mut out = Vec::new();
    for (i, l) in lines.iter().take(shown).enumerate() {
        let p: &[Span<'static>] = if i == 0 { &first } else { &rest };
        if expanded {
            out.extend(wrap_chars(
                &[Span::styled(l.to_string(), style)],
                width,
                p,
                &rest,
            ));
        } else {
            out.push(Line::from(vec![
                p[0].clone(),
                Span::styled(truncate(l, width.saturating_sub(4)), style),
            ]));
        }
    }
    if lines.len() > shown {
        let hint = if expanded {
            format!("    … {} more lines not shown", lines.len() - shown)
        } else {
            format!(
                "    … +{} lines ({})",
                lines.len() - shown,
                super::keymap::expand_key()
            )
        };
        out.push(Line::from(Span::styled(truncate(&hint, width), dim())));
    }
    out
}

/// The latest lines of a running command's output.
fn live_lines(live: &str, width: usize, expanded: bool) -> Vec<Line<'static>> {
    let text = sanitize(live);
    let lines: Vec<&str> = text.trim_end().lines().collect();
    let keep = if expanded {
        MAX_EXPANDED_LINES
    } else {
        LIVE_LINES
    };
    let skip = lines.len().saturating_sub(keep);
    let mut out = Vec::new();
    if skip > 0 {
        out.push(Line::from(Span::styled(
            format!("  ⎿ … {skip} earlier lines"),
            dim(),
        )));
    }
    let style = Style::default().fg(theme().muted);
    for (i, l) in lines.iter().skip(skip).enumerate() {
        let gutter = if i == 0 && skip == 0 {
            "  ⎿ "
        } else {
            "    "
        };
        out.push(Line::from(vec![
            Span::styled(gutter, dim()),
            Span::styled(truncate(l, width.saturating_sub(4)), style),
        ]));
    }
    out
}

#[cfg(test)]
#[path = "tool_cell_tests.rs"]
mod tests;
