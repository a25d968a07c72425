//! What left the view (ARCHITECTURE.md §6.4, "What left the view"): every message or part a
//! compaction takes out of the request gets a recall id and a line in the note pith appends to
//! the summary — the user's messages the carry budget cut (their id), the assistant's replies
//! (their message id), tool calls with their outputs (the call id) and pasted blocks
//! (`paste:<end of the message id>:<n>`). The store keeps them all; `recall` brings any back.
//!
//! The note lists them grouped by kind, newest first, within `Budget::left_view` tokens, and
//! counts what it does not list. Across compactions the note merges the previous one's items:
//! they stay recallable, the counts add up and the newest win the room.

use pith_protocol::carried::{LeftCounts, LeftItem, LeftKind};
use pith_protocol::message::{CarrySource, LeftView, Message, PartKind, Role, ToolState};

use super::paste::{self, Piece, pasted_spans, user_text};
use super::tokens::Estimator;
use super::view::is_compaction_message;

/// The most items a note keeps (listed or not) across compactions: the oldest go first.
pub const ITEMS_MAX: usize = 500;
/// A label is cut to this many characters.
const LABEL_CHARS: usize = 48;
/// The groups of the note, in order, with their headings.
const GROUPS: [(LeftKind, &str); 4] = [
    (LeftKind::UserMessage, "User messages cut from the record"),
    (LeftKind::Reply, "Your replies"),
    (LeftKind::ToolOutput, "Tool outputs"),
    (LeftKind::Paste, "Pasted blocks"),
];

/// The items of `summarised` (the history a summary now stands for, oldest first) that left the
/// view, newest first: replies, tool calls with their outputs, pasted blocks. The user's
/// messages are not among them: whether one left depends on what the carry budget kept
/// ([`cut_messages`]).
pub fn items(summarised: &[Message], est: &Estimator) -> Vec<LeftItem> {
    let mut out = Vec::new();
    for m in summarised {
        match m.role {
            Role::User => out.extend(pastes(m, est)),
            Role::Assistant if !m.summary => out.extend(of_reply(m, est)),
            Role::Assistant => {}
        }
    }
    out.reverse();
    out
}

/// The pasted blocks of a user message, oldest first.
fn pastes(m: &Message, est: &Estimator) -> Vec<LeftItem> {
    let Some(text) = user_text(m).filter(|_| !is_compaction_message(m)) else {
        return Vec::new();
    };
    paste::pieces(&text, &pasted_spans(m))
        .into_iter()
        .filter_map(|p| match p {
            Piece::Block(b) => Some(b),
            Piece::Words(_) => None,
        })
        .enumerate()
        .map(|(k, b)| {
            let body = b.body();
            let first = body.iter().find(|l| !l.trim().is_empty());
            LeftItem {
                id: paste::recall_id(&m.id, k + 1),
                kind: LeftKind::Paste,
                label: label(&format!(
                    "{} lines: {}",
                    body.len(),
                    first.map_or("", |l| l.trim())
                )),
                tokens: est.text(&b.lines.join("\n")),
            }
        })
        .collect()
}

/// An assistant message's tool calls and its text (one reply item, placed after the last of its
/// text parts), oldest first.
fn of_reply(m: &Message, est: &Estimator) -> Vec<LeftItem> {
    let mut out = Vec::new();
    let mut texts: Vec<&str> = Vec::new();
    let mut reply_at = None;
    for p in &m.parts {
        match &p.kind {
            PartKind::Text {
                text,
                synthetic: false,
            } if !text.trim().is_empty() => {
                texts.push(text);
                reply_at = Some(out.len());
            }
            PartKind::Tool {
                call_id,
                tool,
                state,
                ..
            } => {
                let (what, output) = match state {
                    ToolState::Completed { title, output, .. } => (title.as_str(), output.as_str()),
                    ToolState::Error { message, .. } => ("failed", message.as_str()),
                    ToolState::Pending | ToolState::Running { .. } => continue,
                };
                out.push(LeftItem {
                    id: call_id.clone(),
                    kind: LeftKind::ToolOutput,
                    label: label(&format!("{tool}: {what}")),
                    tokens: est.text(output),
                });
            }
            _ => {}
        }
    }
    if let Some(at) = reply_at {
        let text = texts.join("\n");
        out.insert(
            at,
            LeftItem {
                id: m.id.clone(),
                kind: LeftKind::Reply,
                label: label(&text),
                tokens: est.text(&text),
            },
        );
    }
    out
}

