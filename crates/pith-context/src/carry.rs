//! What pith carries across a compaction itself, so that even a useless summary leaves the next
//! agent knowing where it was: the user's own messages (their words word for word, what they
//! pasted condensed: [`super::retain`]), the todo list, and a ledger of the files read, edited
//! and written (names, never contents) and the commands run (each with how it ended and the last
//! lines it printed).
//!
//! The summariser may paraphrase or drop anything; none of this goes through it. The
//! [`Carried`] record is stored on the compaction part (so the next compaction builds on it
//! rather than on a summary of it) and rendered by [`render`] after the summary text.

use pith_protocol::carried::Frontier;
use pith_protocol::event::{Job, JobState};
use pith_protocol::message::{Carried, CarrySource, Ledger, Message, PartKind};
use pith_protocol::tool::{Todo, TodoStatus, ToolInput, ToolName};

use super::tokens::Estimator;
use super::view::is_turn_start;

/// A command longer than this is cut in the ledger (it records what ran, not the script).
pub const COMMAND_MAX_CHARS: usize = 120;
/// The first line of what pith appends to a summary.
pub const HEADER: &str = "---\nRecorded by pith itself, not by the summariser:";

/// The ledger of `messages` (oldest first): for each tool call, the file it read, edited or
/// wrote, or the command it ran. A name seen again moves to the end (most recent last).
pub fn ledger_of<'a>(messages: impl IntoIterator<Item = &'a Message>) -> Ledger {
    let mut l = Ledger::default();
    for m in messages {
        for p in &m.parts {
            let PartKind::Tool {
                tool, input, state, ..
            } = &p.kind
            else {
                continue;
            };
            let path = |p: Option<&str>| p.map(str::to_string);
            let name = ToolName::parse(tool);
            match ToolInput::of(&name, input) {
                ToolInput::Read { path: p, .. } => push_recent(&mut l.read, path(p)),
                ToolInput::Edit { path: p, .. } => push_recent(&mut l.edited, path(p)),
                ToolInput::Write { path: p, .. } => push_recent(&mut l.written, path(p)),
                ToolInput::Exec { command } => {
                    // with how it ended and the last line it reported: its newest run
                    let ran = command.map(|c| {
                        let status = super::said::status(&name, state)
                            .map(|s| format!(" → {s}"))
                            .unwrap_or_default();
                        let said = super::said::last_said(state)
                            .map(|s| format!(": {s}"))
                            .unwrap_or_default();
                        format!("{}{status}{said}", one_command(c))
                    });
                    push_command(&mut l.commands, ran)
                }
                ToolInput::List { .. }
                | ToolInput::Search { .. }
                | ToolInput::Fetch { .. }
                | ToolInput::WebSearch { .. }
                | ToolInput::Task { .. }
                | ToolInput::Todos { .. }
                | ToolInput::Mcp { .. }
                | ToolInput::Other => {}
            }
        }
    }
    l
}

/// A command as the ledger records it: its first line, cut to [`COMMAND_MAX_CHARS`].
fn one_command(c: &str) -> String {
    let first = c.trim().lines().next().unwrap_or("").trim();
    let more = c.trim().lines().count() > 1;
    let mut out: String = first.chars().take(COMMAND_MAX_CHARS).collect();
    if more || first.chars().count() > COMMAND_MAX_CHARS {
        out.push_str(" …");
    }
    out
}

fn push_recent(list: &mut Vec<String>, item: Option<String>) {
    let Some(item) = item.filter(|s| !s.trim().is_empty()) else {
        return;
    };
    list.retain(|x| x != &item);
    list.push(item);
}

/// A command run, at the end: an earlier run of the same command (whatever its result) goes.
fn push_command(list: &mut Vec<String>, item: Option<String>) {
    let Some(item) = item.filter(|s| !s.trim().is_empty()) else {
        return;
    };
    let command = |s: &str| s.split(" → ").next().unwrap_or(s).to_string();
    let this = command(&item);
    list.retain(|x| command(x) != this);
    list.push(item);
}

/// `older` followed by `newer`, a name in both kept at its newer place.
pub fn merge_ledgers(older: &Ledger, newer: &Ledger) -> Ledger {
    let join = |a: &[String], b: &[String]| {
        let mut out = a.to_vec();
        for x in b {
            push_recent(&mut out, Some(x.clone()));
        }
        out
    };
    Ledger {
        read: join(&older.read, &newer.read),
        edited: join(&older.edited, &newer.edited),
        written: join(&older.written, &newer.written),
        commands: {
            let mut out = older.commands.clone();
            for c in &newer.commands {
                push_command(&mut out, Some(c.clone()));
            }
            out
        },
        dropped: older.dropped + newer.dropped,
    }
}

/// Drops the oldest entries (spread over the lists, oldest list items first) until the rendered
/// ledger fits `budget` tokens; counts what was dropped.
pub fn bound_ledger(mut l: Ledger, budget: u64, est: &Estimator) -> Ledger {
    while !l.is_empty() && est.text(&render_ledger(&l)) > budget {
        // Drop from the longest list: it holds the most that is old.
        let lists = [&mut l.read, &mut l.edited, &mut l.written, &mut l.commands];
        if let Some(longest) = lists.into_iter().max_by_key(|v| v.len()) {
            longest.remove(0);
            l.dropped += 1;
        }
    }
    l
}

