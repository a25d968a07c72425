//! The permission check of a `bash` call.
//!
//! The command line is analysed with a real shell grammar (`bash_parse`). Every simple command it
//! runs is matched against the `bash` rules on its own; every file a redirection writes or reads
//! is checked like the `write` / `read` tools (workspace, `external_directory`, `*.env`).
//!
//! Deny and ask rules are also matched by shape, so spelling a command differently does not get
//! it past them: the command name without its directory, quotes or backslash (`/bin/rm`, `\rm`,
//! `'rm'`), wrappers looked through (`command rm`, `env rm`, `sudo rm`, `xargs rm`,
//! `find -exec rm`), flags in any order or grouping (`-rf`, `-fr`, `-r -f`, `--recursive
//! --force`) and the rule's other words anywhere after the name (`git -C dir push`).
//!
//! A line the analysis cannot fully judge (opaque: `$(…)`, `${x@P}`, `eval`, `bash -c`,
//! a command name that is an expansion …) is never allowed by the rules alone: it asks, and
//! headless `--yes` does not approve it when a deny rule could match what it runs.

use std::collections::BTreeSet;

use globset::{GlobBuilder, GlobMatcher};
use serde_json::Value;

use super::{Decision, Permissions, Subject, cut, deny_message};
use crate::ToolContext;
use crate::bash_parse::{self, SimpleCommand, Word};
use pith_config::PermissionAction;

/// The table consulted before a command runs outside the sandbox (default ask).
pub(crate) const UNSANDBOXED: &str = "unsandboxed";

/// How a rule's shape fits a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Fit {
    No,
    /// Only if words the shell computes at run time turn out a certain way.
    Could,
    Yes,
}

/// What a bash request carries besides the question: why it asks although the rules might allow
/// it, and why `--yes` must not approve it.
#[derive(Debug, Clone, Default)]
pub struct Note {
    /// The command line, as the model wrote it (cut).
    pub command: String,
    /// The line is opaque: these are the reasons.
    pub opaque: Vec<String>,
    /// A deny rule could match what the line runs: `(rule, command)`.
    pub(crate) could_deny: Option<(String, String)>,
    /// The call asks to run outside the sandbox.
    pub unsandboxed: bool,
    /// The call starts a background job (`background: true`): it keeps running after the call.
    pub background: bool,
    /// Why only the user may answer: it writes a protected path or a hard-linked file.
    pub firm: Option<String>,
    /// The session grants not offered because their command is destructive (`rm*`): those
    /// commands are granted only as they are (`destructive`).
    pub withheld: Vec<String>,
}

impl Note {
    /// Why headless `--yes` does not approve the request, if it must not. `--yes` never
    /// approves leaving the sandbox unless `allow_unsandboxed` (`--allow-unsandboxed`).
    pub fn yes_refusal(&self, allow_unsandboxed: bool) -> Option<String> {
        let command = &self.command;
        if let Some(why) = &self.firm {
            return Some(format!(
                "Not run: {why}. Only the user may approve that (--yes, bypass mode and hooks \
                 never do). Ask the user to make this change, or leave it out."
            ));
        }
        if self.unsandboxed && !allow_unsandboxed {
            return Some(format!(
                "Not run: `{command}` asks to run outside the sandbox, and --yes never approves that. \
                 Run it without \"unsandboxed\" (in the sandbox), or ask the user to run it, or to rerun with --yes --allow-unsandboxed."
            ));
        }
        let (rule, cmd) = self.could_deny.as_ref()?;
        let why = if self.opaque.is_empty() {
            format!("words computed at run time could make `{cmd}` match")
        } else {
            format!(
                "it uses {}, so pith cannot tell whether it matches",
                self.opaque.join(", ")
            )
        };
        Some(format!(
            "Not run: `{command}` was not approved by --yes because the deny rule `{rule}` could apply: {why}. \
             Write the command as plain words (no substitutions, eval or code strings) so the rules can check it, or ask the user to run it."
        ))
    }

