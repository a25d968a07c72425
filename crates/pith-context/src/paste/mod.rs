//! What the user typed, told apart from what they pasted (ARCHITECTURE.md §6.4, issue 28).
//!
//! A user message is split into the user's own **words** and **pasted blocks**: fenced code,
//! and runs of lines shaped like machine output — build and test logs, tracebacks and stack
//! traces, diffs, JSON, code. A line is read on its own: a sentence (function words such as
//! "the", "is", "for"; letters and spaces; sentence punctuation) is the user's, even in the
//! middle of a log; indentation, timestamps, level tags, diff markers, paths and symbols make a
//! line machine output. A run of non-sentence lines with at least [`MIN_BLOCK_LINES`] machine
//! lines is a block; lines at its edges that are neither (a short "Fix this:") stay words.
//!
//! A carried block is [`condense`]d to its first and last lines, the lines that stand out
//! (errors, failures, sentences, names the user's words mention) and a note naming the id
//! (`paste:<end of the message id>:<n>`) with which `recall` brings the whole block back. The
//! split is a pure function of the text, so the recall finds the same block again in the stored
//! message; a condensed block is fenced and ends with its note, so a later compaction knows it.

mod classify;

use super::tokens::Estimator;
use super::view::is_compaction_message;
use classify::{Line, classify, classify_all, prose_shaped};
use pith_protocol::message::{Message, PartKind, Role, Span};

/// A run needs this many machine-shaped lines to be a pasted block.
pub const MIN_BLOCK_LINES: usize = 3;
/// How a carried block's note begins (a condensed block is recognised by it when carried again).
pub const NOTE_START: &str = "[pasted ";
/// A line of a condensed block is cut to this many characters.
const LINE_CHARS: usize = 200;
/// Machine lines this long together are a block even when fewer than [`MIN_BLOCK_LINES`]
/// (minified JSON, one long log line).
const LONG_LINE_CHARS: usize = 400;
/// A recall id names a message by this many of its last characters.
pub const ID_CHARS: usize = 10;

/// A piece of a user message, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// The user's own words (possibly several lines).
    Words(String),
    /// A pasted block.
    Block(Block),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    pub lines: Vec<String>,
    pub kind: Kind,
}

/// What a block looks like, for the note.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Code,
    Traceback,
    Diff,
    Log,
    /// A block condensed by an earlier compaction (it ends with its note).
    Condensed,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Code => "code",
            Kind::Traceback => "traceback",
            Kind::Diff => "diff",
            Kind::Log => "output",
            Kind::Condensed => "block",
        }
    }
}

fn is_fence(l: &str) -> bool {
    l.trim_start().starts_with("```")
}

fn is_note(l: &str) -> bool {
    l.starts_with(NOTE_START) && l.trim_end().ends_with(']')
}

/// What a run of lines (a fenced block with its fences, or an unfenced run) looks like.
fn kind_of(lines: &[&str]) -> Kind {
    let any = |p: &str| lines.iter().any(|l| l.trim_start().starts_with(p));
    let inner = lines.len() >= 2 && is_fence(lines[0]) && is_fence(lines[lines.len() - 1]);
    if inner && is_note(lines[lines.len() - 2]) || lines.len() == 1 && is_note(lines[0]) {
        Kind::Condensed
    } else if any("diff --git") || any("@@ ") || any("+++ ") {
        Kind::Diff
    } else if any("Traceback") || any("at ") || any("File \"") || any("stack backtrace") {
        Kind::Traceback
    } else if inner {
        Kind::Code
    } else {
        Kind::Log
    }
}