/// The todo list as a checklist (items without text left out).
pub fn render_todos(todos: &[Todo]) -> Option<String> {
    let lines: Vec<String> = todos
        .iter()
        .filter(|t| !t.content.is_empty())
        .map(|t| {
            let mark = match t.status {
                TodoStatus::Completed => "[x]",
                TodoStatus::InProgress => "[~]",
                TodoStatus::Cancelled => "[-]",
                TodoStatus::Pending => "[ ]",
            };
            format!("- {mark} {} ({})", t.content, t.status.as_str())
        })
        .collect();
    (!lines.is_empty()).then(|| lines.join("\n"))
}

/// At most this many running jobs are listed (the table's cap is configurable).
pub const JOBS_MAX: usize = 16;

/// The running background jobs, one line each: its id, command and last line.
fn render_jobs(jobs: &[Job]) -> Option<String> {
    let lines: Vec<String> = jobs
        .iter()
        .filter(|j| j.state == JobState::Running)
        .take(JOBS_MAX)
        .map(|j| {
            let last = j.last_line.trim();
            let last: String = last.chars().take(COMMAND_MAX_CHARS).collect();
            let said = if last.is_empty() {
                String::new()
            } else {
                format!(" — last printed: {last}")
            };
            format!("- job {}: `{}`{said}", j.id, one_command(&j.command))
        })
        .collect();
    (!lines.is_empty()).then(|| {
        format!(
            "\n## Background jobs still running when this was written (read with job_output, stop with job_kill)\n{}",
            lines.join("\n")
        )
    })
}

fn render_ledger(l: &Ledger) -> String {
    render_ledger_beside(l, &Frontier::default())
}

/// The ledger without the commands whose last run `frontier` lists as a check.
fn render_ledger_beside(l: &Ledger, frontier: &Frontier) -> String {
    let mut out = Vec::new();
    let list = |v: &[String], code: bool| {
        v.iter()
            .map(|x| if code { format!("`{x}`") } else { x.clone() })
            .collect::<Vec<_>>()
            .join(", ")
    };
    if !l.read.is_empty() {
        out.push(format!("- Read: {}", list(&l.read, false)));
    }
    if !l.edited.is_empty() {
        out.push(format!("- Edited: {}", list(&l.edited, false)));
    }
    if !l.written.is_empty() {
        out.push(format!("- Written: {}", list(&l.written, false)));
    }
    let commands: Vec<String> = l
        .commands
        .iter()
        .filter(|c| {
            let command = c.split(" → ").next().unwrap_or(c);
            !super::frontier::verifies(frontier, command)
        })
        .cloned()
        .collect();
    if !commands.is_empty() {
        out.push(format!("- Commands run: {}", list(&commands, true)));
    }
    if l.dropped > 0 {
        out.push(format!("- ({} older entries not listed)", l.dropped));
    }
    out.join("\n")
}

/// The text pith appends to a summary: empty when nothing was carried.
pub fn render(c: &Carried) -> String {
    if c.is_empty() {
        return String::new();
    }
    let mut out = vec![HEADER.to_string()];
    if !c.user_messages.is_empty() || c.current_request.is_some() {
        let mut s = String::from("\n## The user's messages, word for word (oldest first)");
        if c.dropped_user_messages > 0 {
            s.push_str(&format!(
                "\n[{} older message(s) not kept here; the summary covers them]",
                c.dropped_user_messages
            ));
        }
        for m in &c.user_messages {
            s.push_str(&format!(
                "\n<user_message>\n{}\n</user_message>",
                m.trim_end()
            ));
        }
        if let Some(r) = &c.current_request {
            s.push_str(&format!(
                "\n<user_message current=\"true\">\n{}\n</user_message>\nThe last message is the request being worked on.",
                r.trim_end()
            ));
        }
        out.push(s);
    }
    if let Some(t) = c.todos.as_deref().and_then(render_todos) {
        out.push(format!(
            "\n## Todo list (as last written with todowrite)\n{t}"
        ));
    }
    if let Some(j) = render_jobs(&c.jobs) {
        out.push(j);
    }
    let skills = super::skills::render(&c.skills);
    if !skills.is_empty() {
        out.push(skills);
    }
    let frontier =
        super::frontier::render_beside(&c.frontier, c.todos.as_deref().unwrap_or_default());
    if !frontier.is_empty() {
        out.push(frontier);
    }
    let decisions = super::decisions::render(&c.decisions);
    if !decisions.is_empty() {
        out.push(decisions);
    }
    let ledger = render_ledger_beside(&c.ledger, &c.frontier);
    if !ledger.is_empty() {
        out.push(format!(
            "\n## Files and commands so far (names; commands with how they ended)\n{ledger}"
        ));
    }
    let anchors = super::anchors::render(&super::anchors::beyond_words(c));
    if !anchors.is_empty() {
        out.push(anchors);
    }
    if let Some(l) = &c.left_view {
        out.push(super::left_view::render(l));
    }
    if let Some(step) = &c.step {
        out.push(step.clone());
    }
    out.join("\n")
}

/// The user's messages in `messages` (oldest first), with their ids, and the index of the last
/// one that starts a turn (the request being worked on, when it is among them).
pub fn user_messages(messages: &[Message]) -> (Vec<CarrySource>, Option<usize>) {
    let mut out = Vec::new();
    let mut current = None;
    for m in messages {
        if let Some(text) = super::paste::user_text(m) {
            if is_turn_start(m) {
                current = Some(out.len());
            }
            out.push(CarrySource {
                id: Some(m.id.clone()),
                text,
                pasted: super::paste::pasted_spans(m),
            });
        }
    }
    (out, current)
}

#[cfg(test)]
#[path = "carry_tests.rs"]
mod tests;
