//! What every front end says about a compaction (ARCHITECTURE.md §6.4, §8): the one line of
//! what was kept and what left the view, in pieces a narrow screen can drop, and the synthetic
//! continue message, shown as pith's note rather than as the user's words.

use crate::carried::{Kept, LeftCounts};

/// The synthetic user message after an automatic compaction (never after a manual one).
pub const CONTINUE_MESSAGE: &str = "Continue if you have next steps, or stop and ask for clarification if you are unsure how to proceed.";

/// How front ends show [`CONTINUE_MESSAGE`]: pith's note, never the user's prompt.
pub const CONTINUE_NOTE: &str = "pith: continuing after the compaction";

/// Whether a synthetic user text is pith's continue message.
pub fn is_continue(text: &str) -> bool {
    text.trim() == CONTINUE_MESSAGE
}

/// A token figure as the divider shows it: `812`, `41.2k`, `1.3M`.
pub fn tokens(n: u64) -> String {
    fn short(v: f64, unit: &str) -> String {
        let s = format!("{v:.1}");
        let s = s.strip_suffix(".0").unwrap_or(&s);
        format!("{s}{unit}")
    }
    if n < 1_000 {
        n.to_string()
    } else if n < 999_950 {
        short(n as f64 / 1_000.0, "k")
    } else {
        short(n as f64 / 1_000_000.0, "M")
    }
}

fn n_of(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// What a compaction kept for the model, most telling first (`your 14 messages`, `todo`,
/// `23 anchors`, …); empty when it kept nothing worth naming.
pub fn kept_items(k: &Kept) -> Vec<String> {
    let mut out = Vec::new();
    if k.user_messages > 0 {
        out.push(format!(
            "your {}",
            n_of(k.user_messages, "message", "messages")
        ));
    }
    if k.pinned > 0 {
        out.push(n_of(k.pinned, "pin", "pins"));
    }
    if k.todos > 0 {
        out.push("todo".to_string());
    }
    if k.frontier {
        out.push("frontier".to_string());
    }
    if k.anchors > 0 {
        out.push(n_of(k.anchors, "anchor", "anchors"));
    }
    if k.tail_messages > 0 {
        out.push(format!(
            "last {}",
            n_of(k.tail_messages, "message", "messages")
        ));
    }
    out
}

/// What left the view, most telling first (`2 of your messages`, `31 tool outputs`, …);
/// empty when nothing did.
pub fn left_items(l: &LeftCounts) -> Vec<String> {
    let mut out = Vec::new();
    if l.user_messages > 0 {
        out.push(format!("{} of your messages", l.user_messages));
    }
    if l.tool_outputs > 0 {
        out.push(n_of(l.tool_outputs, "tool output", "tool outputs"));
    }
    if l.pastes > 0 {
        out.push(n_of(l.pastes, "paste", "pastes"));
    }
    if l.replies > 0 {
        out.push(n_of(l.replies, "reply", "replies"));
    }
    out
}

/// What a compaction's record says left the view, by kind; a record written before the counts
/// were kept says how many tool outputs.
pub fn left_counts(left: &crate::message::LeftView) -> LeftCounts {
    if anything_left(&left.counts) {
        left.counts
    } else {
        LeftCounts {
            tool_outputs: left.tool_outputs,
            ..LeftCounts::default()
        }
    }
}

/// Whether anything left the view.
pub fn anything_left(l: &LeftCounts) -> bool {
    l.user_messages + l.replies + l.tool_outputs + l.pastes > 0
}

/// The whole line without a width (`pith run`, an editor): `compacted 41.2k → 9.8k · kept: your
/// 14 messages, todo, 23 anchors · left: 31 tool outputs, 6 pastes, 12 replies`.
pub fn one_line(before: u64, after: u64, kept: &Kept, left: &LeftCounts) -> String {
    let mut line = String::from("compacted");
    if before > 0 {
        line.push_str(&format!(" {} → {}", tokens(before), tokens(after)));
    }
    let kept = kept_items(kept);
    if !kept.is_empty() {
        line.push_str(&format!(" · kept: {}", kept.join(", ")));
    }
    let left = left_items(left);
    if !left.is_empty() {
        line.push_str(&format!(" · left: {}", left.join(", ")));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_names_what_was_kept_and_what_left() {
        let kept = Kept {
            user_messages: 14,
            todos: 3,
            anchors: 23,
            ..Kept::default()
        };
        let left = LeftCounts {
            user_messages: 0,
            replies: 12,
            tool_outputs: 31,
            pastes: 6,
        };
        assert_eq!(
            one_line(41_200, 9_800, &kept, &left),
            "compacted 41.2k → 9.8k · kept: your 14 messages, todo, 23 anchors · left: 31 tool outputs, 6 pastes, 12 replies"
        );
        let one = LeftCounts {
            user_messages: 1,
            replies: 1,
            ..LeftCounts::default()
        };
        assert_eq!(left_items(&one), ["1 of your messages", "1 reply"]);
        assert!(anything_left(&one));
        assert!(!anything_left(&LeftCounts::default()));
        // nothing known: the figures alone
        assert_eq!(
            one_line(0, 0, &Kept::default(), &LeftCounts::default()),
            "compacted"
        );
    }

    #[test]
    fn only_the_exact_continue_message_is_pith_s() {
        assert!(is_continue(CONTINUE_MESSAGE));
        assert!(!is_continue("Continue"));
    }
}