/// Splits `text` into the user's words and pasted blocks, in order. Every line is in exactly
/// one piece.
pub fn split(text: &str) -> Vec<Piece> {
    let lines: Vec<&str> = text.lines().collect();
    let kinds = classify_all(&lines);
    let mut out = Pieces::default();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i];
        if is_fence(l) {
            // A fenced block, whole (to the end of the text when it is never closed).
            let end = (i + 1..lines.len())
                .find(|&j| is_fence(lines[j]))
                .unwrap_or(lines.len() - 1);
            let fenced = &lines[i..=end];
            if end - i > MIN_BLOCK_LINES || kind_of(fenced) == Kind::Condensed {
                out.block(fenced);
            } else {
                out.words(fenced);
            }
            i = end + 1;
            continue;
        }
        if is_note(l) {
            out.block(&lines[i..=i]);
            i += 1;
            continue;
        }
        if kinds[i] == Line::Sentence {
            out.words(&lines[i..=i]);
            i += 1;
            continue;
        }
        let mut j = i;
        while j < lines.len()
            && !is_fence(lines[j])
            && !is_note(lines[j])
            && kinds[j] != Line::Sentence
        {
            j += 1;
        }
        // A sentence typed into the middle of a paste splits it in two runs: each is judged
        // with the machine lines of the run across that single sentence.
        let own = machine_lines(&kinds[i..j]);
        let before = i
            .checked_sub(1)
            .filter(|&s| kinds[s] == Line::Sentence)
            .map_or(0, |s| machine_lines(run_before(&lines[..s], &kinds[..s])));
        let after = if j < lines.len() && kinds[j] == Line::Sentence {
            machine_lines(run_after(&lines[j + 1..], &kinds[j + 1..]))
        } else {
            0
        };
        let joined = own > 0 && own + before.max(after) >= MIN_BLOCK_LINES;
        out.run_part(&lines[i..j], &kinds[i..j], joined);
        i = j;
    }
    out.flush();
    out.pieces
}

fn machine_lines(kinds: &[Line]) -> usize {
    kinds.iter().filter(|k| **k == Line::Machine).count()
}

/// The kinds of the run of non-sentence lines that ends `lines`.
fn run_before<'k>(lines: &[&str], kinds: &'k [Line]) -> &'k [Line] {
    let start = (0..kinds.len())
        .rev()
        .find(|&k| kinds[k] == Line::Sentence || is_fence(lines[k]))
        .map_or(0, |k| k + 1);
    &kinds[start..]
}

/// The kinds of the run of non-sentence lines that starts `lines`.
fn run_after<'k>(lines: &[&str], kinds: &'k [Line]) -> &'k [Line] {
    let end = (0..kinds.len())
        .find(|&k| kinds[k] == Line::Sentence || is_fence(lines[k]))
        .unwrap_or(kinds.len());
    &kinds[..end]
}

/// Pieces being built by [`split`].
#[derive(Default)]
struct Pieces<'a> {
    pieces: Vec<Piece>,
    words: Vec<&'a str>,
}

