//! The value of one word node, and what its expansions run.

use tree_sitter::Node;

use super::Word;
use super::walk::{Walker, fields};
use super::words::{
    decode_ansi_c, expands_unquoted, unescape_double_quoted, unescape_unquoted, unsafe_expansion,
};

/// A word whose value is not known before the shell runs: its source text.
fn dynamic(text: &str) -> Word {
    Word {
        text: text.to_string(),
        literal: false,
    }
}

impl Walker<'_> {
    /// The value of a word node, recording what its expansions run.
    pub(super) fn word(&mut self, n: Node) -> Word {
        let raw = self.text(n);
        if raw.contains("$[") {
            self.out.mark_hidden("arithmetic `$[…]`");
        }
        match n.kind() {
            "word" => {
                if expands_unquoted(raw) {
                    dynamic(raw)
                } else {
                    Word::literal(unescape_unquoted(raw))
                }
            }
            "number" => {
                if n.named_child_count() == 0 {
                    Word::literal(raw)
                } else {
                    self.named_children(n, |w, c| {
                        w.word(c);
                    });
                    dynamic(raw)
                }
            }
            "raw_string" => Word::literal(
                raw.strip_prefix('\'')
                    .and_then(|r| r.strip_suffix('\''))
                    .unwrap_or(raw),
            ),
            "ansi_c_string" => match decode_ansi_c(raw) {
                Some(v) => Word::literal(v),
                None => dynamic(raw),
            },
            "string" | "translated_string" => self.double_quoted(n, raw),
            "concatenation" => self.concatenation(n, raw),
            "simple_expansion" => dynamic(raw),
            "expansion" => {
                if let Some(why) = unsafe_expansion(raw) {
                    self.out.mark_hidden(format!("{why} (`{raw}`)"));
                }
                self.expansion_parts(n);
                dynamic(raw)
            }
            "command_substitution" => {
                self.command_substitution(n, raw);
                dynamic(raw)
            }
            "process_substitution" => {
                self.out.mark("process substitution `<(…)`");
                self.named_children(n, |w, c| w.statements(c));
                dynamic(raw)
            }
            "arithmetic_expansion" => {
                self.arithmetic(n);
                dynamic(raw)
            }
            "brace_expression" | "extglob_pattern" | "special_variable_name" => dynamic(raw),
            "array" => {
                self.named_children(n, |w, c| {
                    w.word(c);
                });
                dynamic(raw)
            }
            "variable_name" | "regex" | "test_operator" => Word::literal(raw),
            _ => {
                self.unknown(n);
                dynamic(raw)
            }
        }
    }

    /// A `"…"` (or `$"…"`) string: literal when nothing inside expands.
    fn double_quoted(&mut self, n: Node, raw: &str) -> Word {
        let mut literal = true;
        let mut cursor = n.walk();
        let children: Vec<Node> = n.named_children(&mut cursor).collect();
        for c in children {
            match c.kind() {
                "string_content" => {}
                "string" if n.kind() == "translated_string" => {
                    literal &= self.word(c).literal;
                }
                _ => {
                    self.word(c);
                    literal = false;
                }
            }
        }
        if !literal {
            return dynamic(raw);
        }
        let inner = raw.strip_prefix('$').unwrap_or(raw);
        let inner = inner
            .strip_prefix('"')
            .and_then(|r| r.strip_suffix('"'))
            .unwrap_or(inner);
        Word::literal(unescape_double_quoted(inner))
    }

    /// Words written together (`a"b"$c`): literal when every part is.
    fn concatenation(&mut self, n: Node, raw: &str) -> Word {
        let mut literal = true;
        let mut value = String::new();
        let mut cursor = n.walk();
        let children: Vec<Node> = n.children(&mut cursor).collect();
        let mut has_word = false;
        for c in children {
            if c.is_named() {
                has_word |= c.kind() == "word";
                let w = self.word(c);
                literal &= w.literal;
                value.push_str(&w.text);
            } else {
                value.push_str(self.text(c));
            }
        }
        if has_word && expands_unquoted(raw) {
            literal = false;
        }
        if literal {
            Word::literal(value)
        } else {
            dynamic(raw)
        }
    }

    /// `$(…)`, backticks or `$(<file)`: marked, and the commands inside walked.
    fn command_substitution(&mut self, n: Node, raw: &str) {
        let what = if raw.starts_with('`') {
            "backticks"
        } else if raw.starts_with("$(<") {
            "a `$(<file)` substitution"
        } else {
            "command substitution `$(…)`"
        };
        self.out.mark(what);
        for (field, c) in fields(n) {
            match (field, c.kind()) {
                (Some("redirect"), _) | (_, "file_redirect") => self.redirect(c, None),
                (_, "comment") => {}
                _ if c.is_named() => self.statements(c),
                _ => {}
            }
        }
    }

    /// The operands of `${…}`: substitutions inside run too.
    fn expansion_parts(&mut self, n: Node) {
        let mut cursor = n.walk();
        let children: Vec<Node> = n.named_children(&mut cursor).collect();
        for c in children {
            match c.kind() {
                "variable_name" | "special_variable_name" | "regex" => {}
                "subscript" => self.subscript(c),
                _ => {
                    self.word(c);
                }
            }
        }
    }
}
