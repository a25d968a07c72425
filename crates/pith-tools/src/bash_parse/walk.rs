//! Walks a tree-sitter-bash syntax tree into simple commands, redirections and opaque reasons.
//!
//! Every node kind is handled explicitly; a kind this walker does not know makes the line opaque
//! rather than being skipped.

use tree_sitter::Node;

use super::{Analysis, Redirect, SimpleCommand, Word};

/// Files that a redirection may write without it being a write to a file.
const HARMLESS_TARGETS: &[&str] = &["/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"];

pub(super) struct Walker<'a> {
    pub(super) src: &'a str,
    pub(super) out: &'a mut Analysis,
}

impl<'a> Walker<'a> {
    pub(super) fn new(src: &'a str, out: &'a mut Analysis) -> Self {
        Walker { src, out }
    }

    pub(super) fn text(&self, n: Node) -> &'a str {
        self.src.get(n.byte_range()).unwrap_or("")
    }

    pub(super) fn unknown(&mut self, n: Node) {
        let what = if n.is_error() || n.is_missing() {
            "shell syntax that could not be parsed".to_string()
        } else {
            format!("shell syntax pith does not check (`{}`)", n.kind())
        };
        self.out.mark_hidden(what);
    }

    /// A statement or a node holding statements.
    pub(super) fn statements(&mut self, n: Node) {
        match n.kind() {
            "program" | "list" | "pipeline" | "subshell" | "negated_command" | "do_group"
            | "if_statement" | "elif_clause" | "else_clause" | "while_statement" => {
                self.named_children(n, |w, c| w.statements(c))
            }
            "compound_statement" => {
                let arithmetic = n.child(0).is_some_and(|c| c.kind() == "((");
                if arithmetic {
                    self.arithmetic(n);
                } else {
                    self.named_children(n, |w, c| w.statements(c));
                }
            }
            "command" => {
                self.command(n);
            }
            "redirected_statement" => self.redirected(n),
            "variable_assignment" | "variable_assignments" => self.assignments(n),
            "declaration_command" | "unset_command" => self.declaration(n),
            "test_command" => self.test(n),
            "function_definition" => self.function_definition(n),
            "for_statement" => self.for_statement(n),
            "c_style_for_statement" => self.c_style_for(n),
            "case_statement" => self.case_statement(n),
            "comment" => {}
            _ => self.unknown(n),
        }
    }

    /// `a=1` or `a=1 b=2` alone on a line: a command of assignments only.
    fn assignments(&mut self, n: Node) {
        let mut cmd = SimpleCommand::default();
        if n.kind() == "variable_assignment" {
            self.assignment(n, &mut cmd);
        } else {
            let mut cursor = n.walk();
            for c in n.named_children(&mut cursor) {
                self.assignment(c, &mut cmd);
            }
        }
        self.out.commands.push(cmd);
    }

    /// `f() { …; }`: marked, and its body walked as if it ran.
    fn function_definition(&mut self, n: Node) {
        self.out.mark("a function definition");
        for (field, c) in fields(n) {
            match field {
                Some("body") => self.statements(c),
                Some("redirect") => self.redirect(c, None),
                _ => {}
            }
        }
    }

    /// `for x in …; do …; done`: the values and the body.
    fn for_statement(&mut self, n: Node) {
        for (field, c) in fields(n) {
            match field {
                Some("value") => {
                    self.word(c);
                }
                Some("body") => self.statements(c),
                Some("variable") => {}
                _ if c.is_named() && c.kind() != "comment" => self.unknown(c),
                _ => {}
            }
        }
    }

    /// `for ((…; …; …)); do …; done`: the arithmetic and the body.
    fn c_style_for(&mut self, n: Node) {
        for (field, c) in fields(n) {
            match field {
                Some("body") => self.statements(c),
                _ if c.is_named() && c.kind() != "comment" => self.arithmetic(c),
                _ => {}
            }
        }
    }

    /// `case … in …) …;; esac`: the value and every item.
    fn case_statement(&mut self, n: Node) {
        for (field, c) in fields(n) {
            match (field, c.kind()) {
                (Some("value"), _) => {
                    self.word(c);
                }
                (_, "case_item") => self.case_item(c),
                (_, "comment") => {}
                _ if c.is_named() => self.unknown(c),
                _ => {}
            }
        }
    }

    pub(super) fn named_children(&mut self, n: Node, mut f: impl FnMut(&mut Self, Node)) {
        let mut cursor = n.walk();
        let children: Vec<Node> = n.named_children(&mut cursor).collect();
        for c in children {
            if c.kind() != "comment" {
                f(self, c);
            }
        }
    }

    fn case_item(&mut self, n: Node) {
        for (field, c) in fields(n) {
            match field {
                Some("value") => {
                    self.word(c);
                }
                _ if c.is_named() && c.kind() != "comment" => self.statements(c),
                _ => {}
            }
        }
    }

    /// A simple command; returns its index in `out.commands`.
    fn command(&mut self, n: Node) -> usize {
        let mut cmd = SimpleCommand::default();
        let mut extra: Vec<Word> = Vec::new();
        for (field, c) in fields(n) {
            match (field, c.kind()) {
                (Some("name"), _) => {
                    let mut inner = c.walk();
                    let parts: Vec<Node> = c.named_children(&mut inner).collect();
                    let word = match parts.as_slice() {
                        [only] => self.word(*only),
                        _ => {
                            self.unknown(c);
                            Word {
                                text: self.text(c).to_string(),
                                literal: false,
                            }
                        }
                    };
                    cmd.words.push(word);
                }
                (Some("argument"), _) => {
                    let w = self.word(c);
                    cmd.words.push(w);
                }
                (Some("redirect"), _) | (_, "file_redirect" | "herestring_redirect") => {
                    extra.extend(self.redirect_words(c));
                }
                (_, "variable_assignment") => self.assignment(c, &mut cmd),
                (_, "comment") => {}
                _ if c.is_named() => self.unknown(c),
                _ => {}
            }
        }
        cmd.words.extend(extra);
        self.out.commands.push(cmd);
        self.out.commands.len() - 1
    }

    fn redirected(&mut self, n: Node) {
        let mut target: Option<usize> = None;
        for (field, c) in fields(n) {
            match field {
                Some("body") => {
                    if c.kind() == "command" {
                        target = Some(self.command(c));
                    } else {
                        self.statements(c);
                    }
                }
                _ if c.is_named() && c.kind() != "comment" => self.redirect(c, target),
                _ => {}
            }
        }
    }

    /// A redirection; words that belong to the command (`echo > f hi`) go to `target`.
    pub(super) fn redirect(&mut self, n: Node, target: Option<usize>) {
        let words = self.redirect_words(n);
        if words.is_empty() {
            return;
        }
        match target {
            Some(i) => self.out.commands[i].words.extend(words),
            None => self
                .out
                .mark_hidden("a redirection followed by words pith cannot place"),
        }
    }

    /// Records one redirection and returns the command words found inside it.
    fn redirect_words(&mut self, n: Node) -> Vec<Word> {
        match n.kind() {
            "file_redirect" => self.file_redirect(n),
            "herestring_redirect" => {
                self.named_children(n, |w, c| {
                    if c.kind() != "file_descriptor" {
                        w.word(c);
                    }
                });
                Vec::new()
            }
            "heredoc_redirect" => self.heredoc(n),
            _ => {
                self.unknown(n);
                Vec::new()
            }
        }
    }

    fn file_redirect(&mut self, n: Node) -> Vec<Word> {
        let mut operator = String::new();
        let mut destinations: Vec<Node> = Vec::new();
        for (field, c) in fields(n) {
            match field {
                Some("destination") => destinations.push(c),
                Some("descriptor") => {}
                _ if !c.is_named() => operator.push_str(c.kind()),
                _ if c.kind() == "comment" => {}
                _ => self.unknown(c),
            }
        }
        let mut rest = destinations.into_iter();
        let Some(dest) = rest.next() else {
            self.unknown(n);
            return Vec::new();
        };
        let target = self.word(dest);
        let is_fd = target.literal
            && (target.text == "-" || target.text.chars().all(|c| c.is_ascii_digit()));
        let dup = matches!(operator.as_str(), ">&" | "<&");
        if !(dup && is_fd) {
            let write = operator.contains('>');
            let harmless = write && target.literal && is_harmless_target(&target.text);
            if !harmless {
                if !target.literal {
                    self.out.mark(format!(
                        "a redirection to a computed file name `{}`",
                        target.text
                    ));
                }
                self.out.redirects.push(Redirect { target, write });
            }
        }
        rest.map(|c| self.word(c)).collect()
    }

    fn heredoc(&mut self, n: Node) -> Vec<Word> {
        let mut quoted = false;
        let mut words = Vec::new();
        for (field, c) in fields(n) {
            match (field, c.kind()) {
                (_, "heredoc_start") => {
                    quoted = self.text(c).contains(['\'', '"', '\\']);
                }
                (_, "heredoc_body") if !quoted => self.heredoc_body(c),
                (_, "heredoc_body") => {}
                (_, "heredoc_end" | "file_descriptor" | "comment") => {}
                (Some("redirect"), _) => {
                    let w = self.redirect_words(c);
                    words.extend(w);
                }
                (Some("argument"), _) => {
                    let w = self.word(c);
                    words.push(w);
                }
                _ if c.is_named() => self.statements(c),
                _ => {}
            }
        }
        words
    }

    /// An unquoted here-document body is expanded like a double-quoted string.
    fn heredoc_body(&mut self, n: Node) {
        let text = self.text(n);
        if text.contains('`') {
            self.out.mark_hidden("backticks in a here-document");
        }
        if text.contains("$((") || text.contains("$[") {
            self.out.mark_hidden("arithmetic in a here-document");
        }
        self.named_children(n, |w, c| {
            if c.kind() != "heredoc_content" {
                w.word(c);
            }
        });
    }

    /// `NAME=value`, `NAME+=value`, `a[0]=value`: appended to `cmd.assignments`.
    fn assignment(&mut self, n: Node, cmd: &mut SimpleCommand) {
        if n.kind() != "variable_assignment" {
            self.unknown(n);
            return;
        }
        let mut name = String::new();
        let mut value = String::new();
        for (field, c) in fields(n) {
            match field {
                Some("name") => {
                    if c.kind() == "subscript" {
                        self.subscript(c);
                    }
                    name = self.text(c).to_string();
                }
                Some("value") => value = self.word(c).text,
                _ if !c.is_named() => {}
                _ => self.unknown(c),
            }
        }
        let op = if self.text(n).contains("+=") {
            "+="
        } else {
            "="
        };
        cmd.assignments.push(format!("{name}{op}{value}"));
    }

    /// `a[i]`: a subscript that is not a plain number is arithmetic on variables.
    pub(super) fn subscript(&mut self, n: Node) {
        for (field, c) in fields(n) {
            if field == Some("index") {
                let index = self.text(c).trim();
                let plain = index == "@"
                    || index == "*"
                    || (!index.is_empty() && index.chars().all(|ch| ch.is_ascii_digit()));
                if !plain {
                    self.out
                        .mark_hidden("an array subscript, which is evaluated as arithmetic");
                    self.word(c);
                }
            }
        }
    }

    /// `declare …`, `export …`, `local …`, `readonly …`, `typeset …`, `unset …` as a command.
    fn declaration(&mut self, n: Node) {
        let mut cmd = SimpleCommand::default();
        let mut cursor = n.walk();
        let children: Vec<Node> = n.children(&mut cursor).collect();
        for c in children {
            if !c.is_named() {
                if cmd.words.is_empty() {
                    cmd.words.push(Word::literal(c.kind()));
                }
                continue;
            }
            match c.kind() {
                "variable_assignment" => {
                    let mut tmp = SimpleCommand::default();
                    self.assignment(c, &mut tmp);
                    cmd.words
                        .extend(tmp.assignments.into_iter().map(Word::literal));
                }
                "variable_name" => cmd.words.push(Word::literal(self.text(c))),
                "subscript" => {
                    self.subscript(c);
                    cmd.words.push(Word::literal(self.text(c)));
                }
                "comment" => {}
                "file_redirect" | "herestring_redirect" | "heredoc_redirect" => {
                    let w = self.redirect_words(c);
                    cmd.words.extend(w);
                }
                _ => {
                    let w = self.word(c);
                    cmd.words.push(w);
                }
            }
        }
        self.out.commands.push(cmd);
    }

    /// `[[ … ]]` and `[ … ]`: no command runs, but `[[` compares numbers arithmetically.
    fn test(&mut self, n: Node) {
        let double = n.child(0).is_some_and(|c| c.kind() == "[[");
        self.test_expr(n, double);
    }

    fn test_expr(&mut self, n: Node, double: bool) {
        let mut cursor = n.walk();
        let children: Vec<Node> = n.named_children(&mut cursor).collect();
        let operator = children
            .iter()
            .find(|c| c.kind() == "test_operator")
            .map(|c| self.text(*c).to_string());
        let arithmetic = double
            && operator
                .as_deref()
                .is_some_and(|o| matches!(o, "-eq" | "-ne" | "-lt" | "-le" | "-gt" | "-ge"));
        let names_variable = operator.as_deref() == Some("-v");
        for c in children {
            match c.kind() {
                "test_operator" | "comment" => {}
                "binary_expression"
                | "unary_expression"
                | "parenthesized_expression"
                | "test_command" => self.test_expr(c, double),
                "redirected_statement" => self.redirected(c),
                _ => {
                    let text = self.text(c);
                    let risky = (arithmetic && c.kind() != "number")
                        || (names_variable && (text.contains('[') || c.kind() != "word"));
                    if risky {
                        self.out.mark_hidden(
                            "a numeric comparison in `[[ ]]` or `-v`, which evaluates a variable as arithmetic",
                        );
                    }
                    self.word(c);
                }
            }
        }
    }

    /// `$(( … ))`, `(( … ))`, `for (( … ))`, `$[ … ]`: only constants are safe; a variable's
    /// value is evaluated recursively and can run commands through array subscripts.
    pub(super) fn arithmetic(&mut self, n: Node) {
        if !self.constant_arithmetic(n) {
            self.out.mark_hidden(
                "arithmetic on variables, which can run commands through array subscripts",
            );
        }
    }

    fn constant_arithmetic(&mut self, n: Node) -> bool {
        let mut constant = true;
        let mut cursor = n.walk();
        let children: Vec<Node> = n.named_children(&mut cursor).collect();
        for c in children {
            match c.kind() {
                "number" if c.named_child_count() == 0 => {}
                "binary_expression"
                | "unary_expression"
                | "ternary_expression"
                | "parenthesized_expression"
                | "postfix_expression" => constant &= self.constant_arithmetic(c),
                "comment" => {}
                _ => {
                    constant = false;
                    // Collects any substitution inside (and marks unknown syntax).
                    self.word(c);
                }
            }
        }
        constant
    }
}

/// The children of `n` with their field names.
pub(super) fn fields(n: Node<'_>) -> Vec<(Option<&'static str>, Node<'_>)> {
    let mut cursor = n.walk();
    n.children(&mut cursor)
        .enumerate()
        .map(|(i, c)| (n.field_name_for_child(i as u32), c))
        .collect()
}

fn is_harmless_target(path: &str) -> bool {
    HARMLESS_TARGETS.contains(&path)
        || path
            .strip_prefix("/dev/fd/")
            .is_some_and(|fd| !fd.is_empty() && fd.chars().all(|c| c.is_ascii_digit()))
}
