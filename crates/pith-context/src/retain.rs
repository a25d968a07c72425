//! Which of the user's messages are carried across a compaction, and how (ARCHITECTURE.md §6.4,
//! issue 28): what the user typed is told apart from what they pasted ([`super::paste`]); the
//! words of every message are carried word for word, oldest to newest, before any pasted block
//! gets room; the blocks share what is left, condensed to their edges, the lines that stand out
//! and a note naming the recall id that brings them back whole. Only when even the words do not
//! fit are the oldest cut: those are returned as `uncarried`, for the summary request to carry
//! and for [`missing_sentences`] to check afterwards.

use pith_protocol::message::CarrySource;

use super::paste::{self, Piece};
use super::tokens::Estimator;

/// What the `<user_message>` wrapper around a carried message costs.
const WRAPPER_TOKENS: u64 = 8;

/// The carried user messages, rendered, and what was left out.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Retained {
    /// Oldest first: each message's words in full, its blocks condensed (or left out).
    pub messages: Vec<String>,
    /// The id of each of `messages`' source, by position.
    pub ids: Vec<Option<String>>,
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
    let total: u64 = parsed
        .iter()
        .filter(|p| !p.words.trim().is_empty())
        .map(|p| p.words_tokens)
        .sum();
    if total > budget {
        return shared_out(&parsed, previous_dropped, budget, est);
    }
    // Every message's words whole; the blocks share what is left.
    let mut out = Retained {
        dropped: previous_dropped,
        ..Retained::default()
    };
    let blocks = condense_blocks(&parsed, budget - total, est);
    for (p, b) in parsed.iter().zip(blocks) {
        let text = render(p, b);
        if !text.trim().is_empty() {
            out.messages.push(text);
            out.ids.push(p.id.clone());
        }
    }
    out
}

/// When even the words of every message do not fit `budget`: each message first gets an equal
/// share for its lines that most look like something to keep (an instruction, a name, a number,
/// a code), then what is left goes to the rest, newest message first; left-out lines show as
/// `…`. Blocks get no room (their notes neither). Every message not carried whole is returned in
/// `uncarried`, for the summary request.
fn shared_out(
    parsed: &[Parsed],
    previous_dropped: usize,
    budget: u64,
    est: &Estimator,
) -> Retained {
    let mut msgs: Vec<Msg> = parsed.iter().map(|p| Msg::new(p, est)).collect();
    let n = msgs.iter().filter(|m| !m.lines.is_empty()).count().max(1) as u64;
    let mut left = budget;
    let share = budget / n;
    for m in msgs.iter_mut() {
        m.take(share, &mut left);
    }
    for m in msgs.iter_mut().rev() {
        m.take(u64::MAX, &mut left);
    }
    let mut out = Retained {
        dropped: previous_dropped,
        ..Retained::default()
    };
    for (p, m) in parsed.iter().zip(&msgs) {
        let whole = m.chosen.iter().all(|c| *c);
        if !whole {
            out.uncarried.push(CarrySource {
                id: p.id.clone(),
                text: p.words.clone(),
                pasted: Vec::new(),
            });
        }
        if m.used == 0 {
            out.dropped += usize::from(!m.lines.is_empty());
            continue;
        }
        out.messages.push(m.text());
        out.ids.push(p.id.clone());
    }
    out
}

/// A message's words as sentences (`line`: which line each is on), and which are kept.
struct Msg<'a> {
    lines: Vec<&'a str>,
    line: Vec<usize>,
    cost: Vec<u64>,
    chosen: Vec<bool>,
    used: u64,
}

