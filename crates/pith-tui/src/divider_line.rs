//! The compaction divider's one line (ARCHITECTURE.md §8): `⟳ compacted 41.2k → 9.8k · kept:
//! your 14 messages, todo, 23 anchors · left: 31 tool outputs, 6 pastes, 12 replies · ctrl+l
//! list`, fitted to the width by dropping the least telling pieces whole (never cut mid-item).

use pith_protocol::carried::{Kept, LeftCounts};
use pith_protocol::compaction_note::{anything_left, kept_items, left_items};
use pith_protocol::message::CompactionPart;

use crate::format;
use crate::transcript::CompactionState;

/// One piece of the line: in a `group` (`kept:`, `left:`) its items join with commas; the
/// piece with the highest `drop` goes first when the line is too wide (0: never).
struct Piece {
    group: Option<&'static str>,
    text: String,
    drop: u32,
}

fn piece(text: impl Into<String>, drop: u32) -> Piece {
    Piece {
        group: None,
        text: text.into(),
        drop,
    }
}

/// The pieces joined: ` · ` between pieces, `, ` inside a group (its name before the first).
fn joined(pieces: &[Piece]) -> String {
    let mut out = String::new();
    let mut group = None;
    for (i, p) in pieces.iter().enumerate() {
        if i > 0 {
            if p.group.is_some() && p.group == group {
                out.push_str(", ");
            } else {
                out.push_str(" · ");
                if let Some(g) = p.group {
                    out.push_str(g);
                }
            }
        } else if let Some(g) = p.group {
            out.push_str(g);
        }
        out.push_str(&p.text);
        group = p.group;
    }
    out
}

/// The items of a group: the first drops at `first`, the others at `rest` and up, the last
/// of them first.
fn group(name: &'static str, items: Vec<String>, first: u32, rest: u32) -> Vec<Piece> {
    items
        .into_iter()
        .enumerate()
        .map(|(i, text)| Piece {
            group: Some(name),
            text,
            drop: if i == 0 { first } else { rest + i as u32 },
        })
        .collect()
}

/// What the divider says kept and left: the engine's figures when it sent them, else what the
/// stored record says (a resumed session).
fn figures(state: &CompactionState, c: &CompactionPart) -> (Kept, LeftCounts) {
    let stored_left = c
        .carried
        .left_view
        .as_ref()
        .map(pith_protocol::compaction_note::left_counts)
        .unwrap_or_default();
    let stored_kept = c.carried.kept(0, 0);
    match state {
        CompactionState::Done(s) => (
            if s.kept == Kept::default() {
                stored_kept
            } else {
                s.kept
            },
            if anything_left(&s.left) {
                s.left
            } else {
                stored_left
            },
        ),
        _ => (stored_kept, stored_left),
    }
}

/// The pieces of the divider, in the order they read.
fn pieces(state: &CompactionState, c: &CompactionPart) -> Vec<Piece> {
    let mut out = Vec::new();
    match state {
        CompactionState::Running => out.push(piece("⟳ compacting context…", 0)),
        CompactionState::Unknown => out.push(piece("⟳ compacted", 0)),
        CompactionState::Done(s) if s.before > 0 => out.push(piece(
            format!(
                "⟳ compacted {} → {}",
                format::tokens(s.before),
                format::tokens(s.after)
            ),
            0,
        )),
        CompactionState::Done(_) => out.push(piece("⟳ compacted", 0)),
    }
    let listed = c
        .carried
        .left_view
        .as_ref()
        .is_some_and(|l| !crate::left_view::listed(l).is_empty());
    let mut left_any = false;
    if state != &CompactionState::Running {
        let (kept, left) = figures(state, c);
        left_any = anything_left(&left);
        out.extend(group("kept: ", kept_items(&kept), 30, 50));
        out.extend(group("left: ", left_items(&left), 20, 40));
    }
    out.push(piece(if c.auto { "auto" } else { "/compact" }, 60));
    if c.overflow {
        out.push(piece("overflow", 61));
    }
    if let CompactionState::Done(s) = state {
        if s.cost.input > 0 {
            out.push(piece(
                format!(
                    "summary: read {}, {}% cached, {}",
                    format::tokens(s.cost.input),
                    (s.cost.cache_read * 100)
                        .checked_div(s.cost.input)
                        .unwrap_or(0),
                    format::cost(s.cost.cost)
                ),
                70,
            ));
        }
        if s.cost.background {
            out.push(piece("written in the background", 80));
        }
    }
    let key = crate::keymap::left_key();
    if (listed || left_any) && !key.is_empty() {
        out.push(piece(format!("{key} list"), 10));
    }
    out
}

