//! What a search service's hits become for the model: text without markup (Brave marks the
//! words matched with `<strong>`, SearXNG passes on what engines send), on one line, cut to a
//! bound, with the usual entities decoded. One linear pass, no parser: a snippet is a line.

/// Characters kept of a hit's title.
pub(super) const MAX_TITLE: usize = 200;
/// Characters kept of a hit's snippet.
pub(super) const MAX_SNIPPET: usize = 400;
/// Characters of an address kept (a longer one is left out: it is not a page to read).
pub(super) const MAX_URL: usize = 2_000;

/// `raw` without tags, with entities decoded, whitespace and control characters made single
/// spaces, cut to `max` characters (an ellipsis saying so).
pub(super) fn plain(raw: &str, max: usize) -> String {
    let mut out = String::with_capacity(raw.len().min(max * 4));
    let mut chars = raw.chars().peekable();
    let mut space = false;
    let push = |out: &mut String, c: char, space: &mut bool| {
        if c.is_whitespace() || c.is_control() {
            *space = !out.is_empty();
        } else {
            if *space {
                out.push(' ');
                *space = false;
            }
            out.push(c);
        }
    };
    while let Some(c) = chars.next() {
        match c {
            // a tag: up to its `>` (a `<` that opens nothing, like `a < b`, stays)
            '<' if chars
                .peek()
                .is_some_and(|n| n.is_ascii_alphabetic() || matches!(n, '/' | '!' | '?')) =>
            {
                for t in chars.by_ref() {
                    if t == '>' {
                        break;
                    }
                }
                space |= !out.is_empty();
            }
            '&' => {
                let mut name = String::new();
                while let Some(&n) = chars.peek() {
                    if n == ';' || name.len() > 10 || !(n.is_ascii_alphanumeric() || n == '#') {
                        break;
                    }
                    name.push(n);
                    chars.next();
                }
                match (chars.peek() == Some(&';'), entity(&name)) {
                    (true, Some(d)) => {
                        chars.next();
                        push(&mut out, d, &mut space);
                    }
                    _ => {
                        push(&mut out, '&', &mut space);
                        for n in name.chars() {
                            push(&mut out, n, &mut space);
                        }
                    }
                }
            }
            c => push(&mut out, c, &mut space),
        }
        if out.len() > max * 4 {
            break;
        }
    }
    cut(&out, max)
}

/// The character an entity (without `&` and `;`) names, for the ones search snippets carry.
fn entity(name: &str) -> Option<char> {
    let code = |digits: &str, radix| u32::from_str_radix(digits, radix).ok();
    match name {
        "amp" => Some('&'),
        "lt" => Some('<'),
        "gt" => Some('>'),
        "quot" => Some('"'),
        "apos" => Some('\''),
        "nbsp" => Some(' '),
        "hellip" => Some('…'),
        "mdash" => Some('—'),
        "ndash" => Some('–'),
        _ => {
            let n = match name.strip_prefix('#')? {
                hex if hex.starts_with(['x', 'X']) => code(&hex[1..], 16),
                dec => code(dec, 10),
            }?;
            // a control character written as an entity is a space, like one written as itself
            char::from_u32(n).map(|c| if c.is_control() { ' ' } else { c })
        }
    }
}

/// `s` cut to `max` characters, ending in `…` when cut.
pub(super) fn cut(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// An address fit to be shown and fetched: http(s), no whitespace or control characters, not
/// absurdly long.
pub(super) fn address(raw: &str) -> Option<String> {
    let url = raw.trim();
    let lower = url.get(..8).unwrap_or(url).to_ascii_lowercase();
    let web = lower.starts_with("http://") || lower.starts_with("https://");
    let clean = !url.chars().any(|c| c.is_whitespace() || c.is_control());
    (web && clean && url.len() <= MAX_URL).then(|| url.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_and_entities_are_taken_out() {
        assert_eq!(
            plain(
                "The <strong>Rust</strong>&nbsp;book &amp; <em>more</em>",
                100
            ),
            "The Rust book & more"
        );
        assert_eq!(plain("a < b &lt;c&gt; &#39;q&#x27;", 100), "a < b <c> 'q'");
        assert_eq!(
            plain("line\none\r\n\ttwo\u{1b}[2J", 100),
            "line one two [2J"
        );
        assert_eq!(plain("&bogus; &amp", 100), "&bogus; &amp");
        assert_eq!(plain("<script>x</script>ok", 100), "x ok");
        assert_eq!(plain("&#0;&#27;x", 100), "x");
    }

    #[test]
    fn long_text_is_cut_with_an_ellipsis() {
        let long = "word ".repeat(1_000);
        let p = plain(&long, 50);
        assert_eq!(p.chars().count(), 50);
        assert!(p.ends_with('…'));
        assert_eq!(cut("short", 50), "short");
    }

    #[test]
    fn only_web_addresses_are_kept() {
        assert_eq!(
            address(" https://docs.rs/x ").as_deref(),
            Some("https://docs.rs/x")
        );
        for bad in [
            "javascript:alert(1)",
            "file:///etc/passwd",
            "https://a b/",
            "http://x/\u{1b}[2J",
        ] {
            assert_eq!(address(bad), None, "{bad}");
        }
        assert_eq!(address(&format!("https://x/{}", "a".repeat(MAX_URL))), None);
    }
}
