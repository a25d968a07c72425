//! What the user typed, told apart from what they pasted (ARCHITECTURE.md §6.5).
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
//! (`paste:<message id>:<n>`) with which `recall` brings the whole block back. The split is a
//! pure function of the text, so the recall finds the same block again.

use super::tokens::Estimator;

/// A run needs this many machine-shaped lines to be a pasted block.
pub const MIN_BLOCK_LINES: usize = 3;
/// How a carried block's note begins (a condensed block is recognised by it when carried again).
pub const NOTE_START: &str = "[pasted ";
/// A line of a condensed block is cut to this many characters.
const LINE_CHARS: usize = 200;

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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Line {
    Blank,
    Sentence,
    Machine,
    /// Neither: joins a block inside it, stays words at its edges.
    Neutral,
}

const FUNCTION_WORDS: &[&str] = &[
    "the", "a", "an", "is", "are", "was", "were", "be", "been", "to", "of", "for", "and", "or",
    "but", "in", "on", "with", "this", "that", "these", "those", "it", "its", "i", "you", "we",
    "my", "your", "our", "me", "us", "please", "remember", "do", "does", "don't", "not", "should",
    "must", "can", "will", "would", "what", "when", "why", "how", "here", "there", "also", "so",
    "if", "then", "just", "keep", "make", "sure", "from", "about", "it's", "i'm", "let", "note",
];

const MACHINE_PREFIXES: &[&str] = &[
    "error", "warning", "warn ", "note:", "help:", "info", "debug", "trace", "fatal", "at ",
    "file \"", "traceback", "caused by", "thread '", "diff --git", "index ", "--- ", "+++ ",
    "@@", "-->", "==>", ">>>", "$ ", "# ", "panicked", "exception", "stack", "   at",
];

/// Reads one line on its own.
fn classify(line: &str) -> Line {
    let t = line.trim();
    if t.is_empty() {
        return Line::Blank;
    }
    let lower = t.to_lowercase();
    let words: Vec<&str> = t.split_whitespace().collect();
    let bare = |w: &str| {
        w.trim_matches(|c: char| matches!(c, ',' | '.' | ';' | ':' | '!' | '?' | '"' | '\'' | '(' | ')'))
            .to_lowercase()
    };
    let function = words
        .iter()
        .filter(|w| FUNCTION_WORDS.contains(&bare(w).as_str()))
        .count();
    let alpha_words = words
        .iter()
        .filter(|w| {
            let b = bare(w);
            !b.is_empty() && b.chars().all(|c| c.is_alphabetic() || c == '\'' || c == '-')
        })
        .count();
    let non_space = t.chars().filter(|c| !c.is_whitespace()).count().max(1);
    let letters = t.chars().filter(|c| c.is_alphabetic()).count();
    let letter_ratio = letters as f64 / non_space as f64;
    let indent: usize = line
        .chars()
        .take_while(|c| c.is_whitespace())
        .map(|c| if c == '\t' { 4 } else { 1 })
        .sum();

    let mut machine = 0i32;
    if indent >= 2 {
        machine += 2;
    }
    let first = t.chars().next().unwrap_or(' ');
    if matches!(first, '[' | '{' | '}' | ']' | '<' | '>' | '|' | '@' | '+' | '=' | '$' | '^' | '~' | '`')
        || first.is_ascii_digit()
    {
        machine += 2;
    }
    if first == '-' && !t.starts_with("- ") || t.starts_with("-  ") {
        machine += 2;
    }
    if MACHINE_PREFIXES.iter().any(|p| lower.starts_with(p)) {
        machine += 3;
    }
    if has_timestamp(t) {
        machine += 2;
    }
    if letter_ratio < 0.55 {
        machine += 2;
    }
    if ["::", "()", "=>", "->", "==", "&&", "||", "();", "{", "}"]
        .iter()
        .any(|s| t.contains(s))
        || t.ends_with(';')
    {
        machine += 1;
    }
    let pathish = words
        .iter()
        .filter(|w| w.contains('/') || w.contains('\\') || w.contains('_') || w.contains('='))
        .count();
    if pathish >= 2 {
        machine += 1;
    }

    let mut sentence = 0i32;
    sentence += match function {
        0 => 0,
        1 => 1,
        2 | 3 => 3,
        _ => 4,
    };
    if alpha_words >= 4 && alpha_words * 10 >= words.len() * 6 {
        sentence += 1;
    }
    if t.ends_with(['.', '?', '!']) {
        sentence += 1;
    }
    let score = sentence - machine;
    if score >= 2 {
        Line::Sentence
    } else if score <= -1 {
        Line::Machine
    } else {
        Line::Neutral
    }
}