impl<'a> Pieces<'a> {
    fn words(&mut self, lines: &[&'a str]) {
        self.words.extend_from_slice(lines);
    }

    fn flush(&mut self) {
        if self.words.iter().all(|w| w.trim().is_empty()) {
            // Blank lines between blocks belong to no one: keep them with the words around.
            if let Some(Piece::Words(prev)) = self.pieces.last_mut() {
                for w in self.words.drain(..) {
                    prev.push('\n');
                    prev.push_str(w);
                }
            }
            self.words.clear();
            return;
        }
        self.pieces.push(Piece::Words(self.words.join("\n")));
        self.words.clear();
    }

    fn block(&mut self, lines: &[&str]) {
        self.flush();
        self.pieces.push(Piece::Block(Block {
            lines: lines.iter().map(|l| l.to_string()).collect(),
            kind: kind_of(lines),
        }));
    }

    /// A run of lines that are not sentences: a block when enough of it is machine output (or
    /// one long machine line, such as minified JSON, or any machine line when `part_of_block`:
    /// the run is part of a larger block split by a line of the user's); the lines at its edges
    /// that are neither stay words, and so does a note-like line between machine lines (see
    /// [`prose_shaped`]), which splits the run.
    fn run_part(&mut self, run: &[&'a str], kinds: &[Line], part_of_block: bool) {
        let machine_at = |from: usize, step: isize| -> bool {
            let mut i = from as isize + step;
            while i >= 0 && (i as usize) < run.len() {
                match kinds[i as usize] {
                    Line::Blank => i += step,
                    k => return k == Line::Machine,
                }
            }
            false
        };
        let island = (1..run.len().saturating_sub(1)).find(|&i| {
            kinds[i] == Line::Neutral
                && prose_shaped(run[i])
                && machine_at(i, -1)
                && machine_at(i, 1)
        });
        let machine: Vec<&&str> = run
            .iter()
            .zip(kinds)
            .filter(|(_, k)| **k == Line::Machine)
            .map(|(l, _)| l)
            .collect();
        let long = machine.iter().map(|l| l.len()).sum::<usize>() >= LONG_LINE_CHARS;
        let block =
            machine.len() >= MIN_BLOCK_LINES || long || part_of_block && !machine.is_empty();
        if let Some(i) = island.filter(|_| block) {
            self.run_part(&run[..i], &kinds[..i], true);
            self.words(&run[i..=i]);
            self.run_part(&run[i + 1..], &kinds[i + 1..], true);
            return;
        }
        if !block {
            self.words(run);
            return;
        }
        let edge = |k: usize| kinds[k] != Line::Machine;
        let mut a = 0;
        while a < run.len() && edge(a) {
            a += 1;
        }
        let mut b = run.len();
        while b > a && edge(b - 1) {
            b -= 1;
        }
        self.words(&run[..a]);
        self.block(&run[a..b]);
        self.words(&run[b..]);
    }
}

/// Splits `text` as [`split`] does, except that each of the `pasted` byte spans (what the front
/// end knew the user pasted) is a block whatever its shape; the text around them is split by
/// shape. Spans out of bounds, off a character boundary or overlapping are ignored.
pub fn pieces(text: &str, pasted: &[Span]) -> Vec<Piece> {
    let mut spans: Vec<Span> = pasted
        .iter()
        .copied()
        .filter(|&(a, b)| a < b && b <= text.len())
        .filter(|&(a, b)| text.is_char_boundary(a) && text.is_char_boundary(b))
        .collect();
    if spans.is_empty() {
        return split(text);
    }
    spans.sort_unstable();
    let mut out: Vec<Piece> = Vec::new();
    let mut push = |piece: Piece| push_piece(&mut out, piece);
    let mut at = 0;
    for (a, b) in spans {
        if a < at {
            continue; // overlaps the span before
        }
        split(&text[at..a]).into_iter().for_each(&mut push);
        let lines: Vec<&str> = text[a..b].trim_matches('\n').lines().collect();
        if !lines.is_empty() {
            push(Piece::Block(Block {
                kind: kind_of(&lines),
                lines: lines.iter().map(|l| l.to_string()).collect(),
            }));
        }
        at = b;
    }
    split(&text[at..]).into_iter().for_each(&mut push);
    out
}

/// Adds `piece` to `out`: words next to words become one piece; blank words are dropped.
fn push_piece(out: &mut Vec<Piece>, piece: Piece) {
    match piece {
        Piece::Words(w) if w.trim().is_empty() => {}
        Piece::Words(w) => {
            let w = w.trim_matches('\n').trim_end_matches([' ', '\t']);
            match out.last_mut() {
                Some(Piece::Words(prev)) => {
                    prev.push('\n');
                    prev.push_str(w);
                }
                _ => out.push(Piece::Words(w.to_string())),
            }
        }
        block => out.push(block),
    }
}

/// The user's own words of `text` (with its `pasted` spans), without the pasted blocks.
pub fn words_of(text: &str, pasted: &[Span]) -> String {
    pieces(text, pasted)
        .into_iter()
        .filter_map(|p| match p {
            Piece::Words(w) => Some(w),
            Piece::Block(_) => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The `n`th (1-based) pasted block of `text` (with its `pasted` spans), as it was pasted.
pub fn block(text: &str, pasted: &[Span], n: usize) -> Option<String> {
    pieces(text, pasted)
        .into_iter()
        .filter_map(|p| match p {
            Piece::Block(b) => Some(b.lines.join("\n")),
            Piece::Words(_) => None,
        })
        .nth(n.checked_sub(1)?)
}

/// The recall id of the `n`th block of message `message_id`: the message id's last
/// [`ID_CHARS`] characters (a ULID's random end: unique within a session) and `n`.
pub fn recall_id(message_id: &str, n: usize) -> String {
    let skip = message_id.chars().count().saturating_sub(ID_CHARS);
    let short: String = message_id.chars().skip(skip).collect();
    format!("paste:{short}:{n}")
}

/// `paste:<end of the message id>:<n>` → (end of the message id, n).
pub fn parse_recall_id(id: &str) -> Option<(&str, usize)> {
    let rest = id.strip_prefix("paste:")?;
    let (message, n) = rest.rsplit_once(':')?;
    (!message.is_empty()).then_some(())?;
    Some((message, n.parse().ok()?))
}

/// Names in the user's words that a pasted line may mention: tokens with a digit, an
/// underscore, a hyphen inside or a dot inside.
pub fn names(words: &str) -> Vec<String> {
    let mut out: Vec<String> = words
        .split(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | '(' | ')' | '"' | '\''))
        .map(|w| w.trim_matches(|c: char| matches!(c, '.' | ':' | '`' | '!' | '?')))
        .filter(|w| w.len() >= 3)
        .filter(|w| {
            w.chars().any(|c| c.is_ascii_digit())
                || w.contains('_')
                || w.trim_matches('-').contains('-')
                || w.trim_matches('.').contains('.')
        })
        .map(str::to_string)
        .collect();
    out.sort();
    out.dedup();
    out
}

/// A line that reports an error or a failure.
fn is_failure(line: &str) -> bool {
    const MARKS: &[&str] = &[
        "error",
        "fail",
        "panic",
        "exception",
        "fatal",
        "denied",
        "not found",
        "cannot",
        "unable",
        "refused",
        "timeout",
        "timed out",
        "abort",
        "assert",
    ];
    let lower = line.to_lowercase();
    MARKS.iter().any(|m| lower.contains(m))
}

/// A line worth showing in a condensed block: an error or failure, a sentence, or a name the
/// user's words mention.
fn stands_out(line: &str, names: &[String]) -> bool {
    is_failure(line)
        || classify(line) == Line::Sentence
        || names.iter().any(|n| line.contains(n.as_str()))
}

fn cut_line(l: &str) -> String {
    if l.chars().count() <= LINE_CHARS {
        l.to_string()
    } else {
        let mut s: String = l.chars().take(LINE_CHARS).collect();
        s.push('…');
        s
    }
}

impl Block {
    /// The pasted lines themselves: without fences, and without the note of a condensed block.
    pub fn body(&self) -> &[String] {
        let mut b: &[String] = &self.lines;
        if b.len() >= 2 && is_fence(&b[0]) && is_fence(&b[b.len() - 1]) {
            b = &b[1..b.len() - 1];
        }
        if self.kind == Kind::Condensed {
            b = &b[..b.len().saturating_sub(1)];
        }
        b
    }

    /// The note of a block condensed before (it names the recall id and the original size).
    fn old_note(&self) -> Option<&str> {
        let body_end = self.lines.len() - usize::from(self.lines.len() >= 2);
        (self.kind == Kind::Condensed).then(|| self.lines[body_end.saturating_sub(1)].as_str())
    }
}

/// The note that ends a condensed block: what it was, how many lines it had, how many are
/// shown, and the recall id.
pub fn note(block: &Block, shown: usize, recall: Option<&str>) -> String {
    if let Some(old) = block.old_note() {
        // Carried again: the size and recall id of the original, the lines shown now.
        return match old.find(" shown") {
            Some(at) => {
                let start = old[..at].rfind(", ").map_or(at, |i| i + 2);
                format!("{}{shown}{}", &old[..start], &old[at..])
            }
            None => old.to_string(),
        };
    }
    let how = match recall {
        Some(id) => format!("; recall \"{id}\""),
        None => String::new(),
    };
    format!(
        "{NOTE_START}{}: {} lines, {shown} shown{how}]",
        block.kind.name(),
        block.body().len()
    )
}

/// `block` in at most `budget` tokens: as pasted when it fits whole and has no recall id to keep;
/// else, fenced, as many as fit of its first and last lines and the lines that stand out
/// (errors, sentences, `names` from the user's words), in their order with `…` where lines were
/// left out, and its note (which keeps the recall id for later compactions); just the note when
/// no line fits; `None` when not even the note does.
pub fn condense(
    block: &Block,
    names: &[String],
    recall: Option<&str>,
    budget: u64,
    est: &Estimator,
) -> Option<String> {
    let lines = block.body();
    if recall.is_none()
        && block.kind != Kind::Condensed
        && est.text(&block.lines.join("\n")) <= budget
    {
        return Some(block.lines.join("\n"));
    }
    let n = lines.len();
    // Errors and failures first (what a small share is best spent on), then the edges, then
    // sentences and the names the user mentioned, then the lines next to the edges.
    let mut order: Vec<usize> = (0..n).filter(|&i| is_failure(&lines[i])).collect();
    order.extend([0, n.saturating_sub(1)]);
    order.extend((0..n).filter(|&i| stands_out(&lines[i], names)));
    order.extend([1, n.saturating_sub(2)]);
    order.extend(0..n);
    // What each line costs, with room for a `…` before it; the note and fences cost the rest.
    let fixed = est.text(&note(block, n, recall)) + 4;
    let mut left = budget.checked_sub(fixed)?;
    let mut chosen = vec![false; n];
    for i in order {
        if i >= n || chosen[i] || lines[i].trim() == "…" {
            continue;
        }
        let cost = est.text(&cut_line(&lines[i])) + 2;
        if cost <= left {
            chosen[i] = true;
            left -= cost;
        }
    }
    let shown = chosen.iter().filter(|c| **c).count();
    if shown == 0 {
        return Some(note(block, 0, recall));
    }
    let mut out = vec!["```".to_string()];
    let mut gap = false;
    for (i, l) in lines.iter().enumerate() {
        if chosen[i] {
            out.push(cut_line(l));
            gap = false;
        } else if !gap {
            out.push("…".to_string());
            gap = true;
        }
    }
    out.push(note(block, shown, recall));
    out.push("```".to_string());
    Some(out.join("\n"))
}

/// The text the user typed in a message: its non-synthetic text parts (compaction requests and
/// pith's own messages have none).
pub fn user_text(m: &Message) -> Option<String> {
    if m.role != Role::User || is_compaction_message(m) {
        return None;
    }
    let texts: Vec<&str> = m
        .parts
        .iter()
        .filter_map(|p| match &p.kind {
            PartKind::Text {
                text,
                synthetic: false,
            } if !text.trim().is_empty() => Some(text.as_str()),
            _ => None,
        })
        .collect();
    (!texts.is_empty()).then(|| texts.join("\n"))
}

/// The spans of a user message's text that the user pasted (`PartKind::Pasted`): offsets into
/// [`user_text`], whose first part is the typed text they were recorded against.
pub fn pasted_spans(m: &Message) -> Vec<Span> {
    m.parts
        .iter()
        .find_map(|p| match &p.kind {
            PartKind::Pasted { spans } => Some(spans.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests;
