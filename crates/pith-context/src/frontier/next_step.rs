//! The next step a model announced, in its own words: the last sentence of its text that
//! announces an action ("Next, I'll …", "Now I will …", "Let me …", "I'll …", "Then …").

/// The longest announced step kept, in characters.
pub const NEXT_MAX_CHARS: usize = 320;

/// How an announcing sentence starts (lower case, after an interjection like "Great, ").
const OPENINGS: [&str; 20] = [
    "next, ",
    "next i",
    "next step",
    "next:",
    "the next step",
    "my next step",
    "now i'll ",
    "now i will ",
    "now i'm going to ",
    "now let me ",
    "now let's ",
    "let me ",
    "let's ",
    "i'll ",
    "i will ",
    "i'm going to ",
    "i am going to ",
    "then ",
    "then, ",
    "after that",
];

/// Sentences that start like an announcement but ask, offer or promise instead.
const NOT_A_STEP: [&str; 12] = [
    "let me know",
    "i'll be happy",
    "i will be happy",
    "i'll wait",
    "i will wait",
    "let's discuss",
    "i'll keep",
    "i will keep",
    "i'll remember",
    "i will remember",
    "i'll bear",
    "i will bear",
];

/// Words a sentence may open with before its announcement ("Great, now I'll …").
const INTERJECTIONS: [&str; 8] = [
    "ok", "okay", "great", "good", "alright", "so", "first", "now",
];

/// The last sentence of `text` that announces an action, cut to [`NEXT_MAX_CHARS`]; `None`
/// when it announces none. Code blocks are not read.
pub fn announced(text: &str) -> Option<String> {
    let mut last = None;
    let mut in_code = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            continue;
        }
        for sentence in sentences(strip_marker(line)) {
            if announces(sentence) {
                last = Some(sentence);
            }
        }
    }
    last.map(cut)
}

/// A list marker, quote or heading mark taken off the start of a line.
fn strip_marker(line: &str) -> &str {
    let line = line.trim_start_matches(['#', '>', ' ']);
    if let Some(rest) = line.strip_prefix("- ").or_else(|| line.strip_prefix("* ")) {
        return rest.trim_start();
    }
    // `1. `, `2) `
    let digits = line.len() - line.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits > 0
        && let Some(rest) = line[digits..]
            .strip_prefix(". ")
            .or_else(|| line[digits..].strip_prefix(") "))
    {
        return rest.trim_start();
    }
    line
}

/// The sentences of one line: split after `.`, `!` or `?` followed by a space.
fn sentences(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let b = line.as_bytes();
    for i in 0..b.len() {
        if matches!(b[i], b'.' | b'!' | b'?') && b.get(i + 1) == Some(&b' ') {
            out.push(line[start..=i].trim());
            start = i + 1;
        }
    }
    out.push(line[start..].trim());
    out.retain(|s| !s.is_empty());
    out
}

fn announces(sentence: &str) -> bool {
    if sentence.ends_with('?') {
        return false;
    }
    let lower = sentence.to_lowercase().replace('’', "'");
    let mut s = lower.trim_start_matches(['*', '_']).trim_start();
    for word in INTERJECTIONS {
        if let Some(rest) = s.strip_prefix(word)
            && let Some(rest) = rest.strip_prefix(',')
        {
            s = rest.trim_start();
            break;
        }
    }
    OPENINGS.iter().any(|o| s.starts_with(o)) && !NOT_A_STEP.iter().any(|n| s.starts_with(n))
}

fn cut(sentence: &str) -> String {
    if sentence.chars().count() <= NEXT_MAX_CHARS {
        return sentence.to_string();
    }
    let mut s: String = sentence.chars().take(NEXT_MAX_CHARS - 1).collect();
    s.push('…');
    s
}

#[cfg(test)]
mod tests {
    use super::announced;

    #[test]
    fn the_last_announcing_sentence_is_the_next_step() {
        assert_eq!(
            announced("The test fails on line 12. Let me look at the parser.").as_deref(),
            Some("Let me look at the parser.")
        );
        assert_eq!(
            announced(
                "Found it: the index is off by one.\n\nNext, I'll fix `parse.rs` and then rerun the tests."
            )
            .as_deref(),
            Some("Next, I'll fix `parse.rs` and then rerun the tests.")
        );
        assert_eq!(
            announced("I'll read the file. The fix is small! Then I will run `cargo test -p x`.")
                .as_deref(),
            Some("Then I will run `cargo test -p x`.")
        );
        assert_eq!(
            announced("Great, now I'll update src/main.rs:").as_deref(),
            Some("Great, now I'll update src/main.rs:")
        );
        assert_eq!(
            announced("Plan:\n1. Let me check the config.\n- I’m going to add a flag").as_deref(),
            Some("I’m going to add a flag")
        );
    }

    #[test]
    fn no_announcement_is_none() {
        assert_eq!(announced("All 42 tests pass. The parser is done."), None);
        assert_eq!(announced(""), None);
        // a question, an offer, a code block
        assert_eq!(
            announced("Shall I go on? Let me know if you want more."),
            None
        );
        assert_eq!(
            announced("Done.\n```\n// Let me do this later.\n```\nThat is all."),
            None
        );
    }

    #[test]
    fn a_long_step_is_cut_to_one_bounded_sentence() {
        let long = format!("Let me {}.", "rewrite the module ".repeat(40));
        let got = announced(&long).unwrap();
        assert_eq!(got.chars().count(), super::NEXT_MAX_CHARS);
        assert!(got.ends_with('…'));
    }
}
