//! The execution frontier (ARCHITECTURE.md §6.4): what was done, what was verified and how (the
//! last run of each test or build command and its result), what was in progress when the
//! compaction hit, and the next step the model announced — built from the session's own
//! messages and todo list, never from the summary.
//!
//! Merged with the previous compaction's frontier: a check run again replaces the older run
//! (keyed by its normalised command, [`checks::recognise`]), older `done` entries are kept; what
//! is in progress and the next step are the session's as it stands. Bounded to its budget as
//! rendered, the oldest entries dropped first.

pub mod checks;
pub mod next_step;

use pith_protocol::carried::{Check, Frontier};
use pith_protocol::message::{Message, Part, PartKind, Role, ToolState};
use pith_protocol::tool::{BashMetadata, Todo, TodoStatus, ToolInput, ToolMetadata, ToolName};

use super::tokens::Estimator;
use super::view::is_compaction_message;

/// The section's heading.
pub const HEADER: &str =
    "## Where the work stands (recorded by pith from the session, not the summary)";
/// The most done entries, and the most checks, kept (the newest): a few screens at most, and
/// bounding to the budget then measures only a few times.
pub const MOST_KEPT: usize = 64;
/// The longest entry (a done item, an item in progress, a command), in characters.
pub const ENTRY_MAX_CHARS: usize = 140;

/// The frontier of the session whose view is `view` (model order, the messages a compaction is
/// about to summarise among them), with `todos` as last written and the `previous`
/// compaction's frontier, bounded to `budget` tokens as [`render`]ed.
pub fn build(
    view: &[Message],
    todos: Option<&[Todo]>,
    previous: &Frontier,
    budget: u64,
    est: &Estimator,
) -> Frontier {
    // The session's own messages: not the previous compaction's request nor its summary.
    let own: Vec<&Message> = view
        .iter()
        .filter(|m| !m.summary && !is_compaction_message(m))
        .collect();
    let mut f = Frontier {
        done: previous.done.clone(),
        verified: previous.verified.clone(),
        ..Frontier::default()
    };
    for t in todos.unwrap_or_default() {
        if t.status == TodoStatus::Completed && !t.content.trim().is_empty() {
            let item = short(&t.content);
            if !f.done.contains(&item) {
                f.done.push(item);
            }
        }
    }
    for m in &own {
        for p in &m.parts {
            record_change(&mut f.done, p);
            if let Some(check) = check_of(p) {
                record_check(&mut f.verified, check);
            }
        }
    }
    f.in_progress = todos
        .unwrap_or_default()
        .iter()
        .filter(|t| t.status == TodoStatus::InProgress && !t.content.trim().is_empty())
        .map(|t| short(&t.content))
        .collect();
    f.in_progress.extend(step_in_hand(&own));
    let last_text = own
        .iter()
        .rev()
        .filter(|m| m.role == Role::Assistant)
        .map(|m| m.text())
        .find(|t| !t.trim().is_empty());
    f.next = match last_text {
        Some(t) => next_step::announced(&t),
        None => previous.next.clone(),
    };
    bound(f, budget, est, todos.unwrap_or_default())
}

/// Whether `frontier` lists the last run of the check `command` runs (then the ledger need not
/// name that command again: the frontier says how it ended, with its recall id).
pub fn verifies(frontier: &Frontier, command: &str) -> bool {
    checks::recognise(command).is_some_and(|c| {
        let key = short(&c.normalised);
        frontier.verified.iter().any(|v| v.command == key)
    })
}

/// `s` on one line, cut to [`ENTRY_MAX_CHARS`].
fn short(s: &str) -> String {
    cut(s, ENTRY_MAX_CHARS)
}

/// `s` on one line, cut to `max` characters.
fn cut(s: &str, max: usize) -> String {
    let one = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if one.chars().count() <= max {
        return one;
    }
    let mut out: String = one.chars().take(max - 1).collect();
    out.push('…');
    out
}

/// The most of a check's first run the frontier keeps beside its last.
const BEFORE_CHARS: usize = 110;