impl<'a> Msg<'a> {
    fn new(p: &'a Parsed, est: &Estimator) -> Msg<'a> {
        let (line, lines): (Vec<usize>, Vec<&str>) = p
            .words
            .lines()
            .enumerate()
            .flat_map(|(i, l)| sentence_spans(l).into_iter().map(move |s| (i, s)))
            .unzip();
        Msg {
            cost: lines.iter().map(|l| est.text(l) + 1).collect(),
            chosen: vec![false; lines.len()],
            line,
            lines,
            used: 0,
        }
    }

    /// Keeps sentences by worth (most first), within `limit` more tokens for this message and
    /// `left` for all.
    fn take(&mut self, limit: u64, left: &mut u64) {
        let mut order: Vec<usize> = (0..self.lines.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(worth(self.lines[i])));
        let mut spent = 0;
        for i in order {
            let cost = self.cost[i] + if self.used == 0 { WRAPPER_TOKENS } else { 0 };
            if !self.chosen[i] && spent + cost <= limit && cost <= *left {
                self.chosen[i] = true;
                self.used += cost;
                spent += cost;
                *left -= cost;
            }
        }
    }

    /// The kept sentences in their order (on their lines), a run of left-out ones as `…`.
    fn text(&self) -> String {
        let mut text = String::new();
        let mut gap = false;
        for k in 0..self.lines.len() {
            let sep = if k > 0 && self.line[k] != self.line[k - 1] {
                "\n"
            } else {
                " "
            };
            if self.chosen[k] {
                if !text.is_empty() {
                    text.push_str(sep);
                }
                text.push_str(self.lines[k]);
                gap = false;
            } else if !gap {
                if !text.is_empty() {
                    text.push_str(sep);
                }
                text.push('…');
                gap = true;
            }
        }
        text
    }
}

/// The `sentences` (oldest first) most worth keeping ([`worth`]; the newer first among equals)
/// that fit `room` tokens, in their order.
pub fn most_worth<'s>(sentences: &'s [String], room: u64, est: &Estimator) -> Vec<&'s str> {
    let mut order: Vec<usize> = (0..sentences.len()).rev().collect();
    order.sort_by_key(|&i| std::cmp::Reverse(worth(&sentences[i])));
    let mut left = room;
    let mut chosen = vec![false; sentences.len()];
    for i in order {
        let t = est.text(&sentences[i]) + 1;
        if t <= left {
            left -= t;
            chosen[i] = true;
        }
    }
    sentences
        .iter()
        .zip(chosen)
        .filter(|(_, c)| *c)
        .map(|(s, _)| s.as_str())
        .collect()
}

/// How much a line of the user's words looks like something to keep: an instruction word, a
/// name, number or code, a proper noun; short lines first among equals.
fn worth(line: &str) -> u32 {
    const KEEP: &[&str] = &[
        "remember",
        "note",
        "important",
        "never",
        "always",
        "must",
        "don't",
        "do not",
        "keep",
        "use",
        "password",
        "deadline",
        "spell",
        "call",
        "name",
        "code",
        "key",
        "port",
        "region",
        "prefer",
        "avoid",
        "only",
    ];
    let lower = line.to_lowercase();
    let mut w = 0;
    if KEEP.iter().any(|k| lower.contains(k)) {
        w += 4;
    }
    if !paste::names(line).is_empty() || line.chars().any(|c| c.is_ascii_digit()) {
        w += 3;
    }
    let proper = line
        .split_whitespace()
        .skip(1)
        .any(|word| word.starts_with(|c: char| c.is_uppercase()));
    if proper {
        w += 1;
    }
    if line.split_whitespace().count() <= 20 {
        w += 1;
    }
    w
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

/// The sentences of one line, as slices of it (trimmed; blank ones left out): split at `.`, `?`
/// or `!` followed by a space or the line end.
fn sentence_spans(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let chars: Vec<(usize, char)> = line.char_indices().collect();
    for (k, &(i, c)) in chars.iter().enumerate() {
        let at_end = chars.get(k + 1).is_none_or(|(_, n)| n.is_whitespace());
        let end = i + c.len_utf8();
        // `1.` of a numbered list ends nothing
        let marker = || line[start..i].trim().chars().all(|c| c.is_ascii_digit());
        if matches!(c, '.' | '?' | '!') && at_end && !marker() {
            out.push(line[start..end].trim());
            start = end;
        }
    }
    out.push(line[start..].trim());
    out.retain(|s| !s.is_empty());
    out
}

/// The sentences of `words`: split at `.`, `?` or `!` followed by a space or a line end, and at
/// line ends.
pub fn sentences(words: &str) -> Vec<String> {
    words
        .lines()
        .flat_map(sentence_spans)
        .filter(|s| s.chars().filter(|c| c.is_alphanumeric()).count() >= 3)
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
#[path = "retain_tests.rs"]
mod tests;