    /// What the model is told when no one can answer the question (headless without `--yes`).
    pub fn headless_reason(&self) -> Option<String> {
        if let Some(why) = &self.firm {
            return Some(format!(
                "Not run: {why}. That always needs the user's approval, and this \
                 non-interactive run has no one to ask (--yes does not approve it either). \
                 Leave it out, or tell the user what to change."
            ));
        }
        if self.unsandboxed {
            return Some(format!(
                "Not run: `{}` asks to run outside the sandbox, which needs the user's approval, and this non-interactive run has no one to ask. Run it in the sandbox, or continue without it.",
                self.command
            ));
        }
        if self.opaque.is_empty() {
            return None;
        }
        Some(format!(
            "Not run: `{}` uses {}, which pith cannot check against the permission rules, so it always needs the user's approval, and this non-interactive run has no one to ask. Rewrite it as plain commands the rules can check, or continue without it.",
            self.command,
            self.opaque.join(", ")
        ))
    }
}

impl Permissions {
    /// The decision for a `bash` call.
    pub(super) fn check_bash(&mut self, input: &Value, ctx: &ToolContext) -> Decision {
        let Some(command) = input.get("command").and_then(Value::as_str) else {
            return Decision::Allow; // the tool rejects it
        };
        if command.trim().is_empty() {
            return Decision::Allow;
        }
        let unsandboxed = input.get(UNSANDBOXED).and_then(Value::as_bool) == Some(true);
        let analysis = bash_parse::analyse(command);
        let mut note = self.bash_note(command, &analysis, unsandboxed);
        note.background = input.get("background").and_then(Value::as_bool) == Some(true);
        let mut shape_asks = false;
        let mut subjects: Vec<Subject> = Vec::new();
        for cmd in &analysis.commands {
            if cmd.words.is_empty() && cmd.assignments.is_empty() {
                continue;
            }
            match self.judge_command(cmd, unsandboxed, &mut note, &mut subjects) {
                Ok(asks) => shape_asks |= asks,
                Err(deny) => return deny,
            }
        }
        for r in &analysis.redirects {
            if !r.target.literal {
                continue; // opaque already
            }
            let tool = if r.write { "write" } else { "read" };
            let resolved = crate::path::resolve(&ctx.workspace, &r.target.text);
            subjects.extend(self.path_subjects(tool, &r.target.text, &resolved, ctx));
        }
        self.ask_for_bash(note, &subjects, shape_asks, ctx)
    }

    /// The note of a bash line: its opaque parts, and (when something is hidden from the
    /// analysis) the first deny rule that could match what it runs.
    fn bash_note(&self, command: &str, analysis: &bash_parse::Analysis, unsandboxed: bool) -> Note {
        let mut note = Note {
            command: cut(command.trim(), 300),
            opaque: analysis.opaque.clone(),
            could_deny: None,
            unsandboxed,
            background: false,
            firm: None,
            withheld: Vec::new(),
        };
        if analysis.hidden
            && let Some(rule) = self
                .rules
                .get("bash")
                .into_iter()
                .flatten()
                .find(|r| r.action == PermissionAction::Deny)
        {
            note.could_deny = Some((rule.pattern.clone(), note.command.clone()));
        }
        note
    }