/// A file a completed `edit` or `write` changed, as a done entry (newest last; the same file
/// changed again moves to the end).
fn record_change(done: &mut Vec<String>, p: &Part) {
    let PartKind::Tool {
        tool,
        input,
        state: ToolState::Completed { .. },
        ..
    } = &p.kind
    else {
        return;
    };
    let name = ToolName::parse(tool);
    let entry = match ToolInput::of(&name, input) {
        ToolInput::Edit {
            path: Some(p),
            old,
            new,
        } => match added_lines(old.unwrap_or(""), new.unwrap_or("")) {
            Some(added) => short(&format!("edited {p}{ADDED}{added}")),
            None => short(&format!("edited {p}")),
        },
        ToolInput::Write { path: Some(p), .. } => short(&format!("wrote {p}")),
        _ => return,
    };
    let path = changed_path(&entry).map(str::to_string);
    // the same file changed again: one entry, at the newest place, with what each change added
    let earlier: Vec<String> = done
        .iter()
        .filter(|d| changed_path(d) == path.as_deref())
        .filter_map(|d| d.split_once(ADDED).map(|(_, added)| added.to_string()))
        .collect();
    done.retain(|d| changed_path(d) != path.as_deref());
    let entry = match earlier.last() {
        Some(before) if entry.ends_with(before.as_str()) => entry,
        Some(before) if entry.contains(ADDED) => short(&format!("{entry} {before}")),
        Some(before) => short(&format!("{entry}{ADDED}{before}")),
        None => entry,
    };
    done.push(entry);
}

/// Between a done entry's file and the lines its edit added.
const ADDED: &str = " +";

/// The first lines an edit added (not in the text it replaced), trimmed and joined: "how" a
/// file changed, in its own words; `None` when it only removed.
fn added_lines(old: &str, new: &str) -> Option<String> {
    let before: std::collections::HashSet<&str> = old.lines().map(str::trim).collect();
    let added: Vec<String> = new
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !before.contains(l))
        .take(2)
        .map(|l| format!("`{}`", l.chars().take(48).collect::<String>()))
        .collect();
    (!added.is_empty()).then(|| added.join(" "))
}

/// The file a done entry says was changed, when it is one.
fn changed_path(entry: &str) -> Option<&str> {
    entry
        .strip_prefix("edited ")
        .or_else(|| entry.strip_prefix("wrote "))
        .map(|rest| rest.split(ADDED).next().unwrap_or(rest))
}

/// A `bash` call that ran a check, with its result; `None` for any other part or a call that
/// has not ended.
fn check_of(p: &Part) -> Option<Check> {
    let PartKind::Tool {
        call_id,
        tool,
        input,
        state,
    } = &p.kind
    else {
        return None;
    };
    let name = ToolName::parse(tool);
    let ToolInput::Exec {
        command: Some(command),
    } = ToolInput::of(&name, input)
    else {
        return None;
    };
    let recognised = checks::recognise(command)?;
    let (result, passed) = match state {
        ToolState::Completed {
            metadata, output, ..
        } => match ToolMetadata::read(&name, metadata) {
            Some(ToolMetadata::Bash(b)) => result_of(&b, &recognised, output),
            _ => ("ended, result unknown".to_string(), None),
        },
        ToolState::Error { message, .. } => {
            let first = message.lines().next().unwrap_or("").trim();
            (short(&format!("tool error: {first}")), None)
        }
        ToolState::Pending | ToolState::Running { .. } => return None,
    };
    Some(Check {
        command: short(&recognised.normalised),
        result,
        passed,
        recall: Some(call_id.clone()),
        before: None,
    })
}

