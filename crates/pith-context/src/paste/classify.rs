//! How one line of a user message reads: a sentence of the user's, machine output (a log, a
//! trace, a table, code), or neither — on its own ([`classify`]) and among the lines around it
//! ([`classify_all`]: a tool's repeated tag). [`prose_shaped`] finds a note typed into the middle
//! of a paste.

use super::MIN_BLOCK_LINES;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Line {
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

/// Line starts that mark machine output (matched lowercase, as whole words).
const MACHINE_PREFIXES: &[&str] = &[
    "warn ",
    "help:",
    "file \"",
    "traceback",
    "caused by",
    "thread '",
    "diff --git",
    "--- ",
    "+++ ",
    "@@",
    "-->",
    "==>",
    ">>>",
    "$ ",
    "panicked",
    "panic:",
    "goroutine ",
    "exit status ",
    "exception in",
    "stack backtrace",
    "stack trace",
    "npm err!",
    "npm warn",
    "remote:",
];

/// Log levels: machine output when written as a tag (`INFO`, `error:`, `[warn]`, `error[E1]`),
/// not as the first word of a sentence ("Info for later: …", "Errors happen").
const LEVELS: &[&str] = &[
    "error", "warning", "warn", "info", "debug", "trace", "fatal",
];

/// Is `t` (trimmed) a machine line by how it starts: a prefix above, a level tag, a stack frame
/// (`at com.x.Y(Z.java:1)`), a git index line?
fn machine_start(t: &str) -> bool {
    let lower = t.to_lowercase();
    if MACHINE_PREFIXES.iter().any(|p| lower.starts_with(p)) {
        return true;
    }
    let first = t.split_whitespace().next().unwrap_or("");
    let tag = first.trim_start_matches('[');
    if let Some(level) = LEVELS.iter().find(|l| tag.to_lowercase().starts_with(*l)) {
        let rest = &tag[level.len()..];
        let upper = tag[..level.len()].chars().all(|c| c.is_ascii_uppercase());
        if rest.is_empty() && (upper || first.starts_with('['))
            || rest.starts_with([':', '[', ']', '('])
        {
            return true;
        }
    }
    if let Some(frame) = lower.strip_prefix("at ") {
        let target = frame.split_whitespace().next().unwrap_or("");
        if target.contains(['.', '(', '<', ':']) {
            return true;
        }
    }
    lower.starts_with("index ") && t.contains("..")
}

/// A list item, a quote, a mention or a count that starts a sentence (`1. use node 20`, `> the SLA`, `@here budget
/// approved`, `3 retries max`): its leading digit or symbol does not make it machine output.
fn list_like(t: &str) -> bool {
    let mut words = t.split_whitespace();
    let (Some(first), Some(second)) = (words.next(), words.next()) else {
        return false;
    };
    let wordy =
        second.chars().all(|c| c.is_alphabetic() || c == '\'') && second.chars().count() >= 2;
    let marker = first.trim_end_matches(['.', ')']);
    let numbered = !marker.is_empty() && marker.chars().all(|c| c.is_ascii_digit());
    let mention = first.len() > 1
        && first.starts_with('@')
        && first[1..]
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '-');
    wordy && (numbered || mention || first == ">")
}

/// A YAML or INI key at the start of a line: `apiVersion: v1`, `metadata:` — an identifier
/// beginning in lowercase (a user's `Note: …` or `Deadline: …` is not one).
fn yaml_key(line: &str) -> bool {
    let Some((key, rest)) = line.split_once(':') else {
        return false;
    };
    key.starts_with(|c: char| c.is_ascii_lowercase())
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        && (rest.is_empty() || rest.starts_with(' '))
}

/// Columns of a table or delimited data: cells separated by `|`, tabs, commas without spaces,
/// or runs of spaces (`kubectl get pods`, CSV, `psql` output).
fn tabular(t: &str) -> bool {
    t.matches('|').count() >= 2
        || t.matches('\t').count() >= 2
        || t.matches(',').count() >= 3 && !t.contains(", ")
        || t.split("  ").filter(|c| !c.trim().is_empty()).count() >= 3
}