/// The user's messages of the history being summarised that the carry budget did not carry
/// whole (`uncarried`, oldest first, as `retain` returned them), newest first. Words an earlier
/// compaction carried (no id) have no message to name here.
pub fn cut_messages(uncarried: &[CarrySource], est: &Estimator) -> Vec<LeftItem> {
    uncarried
        .iter()
        .rev()
        .filter_map(|s| {
            Some(LeftItem {
                id: s.id.clone()?,
                kind: LeftKind::UserMessage,
                label: label(&s.text),
                tokens: est.text(&s.text),
            })
        })
        .collect()
}

/// One line naming an item: its text's first words, cut to [`LABEL_CHARS`].
fn label(text: &str) -> String {
    let one: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one.chars().count() <= LABEL_CHARS {
        return one;
    }
    let mut s: String = one.chars().take(LABEL_CHARS - 1).collect();
    s.push('…');
    s
}

/// How many items of each kind `items` holds.
pub fn counts(items: &[LeftItem]) -> LeftCounts {
    let mut c = LeftCounts::default();
    for i in items {
        *count_of(&mut c, i.kind) += 1;
    }
    c
}

fn count_of(c: &mut LeftCounts, kind: LeftKind) -> &mut usize {
    match kind {
        LeftKind::UserMessage => &mut c.user_messages,
        LeftKind::Reply => &mut c.replies,
        LeftKind::ToolOutput => &mut c.tool_outputs,
        LeftKind::Paste => &mut c.pastes,
    }
}

fn sum(a: LeftCounts, b: LeftCounts) -> LeftCounts {
    LeftCounts {
        user_messages: a.user_messages + b.user_messages,
        replies: a.replies + b.replies,
        tool_outputs: a.tool_outputs + b.tool_outputs,
        pastes: a.pastes + b.pastes,
    }
}

fn total(c: &LeftCounts) -> usize {
    c.user_messages + c.replies + c.tool_outputs + c.pastes
}

/// The items and counts of a note an earlier compaction wrote: an older one knew only its
/// newest tool calls (`recallable`) and how many outputs left.
fn previous(prev: &LeftView) -> (Vec<LeftItem>, LeftCounts) {
    if !prev.items.is_empty() || total(&prev.counts) > 0 {
        return (prev.items.clone(), prev.counts);
    }
    let items = prev
        .recallable
        .iter()
        .rev()
        .map(|(id, tool, title)| LeftItem {
            id: id.clone(),
            kind: LeftKind::ToolOutput,
            label: label(&format!("{tool}: {title}")),
            tokens: 0,
        })
        .collect();
    let counts = LeftCounts {
        tool_outputs: prev.tool_outputs,
        ..LeftCounts::default()
    };
    (items, counts)
}

/// The note of a compaction whose summary stands for `messages` more messages, from what left
/// in it (`new`, newest first) and the previous compaction's note: the previous items after the
/// new ones (an id listed again keeps its newer place), the counts added up, as many of the
/// newest listed as fit `budget` tokens. `None` when nothing ever left.
pub fn merge(
    new: Vec<LeftItem>,
    messages: usize,
    prev: Option<&LeftView>,
    budget: u64,
    est: &Estimator,
) -> Option<LeftView> {
    let (old, old_counts) = prev.map(previous).unwrap_or_default();
    let counts = sum(counts(&new), old_counts);
    if total(&counts) == 0 {
        return None;
    }
    let mut items = new;
    for item in old {
        if !items.iter().any(|i| i.id == item.id) {
            items.push(item);
        }
    }
    items.truncate(ITEMS_MAX);
    let mut l = LeftView {
        messages: messages + prev.map_or(0, |p| p.messages),
        tool_outputs: counts.tool_outputs,
        counts,
        items,
        ..LeftView::default()
    };
    l.listed = fitting(&l, budget, est);
    Some(l)
}

