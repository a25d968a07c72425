//! Small text helpers shared by every layer (a leaf module): one-line summaries, and the one
//! sanitiser of terminal control sequences every front end prints through.

use std::borrow::Cow;

/// A count as people read it: `88,015`, `1,200,000` (token counts in messages and tables).
pub fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `s` on one line: every run of whitespace, newlines included, becomes one space.
pub fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// [`one_line`], cut to at most `max` characters (a cut one ends in `…`).
pub fn one_line_max(s: &str, max: usize) -> String {
    let line = one_line(s);
    match line.char_indices().nth(max) {
        None => line,
        Some((cut, _)) => format!("{}…", &line[..cut]),
    }
}

/// Untrusted text (a repository's config keys, a path) put in a question: on one line, with
/// every control character (newlines included), backslash, and the invisible or
/// direction-changing marks written as escapes (`\n`, `\u{1b}`, `\\`), at most `max`
/// characters (a cut one ends in `…`). What the user reads is what the text holds.
pub fn escape_one_line(s: &str, max: usize) -> String {
    let mut out = String::new();
    let mut count = 0;
    for c in s.chars() {
        let piece = match c {
            '\n' => "\\n".to_string(),
            '\r' => "\\r".to_string(),
            '\t' => "\\t".to_string(),
            '\\' => "\\\\".to_string(),
            c if c.is_control() || invisible_mark(c) => format!("\\u{{{:x}}}", c as u32),
            c => c.to_string(),
        };
        let n = piece.chars().count();
        if count + n > max {
            out.push('…');
            return out;
        }
        out.push_str(&piece);
        count += n;
    }
    out
}

/// Marks a terminal shows as nothing, or that reorder or break what follows.
fn invisible_mark(c: char) -> bool {
    matches!(c as u32, 0x200b..=0x200f | 0x2028..=0x202e | 0x2060..=0x2069 | 0xfeff)
}

/// Where a [`ControlFilter`] is in an escape sequence.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum EscState {
    #[default]
    Text,
    /// after ESC (and any intermediate bytes)
    Esc,
    /// in a CSI: parameters and intermediates until a final byte
    Csi,
    /// in an OSC, DCS, SOS, PM or APC string: until BEL, ST or the end of the line
    Str,
    /// ESC inside a string: `\` ends it, anything else starts a new sequence
    StrEsc,
}

/// Takes terminal control sequences out of text fed to it one character at a time, keeping its
/// place between calls: text streamed in pieces is cleaned the same however it is cut (an ESC at
/// the end of one piece and `]52;…` at the start of the next still make one sequence, dropped).
///
/// What comes out is printable text, `\n`, `\t` and `\r` (the caller decides about the last
/// two); every other C0 or C1 control and DEL is dropped, and so is every sequence they start
/// (CSI, OSC, DCS, SOS, PM, APC, two-character escapes). A string sequence never runs past the
/// end of a line, so a stray opener cannot swallow the rest of an answer.
#[derive(Debug, Default, Clone)]
pub struct ControlFilter {
    state: EscState,
}

impl ControlFilter {
    pub fn new() -> ControlFilter {
        ControlFilter::default()
    }

    /// `Some(c)` when `c` is text to show.
    pub fn feed(&mut self, c: char) -> Option<char> {
        use EscState::*;
        match self.state {
            Text => match c {
                '\u{1b}' => self.enter(Esc),
                '\u{9b}' => self.enter(Csi),
                '\u{90}' | '\u{98}' | '\u{9d}' | '\u{9e}' | '\u{9f}' => self.enter(Str),
                '\n' | '\t' | '\r' => Some(c),
                c if is_control(c) => None,
                c => Some(c),
            },
            Esc => match c {
                '[' => self.enter(Csi),
                ']' | 'P' | 'X' | '^' | '_' => self.enter(Str),
                // intermediate bytes, or ESC again: still in the escape
                ' '..='/' | '\u{1b}' => None,
                // another control ends the escape and counts on its own (a newline stays)
                c if is_control(c) => self.restart(c),
                // the final character
                _ => self.enter(Text),
            },
            Csi => match c {
                ' '..='?' => None,
                '@'..='~' => self.enter(Text),
                // not a CSI after all: the sequence ends here
                c => self.restart(c),
            },
            Str => match c {
                '\u{7}' | '\u{9c}' => self.enter(Text),
                '\u{1b}' => self.enter(StrEsc),
                '\n' => self.restart(c),
                _ => None,
            },
            StrEsc => match c {
                '\\' => self.enter(Text),
                c => {
                    self.state = Esc;
                    self.feed(c)
                }
            },
        }
    }

