//! Which of the user's messages are carried across a compaction, and how (ARCHITECTURE.md §6.4,
//! issue 28): what the user typed is told apart from what they pasted ([`super::paste`]); the
//! words of every message are carried word for word, oldest to newest, before any pasted block
//! gets room; the blocks share what is left, condensed to their edges, the lines that stand out
//! and a note naming the recall id that brings them back whole. Only when even the words do not
//! fit are the oldest cut: those are returned as `uncarried`, for the summary request to carry
//! and for [`missing_sentences`] to check afterwards.

use crate::message::CarrySource;

use super::chunks::fit_text;
use super::paste::{self, Piece};
use super::tokens::Estimator;

/// What the `<user_message>` wrapper around a carried message costs.
const WRAPPER_TOKENS: u64 = 8;
/// The least room worth a cut message (with its marker).
const MIN_CUT_TOKENS: u64 = 40;

/// The carried user messages, rendered, and what was left out.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Retained {
    /// Oldest first: each message's words in full, its blocks condensed (or left out).
    pub messages: Vec<String>,
    /// Messages left out entirely (with the `previous_dropped` of earlier compactions).
    pub dropped: usize,
    /// The words that are not carried in full (of messages cut or left out), oldest first, with
    /// the id of their message (`None` for what an earlier compaction carried).
    pub uncarried: Vec<CarrySource>,
}

struct Parsed {
    id: Option<String>,
    pieces: Vec<Piece>,
    words: String,
    words_tokens: u64,
}

fn parse(s: &CarrySource, est: &Estimator) -> Parsed {
    let pieces = paste::pieces(&s.text, &s.pasted);
    let words: Vec<&str> = pieces
        .iter()
        .filter_map(|p| match p {
            Piece::Words(w) => Some(w.as_str()),
            Piece::Block(_) => None,
        })
        .collect();
    let words = words.join("\n");
    let words_tokens = est.text(&words) + WRAPPER_TOKENS;
    Parsed {
        id: s.id.clone(),
        pieces,
        words,
        words_tokens,
    }
}

/// Chooses and renders the user messages to carry within `budget` tokens (see the module
/// documentation). `sources` are oldest first: what an earlier compaction carried (already
/// condensed, no id), then the messages of the history being compacted (with their ids).
pub fn retain(
    sources: &[CarrySource],
    previous_dropped: usize,
    budget: u64,
    est: &Estimator,
) -> Retained {
    let parsed: Vec<Parsed> = sources.iter().map(|s| parse(s, est)).collect();
    // Words first, newest to oldest: a message's words are kept whole, the first that does not
    // fit is cut, older ones are left out.
    let mut left = budget;
    let mut first_whole = parsed.len();
    for (i, p) in parsed.iter().enumerate().rev() {
        if p.words.trim().is_empty() || p.words_tokens <= left {
            left = left.saturating_sub(p.words_tokens);
            first_whole = i;
        } else {
            break;
        }
    }
    let mut out = Retained {
        dropped: previous_dropped,
        ..Retained::default()
    };
    let mut head: Option<String> = None;
    if first_whole > 0 {
        let cut_one = first_whole - 1;
        out.uncarried = parsed[..first_whole]
            .iter()
            .filter(|p| !p.words.trim().is_empty())
            .map(|p| CarrySource {
                id: p.id.clone(),
                text: p.words.clone(),
                pasted: Vec::new(),
            })
            .collect();
        if left >= MIN_CUT_TOKENS {
            head = Some(fit_text(&parsed[cut_one].words, left - 20, est));
            left = 0;
            out.dropped += cut_one;
        } else {
            out.dropped += first_whole;
        }
    }
    let kept = &parsed[first_whole..];
    let blocks = condense_blocks(kept, left, est);
    out.messages.extend(head);
    for (p, b) in kept.iter().zip(blocks) {
        out.messages.push(render(p, b));
    }
    out.messages.retain(|m| !m.trim().is_empty());
    out
}