/// How a check ended, in a few words, and whether it passed. Through a pipe the exit code is
/// the filter's (after `;` another command's): a pass is not claimed, and a failure its output
/// reports is.
fn result_of(
    b: &BashMetadata,
    check: &checks::CheckCommand,
    output: &str,
) -> (String, Option<bool>) {
    let denied = if b.sandbox_denied {
        ", sandbox denied"
    } else {
        ""
    };
    let (text, passed) = if b.interrupted {
        ("interrupted".to_string(), None)
    } else if b.timed_out {
        ("timed out".to_string(), Some(false))
    } else if check.piped || check.followed {
        let code = b
            .exit_code
            .map_or("no exit code".into(), |c| format!("exit {c}"));
        let how = if check.piped {
            "through a pipe"
        } else {
            "of the command after it"
        };
        if reports_failure(output) {
            (format!("failed per its output ({code} {how})"), Some(false))
        } else {
            (format!("{code} {how}"), None)
        }
    } else {
        match (b.exit_code, b.signal) {
            (Some(0), _) => ("passed".to_string(), Some(true)),
            (Some(c), _) => (format!("failed (exit {c})"), Some(false)),
            (None, Some(s)) => (format!("killed (signal {s})"), Some(false)),
            (None, None) => ("ended without an exit code".to_string(), None),
        }
    };
    // no report line: what the command said last (a build's sizes, a plan's totals)
    let summary = summary_line(output)
        .or_else(|| super::said::last_said_of(output))
        .map(|l| format!(": {l}"))
        .unwrap_or_default();
    (format!("{text}{denied}{summary}"), passed)
}

/// The line of a check's output that reports how it went (`test result: ok. 14 passed; …`,
/// `=== 23 passed in 1.2s ===`, `Tests: 31 passed`, `ok  pkg  0.2s`, a benchmark's figures), the
/// last such line, cut short: the figure a later step asks "what did the last run report?" for.
fn summary_line(output: &str) -> Option<String> {
    use std::sync::LazyLock;
    static REPORT: LazyLock<regex::Regex> = LazyLock::new(|| {
        regex::Regex::new(
            r"(?i)(\btest result:|\b\d+ (passed|failed|errors?|tests?|examples?|specs?)\b|^(ok|FAIL|FAILED|PASS)\s+\S|^Benchmark\S*\s+\d+\s+[\d.]+ \w+/op|\bBuild (succeeded|failed)\b|^Finished\b|\berror: could not compile\b)",
        )
        .expect("summary pattern")
    });
    let reported: Vec<String> = output
        .lines()
        .map(|l| l.trim_matches(|c: char| c == '=' || c == '-' || c.is_whitespace()))
        .filter(|l| !l.is_empty() && REPORT.is_match(l))
        .filter(|l| !l.starts_with("running ") && !l.starts_with("collected "))
        .map(report_words)
        .collect();
    let benches = criterion_lines(output);
    // `Finished …` says only that it built, when the run reported more
    let more = !benches.is_empty() || reported.iter().any(|l| !l.starts_with("Finished"));
    let mut lines: Vec<String> = reported
        .into_iter()
        .filter(|l| !(more && l.starts_with("Finished")))
        .collect();
    lines.extend(benches);
    // the last four such lines (a benchmark's figures come before the `ok` that ends the run)
    let line = lines[lines.len().saturating_sub(4)..].join(" · ");
    if line.is_empty() {
        return None;
    }
    let cut: String = line.chars().take(SUMMARY_CHARS).collect();
    Some(if line.chars().count() > SUMMARY_CHARS {
        format!("{cut}…")
    } else {
        cut
    })
}

/// A report line on one line of single spaces: a Go benchmark's as its name and time per op
/// (the iteration count is noise), cargo's without its zero counts and its time.
fn report_words(l: &str) -> String {
    let words: Vec<&str> = l.split_whitespace().collect();
    match words.as_slice() {
        [name, _, value, unit, ..] if name.starts_with("Benchmark") => {
            format!("{name} {value} {unit}")
        }
        _ => {
            let mut out = words.join(" ");
            for zero in ["; 0 ignored", "; 0 measured", "; 0 filtered out"] {
                out = out.replace(zero, "");
            }
            match out.find("; finished in") {
                Some(at) if out.starts_with("test result:") => out[..at].to_string(),
                _ => out,
            }
        }
    }
}