/// `12:34:56` or `2026-11-24` somewhere in the line.
fn has_timestamp(t: &str) -> bool {
    let b = t.as_bytes();
    let digit = |i: usize| b.get(i).is_some_and(u8::is_ascii_digit);
    (0..b.len()).any(|i| {
        (digit(i) && digit(i + 1) && b.get(i + 2) == Some(&b':') && digit(i + 3) && digit(i + 4))
            || (digit(i)
                && digit(i + 1)
                && digit(i + 2)
                && digit(i + 3)
                && b.get(i + 4) == Some(&b'-')
                && digit(i + 5)
                && digit(i + 6)
                && b.get(i + 7) == Some(&b'-'))
    })
}

fn kind_of(lines: &[&str]) -> Kind {
    let any = |p: &str| lines.iter().any(|l| l.trim_start().starts_with(p));
    if lines.last().is_some_and(|l| l.starts_with(NOTE_START)) {
        Kind::Condensed
    } else if any("diff --git") || any("@@ ") || any("+++ ") {
        Kind::Diff
    } else if any("Traceback") || any("at ") || any("File \"") || any("stack backtrace") {
        Kind::Traceback
    } else {
        Kind::Log
    }
}

/// Splits `text` into the user's words and pasted blocks, in order.
pub fn split(text: &str) -> Vec<Piece> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out: Vec<Piece> = Vec::new();
    let mut words: Vec<&str> = Vec::new();
    let flush_words = |words: &mut Vec<&str>, out: &mut Vec<Piece>| {
        let w = words.join("\n");
        if !w.trim().is_empty() {
            match out.last_mut() {
                Some(Piece::Words(prev)) => {
                    prev.push('\n');
                    prev.push_str(&w);
                }
                _ => out.push(Piece::Words(w)),
            }
        }
        words.clear();
    };
    let push_block = |block: &[&str], kind: Kind, words: &mut Vec<&str>, out: &mut Vec<Piece>| {
        flush_words(words, out);
        out.push(Piece::Block(Block {
            lines: block.iter().map(|l| l.to_string()).collect(),
            kind,
        }));
    };
    let mut i = 0;
    while i < lines.len() {
        // A fenced block, whole.
        if lines[i].trim_start().starts_with("```") {
            let end = (i + 1..lines.len())
                .find(|&j| lines[j].trim_start().starts_with("```"))
                .map_or(lines.len() - 1, |j| j);
            if end - i > MIN_BLOCK_LINES {
                push_block(&lines[i..=end], Kind::Code, &mut words, &mut out);
            } else {
                words.extend_from_slice(&lines[i..=end]);
            }
            i = end + 1;
            continue;
        }
        let kind = classify(lines[i]);
        if kind == Line::Sentence {
            words.push(lines[i]);
            i += 1;
            continue;
        }
        // A run of lines that are not sentences (nor fences).
        let start = i;
        let mut j = i;
        while j < lines.len()
            && !lines[j].trim_start().starts_with("```")
            && (classify(lines[j]) != Line::Sentence || lines[j].starts_with(NOTE_START))
        {
            j += 1;
        }
        let run = &lines[start..j];
        let kinds: Vec<Line> = run.iter().map(|l| classify(l)).collect();
        let machine = kinds.iter().filter(|k| **k == Line::Machine).count()
            + run.iter().filter(|l| l.starts_with(NOTE_START)).count() * MIN_BLOCK_LINES;
        if machine >= MIN_BLOCK_LINES {
            // Edges that are not machine output stay words.
            let is_edge = |k: usize| {
                matches!(kinds[k], Line::Blank | Line::Neutral) && !run[k].starts_with(NOTE_START)
            };
            let mut a = 0;
            while a < run.len() && is_edge(a) {
                a += 1;
            }
            let mut b = run.len();
            while b > a && is_edge(b - 1) {
                b -= 1;
            }
            words.extend_from_slice(&run[..a]);
            push_block(&run[a..b], kind_of(&run[a..b]), &mut words, &mut out);
            words.extend_from_slice(&run[b..]);
        } else {
            words.extend_from_slice(run);
        }
        i = j;
    }
    flush_words(&mut words, &mut out);
    out
}

