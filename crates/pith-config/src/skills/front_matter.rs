//! The YAML front matter of a `SKILL.md`, read as the peers write it: `key: value` (plain,
//! `"double"` or `'single'` quoted, continued on indented lines), block scalars (`key: |`,
//! `key: >`, with `-`/`+`), lists (`key:` then `- item` lines, or `[a, b]`), and nested maps
//! (`metadata:` then indented `key: value` lines), which are read past. Only the subset skill
//! files use; anything else is an error naming its line.

/// A value of the top-level mapping.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Value {
    Text(String),
    List(Vec<String>),
    /// A nested mapping (`metadata:`), not read.
    Map,
}

/// What is wrong, and on which line of the file (from 1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Error {
    pub line: usize,
    pub problem: String,
}

/// A key, its value, and its line.
pub(super) type Pair = (String, Value, usize);

/// The front matter of `text` and the line (from 0) its body starts on; `None` when `text` has
/// no front matter (it does not start with a `---` line).
pub(super) fn split(text: &str) -> Result<Option<(Vec<Pair>, usize)>, Error> {
    let lines: Vec<&str> = text.lines().collect();
    if lines.first().is_none_or(|l| l.trim_end() != "---") {
        return Ok(None);
    }
    let Some(end) = lines.iter().skip(1).position(|l| l.trim_end() == "---") else {
        return Err(Error {
            line: 1,
            problem: "the front matter is not closed with a `---` line".into(),
        });
    };
    let pairs = parse(&lines[1..=end], 2)?;
    Ok(Some((pairs, end + 2)))
}

/// The top-level `key: value` pairs of `lines` (the first is line `first` of the file), each
/// with its line number.
fn parse(lines: &[&str], first: usize) -> Result<Vec<Pair>, Error> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let raw = lines[i];
        let n = first + i;
        i += 1;
        if raw.trim().is_empty() || raw.trim_start().starts_with('#') {
            continue;
        }
        if raw.starts_with([' ', '\t']) {
            return Err(err(
                n,
                "an indented line where a `key: value` line was expected",
            ));
        }
        let Some((key, rest)) = raw.split_once(':') else {
            return Err(err(n, "expected `key: value`"));
        };
        let key = key.trim();
        if key.is_empty() || key.contains(' ') && !key.starts_with(['"', '\'']) {
            return Err(err(n, "expected `key: value`"));
        }
        // the indented lines that belong to this key
        let start = i;
        while i < lines.len() && (lines[i].trim().is_empty() || lines[i].starts_with([' ', '\t'])) {
            i += 1;
        }
        let nested = &lines[start..i];
        let value = value(rest.trim(), nested, n)?;
        out.push((unquote_key(key), value, n));
    }
    Ok(out)
}

fn err(line: usize, problem: &str) -> Error {
    Error {
        line,
        problem: problem.into(),
    }
}

fn unquote_key(k: &str) -> String {
    k.trim_matches(['"', '\'']).to_string()
}

/// The value of a key: `rest` is what follows its colon, `nested` its indented lines.
fn value(rest: &str, nested: &[&str], line: usize) -> Result<Value, Error> {
    let rest = strip_comment(rest);
    if let Some(style) = rest.strip_prefix(['|', '>']) {
        let folded = rest.starts_with('>');
        return Ok(Value::Text(block_scalar(nested, folded, style)));
    }
    if rest.starts_with('[') {
        let Some(inner) = rest.strip_prefix('[').and_then(|r| r.strip_suffix(']')) else {
            return Err(err(line, "a `[` list is not closed on its line"));
        };
        let items = inner
            .split(',')
            .map(|s| unquote(s.trim()))
            .filter(|s| !s.is_empty())
            .collect();
        return Ok(Value::List(items));
    }
    if !rest.is_empty() {
        if rest.starts_with('"') || rest.starts_with('\'') {
            // a quoted string may run over the next lines
            let mut joined = rest.to_string();
            for l in nested {
                joined.push(' ');
                joined.push_str(l.trim());
            }
            let q = &joined[..1];
            let closed = joined.len() > 1 && joined.trim_end().ends_with(q);
            if !closed {
                return Err(err(line, "a quoted value is not closed"));
            }
            return Ok(Value::Text(unquote(joined.trim_end())));
        }
        // a plain scalar continues on its indented lines, folded with spaces
        let mut text = rest.to_string();
        for l in nested.iter().map(|l| l.trim()).filter(|l| !l.is_empty()) {
            text.push(' ');
            text.push_str(l);
        }
        return Ok(Value::Text(text));
    }
    let items: Vec<&str> = nested
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    if items.is_empty() {
        return Ok(Value::Text(String::new()));
    }
    if items.iter().all(|l| *l == "-" || l.starts_with("- ")) {
        return Ok(Value::List(
            items
                .iter()
                .map(|l| unquote(strip_comment(l.trim_start_matches('-').trim())))
                .collect(),
        ));
    }
    Ok(Value::Map)
}

