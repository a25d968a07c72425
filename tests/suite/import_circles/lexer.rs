//! The text of a Rust file as the import graph reads it: comments and the contents of string
//! and character literals blanked (so `"crate::x"` or `// use super::y` is no edge), inline
//! `#[cfg(test)] mod … { … }` blocks cut out (a unit test's `use super::*` is not architecture),
//! and the `use` trees and inline `crate::`/`super::`/`self::` paths found in what is left.

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// `text` with comments made a space, string literals made `""` and character literals `' '`;
/// lifetimes and everything else are kept.
pub fn strip(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < c.len() {
        let next = c.get(i + 1).copied();
        if c[i] == '/' && next == Some('/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if c[i] == '/' && next == Some('*') {
            i = block_comment_end(&c, i);
            out.push(' ');
        } else if let Some(end) = raw_string_end(&c, i) {
            i = end;
            out.push_str("\"\"");
        } else if c[i] == '"' {
            i = string_end(&c, i + 1);
            out.push_str("\"\"");
        } else if c[i] == '\'' {
            match char_literal_end(&c, i) {
                Some(end) => {
                    i = end;
                    out.push_str("' '");
                }
                None => {
                    out.push('\'');
                    i += 1;
                }
            }
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

/// The index after the (possibly nested) block comment opening at `i`.
fn block_comment_end(c: &[char], mut i: usize) -> usize {
    let mut depth = 0;
    while i < c.len() {
        if c[i] == '/' && c.get(i + 1) == Some(&'*') {
            depth += 1;
            i += 2;
        } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
            depth -= 1;
            i += 2;
            if depth == 0 {
                return i;
            }
        } else {
            i += 1;
        }
    }
    i
}

/// The index after the closing quote of a string whose body starts at `i`.
fn string_end(c: &[char], mut i: usize) -> usize {
    while i < c.len() {
        match c[i] {
            '\\' => i += 2,
            '"' => return i + 1,
            _ => i += 1,
        }
    }
    i
}

/// When a raw string (`r"…"`, `r#"…"#`, `br…`, `cr…`) starts at `i`: the index after it.
fn raw_string_end(c: &[char], i: usize) -> Option<usize> {
    if c[i] != 'r' {
        return None;
    }
    let before = |k: usize| k.checked_sub(1).map(|p| c[p]);
    let starts_token = match before(i) {
        Some('b' | 'c') => !before(i - 1).is_some_and(is_ident),
        Some(p) => !is_ident(p),
        None => true,
    };
    if !starts_token {
        return None;
    }
    let mut j = i + 1;
    while c.get(j) == Some(&'#') {
        j += 1;
    }
    if c.get(j) != Some(&'"') {
        return None;
    }
    let hashes = j - i - 1;
    j += 1;
    while j < c.len() {
        if c[j] == '"' && (1..=hashes).all(|h| c.get(j + h) == Some(&'#')) {
            return Some(j + 1 + hashes);
        }
        j += 1;
    }
    Some(j)
}

/// When a character literal (`'x'`, `'\n'`, `'\u{1F600}'`) starts at `i`: the index after it;
/// `None` for a lifetime or label.
fn char_literal_end(c: &[char], i: usize) -> Option<usize> {
    if c.get(i + 1) == Some(&'\\') {
        let mut j = i + 3;
        while j < c.len() && c[j] != '\'' {
            j += 1;
        }
        return Some(j + 1);
    }
    (c.get(i + 2) == Some(&'\'')).then_some(i + 3)
}

/// `text` (already stripped) without its `#[cfg(test)] mod name { … }` blocks.
pub fn without_test_modules(text: &str) -> String {
    const CFG_TEST: &str = "#[cfg(test)]";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(CFG_TEST) {
        let after = &rest[at + CFG_TEST.len()..];
        match inline_module_body(after) {
            Some(open) => {
                out.push_str(&rest[..at]);
                rest = &after[matching_brace(after, open)..];
            }
            None => {
                out.push_str(&rest[..at + CFG_TEST.len()]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// When `s` begins (after white space) with `mod name {`: the index of that `{`.
fn inline_module_body(s: &str) -> Option<usize> {
    let t = s.trim_start();
    let t = t.strip_prefix("mod")?;
    if !t.starts_with(char::is_whitespace) {
        return None;
    }
    let t = t.trim_start();
    let name = t.find(|c: char| !is_ident(c))?;
    if name == 0 {
        return None;
    }
    let t = t[name..].trim_start();
    t.starts_with('{').then(|| s.len() - t.len())
}

/// The index after the `}` matching the `{` at `open`.
fn matching_brace(s: &str, open: usize) -> usize {
    let mut depth = 0usize;
    for (k, ch) in s[open..].char_indices() {
        match ch {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return open + k + 1;
                }
            }
            _ => {}
        }
    }
    s.len()
}

/// The start of every occurrence of the word `word` in `text`.
fn words<'a>(text: &'a str, word: &'a str) -> impl Iterator<Item = usize> + 'a {
    text.match_indices(word)
        .map(|(at, _)| at)
        .filter(move |&at| {
            let before = text[..at].chars().next_back();
            let after = text[at + word.len()..].chars().next();
            !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
        })
}

/// Every path named by a `use` item, its braces expanded and `as` renames dropped:
/// `use crate::{a::{b, c as d}, e};` gives `crate::a::b`, `crate::a::c`, `crate::e`.
pub fn use_paths(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for at in words(text, "use") {
        let rest = &text[at + 3..];
        if !rest.starts_with(char::is_whitespace) {
            continue;
        }
        let Some(end) = rest.find(';') else { continue };
        expand("", &compact_tree(&rest[..end]), &mut out);
    }
    out
}

/// A use tree without white space and without its `as name` renames.
fn compact_tree(tree: &str) -> String {
    let mut out = String::new();
    let mut tokens = tree
        .split(|c: char| c.is_whitespace())
        .filter(|t| !t.is_empty())
        .peekable();
    while let Some(t) = tokens.next() {
        if t == "as" {
            // The new name, up to the next brace or comma, is not part of the path.
            if let Some(name) = tokens.next() {
                out.push_str(name.trim_start_matches(is_ident));
            }
        } else {
            out.push_str(t);
        }
    }
    out
}

fn expand(prefix: &str, tree: &str, out: &mut Vec<String>) {
    let (Some(open), Some(close)) = (tree.find('{'), tree.rfind('}')) else {
        out.push(format!("{prefix}{tree}"));
        return;
    };
    let head = format!("{prefix}{}", &tree[..open]);
    let mut depth = 0;
    let mut item = String::new();
    for ch in tree[open + 1..close].chars() {
        match ch {
            '{' => depth += 1,
            '}' => depth -= 1,
            _ => {}
        }
        if ch == ',' && depth == 0 {
            if !item.is_empty() {
                expand(&head, &item, out);
            }
            item.clear();
        } else {
            item.push(ch);
        }
    }
    if !item.is_empty() {
        expand(&head, &item, out);
    }
}

/// Every path in code that starts at `crate`, `super` or `self`: `crate::a::b::X`.
pub fn inline_paths(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for root in ["crate", "super", "self"] {
        // `super::super::x` is one path, not also `super::x`.
        for at in words(text, root).filter(|&at| !text[..at].ends_with("::")) {
            let mut end = at + root.len();
            while let Some(seg) = text[end..].strip_prefix("::") {
                let len = seg.find(|c: char| !is_ident(c)).unwrap_or(seg.len());
                if len == 0 {
                    break;
                }
                end += 2 + len;
            }
            if end > at + root.len() {
                out.push(text[at..end].to_string());
            }
        }
    }
    out
}