    fn enter(&mut self, state: EscState) -> Option<char> {
        self.state = state;
        None
    }

    fn restart(&mut self, c: char) -> Option<char> {
        self.state = EscState::Text;
        self.feed(c)
    }

    /// Appends the clean text of `s` to `out`, dropping CRs too (for a terminal that is not
    /// redrawn, a CR can only hide what came before it).
    pub fn clean_into(&mut self, s: &str, out: &mut String) {
        out.extend(
            s.chars()
                .filter_map(|c| self.feed(c))
                .filter(|c| *c != '\r'),
        );
    }
}

/// A C0 or C1 control character or DEL (`char::is_control`: Unicode's `Cc`).
fn is_control(c: char) -> bool {
    c.is_control()
}

/// `s` without any terminal control: what may be written to a terminal or a log that one will
/// show. Newlines and tabs stay; escape sequences, CRs and every other control go.
pub fn strip_controls(s: &str) -> Cow<'_, str> {
    if !s.chars().any(|c| is_control(c) && c != '\n' && c != '\t') {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    ControlFilter::new().clean_into(s, &mut out);
    Cow::Owned(out)
}

/// For the screen of a TUI: like [`strip_controls`], but a bare CR rewinds the line (keeping
/// what a terminal would finally show: `10%\r50%` is `50%`) and a tab becomes four spaces.
pub fn sanitize(s: &str) -> Cow<'_, str> {
    if !s.chars().any(|c| is_control(c) && c != '\n') {
        return Cow::Borrowed(s);
    }
    let mut filter = ControlFilter::new();
    let mut out = String::with_capacity(s.len());
    let mut line_start = 0usize;
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match filter.feed(c) {
            None => {}
            Some('\n') => {
                out.push('\n');
                line_start = out.len();
            }
            // CRLF is a newline; a bare CR rewinds the line: keep what follows
            Some('\r') if chars.peek() == Some(&'\n') => {}
            Some('\r') => out.truncate(line_start),
            Some('\t') => out.push_str("    "),
            Some(c) => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// A serialized JSON text with DEL and the C1 controls (U+0080–U+009F) written as `\u00XX`:
/// serde_json escapes only C0, and some terminals act on C1 (U+009B is a CSI). They can only
/// occur inside JSON strings, where the escape means the same character.
pub fn escape_json_controls(json: &str) -> Cow<'_, str> {
    let needs = |c: char| ('\u{7f}'..='\u{9f}').contains(&c);
    if !json.chars().any(needs) {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if needs(c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_grouped_by_thousands() {
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(1_000), "1,000");
        assert_eq!(count(88_015), "88,015");
        assert_eq!(count(1_200_000), "1,200,000");
    }

    #[test]
    fn collapses_and_cuts_by_characters() {
        assert_eq!(one_line("  a\n\tb   c \r\n"), "a b c");
        assert_eq!(one_line_max("a\nb", 3), "a b");
        assert_eq!(one_line_max("héllo world", 5), "héllo…");
        assert_eq!(one_line_max("", 0), "");
    }

    #[test]
    fn untrusted_text_is_escaped_on_one_line_and_bounded() {
        assert_eq!(
            escape_one_line("key\nFAKE: yes\u{1b}]52;c;x\u{7}", 80),
            "key\\nFAKE: yes\\u{1b}]52;c;x\\u{7}"
        );
        assert_eq!(
            escape_one_line("a\\nb", 10),
            "a\\\\nb",
            "a backslash is not a newline"
        );
        assert_eq!(
            escape_one_line("x\u{202e}y\u{9b}z", 40),
            "x\\u{202e}y\\u{9b}z"
        );
        assert_eq!(escape_one_line("abcdef", 3), "abc…");
        assert_eq!(
            escape_one_line("ab\n", 3),
            "ab…",
            "an escape is never cut in half"
        );
        assert_eq!(escape_one_line("/home/u/src", 40), "/home/u/src");
    }

    #[test]
    fn strips_escape_sequences_and_controls() {
        assert_eq!(strip_controls("plain\n\ttext"), "plain\n\ttext");
        assert!(matches!(strip_controls("plain"), Cow::Borrowed(_)));
        assert_eq!(strip_controls("\u{1b}[31mred\u{1b}[0m ok"), "red ok");
        assert_eq!(strip_controls("a\u{1b}]52;c;SGk=\u{7}b"), "ab");
        assert_eq!(strip_controls("a\u{1b}]0;title\u{1b}\\b"), "ab");
        assert_eq!(strip_controls("a\u{1b}[2Jb\u{9b}31mc"), "abc");
        assert_eq!(strip_controls("a\u{9d}0;t\u{9c}b"), "ab");
        assert_eq!(strip_controls("10%\r50%\r\n"), "10%50%\n");
        assert_eq!(
            strip_controls("bell\u{7} del\u{7f} nel\u{85} bs\u{8}"),
            "bell del nel bs"
        );
        assert_eq!(strip_controls("a\u{1b}(Bb"), "ab", "a two-character escape");
        // a stray opener does not swallow the next lines
        assert_eq!(strip_controls("a\u{1b}]52;c;xx\nnext"), "a\nnext");
        assert_eq!(strip_controls("a\u{1b}\nb"), "a\nb");
        // a string ended by a new escape: that one is dropped too
        assert_eq!(strip_controls("a\u{1b}]0;t\u{1b}[31mb"), "ab");
        assert_eq!(strip_controls("ünï\u{1b}[1mcödé"), "ünïcödé");
    }

    #[test]
    fn a_sequence_cut_between_pieces_is_still_dropped() {
        let whole = "x\u{1b}]52;c;SGVsbG8=\u{7}y\u{1b}[2Jz\u{9b}1;2Hw";
        let chars: Vec<char> = whole.chars().collect();
        for cut in 0..=chars.len() {
            let (a, b): (String, String) =
                (chars[..cut].iter().collect(), chars[cut..].iter().collect());
            let mut f = ControlFilter::new();
            let mut out = String::new();
            f.clean_into(&a, &mut out);
            f.clean_into(&b, &mut out);
            assert_eq!(out, "xyzw", "cut at {cut}");
        }
    }

    #[test]
    fn the_screen_sanitiser_keeps_what_a_terminal_would_show() {
        assert_eq!(sanitize("plain\ntext"), "plain\ntext");
        assert_eq!(sanitize("\u{1b}[31mred\u{1b}[0m ok"), "red ok");
        assert_eq!(sanitize("10%\r50%\r100%\ndone"), "100%\ndone");
        assert_eq!(sanitize("a\r\nb"), "a\nb");
        assert_eq!(sanitize("\u{1b}]0;title\u{7}x\ty"), "x    y");
        assert_eq!(sanitize("bell\u{7}"), "bell");
        assert_eq!(sanitize("c1\u{9b}2Jx"), "c1x");
    }

    #[test]
    fn json_gets_del_and_c1_escaped() {
        assert_eq!(escape_json_controls(r#"{"a":"b"}"#), r#"{"a":"b"}"#);
        assert_eq!(
            escape_json_controls("{\"a\":\"x\u{7f}\u{9b}\u{85}é\"}"),
            r#"{"a":"x\u007f\u009b\u0085é"}"#
        );
        let back: String = serde_json::from_str(&escape_json_controls("\"\u{9b}\"")).unwrap();
        assert_eq!(back, "\u{9b}");
    }
}
