//! The step in hand (ARCHITECTURE.md §6.4, "The step in hand"): a compaction in the middle of
//! a turn must not summarise away the results of the tool calls the model just made and has not
//! answered yet. When the history being summarised ends with such calls (the verbatim tail kept
//! none of the current turn), their results travel in a section of their own after the summary:
//! word for word within the room given, larger ones as their first and last lines with the
//! recall id that brings them back whole.
//!
//! A section of the carried record (an assistant text) is wire-safe on every provider: no call
//! is separated from its result, and user and assistant messages still alternate.

use pith_protocol::message::{Message, PartKind, Role, ToolState};

use super::tokens::Estimator;

/// The section's heading.
pub const HEADING: &str = "## The step in hand: the results of your last tool calls, word for word";
/// A line of a preview is cut to this many characters.
const LINE_CHARS: usize = 200;
/// What a result's wrapper and the heading cost, about.
const WRAPPER_TOKENS: u64 = 24;

/// The finished tool calls of the last message of `summarised`, when it is an assistant's step
/// that made calls (so the model has not answered their results yet): (call id, tool, title,
/// output), in order.
pub fn pending_results(summarised: &[Message]) -> Vec<(&str, &str, &str, String)> {
    let Some(last) = summarised
        .last()
        .filter(|m| m.role == Role::Assistant && !m.summary)
    else {
        return Vec::new();
    };
    last.parts
        .iter()
        .filter_map(|p| match &p.kind {
            PartKind::Tool {
                call_id,
                tool,
                state,
                ..
            } => {
                let (title, output) = match state {
                    ToolState::Completed { title, output, .. } => (title.as_str(), output.clone()),
                    ToolState::Error { message, .. } => ("failed", format!("[error] {message}")),
                    ToolState::Pending | ToolState::Running { .. } => return None,
                };
                Some((call_id.as_str(), tool.as_str(), title, output))
            }
            _ => None,
        })
        .collect()
}

/// The section carrying the step in hand of `summarised` in about `room` tokens; `None` when
/// the history does not end with calls the model has not answered. Each result gets an equal
/// share of the room, and what one leaves goes to the next.
pub fn render(summarised: &[Message], room: u64, est: &Estimator) -> Option<String> {
    let results = pending_results(summarised);
    if results.is_empty() {
        return None;
    }
    let mut out = vec![format!("\n{HEADING}")];
    let mut left = room.saturating_sub(WRAPPER_TOKENS);
    let n = results.len();
    for (k, (id, tool, title, output)) in results.into_iter().enumerate() {
        let share = left / (n - k) as u64;
        let whole = est.text(&output);
        let (body, used) = if whole <= share {
            (output.trim_end().to_string(), whole)
        } else {
            let p = preview(&output, share, id, est);
            let used = est.text(&p);
            (p, used)
        };
        left = left.saturating_sub(used + WRAPPER_TOKENS / 2);
        let title = title.replace('"', "'");
        out.push(format!(
            "<tool_result tool=\"{tool}\" call=\"{title}\" recall=\"{id}\">\n{body}\n</tool_result>"
        ));
    }
    Some(out.join("\n"))
}

/// `output` in about `budget` tokens: its first lines (two thirds of the room) and its last,
/// each cut to [`LINE_CHARS`], with a note naming how much is not shown and the recall id.
pub fn preview(output: &str, budget: u64, id: &str, est: &Estimator) -> String {
    let lines: Vec<String> = output
        .trim_end()
        .lines()
        .map(|l| {
            if l.chars().count() <= LINE_CHARS {
                l.to_string()
            } else {
                let mut s: String = l.chars().take(LINE_CHARS).collect();
                s.push('…');
                s
            }
        })
        .collect();
    let note = |hidden: usize| {
        format!(
            "[… {hidden} of {} lines not shown here; recall \"{id}\" brings the whole output back]",
            lines.len()
        )
    };
    let room = budget.saturating_sub(est.text(&note(lines.len())));
    let head_room = room * 2 / 3;
    let mut used = 0;
    let mut head = 0;
    while head < lines.len() {
        let t = est.text(&lines[head]) + 1;
        if used + t > head_room {
            break;
        }
        used += t;
        head += 1;
    }
    let mut tail = lines.len();
    while tail > head {
        let t = est.text(&lines[tail - 1]) + 1;
        if used + t > room {
            break;
        }
        used += t;
        tail -= 1;
    }
    let mut out: Vec<&str> = lines[..head].iter().map(String::as_str).collect();
    let shown = head + (lines.len() - tail);
    let marker = note(lines.len() - shown);
    out.push(&marker);
    out.extend(lines[tail..].iter().map(String::as_str));
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::*;

    fn seq(n: usize) -> String {
        (1..=n).map(|i| format!("{i}\n")).collect()
    }

    #[test]
    fn the_results_the_model_has_not_answered_travel_word_for_word() {
        let est = Estimator::for_model("gpt-4o");
        let mut a = assistant("a2", "u1");
        add(&mut a, pith_protocol::message::PartKind::StepStart);
        add(&mut a, tool("bash", "call_seq", completed(&seq(40))));
        add(&mut a, tool("read", "call_big", completed(&seq(3_000))));
        let history = vec![user("u1", "count"), tool_msg("a1", "u1", "read", "x"), a];
        let s = render(&history, 800, &est).unwrap();
        assert!(s.contains(HEADING), "{s}");
        assert!(s.contains(&seq(40).trim_end().to_string()), "{s}");
        assert!(s.contains("recall=\"call_seq\""), "{s}");
        // The big one: its edges and the id that brings it back, within the room.
        assert!(s.contains("\n1\n2\n"), "{s}");
        assert!(s.contains("\n3000\n</tool_result>"), "{s}");
        assert!(
            s.contains("lines not shown here; recall \"call_big\" brings the whole output back"),
            "{s}"
        );
        assert!(est.text(&s) <= 800 + 40, "{}", est.text(&s));
        // Answered calls (the model wrote after them) are not the step in hand.
        let mut answered = history.clone();
        let mut reply = assistant("a3", "u1");
        add(&mut reply, text("Counted to 40."));
        answered.push(reply);
        assert_eq!(render(&answered, 800, &est), None);
        assert_eq!(render(&history[..1], 800, &est), None);
    }

    #[test]
    fn a_preview_keeps_the_edges_within_its_budget() {
        let est = Estimator::for_model("gpt-4o");
        let p = preview(&seq(500), 120, "c1", &est);
        assert!(est.text(&p) <= 120, "{}", est.text(&p));
        assert!(p.starts_with("1\n2\n"), "{p}");
        assert!(p.ends_with("\n499\n500"), "{p}");
        assert!(p.contains("recall \"c1\""));
    }
}