    /// Judges one simple command of the line: `Err` with the denial when a rule denies it;
    /// otherwise whether a deny or ask rule's shape makes it ask. The command (not a wrapper,
    /// whose wrapped command is judged instead) joins `subjects`.
    // the denial is returned as it is handed on; boxing it would only move the allocation
    #[allow(clippy::result_large_err)]
    fn judge_command(
        &self,
        cmd: &SimpleCommand,
        unsandboxed: bool,
        note: &mut Note,
        subjects: &mut Vec<Subject>,
    ) -> Result<bool, Decision> {
        let form = cmd.form();
        let (action, pattern) = self.decide("bash", &[form.as_str()]);
        if action == PermissionAction::Deny {
            return Err(deny_message("bash", &form, pattern.as_deref()));
        }
        let decided_len = match action {
            PermissionAction::Allow => pattern.as_ref().map_or(0, |p| p.chars().count()),
            _ => 0,
        };
        let shape_asks = self.shape_rules(cmd, &form, decided_len, note)?;
        if cmd.wrapper {
            return Ok(shape_asks); // the command it runs is judged instead
        }
        let prefix = bash_parse::prefix_pattern(cmd);
        // a destructive command is granted only as it is: never `rm*` for one `rm`
        let grant = match prefix {
            Some(p) if super::destructive::is_destructive(cmd) => {
                if !note.withheld.contains(&p) {
                    note.withheld.push(p);
                }
                escape(&form)
            }
            Some(p) => p,
            None => escape(&form),
        };
        let mut this = Subject::named("bash", &grant);
        this.forms = vec![form];
        if unsandboxed {
            let mut outside = this.clone();
            outside.table = UNSANDBOXED.into();
            subjects.push(this);
            subjects.push(outside);
        } else {
            subjects.push(this);
        }
        Ok(shape_asks)
    }

    /// The deny and ask rules matched by shape against `cmd` (whose pattern decision, an allow
    /// rule of `decided_len` characters, a longer rule overrides): `Err` with the denial when a
    /// deny rule fits; otherwise whether one fits or could fit, so the line asks.
    // the denial is returned as it is handed on; boxing it would only move the allocation
    #[allow(clippy::result_large_err)]
    fn shape_rules(
        &self,
        cmd: &SimpleCommand,
        form: &str,
        decided_len: usize,
        note: &mut Note,
    ) -> Result<bool, Decision> {
        let mut shape_asks = false;
        for rule in self.rules.get("bash").into_iter().flatten() {
            if rule.action == PermissionAction::Allow {
                continue;
            }
            match fit(&rule.pattern, cmd) {
                Fit::Yes if rule.pattern.chars().count() >= decided_len => {
                    if rule.action == PermissionAction::Deny {
                        return Err(deny_message("bash", form, Some(&rule.pattern)));
                    }
                    shape_asks = true;
                }
                // A longer allow rule decides, as it would for the pattern itself.
                Fit::Yes | Fit::No => {}
                Fit::Could => {
                    shape_asks = true;
                    if rule.action == PermissionAction::Deny && note.could_deny.is_none() {
                        note.could_deny = Some((rule.pattern.clone(), form.to_string()));
                    }
                }
            }
        }
        Ok(shape_asks)
    }

    /// The decision once every command and redirection is judged: allow when nothing asks,
    /// otherwise a request for what asks (every command, when only the shape or opacity asks).
    fn ask_for_bash(
        &mut self,
        mut note: Note,
        subjects: &[Subject],
        shape_asks: bool,
        ctx: &ToolContext,
    ) -> Decision {
        let asks = match self.evaluate(subjects) {
            Ok(asks) => asks,
            Err(deny) => return deny,
        };
        if asks.is_empty() && note.opaque.is_empty() && !shape_asks {
            return Decision::Allow;
        }
        note.firm = super::firm_reason(&asks);
        let grantable: Vec<&Subject> = if asks.is_empty() {
            subjects.iter().filter(|s| s.table == "bash").collect()
        } else {
            asks
        };
        let mut title = note.command.clone();
        if note.unsandboxed {
            title = format!("{title}\n(outside the sandbox)");
        }
        if note.background {
            title = format!(
                "{title}\n(in the background: it keeps running after this call, until stopped or the session ends)"
            );
        }
        if !note.opaque.is_empty() {
            title = format!("{title}\n(asks because it uses {})", note.opaque.join(", "));
        }
        if !note.withheld.is_empty() {
            title = format!(
                "{title}\n(not offered for the session: {}; \"always\" allows that command only as written)",
                note.withheld.join(", ")
            );
        }
        let request = self.request("bash", title, &grantable, ctx);
        self.notes.insert(request.id.clone(), note);
        Decision::Ask(request)
    }
}

