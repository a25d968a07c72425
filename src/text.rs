//! Small text helpers shared by every layer (a leaf module).

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collapses_and_cuts_by_characters() {
        assert_eq!(one_line("  a\n\tb   c \r\n"), "a b c");
        assert_eq!(one_line_max("a\nb", 3), "a b");
        assert_eq!(one_line_max("héllo world", 5), "héllo…");
        assert_eq!(one_line_max("", 0), "");
    }
}