/// The divider's label within `max` columns: the least telling pieces dropped whole until it
/// fits (the head is cut only when nothing else is left).
pub(crate) fn label(state: &CompactionState, c: &CompactionPart, max: usize) -> String {
    let mut pieces = pieces(state, c);
    loop {
        let line = joined(&pieces);
        if format::width(&line) <= max {
            return line;
        }
        let Some((i, _)) = pieces
            .iter()
            .enumerate()
            .filter(|(_, p)| p.drop > 0)
            .max_by_key(|(_, p)| p.drop)
        else {
            return format::truncate(&line, max);
        };
        pieces.remove(i);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::CompactionStats;

    fn done() -> CompactionState {
        CompactionState::Done(CompactionStats {
            before: 41_200,
            after: 9_800,
            model_calls: 1,
            kept: Kept {
                user_messages: 14,
                todos: 3,
                anchors: 23,
                ..Kept::default()
            },
            left: LeftCounts {
                tool_outputs: 31,
                pastes: 6,
                replies: 12,
                user_messages: 0,
            },
            ..CompactionStats::default()
        })
    }

    fn part() -> CompactionPart {
        CompactionPart {
            auto: true,
            ..CompactionPart::default()
        }
    }

    #[test]
    fn wide_the_whole_line() {
        assert_eq!(
            label(&done(), &part(), 200),
            "⟳ compacted 41.2k → 9.8k · kept: your 14 messages, todo, 23 anchors · left: 31 tool outputs, 6 pastes, 12 replies · auto · ctrl+l list"
        );
    }

    #[test]
    fn narrow_drops_whole_pieces_least_telling_first() {
        let at = |w| label(&done(), &part(), w);
        // the cause goes first, then the kept items from the last, then the left ones
        assert_eq!(
            at(127),
            "⟳ compacted 41.2k → 9.8k · kept: your 14 messages, todo, 23 anchors · left: 31 tool outputs, 6 pastes, 12 replies · ctrl+l list"
        );
        assert_eq!(
            at(90),
            "⟳ compacted 41.2k → 9.8k · kept: your 14 messages · left: 31 tool outputs · ctrl+l list"
        );
        assert_eq!(
            at(74),
            "⟳ compacted 41.2k → 9.8k · left: 31 tool outputs · ctrl+l list"
        );
        // too narrow for anything but the head: the key goes last
        assert_eq!(at(50), "⟳ compacted 41.2k → 9.8k · ctrl+l list");
        assert_eq!(at(30), "⟳ compacted 41.2k → 9.8k");
        for w in [20, 30, 50, 74, 90, 110, 127] {
            assert!(format::width(&at(w)) <= w, "{w}: {}", at(w));
        }
    }

    #[test]
    fn a_stored_compaction_says_what_its_record_holds() {
        let mut c = part();
        c.carried.user_messages = vec![Default::default(); 2];
        c.carried.left_view = Some(pith_protocol::message::LeftView {
            counts: LeftCounts {
                tool_outputs: 4,
                ..LeftCounts::default()
            },
            ..Default::default()
        });
        assert_eq!(
            label(&CompactionState::Unknown, &c, 200),
            "⟳ compacted · kept: your 2 messages · left: 4 tool outputs · auto · ctrl+l list"
        );
        // nothing known: no hint to a list that would be empty
        assert_eq!(
            label(&CompactionState::Unknown, &part(), 200),
            "⟳ compacted · auto"
        );
    }
}