/// `s` as a glob matching only itself.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '{' | '}' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A rule pattern read as a command: name, flags, other words.
struct Shape {
    name: String,
    flags: BTreeSet<String>,
    words: Vec<GlobMatcher>,
}

fn shape(pattern: &str) -> Option<Shape> {
    let p = pattern.trim();
    let p = p.strip_suffix('*').unwrap_or(p).trim_end();
    let mut parts = p.split_whitespace();
    let first = parts.next()?;
    let first = first.trim_start_matches('\\');
    let name = first.rsplit('/').next().unwrap_or(first).to_string();
    if name.is_empty() || name.contains(['*', '?', '[', '{', '=', '$']) {
        return None;
    }
    let mut flags = BTreeSet::new();
    let mut words = Vec::new();
    for part in parts {
        if part.starts_with('-') && part.len() > 1 {
            add_flags(&name, part, &mut flags);
        } else {
            let m = GlobBuilder::new(part)
                .literal_separator(false)
                .backslash_escape(true)
                .build()
                .ok()?
                .compile_matcher();
            words.push(m);
        }
    }
    Some(Shape { name, flags, words })
}

/// The flags of one word: `-rf` is `r` and `f`, `--force=x` is `--force`; long spellings of a
/// few destructive commands' flags map to their short form.
fn add_flags(cmd: &str, word: &str, out: &mut BTreeSet<String>) {
    if let Some(long) = word.strip_prefix("--") {
        let long = long.split('=').next().unwrap_or(long);
        let canonical = match (cmd, long) {
            ("rm" | "cp", "recursive") => "r",
            ("rm" | "cp" | "mv" | "ln", "force") => "f",
            ("rm", "dir") => "d",
            ("chmod" | "chown" | "chgrp", "recursive") => "R",
            ("git", "force") => "f",
            _ => "",
        };
        out.insert(if canonical.is_empty() {
            format!("--{long}")
        } else {
            canonical.to_string()
        });
        return;
    }
    for c in word.trim_start_matches('-').chars() {
        let c = match (cmd, c) {
            ("rm" | "cp", 'R') => 'r',
            _ => c,
        };
        out.insert(c.to_string());
    }
}

/// How the rule `pattern` fits `cmd` by shape.
pub(super) fn fit(pattern: &str, cmd: &SimpleCommand) -> Fit {
    if cmd.words.is_empty() {
        return Fit::No;
    }
    if cmd.hidden_code {
        return Fit::Could;
    }
    let Some(shape) = shape(pattern) else {
        return Fit::No;
    };
    let Some(name) = cmd.name() else {
        return Fit::Could;
    };
    let name = name.trim_start_matches('\\');
    if name != shape.name {
        return Fit::No;
    }
    let mut flags = BTreeSet::new();
    let mut operands: Vec<&Word> = Vec::new();
    let mut dynamic = cmd.open_args;
    let mut options_done = false;
    for w in &cmd.words[1..] {
        if !w.literal {
            dynamic = true;
            continue;
        }
        if !options_done && w.text == "--" {
            options_done = true;
            continue;
        }
        if !options_done && w.text.starts_with('-') && w.text.len() > 1 {
            add_flags(&shape.name, &w.text, &mut flags);
        } else {
            operands.push(w);
        }
    }
    let flags_fit = shape.flags.is_subset(&flags);
    let mut next = 0;
    let mut words_fit = true;
    for m in &shape.words {
        match operands[next..].iter().position(|w| m.is_match(&w.text)) {
            Some(k) => next += k + 1,
            None => {
                words_fit = false;
                break;
            }
        }
    }
    match (flags_fit && words_fit, dynamic) {
        (true, _) => Fit::Yes,
        (false, true) => Fit::Could,
        (false, false) => Fit::No,
    }
}