/// Adds the user's messages the carry budget cut (newest first) to a note made by [`merge`],
/// as the newest items, and lists again what fits `budget`.
pub fn with_cut_messages(
    l: Option<LeftView>,
    cut: Vec<LeftItem>,
    budget: u64,
    est: &Estimator,
) -> Option<LeftView> {
    if cut.is_empty() {
        return l;
    }
    let mut l = l.unwrap_or_default();
    l.counts.user_messages += cut.len();
    l.items.retain(|i| !cut.iter().any(|c| c.id == i.id));
    l.items.splice(0..0, cut);
    l.items.truncate(ITEMS_MAX);
    l.listed = fitting(&l, budget, est);
    Some(l)
}

/// How many of the newest items the note can list within `budget` tokens.
fn fitting(l: &LeftView, budget: u64, est: &Estimator) -> usize {
    // The note grows with each item listed: find the most that fit (binary search).
    let (mut lo, mut hi) = (0, l.items.len());
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if est.text(&render_listing(l, mid)) <= budget {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    lo
}

/// The note: what left, in counts, and the newest items by kind with their recall ids.
pub fn render(l: &LeftView) -> String {
    render_listing(l, l.listed.min(l.items.len()))
}

/// How many characters of each label a note listing `listed` items shows: a small note
/// (a small window) spends its room on ids.
fn label_width(listed: usize) -> usize {
    match listed {
        0..=4 => 0,
        5..=8 => LABEL_CHARS / 2,
        _ => LABEL_CHARS,
    }
}

/// `label` cut to `width` characters.
fn shorter(label: &str, width: usize) -> String {
    if label.chars().count() <= width {
        return label.to_string();
    }
    let mut s: String = label.chars().take(width.saturating_sub(1)).collect();
    if width > 0 {
        s.push('…');
    }
    s
}

/// The order in which items are listed: the newest of each kind first (so every kind that left
/// has an id in even the smallest note), then the rest, newest first.
pub fn listing_order(items: &[LeftItem]) -> Vec<usize> {
    let mut first: Vec<usize> = GROUPS
        .iter()
        .filter_map(|(kind, _)| items.iter().position(|i| i.kind == *kind))
        .collect();
    first.sort_unstable();
    let rest = (0..items.len()).filter(|i| !first.contains(i));
    first.iter().copied().chain(rest).collect()
}

/// The items the note lists (see [`LeftView::listed`]), in the order of `items`.
pub fn listed(l: &LeftView) -> Vec<&LeftItem> {
    let mut shown = listing_order(&l.items);
    shown.truncate(l.listed);
    shown.sort_unstable();
    shown.into_iter().map(|i| &l.items[i]).collect()
}

fn render_listing(l: &LeftView, listed: usize) -> String {
    let c = &l.counts;
    let mut what = Vec::new();
    for (n, one, many) in [
        (c.user_messages, "user message", "user messages"),
        (c.replies, "reply of yours", "replies of yours"),
        (c.tool_outputs, "tool output", "tool outputs"),
        (c.pastes, "pasted block", "pasted blocks"),
    ] {
        if n > 0 {
            what.push(format!("{n} {}", if n == 1 { one } else { many }));
        }
    }
    let mut s = format!(
        "\n## Left the view\n{} left; `recall` with an id brings one back exactly.",
        what.join(", ")
    );
    let width = label_width(listed);
    let mut order = listing_order(&l.items);
    order.truncate(listed);
    order.sort_unstable();
    for (kind, heading) in GROUPS {
        let of_kind: Vec<String> = order
            .iter()
            .map(|&k| &l.items[k])
            .filter(|i| i.kind == kind)
            .map(|i| match shorter(&i.label, width) {
                l if l.is_empty() => format!("`{}`", i.id),
                l => format!("`{}` {l}", i.id),
            })
            .collect();
        if !of_kind.is_empty() {
            s.push_str(&format!("\n- {heading}: {}", of_kind.join("; ")));
        }
    }
    let more = total(c).saturating_sub(listed);
    if more > 0 {
        s.push_str(&format!("\n({more} older not listed)"));
    }
    s
}

#[cfg(test)]
#[path = "left_view_tests.rs"]
mod tests;
