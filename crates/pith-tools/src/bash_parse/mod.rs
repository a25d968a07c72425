//! Shell commands read the way bash reads them, for permission checks.
//!
//! A command line is parsed with a real bash grammar (tree-sitter-bash) into the simple commands
//! it runs (across lists, pipelines, subshells, control flow, and inside `$(…)`, backticks and
//! `<(…)`), the files its redirections write or read, and the reasons it cannot be judged from
//! its text alone ("opaque"): expansions that can run code (`$(…)`, `${x@P}`, array subscripts
//! and other arithmetic on variables), `eval`/`source`, shells and interpreters given code as a
//! string, function definitions, a command name that is itself an expansion, and anything the
//! grammar or this walker does not understand. The permission layer never auto-allows an opaque
//! line. Wrappers that run another command (`env`, `sudo`, `timeout`, `xargs`, `find -exec` …)
//! yield that command too, so rules see what actually runs.

mod commands;
mod walk;
mod word_walk;
mod words;
mod wrappers;

use tree_sitter::Parser;

/// One word of a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Word {
    /// The word's value when `literal`; otherwise its source text.
    pub text: String,
    /// The value is known exactly (quotes removed, escapes decoded, nothing left to expand).
    pub literal: bool,
}

impl Word {
    pub(crate) fn literal(text: impl Into<String>) -> Word {
        Word {
            text: text.into(),
            literal: true,
        }
    }
}

/// A simple command: assignments, then the command's words.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct SimpleCommand {
    /// `NAME=value` prefixes, as written.
    pub(crate) assignments: Vec<String>,
    pub words: Vec<Word>,
    /// It runs code this analysis cannot see (`eval`, `bash -c "$x"`, `python -c`, a command
    /// name that is an expansion …): any deny rule could match it.
    pub(crate) hidden_code: bool,
    /// More words the shell cannot know yet will be appended (`xargs CMD`, `find -exec CMD {}`).
    pub(crate) open_args: bool,
    /// It only runs the command that follows it, unchanged in effect (`timeout 10 CMD`,
    /// `env X=1 CMD`); that command is in the analysis too, and allow rules judge it alone.
    pub wrapper: bool,
}

impl SimpleCommand {
    /// The command as rules match it: assignments and words separated by single spaces, words
    /// unquoted where their value is known.
    pub(crate) fn form(&self) -> String {
        let mut parts: Vec<&str> = self.assignments.iter().map(String::as_str).collect();
        parts.extend(self.words.iter().map(|w| w.text.as_str()));
        parts.join(" ")
    }

    /// The command name with quotes, backslashes and directories removed (`/bin/rm` → `rm`),
    /// when it is known.
    pub(crate) fn name(&self) -> Option<&str> {
        let w = self.words.first()?;
        if !w.literal {
            return None;
        }
        Some(w.text.rsplit('/').next().unwrap_or(&w.text))
    }
}

/// A redirection to or from a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Redirect {
    pub target: Word,
    /// `>`, `>>`, `>|`, `&>`, `<>` …: the file is written (else it is read).
    pub write: bool,
}

/// What a command line does, as far as its text tells.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Analysis {
    /// Every simple command, in source order (those inside substitutions and wrappers too).
    pub commands: Vec<SimpleCommand>,
    pub redirects: Vec<Redirect>,
    /// Why the line cannot be judged from its text, each reason once. Empty: the line is plain
    /// words, pipelines and lists of known shape.
    pub opaque: Vec<String>,
    /// Part of the line may run commands the analysis does not see (unparsable syntax, `${x@P}`,
    /// arithmetic on variables …): any deny rule could match it. Substitutions and functions,
    /// whose commands are read, do not set this.
    pub hidden: bool,
}

impl Analysis {
    pub(crate) fn is_opaque(&self) -> bool {
        !self.opaque.is_empty()
    }

    /// Records an opaque part that may run commands the analysis does not see.
    pub(crate) fn mark_hidden(&mut self, reason: impl Into<String>) {
        self.hidden = true;
        self.mark(reason);
    }