/// The condensed form of every block of `kept` (per message, in order; `None`: left out), in
/// `room` tokens: first a note for each (newest first), then the lines, shared out oldest
/// first so that what an older block does not use goes to the newer ones.
fn condense_blocks(kept: &[Parsed], room: u64, est: &Estimator) -> Vec<Vec<Option<String>>> {
    struct Slot<'a> {
        message: usize,
        index: usize,
        block: &'a paste::Block,
        recall: Option<String>,
        names: std::rc::Rc<Vec<String>>,
        note: u64,
    }
    let mut out: Vec<Vec<Option<String>>> = Vec::with_capacity(kept.len());
    let mut slots = Vec::new();
    for (m, p) in kept.iter().enumerate() {
        let names = std::rc::Rc::new(paste::names(&p.words));
        out.push(Vec::new());
        for piece in &p.pieces {
            if let Piece::Block(block) = piece {
                let index = out[m].len();
                out[m].push(None);
                let recall = p.id.as_deref().map(|id| paste::recall_id(id, index + 1));
                let note = est.text(&paste::note(block, 0, recall.as_deref())) + 1;
                slots.push(Slot {
                    message: m,
                    index,
                    block,
                    recall,
                    names: names.clone(),
                    note,
                });
            }
        }
    }
    let mut left = room;
    let mut noted = vec![false; slots.len()];
    for (k, s) in slots.iter().enumerate().rev() {
        if s.note <= left {
            left -= s.note;
            noted[k] = true;
        }
    }
    let mut remaining = noted.iter().filter(|n| **n).count() as u64;
    for (s, _) in slots.iter().zip(&noted).filter(|(_, n)| **n) {
        let share = s.note + left / remaining.max(1);
        let text = paste::condense(s.block, &s.names, s.recall.as_deref(), share, est);
        let used = text.as_deref().map_or(0, |t| est.text(t) + 1);
        left = (left + s.note).saturating_sub(used);
        remaining -= 1;
        out[s.message][s.index] = text;
    }
    out
}

/// A carried message: its pieces in order, each block as condensed (left out when `None`).
fn render(p: &Parsed, blocks: Vec<Option<String>>) -> String {
    let mut blocks = blocks.into_iter();
    let mut out: Vec<String> = Vec::new();
    for piece in &p.pieces {
        match piece {
            Piece::Words(w) => out.push(w.clone()),
            Piece::Block(_) => out.extend(blocks.next().flatten()),
        }
    }
    out.join("\n")
}

/// The sentences of the user's `words` that neither `carried` holds word for word nor
/// `summary` covers: a sentence is covered when the summary holds it, or every name, number and
/// code in it (and, for a sentence with none, most of its longer words).
pub fn missing_sentences(words: &[&str], carried: &str, summary: &str) -> Vec<String> {
    let norm = |s: &str| {
        s.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_lowercase()
    };
    let carried = norm(carried);
    let summary_n = norm(summary);
    let mut out = Vec::new();
    for w in words {
        for s in sentences(w) {
            let n = norm(&s);
            if carried.contains(&n) || summary_n.contains(&n) || covered(&s, &summary_n) {
                continue;
            }
            out.push(s);
        }
    }
    out
}

/// Whether the (normalised) `summary` covers sentence `s` without quoting it.
fn covered(s: &str, summary: &str) -> bool {
    let tokens: Vec<String> = s
        .split(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | '(' | ')' | '"' | '\''))
        .map(|w| {
            w.trim_matches(|c: char| matches!(c, '.' | ':' | '`' | '!' | '?'))
                .to_string()
        })
        .filter(|w| !w.is_empty())
        .collect();
    let key: Vec<&String> = tokens
        .iter()
        .filter(|w| {
            w.chars().any(|c| c.is_ascii_digit())
                || w.contains(['_', '-', '/', '.'])
                || w.len() >= 2 && w.chars().all(|c| c.is_ascii_uppercase())
        })
        .collect();
    if !key.is_empty() {
        return key.iter().all(|k| summary.contains(&k.to_lowercase()));
    }
    let long: Vec<&String> = tokens.iter().filter(|w| w.chars().count() >= 5).collect();
    let found = long
        .iter()
        .filter(|w| summary.contains(&w.to_lowercase()))
        .count();
    long.is_empty() || found * 10 >= long.len() * 7
}

/// The sentences of `words`: split at `.`, `?` or `!` followed by a space or a line end, and at
/// line ends.
pub fn sentences(words: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in words.lines() {
        let mut start = 0;
        let chars: Vec<(usize, char)> = line.char_indices().collect();
        for (k, &(i, c)) in chars.iter().enumerate() {
            let at_end = chars.get(k + 1).is_none_or(|(_, n)| n.is_whitespace());
            if matches!(c, '.' | '?' | '!') && at_end {
                let end = i + c.len_utf8();
                out.push(line[start..end].trim().to_string());
                start = end;
            }
        }
        out.push(line[start..].trim().to_string());
    }
    out.retain(|s| s.chars().filter(|c| c.is_alphanumeric()).count() >= 3);
    out
}

#[cfg(test)]
#[path = "retain_tests.rs"]
mod tests;