/// A `|` or `>` block: its lines without their common indentation; `>` folds single line
/// breaks into spaces. `style` is what follows the indicator (`-` strips the final newline,
/// which pith drops anyway).
fn block_scalar(nested: &[&str], folded: bool, _style: &str) -> String {
    let indent = nested
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let lines: Vec<&str> = nested
        .iter()
        .map(|l| if l.len() >= indent { &l[indent..] } else { "" })
        .collect();
    if !folded {
        return lines.join("\n").trim_end().to_string();
    }
    let mut out = String::new();
    for l in lines {
        if l.trim().is_empty() {
            out.push('\n');
        } else {
            if !out.is_empty() && !out.ends_with('\n') {
                out.push(' ');
            }
            out.push_str(l.trim_end());
        }
    }
    out.trim().to_string()
}

/// `s` without a trailing ` # comment` (outside quotes).
fn strip_comment(s: &str) -> &str {
    if s.starts_with(['"', '\'']) {
        return s;
    }
    match s.find(" #") {
        Some(i) => s[..i].trim_end(),
        None => s,
    }
}

fn unquote(s: &str) -> String {
    if let Some(inner) = s.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
        return inner
            .replace("\\\"", "\"")
            .replace("\\n", "\n")
            .replace("\\\\", "\\");
    }
    if let Some(inner) = s.strip_prefix('\'').and_then(|r| r.strip_suffix('\'')) {
        return inner.replace("''", "'");
    }
    s.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(text: &str) -> Vec<(String, Value)> {
        split(text)
            .unwrap()
            .unwrap()
            .0
            .into_iter()
            .map(|(k, v, _)| (k, v))
            .collect()
    }

    fn text(v: &str) -> Value {
        Value::Text(v.into())
    }

    #[test]
    fn reads_the_forms_skill_files_use() {
        let got = pairs(
            "---\nname: pdf-tools\ndescription: \"Extract text: from PDFs\"\nlicense: Apache-2.0\n\
             allowed-tools:\n  - Read\n  - Bash(pdftotext:*)\nmetadata:\n  version: \"1.0\"\n  \
             author: someone\nother: [a, 'b c']\n---\nbody\n",
        );
        assert_eq!(
            got,
            vec![
                ("name".into(), text("pdf-tools")),
                ("description".into(), text("Extract text: from PDFs")),
                ("license".into(), text("Apache-2.0")),
                (
                    "allowed-tools".into(),
                    Value::List(vec!["Read".into(), "Bash(pdftotext:*)".into()])
                ),
                ("metadata".into(), Value::Map),
                ("other".into(), Value::List(vec!["a".into(), "b c".into()])),
            ]
        );
    }

    #[test]
    fn block_and_continued_scalars() {
        let got = pairs(
            "---\ndescription: >\n  Folded text\n  on two lines.\n\nnotes: |\n  kept\n  lines\n\
             plain: a long\n  value\n---\n",
        );
        assert_eq!(got[0].1, text("Folded text on two lines."));
        assert_eq!(got[1].1, text("kept\nlines"));
        assert_eq!(got[2].1, text("a long value"));
    }

    #[test]
    fn errors_name_their_line() {
        assert_eq!(split("---\nname: x\n").unwrap_err().line, 1);
        let e = split("---\nname: x\njust words\n---\n").unwrap_err();
        assert_eq!(e.line, 3);
        let e = split("---\nname: x\ndescription: \"open\n---\n").unwrap_err();
        assert_eq!(e.line, 3);
        let e = split("---\nlist: [a, b\n---\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert_eq!(split("no front matter").unwrap(), None);
    }

    #[test]
    fn the_body_starts_after_the_closing_line() {
        let (_, body) = split("---\nname: x\n---\nhello\n").unwrap().unwrap();
        assert_eq!(body, 3);
    }
}