/// The user's own words of `text`, without the pasted blocks.
pub fn words_of(text: &str) -> String {
    split(text)
        .into_iter()
        .filter_map(|p| match p {
            Piece::Words(w) => Some(w),
            Piece::Block(_) => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The `n`th (1-based) pasted block of `text`, as it was pasted.
pub fn block(text: &str, n: usize) -> Option<String> {
    split(text)
        .into_iter()
        .filter_map(|p| match p {
            Piece::Block(b) => Some(b.lines.join("\n")),
            Piece::Words(_) => None,
        })
        .nth(n.checked_sub(1)?)
}

/// The recall id of the `n`th block of message `message_id`.
pub fn recall_id(message_id: &str, n: usize) -> String {
    format!("paste:{message_id}:{n}")
}

/// `paste:<message id>:<n>` → (message id, n).
pub fn parse_recall_id(id: &str) -> Option<(&str, usize)> {
    let rest = id.strip_prefix("paste:")?;
    let (message, n) = rest.rsplit_once(':')?;
    Some((message, n.parse().ok()?))
}

/// Names in the user's words that a pasted line may mention: tokens with a digit, an
/// underscore, a hyphen inside, a dot inside, or in backticks.
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

fn stands_out(line: &str, names: &[String]) -> bool {
    let lower = line.to_lowercase();
    const MARKS: &[&str] = &[
        "error", "fail", "panic", "exception", "fatal", "denied", "not found", "cannot",
        "unable", "refused", "timeout", "timed out", "abort", "assert",
    ];
    MARKS.iter().any(|m| lower.contains(m))
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

/// The note that ends a condensed block.
pub fn note(block: &Block, shown: usize, recall: Option<&str>) -> String {
    if block.kind == Kind::Condensed
        && let Some(last) = block.lines.last()
    {
        return last.clone();
    }
    let how = match recall {
        Some(id) => format!("; recall id \"{id}\" brings back all of it"),
        None => String::new(),
    };
    format!(
        "{NOTE_START}{}: {} lines, {shown} shown{how}]",
        block.kind.name(),
        block.lines.len()
    )
}

/// `block` in at most `budget` tokens: its note, then as many as fit of its first and last
/// lines and the lines that stand out (errors, sentences, `names` from the user's words), in
/// their order, with `…` where lines were left out. Just the note when nothing else fits.
pub fn condense(
    block: &Block,
    names: &[String],
    recall: Option<&str>,
    budget: u64,
    est: &Estimator,
) -> String {
    let lines: &[String] = if block.kind == Kind::Condensed {
        &block.lines[..block.lines.len().saturating_sub(1)]
    } else {
        &block.lines
    };
    let n = lines.len();
    let mut order: Vec<usize> = Vec::new();
    let mut add = |i: usize, order: &mut Vec<usize>| {
        if i < n && !order.contains(&i) && lines[i].trim() != "…" {
            order.push(i);
        }
    };
    add(0, &mut order);
    add(n.saturating_sub(1), &mut order);
    for (i, l) in lines.iter().enumerate() {
        if stands_out(l, names) {
            add(i, &mut order);
        }
    }
    add(1, &mut order);
    add(n.saturating_sub(2), &mut order);
    for i in 0..n {
        add(i, &mut order);
    }
    let mut chosen: Vec<usize> = Vec::new();
    let render = |chosen: &[usize]| {
        let mut sorted = chosen.to_vec();
        sorted.sort_unstable();
        let mut out = Vec::new();
        let mut next = 0;
        for &i in &sorted {
            if i > next {
                out.push("…".to_string());
            }
            out.push(cut_line(&lines[i]));
            next = i + 1;
        }
        if next < n && !sorted.is_empty() {
            out.push("…".to_string());
        }
        out.push(note(block, sorted.len(), recall));
        out.join("\n")
    };
    for i in order {
        chosen.push(i);
        if est.text(&render(&chosen)) > budget {
            chosen.pop();
        }
    }
    if chosen.len() == n && block.kind != Kind::Condensed {
        // All of it fits: no need for a note.
        return lines.join("\n");
    }
    render(&chosen)
}

#[cfg(test)]
#[path = "paste_tests.rs"]
mod tests;
