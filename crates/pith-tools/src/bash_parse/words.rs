//! The value of a shell word where it can be known without running anything: quote removal,
//! backslash escapes, `$'…'` strings; and which `${…}` forms cannot run code.

/// Removes backslash escapes from unquoted text: `\x` is `x`, `\<newline>` disappears.
pub(super) fn unescape_unquoted(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('\n') | None => {}
                Some(n) => out.push(n),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The inside of a double-quoted string: only `\$`, `` \` ``, `\"`, `\\` and `\<newline>` are
/// escapes there.
pub(super) fn unescape_double_quoted(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some('$' | '`' | '"' | '\\') => out.push(chars.next().unwrap_or('\\')),
                Some('\n') => {
                    chars.next();
                }
                _ => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The value of `$'…'` (given with its `$'` and `'`). `None` for an escape that cannot be
/// decoded, so the caller treats the word as unknown.
pub(super) fn decode_ansi_c(raw: &str) -> Option<String> {
    let inner = raw.strip_prefix("$'")?.strip_suffix('\'')?;
    let mut out = String::new();
    let chars: Vec<char> = inner.chars().collect();
    let mut i = 0;
    let hex = |s: &[char]| -> Option<u32> {
        let t: String = s.iter().collect();
        u32::from_str_radix(&t, 16).ok()
    };
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(&e) = chars.get(i) else {
            out.push('\\');
            break;
        };
        i += 1;
        match e {
            'a' => out.push('\x07'),
            'b' => out.push('\x08'),
            'e' | 'E' => out.push('\x1b'),
            'f' => out.push('\x0c'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'v' => out.push('\x0b'),
            '\\' | '\'' | '"' | '?' => out.push(e),
            '0'..='7' => {
                let start = i - 1;
                let mut end = start + 1;
                while end < chars.len() && end < start + 3 && matches!(chars[end], '0'..='7') {
                    end += 1;
                }
                let t: String = chars[start..end].iter().collect();
                out.push(char::from_u32(u32::from_str_radix(&t, 8).ok()?)?);
                i = end;
            }
            'x' | 'u' | 'U' => {
                let max = match e {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let mut end = i;
                while end < chars.len() && end < i + max && chars[end].is_ascii_hexdigit() {
                    end += 1;
                }
                if end == i {
                    return None;
                }
                out.push(char::from_u32(hex(&chars[i..end])?)?);
                i = end;
            }
            'c' => {
                let &ctl = chars.get(i)?;
                i += 1;
                out.push(char::from_u32((ctl.to_ascii_uppercase() as u32) ^ 0x40)?);
            }
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
    Some(out)
}

/// Whether unquoted text holds glob or brace-expansion syntax, so that the shell may turn it into
/// other words than it reads as.
pub(super) fn expands_unquoted(raw: &str) -> bool {
    let mut escaped = false;
    let mut brace_open = false;
    let mut brace_list = false;
    for c in raw.chars() {
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            '\\' => escaped = true,
            '*' | '?' | '[' => return true,
            '{' => brace_open = true,
            ',' if brace_open => brace_list = true,
            '.' if brace_open => brace_list = true,
            '}' if brace_open && brace_list => return true,
            _ => {}
        }
    }
    false
}

/// Why a `${…}` expansion (its full text) can run code or evaluate arithmetic, or `None` when
/// it only reads a variable: plain names, literal numeric or `@`/`*` subscripts, `#` length,
/// the default/alternative/pattern operators and the harmless `@` transformations. Indirection
/// (`${!x}`), `@P`, non-numeric subscripts and substring offsets that are not plain numbers are
/// arithmetic or prompt expansion of a variable's value, which can run commands.
pub(super) fn unsafe_expansion(text: &str) -> Option<&'static str> {
    let Some(body) = text.strip_prefix("${").and_then(|t| t.strip_suffix('}')) else {
        return Some("an expansion pith cannot read");
    };
    let body = body
        .strip_prefix('#')
        .filter(|b| !b.is_empty())
        .unwrap_or(body);
    if body.starts_with('!') {
        return Some("an indirect expansion `${!…}`");
    }
    let chars: Vec<char> = body.chars().collect();
    let mut i = 0;
    if chars
        .first()
        .is_some_and(|c| matches!(c, '@' | '*' | '#' | '?' | '-' | '$' | '!'))
    {
        i = 1;
    } else {
        while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
            i += 1;
        }
        if i == 0 {
            return Some("an expansion pith cannot read");
        }
    }
    if chars.get(i) == Some(&'[') {
        let close = chars[i..].iter().position(|&c| c == ']')? + i;
        let index: String = chars[i + 1..close].iter().collect();
        let index = index.trim();
        let plain = index == "@"
            || index == "*"
            || (!index.is_empty() && index.chars().all(|c| c.is_ascii_digit()));
        if !plain {
            return Some("an array subscript, which is evaluated as arithmetic");
        }
        i = close + 1;
    }
    let rest: String = chars[i..].iter().collect();
    if rest.is_empty() {
        return None;
    }
    if let Some(op) = rest.strip_prefix('@') {
        return match op {
            "Q" | "E" | "U" | "u" | "L" | "a" => None,
            _ => Some("a `${…@…}` transformation, which can run commands (`@P`)"),
        };
    }
    if let Some(offsets) = rest.strip_prefix(':')
        && !offsets.starts_with(['-', '=', '+', '?'])
    {
        let numeric = offsets.split(':').all(|part| {
            let p = part.trim();
            let p = p.strip_prefix('-').unwrap_or(p).trim();
            !p.is_empty() && p.chars().all(|c| c.is_ascii_digit())
        });
        if !numeric {
            return Some("a substring offset, which is evaluated as arithmetic");
        }
        return None;
    }
    let operator = [
        ":-", ":=", ":+", ":?", "-", "=", "+", "?", "##", "#", "%%", "%", "//", "/#", "/%", "/",
        "^^", "^", ",,", ",",
    ]
    .iter()
    .any(|op| rest.starts_with(op));
    if operator {
        // The operand is a word of its own; its expansions are checked where they are found.
        None
    } else {
        Some("an expansion pith cannot read")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unquoting() {
        assert_eq!(unescape_unquoted("\\rm"), "rm");
        assert_eq!(unescape_unquoted("a\\ b"), "a b");
        assert_eq!(unescape_unquoted("a\\\nb"), "ab");
        assert_eq!(unescape_double_quoted("a\\$b\\n"), "a$b\\n");
        assert_eq!(decode_ansi_c("$'\\x72m'").as_deref(), Some("rm"));
        assert_eq!(decode_ansi_c("$'\\162m'").as_deref(), Some("rm"));
        assert_eq!(decode_ansi_c("$'a\\nb\\''").as_deref(), Some("a\nb'"));
        assert_eq!(decode_ansi_c("$'\\u0072m'").as_deref(), Some("rm"));
    }

    #[test]
    fn globs_and_braces_expand() {
        for w in ["*.rs", "r?", "[ab]", "{a,b}", "x{1..3}", "-{r,f}"] {
            assert!(expands_unquoted(w), "{w}");
        }
        for w in ["{}", "plain", "a\\*b", "{x}", "a=b"] {
            assert!(!expands_unquoted(w), "{w}");
        }
    }

    #[test]
    fn expansions_that_run_code() {
        for e in [
            "${x@P}", "${!x}", "${z[y]}", "${a[$i]}", "${x:y}", "${x:1:n}", "${x@K}", "${#a[i]}",
        ] {
            assert!(unsafe_expansion(e).is_some(), "{e}");
        }
        for e in [
            "${x}",
            "${#x}",
            "${a[0]}",
            "${a[@]}",
            "${x:-default}",
            "${x:=v}",
            "${x#pre}",
            "${x//a/b}",
            "${x,,}",
            "${x@Q}",
            "${x:1:2}",
            "${x: -1}",
            "${@:2}",
            "${1}",
            "${#}",
        ] {
            assert_eq!(unsafe_expansion(e), None, "{e}");
        }
    }
}