/// Criterion's figures: each benchmark's name with its estimate (`time: [low estimate high]`)
/// and, when compared with a baseline, the estimated change.
fn criterion_lines(output: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut name = "";
    let middle = |rest: &str| {
        let inside = rest.trim().trim_start_matches('[');
        let inside = inside.split(']').next().unwrap_or("");
        let w: Vec<&str> = inside.split_whitespace().collect();
        // `[1.18 ms 1.21 ms 1.24 ms]` or `[-65.8% -65.2% -64.6%]`
        match w.len() {
            6 => Some(format!("{} {}", w[2], w[3])),
            3 => Some(w[1].to_string()),
            _ => None,
        }
    };
    for l in output.lines() {
        let t = l.trim();
        if let Some(at) = t.find("time:") {
            let named = t[..at].trim();
            if !named.is_empty() {
                name = named;
            }
            if let Some(m) = middle(&t[at + 5..]) {
                out.push(format!("{name} {m}"));
            }
        } else if let Some(rest) = t.strip_prefix("change:") {
            if let (Some(m), Some(last)) = (middle(rest), out.last_mut()) {
                last.push_str(&format!(" (change {m})"));
            }
        } else if !t.is_empty() && !t.contains(' ') {
            name = t;
        }
    }
    out
}

/// The most of a check's summary line the frontier keeps.
const SUMMARY_CHARS: usize = 240;

/// A check's output that says it failed (what a pipe's exit code would hide).
fn reports_failure(output: &str) -> bool {
    [
        "test result: FAILED",
        "FAILED",
        "error[E",
        "error: could not compile",
        "npm ERR!",
        " failed,",
        "Tests:       ",
    ]
    .iter()
    .any(|m| output.contains(m) && (*m != "Tests:       " || output.contains(" failed")))
}

/// Adds `check` as the last run of its command (an older run of the same command goes); a run
/// already recorded (the same call, seen again in a kept tail) keeps its place.
/// The run it replaces is remembered as `before` when it reported otherwise (the first such
/// run: the failure before the fix, the figures before the change).
fn record_check(verified: &mut Vec<Check>, mut check: Check) {
    if let Some(i) = verified.iter().position(|c| c.recall == check.recall) {
        check.before = verified[i].before.take();
        verified[i] = check;
        return;
    }
    if let Some(i) = verified.iter().position(|c| c.command == check.command) {
        let older = verified.remove(i);
        check.before = older.before.or_else(|| {
            (!same_report(&older.result, &check.result)).then(|| {
                let result = cut(&older.result, BEFORE_CHARS);
                match &older.recall {
                    Some(id) => format!("{result} [{id}]"),
                    None => result,
                }
            })
        });
    }
    verified.push(check);
}

/// Two results that differ only in how long the run took (`in 4.37s`, `0.21 secs`).
fn same_report(a: &str, b: &str) -> bool {
    use std::sync::LazyLock;
    static DURATION: LazyLock<regex::Regex> = LazyLock::new(|| {
        regex::Regex::new(r"\b\d+(\.\d+)?\s?(s|ms|µs|us|ns|secs?|seconds?|m|min)\b")
            .expect("duration pattern")
    });
    DURATION.replace_all(a, "") == DURATION.replace_all(b, "")
}

/// The calls of the step in hand, when the compaction hits in the middle of a turn: the last
/// message is the assistant's, with tool calls and no text after them.
fn step_in_hand(own: &[&Message]) -> Vec<String> {
    let Some(last) = own.last().filter(|m| m.role == Role::Assistant) else {
        return Vec::new();
    };
    let Some(last_call) = last
        .parts
        .iter()
        .rposition(|p| matches!(p.kind, PartKind::Tool { .. }))
    else {
        return Vec::new();
    };
    let text_after = last.parts[last_call..].iter().any(
        |p| matches!(&p.kind, PartKind::Text { text, synthetic: false } if !text.trim().is_empty()),
    );
    if text_after {
        return Vec::new();
    }
    last.parts
        .iter()
        .filter_map(|p| match &p.kind {
            PartKind::Tool {
                call_id,
                tool,
                state,
                ..
            } => {
                let title = match state {
                    ToolState::Completed { title, .. } => title.as_str(),
                    ToolState::Running {
                        title: Some(title), ..
                    } => title.as_str(),
                    _ => "",
                };
                let what = if title.trim().is_empty() || title == tool {
                    tool.clone()
                } else {
                    format!("{tool} {title}")
                };
                Some(format!("{} [{call_id}]", short(&what)))
            }
            _ => None,
        })
        .collect()
}