/// Reads one line on its own: a sentence of the user's, machine output, or neither.
pub(super) fn classify(line: &str) -> Line {
    let t = line.trim();
    if t.is_empty() {
        return Line::Blank;
    }
    let score = sentence_score(t) - machine_score(line, t);
    if score >= 2 {
        Line::Sentence
    } else if score <= -1 {
        Line::Machine
    } else {
        Line::Neutral
    }
}

fn bare(w: &str) -> String {
    w.trim_matches(|c: char| {
        matches!(
            c,
            ',' | '.' | ';' | ':' | '!' | '?' | '"' | '\'' | '(' | ')'
        )
    })
    .to_lowercase()
}

/// How much `t` (the line trimmed) reads like a sentence: function words, words of letters,
/// sentence punctuation at its end.
fn sentence_score(t: &str) -> i32 {
    let words: Vec<&str> = t.split_whitespace().collect();
    let function = words
        .iter()
        .filter(|w| FUNCTION_WORDS.contains(&bare(w).as_str()))
        .count();
    let alpha_words = words
        .iter()
        .filter(|w| {
            let b = bare(w);
            b.chars().any(char::is_alphabetic)
                && b.chars()
                    .all(|c| c.is_alphabetic() || c == '\'' || c == '-')
        })
        .count();
    let mut score = match function {
        0 => 0,
        1 => 1,
        2 | 3 => 3,
        _ => 4,
    };
    if alpha_words >= 4 && alpha_words * 10 >= words.len() * 6 {
        score += 1;
    }
    if t.ends_with(['.', '?', '!']) {
        score += 1;
    }
    score
}

/// How much a line reads like machine output: indentation, a leading symbol or digit, a diff
/// marker, a log or traceback prefix, a timestamp, few letters, code punctuation, paths.
fn machine_score(line: &str, t: &str) -> i32 {
    let indent: usize = line
        .chars()
        .take_while(|c| c.is_whitespace())
        .map(|c| if c == '\t' { 4 } else { 1 })
        .sum();
    let non_space = t.chars().filter(|c| !c.is_whitespace()).count().max(1);
    let letters = t.chars().filter(|c| c.is_alphabetic()).count();
    let first = t.chars().next().unwrap_or(' ');
    let mut score = 0;
    if indent >= 2 {
        score += 2;
    }
    if (matches!(
        first,
        '[' | '{' | '}' | ']' | '<' | '>' | '|' | '@' | '+' | '=' | '$' | '^' | '~' | '`'
    ) || first.is_ascii_digit())
        && !list_like(t)
    {
        score += 2;
    }
    // A diff's removed line: `-` then code, not a Markdown bullet (`- item`).
    if indent == 0 && (t.starts_with("-  ") || (first == '-' && !t.starts_with("- "))) {
        score += 3;
    }
    if machine_start(t) {
        score += 3;
    }
    if tabular(t) || yaml_key(line) {
        score += 2;
    }
    if has_timestamp(t) {
        score += 2;
    }
    if (letters as f64) < non_space as f64 * 0.55 {
        score += 2;
    }
    if ["::", "()", "=>", "->", "==", "&&", "||", "{", "}", " = "]
        .iter()
        .any(|s| t.contains(s))
        || t.ends_with(';')
    {
        score += 1;
    }
    let pathish = t
        .split_whitespace()
        .filter(|w| w.contains('/') || w.contains('\\') || w.contains('_') || w.contains('='))
        .count();
    if pathish >= 2 {
        score += 1;
    }
    score
}