    pub(crate) fn mark(&mut self, reason: impl Into<String>) {
        let reason = reason.into();
        if !self.opaque.contains(&reason) {
            self.opaque.push(reason);
        }
    }
}

/// Longer command lines are not parsed: they are opaque.
const MAX_LEN: usize = 64 * 1024;

thread_local! {
    static PARSER: std::cell::RefCell<Option<Parser>> = const { std::cell::RefCell::new(None) };
}

/// Parses `command` and analyses it.
pub(crate) fn analyse(command: &str) -> Analysis {
    let mut analysis = Analysis::default();
    parse_into(command, &mut analysis);
    let mut nested = 0;
    commands::classify(&mut analysis, &mut nested);
    analysis
}

/// Parses `command` and adds its commands, redirections and opaque reasons to `analysis`
/// (commands are classified by the caller).
fn parse_into(command: &str, analysis: &mut Analysis) {
    if command.len() > MAX_LEN {
        analysis.mark_hidden("a command line too long to read");
        return;
    }
    let tree = PARSER.with_borrow_mut(|slot| {
        if slot.is_none() {
            let mut parser = Parser::new();
            parser
                .set_language(&tree_sitter_bash::LANGUAGE.into())
                .ok()?;
            *slot = Some(parser);
        }
        slot.as_mut()?.parse(command, None)
    });
    let Some(tree) = tree else {
        analysis.mark_hidden("a command line that could not be parsed");
        return;
    };
    let root = tree.root_node();
    if root.has_error() {
        analysis.mark_hidden("shell syntax that could not be parsed");
    }
    walk::Walker::new(command, analysis).statements(root);
}

/// Commands whose second word is a subcommand (`git status`).
const TWO_WORD: &[&str] = &[
    "git",
    "cargo",
    "npm",
    "pnpm",
    "yarn",
    "bun",
    "go",
    "docker",
    "podman",
    "kubectl",
    "pip",
    "pip3",
    "uv",
    "poetry",
    "apt",
    "apt-get",
    "brew",
    "systemctl",
    "rustup",
    "gh",
    "deno",
    "dotnet",
    "helm",
    "terraform",
    "make",
    "just",
    "npx",
    "mvn",
    "gradle",
    "composer",
    "bundle",
    "rails",
    "mix",
    "stack",
    "cabal",
    "dune",
];

/// `npm run build`, `docker compose up`, `gh pr view`: three words name the action.
fn three_word(first: &str, second: &str) -> bool {
    matches!(
        (first, second),
        ("npm" | "pnpm" | "yarn" | "bun", "run")
            | ("docker" | "podman", "compose")
            | ("gh", _)
            | ("uv", "run")
    )
}

/// The pattern an "always" grant for this command allows: its command prefix and `*`, e.g.
/// `git status*` for `git status --short`, `ls*` for `ls -la`. `None` when the command name is
/// not known (an expansion): nothing sensible can be granted.
pub(crate) fn prefix_pattern(command: &SimpleCommand) -> Option<String> {
    let first = command.words.first()?;
    if !first.literal {
        return None;
    }
    let cmd = first.text.as_str();
    let is_arg = |w: Option<&Word>| {
        w.is_some_and(|w| w.literal && !w.text.starts_with('-') && !w.text.contains(' '))
    };
    let mut n = 1;
    if TWO_WORD.contains(&cmd) && is_arg(command.words.get(1)) {
        n = 2;
        if three_word(cmd, &command.words[1].text) && is_arg(command.words.get(2)) {
            n = 3;
        }
    }
    let mut parts: Vec<&str> = command.assignments.iter().map(String::as_str).collect();
    parts.extend(command.words[..n].iter().map(|w| w.text.as_str()));
    let prefix = parts.join(" ");
    // Glob metacharacters in the prefix are escaped so the grant matches literally.
    let mut escaped = String::with_capacity(prefix.len() + 1);
    for c in prefix.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '{' | '}' | '\\') {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    escaped.push('*');
    Some(escaped)
}

#[cfg(test)]
mod tests;