/// Drops the oldest entries until the rendered frontier fits `budget` tokens: done items
/// first, then older checks, then older calls of the step in hand and todo items, then the
/// last check, what is in progress and the next step.
fn bound(mut f: Frontier, budget: u64, est: &Estimator, todos: &[Todo]) -> Frontier {
    // More than fits any budget goes at once, so the loop below measures a few times only.
    let over = f.done.len().saturating_sub(MOST_KEPT);
    f.done.drain(..over);
    let over = f.verified.len().saturating_sub(MOST_KEPT);
    f.verified.drain(..over);
    let last_check_before =
        |f: &Frontier| f.verified.iter().rev().skip(1).any(|c| c.before.is_some());
    while !f.is_empty() && est.text(&render_beside(&f, todos)) > budget {
        // the newest two changes outlast the first runs of older checks
        if f.done.len() > 2 {
            f.done.remove(0);
        } else if last_check_before(&f) {
            if let Some(c) = f.verified.iter_mut().find(|c| c.before.is_some()) {
                c.before = None;
            }
        } else if !f.done.is_empty() {
            f.done.remove(0);
        } else if f.verified.len() > 1 {
            f.verified.remove(0);
        } else if let Some(i) = least_in_progress(&f.in_progress) {
            f.in_progress.remove(i);
        } else if !f.verified.is_empty() {
            f.verified.clear();
        } else if !f.in_progress.is_empty() {
            f.in_progress.clear();
        } else {
            f.next = None;
        }
    }
    f
}

/// Which entry in progress goes first when it does not fit: the oldest call of the step in
/// hand while more than one is left (they end in their recall id), then the last todo item;
/// `None` when one entry is left.
fn least_in_progress(in_progress: &[String]) -> Option<usize> {
    if in_progress.len() < 2 {
        return None;
    }
    let is_call = |e: &String| e.ends_with(']');
    let calls: Vec<usize> = (0..in_progress.len())
        .filter(|&i| is_call(&in_progress[i]))
        .collect();
    if calls.len() > 1 {
        return Some(calls[0]);
    }
    (0..in_progress.len())
        .rev()
        .find(|&i| !is_call(&in_progress[i]))
}

/// The frontier as the section pith appends after a summary; empty when there is nothing.
pub fn render(frontier: &Frontier) -> String {
    render_beside(frontier, &[])
}

/// [`render`] beside the todo list carried with it: the items that list already shows (done,
/// in progress) are not repeated.
pub fn render_beside(frontier: &Frontier, todos: &[Todo]) -> String {
    let listed = |status: TodoStatus, entry: &String| {
        todos
            .iter()
            .any(|t| t.status == status && short(&t.content) == *entry)
    };
    let done: Vec<&str> = frontier
        .done
        .iter()
        .filter(|e| !listed(TodoStatus::Completed, e))
        .map(String::as_str)
        .collect();
    let in_progress: Vec<&str> = frontier
        .in_progress
        .iter()
        .filter(|e| !listed(TodoStatus::InProgress, e))
        .map(String::as_str)
        .collect();
    if done.is_empty()
        && in_progress.is_empty()
        && frontier.verified.is_empty()
        && frontier.next.is_none()
    {
        return String::new();
    }
    let mut out = format!("\n{HEADER}");
    if !done.is_empty() {
        out.push_str(&format!("\n- Done: {}", done.join("; ")));
    }
    for c in &frontier.verified {
        out.push_str(&format!("\n- Verified: `{}` → {}", c.command, c.result));
        if let Some(id) = &c.recall {
            out.push_str(&format!(" [{id}]"));
        }
        if let Some(before) = &c.before {
            out.push_str(&format!("; first run: {before}"));
        }
    }
    if !in_progress.is_empty() {
        out.push_str(&format!("\n- In progress: {}", in_progress.join("; ")));
    }
    if let Some(n) = &frontier.next {
        out.push_str(&format!("\n- Next (as the model said): {n}"));
    }
    out
}

#[cfg(test)]
#[path = "frontier_tests.rs"]
mod tests;