/// Words that start a line of code or a shell command, not a note of the user's.
const CODE_STARTS: &[&str] = &[
    "import",
    "from",
    "def",
    "class",
    "fn",
    "let",
    "const",
    "var",
    "return",
    "if",
    "for",
    "while",
    "pub",
    "package",
    "func",
    "public",
    "private",
    "static",
    "else",
    "elif",
    "try",
    "except",
    "catch",
    "select",
    "insert",
    "update",
    "delete",
    "where",
    "async",
    "await",
    "struct",
    "enum",
    "impl",
    "type",
    "interface",
    "export",
    "require",
    "match",
    "case",
    "switch",
    "end",
    "begin",
    "do",
    "done",
    "fi",
    "then",
    "echo",
    "cd",
    "sudo",
    "apt",
    "npm",
    "cargo",
    "git",
    "make",
    "pip",
    "python",
    "node",
    "raise",
    "throw",
    "new",
    "yield",
    "break",
    "continue",
    "goto",
    "module",
];

/// A line written like a note: not indented, a few words mostly of letters, no code
/// punctuation, not a `key: value` pair or a statement. Inside a pasted block, such a line
/// between machine lines is the user's (a fact typed into the middle of a log).
pub(super) fn prose_shaped(line: &str) -> bool {
    if line.starts_with(char::is_whitespace) {
        return false;
    }
    let t = line.trim();
    let t = t.strip_prefix("> ").unwrap_or(t); // a quoted line
    let words: Vec<&str> = t.split_whitespace().collect();
    if words.len() < 2
        || t.contains([
            '(', ')', '{', '}', '[', ']', ';', '=', '<', '>', '|', '`', '\t',
        ])
        || CODE_STARTS.contains(&words[0].to_lowercase().as_str())
    {
        return false;
    }
    if let Some((label, _)) = t.split_once(": ")
        && !label.contains(' ')
        && words.len() < 4
    {
        return false; // `name: orca` is YAML or a header
    }
    let non_space = t.chars().filter(|c| !c.is_whitespace()).count();
    let letters = t.chars().filter(|c| c.is_alphabetic()).count();
    let plain_words = words
        .iter()
        .filter(|w| w.chars().count() >= 2 && w.chars().all(char::is_alphabetic))
        .count();
    plain_words >= 1 && letters * 20 >= non_space * 9
}

/// `12:34:56` or `2026-11-24` somewhere in the line.
pub(super) fn has_timestamp(t: &str) -> bool {
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

/// Each line read on its own ([`classify`]), except that lines starting with a prefix that
/// three or more lines share and that carries punctuation (`npm ERR!`, `remote:`, `[INFO]`) are
/// machine output whatever they say: a tool's echo, not the user. List markers (`-`, `*`, `1.`)
/// do not count.
pub(super) fn classify_all(lines: &[&str]) -> Vec<Line> {
    fn prefixes(line: &str) -> [Option<String>; 2] {
        let mut words = line.split_whitespace();
        let first = words.next().unwrap_or("");
        let second = words.next().unwrap_or("");
        // A tool's tag: `[INFO]`, `ERR!` or `WARN:` in capitals, `remote:` in lowercase.
        let punct = |w: &str| {
            let letters = w.trim_matches(|c: char| !c.is_alphanumeric());
            w.starts_with('[') && w.ends_with(']')
                || w.len() > letters.len()
                    && !letters.is_empty()
                    && (letters.chars().all(|c| c.is_ascii_uppercase())
                        || w.ends_with(':') && letters.chars().all(|c| c.is_ascii_lowercase()))
        };
        let marker = first.trim_end_matches(['.', ')']);
        if matches!(first, "-" | "*" | "+" | "•" | ">" | "#" | "##" | "###")
            || marker.chars().all(|c| c.is_ascii_digit())
        {
            return [None, None];
        }
        [
            (first.len() > 1 && punct(first)).then(|| first.to_string()),
            (!second.is_empty() && (punct(first) || punct(second)))
                .then(|| format!("{first} {second}")),
        ]
    }
    let mut counts: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for l in lines {
        for p in prefixes(l).into_iter().flatten() {
            *counts.entry(p).or_default() += 1;
        }
    }
    lines
        .iter()
        .map(|l| {
            let shared = prefixes(l)
                .into_iter()
                .flatten()
                .any(|p| counts.get(&p).is_some_and(|&n| n >= MIN_BLOCK_LINES));
            if shared { Line::Machine } else { classify(l) }
        })
        .collect()
}
