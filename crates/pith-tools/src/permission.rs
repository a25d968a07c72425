//! Permission rules: per tool `allow | ask | deny`, with patterns (bash by command prefix,
//! file tools by path glob), `external_directory` for paths outside the workspace, session-wide
//! "always" grants, and the doom-loop check.
//!
//! Matching: within a tool's table the longest matching pattern wins (ties: the stricter action).
//! Patterns are globs whose `*` also crosses `/` (`src/*` covers the whole `src` tree). A bash
//! command line is read with a shell grammar and every command it runs must pass (see
//! `permission_bash`). `grep`, `glob` and `list` on a file are checked like `read` of it.
//! The user's rules are merged over the defaults pattern by pattern. A default that is more
//! lenient than the user's `*` rule for the same tool is dropped (so `read = "deny"` denies
//! `.env.example` too), while stricter defaults stay (so `edit = "allow"` still asks for `*.env`).

use std::collections::{BTreeMap, HashMap};

use globset::GlobMatcher;
use serde_json::Value;

use super::ToolContext;
use super::path::{Resolved, is_under, resolve};
use pith_config::{PermissionAction, PermissionSetting};
use pith_protocol::event::{PermissionReply, PermissionRequest};
use pith_protocol::tool::{FileArg, ToolInput};

/// The table for paths outside the workspace.
pub const EXTERNAL_DIRECTORY: &str = "external_directory";
/// The table consulted before `write` or `edit` changes a file with more than one name (a hard
/// link): the other names may lie outside the workspace, so the change reaches them too.
pub const HARD_LINK: &str = "hard_link";
/// The table consulted when the doom-loop check fires (default ask).
pub const DOOM_LOOP: &str = "doom_loop";
/// Identical calls in a row that count as a doom loop.
pub const DOOM_LOOP_THRESHOLD: usize = 3;

#[path = "permission_bash.rs"]
mod bash;
pub use bash::{Note, UNSANDBOXED};

#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    Allow,
    /// The rules deny the call; `message` is what the model sees.
    Deny {
        message: String,
    },
    /// The user must answer this request first.
    Ask(PermissionRequest),
}

#[derive(Debug, Clone)]
struct Rule {
    pattern: String,
    matcher: Option<GlobMatcher>,
    action: PermissionAction,
}

impl Rule {
    fn new(pattern: &str, action: PermissionAction) -> Rule {
        let matcher = pith_config::permission_glob(pattern)
            .map_err(|e| tracing::warn!(pattern, error = %e, "permission pattern is not a valid glob; matched literally"))
            .ok();
        Rule {
            pattern: pattern.to_string(),
            matcher,
            action,
        }
    }

    fn matches(&self, subject: &str) -> bool {
        match &self.matcher {
            Some(m) => m.is_match(subject),
            None => self.pattern == subject,
        }
    }
}

fn severity(a: PermissionAction) -> u8 {
    match a {
        PermissionAction::Allow => 0,
        PermissionAction::Ask => 1,
        PermissionAction::Deny => 2,
    }
}

/// The built-in rules, underneath the user's.
fn defaults() -> BTreeMap<String, Vec<(&'static str, PermissionAction)>> {
    use PermissionAction::*;
    let env = [("*.env", Ask), ("*.env.*", Ask)];
    let mut d: BTreeMap<String, Vec<(&'static str, PermissionAction)>> = BTreeMap::new();
    d.insert(
        "read".into(),
        vec![("*", Allow), env[0], env[1], ("*.env.example", Allow)],
    );
    d.insert("write".into(), vec![("*", Ask), env[0], env[1]]);
    d.insert("edit".into(), vec![("*", Ask), env[0], env[1]]);
    d.insert("bash".into(), vec![("*", Ask)]);
    // a sub-agent's own calls are checked like any other; starting one is not a risk by itself
    for t in [
        "glob",
        "grep",
        "list",
        "todowrite",
        "recall",
        "tool_search",
        "task",
    ] {
        d.insert(t.into(), vec![("*", Allow)]);
    }
    d.insert(EXTERNAL_DIRECTORY.into(), vec![("*", Ask)]);
    d.insert(UNSANDBOXED.into(), vec![("*", Ask)]);
    d.insert(HARD_LINK.into(), vec![("*", Ask)]);
    d.insert("webfetch".into(), vec![("*", Ask)]);
    d.insert(DOOM_LOOP.into(), vec![("*", Ask)]);
    d
}

/// Whether `path` is named like the `.env` files the default `read` rules ask about (`*.env`,
/// `*.env.*`, but not `*.env.example`): searches skip them.
pub fn is_env_file(path: &std::path::Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    (name.ends_with(".env") || name.contains(".env.")) && !name.ends_with(".env.example")
}

/// The permission state of one session: the configured rules plus "always" grants.
#[derive(Debug, Clone)]
pub struct Permissions {
    rules: BTreeMap<String, Vec<Rule>>,
    granted: BTreeMap<String, Vec<Rule>>,
    /// Request id → (table, pattern) pairs an "always" reply grants.
    pending: HashMap<String, Vec<(String, String)>>,
    /// MCP tools: the name the model calls → (server, the server's name for the tool). Their
    /// rules are the server's table (`[permission.SERVER]`), matched against the tool's name.
    mcp: HashMap<String, (String, String)>,
    /// Request id → why a bash request asks and whether `--yes` may approve it.
    notes: HashMap<String, Note>,
}

/// One thing a call touches, checked against one table.
struct Subject {
    table: String,
    /// Strings matched against the table's patterns (e.g. relative and absolute path).
    forms: Vec<String>,
    /// What an "always" reply allows from now on.
    grant: String,
}

impl Subject {
    /// `what` in `table`, matched and granted as it is.
    fn named(table: &str, what: &str) -> Subject {
        Subject {
            table: table.into(),
            grant: what.into(),
            forms: vec![what.into()],
        }
    }
}

impl Permissions {
    pub fn new(user: &BTreeMap<String, PermissionSetting>) -> Self {
        let mut merged: BTreeMap<String, BTreeMap<String, (PermissionAction, bool)>> =
            BTreeMap::new();
        for (tool, rules) in defaults() {
            let t = merged.entry(tool).or_default();
            for (p, a) in rules {
                t.insert(p.to_string(), (a, true));
            }
        }
        for (tool, setting) in user {
            let t = merged.entry(tool.clone()).or_default();
            let user_rules: Vec<(String, PermissionAction)> = match setting {
                PermissionSetting::Action(a) => vec![("*".to_string(), *a)],
                PermissionSetting::Patterns(map) => {
                    map.iter().map(|(p, a)| (p.clone(), *a)).collect()
                }
            };
            for (p, a) in &user_rules {
                t.insert(p.clone(), (*a, false));
            }
            if let Some((_, star)) = user_rules.iter().find(|(p, _)| p == "*") {
                t.retain(|p, (a, is_default)| {
                    !(*is_default && p != "*" && severity(*a) < severity(*star))
                });
            }
        }
        let rules = merged
            .into_iter()
            .map(|(tool, t)| {
                (
                    tool,
                    t.into_iter().map(|(p, (a, _))| Rule::new(&p, a)).collect(),
                )
            })
            .collect();
        Permissions {
            rules,
            granted: BTreeMap::new(),
            pending: HashMap::new(),
            mcp: HashMap::new(),
            notes: HashMap::new(),
        }
    }

    /// The MCP tools of the session: the name the model calls → (server, the server's name).
    pub fn set_mcp_tools(&mut self, tools: HashMap<String, (String, String)>) {
        self.mcp = tools;
    }

    /// What the rules say for this call. Paths are resolved against `ctx.workspace` (symlinks and
    /// `..` included) before matching; a path outside the workspace is also checked against
    /// `external_directory`; reads of `<data_dir>/tool-output/` are always allowed.
    pub fn check(&mut self, tool: &str, input: &Value, ctx: &ToolContext) -> Decision {
        if tool == "bash" {
            return self.check_bash(input, ctx);
        }
        let subjects = match self.subjects(tool, input, ctx) {
            Ok(s) => s,
            // the tool refuses what it cannot read
            Err(Unjudged::Malformed) => return Decision::Allow,
            Err(Unjudged::SeveralFiles) => return several_files(tool),
        };
        let asks = match self.evaluate(&subjects) {
            Ok(asks) => asks,
            Err(deny) => return deny,
        };
        if asks.is_empty() {
            return Decision::Allow;
        }
        let title = title(tool, input, &subjects, ctx);
        Decision::Ask(self.request(tool, title, &asks, ctx))
    }

    /// Checks each subject: the first denied one decides (`Err`); otherwise the ones that must
    /// be asked about (not granted for the session).
    // the denial is returned as it is handed on; boxing it would only move the allocation
    #[allow(clippy::result_large_err)]
    fn evaluate<'a>(&self, subjects: &'a [Subject]) -> Result<Vec<&'a Subject>, Decision> {
        let mut asks = Vec::new();
        for s in subjects {
            let forms: Vec<&str> = s.forms.iter().map(String::as_str).collect();
            let (action, pattern) = self.decide(&s.table, &forms);
            match action {
                PermissionAction::Deny => {
                    let shown = s.forms.first().map(String::as_str).unwrap_or_default();
                    return Err(deny_message(&s.table, shown, pattern.as_deref()));
                }
                PermissionAction::Ask if !self.is_granted(&s.table, &forms) => asks.push(s),
                _ => {}
            }
        }
        Ok(asks)
    }

    /// A new question, remembered with what an "always" reply grants.
    fn request(
        &mut self,
        tool: &str,
        title: String,
        grantable: &[&Subject],
        ctx: &ToolContext,
    ) -> PermissionRequest {
        let mut patterns: Vec<String> = Vec::new();
        let mut grants: Vec<(String, String)> = Vec::new();
        for s in grantable {
            if !patterns.contains(&s.grant) {
                patterns.push(s.grant.clone());
            }
            grants.push((s.table.clone(), s.grant.clone()));
        }
        let request = PermissionRequest {
            id: format!("perm_{}", ulid::Ulid::new()),
            tool: tool.to_string(),
            call_id: ctx.call_id.clone(),
            title,
            patterns,
            agent: None,
        };
        self.pending.insert(request.id.clone(), grants);
        request
    }

    /// Why headless `--yes` must not approve this request (a deny rule could match a command
    /// pith cannot fully read), or `None` when it may.
    pub fn yes_refusal(
        &self,
        request: &PermissionRequest,
        allow_unsandboxed: bool,
    ) -> Option<String> {
        self.notes.get(&request.id)?.yes_refusal(allow_unsandboxed)
    }

    /// Why this request asks although no rule says ask, for a run with no one to answer.
    pub fn headless_reason(&self, request: &PermissionRequest) -> Option<String> {
        self.notes.get(&request.id)?.headless_reason()
    }

    /// `check`, then the doom-loop test: the third identical call in a row asks even if the rules
    /// allow it (unless `doom_loop = "allow"`). Records the call in `doom`.
    pub fn check_call(
        &mut self,
        doom: &mut DoomLoop,
        tool: &str,
        input: &Value,
        ctx: &ToolContext,
    ) -> Decision {
        let looping = doom.record(tool, input);
        let decision = self.check(tool, input, ctx);
        if !looping || !matches!(decision, Decision::Allow) {
            return decision;
        }
        match self.decide(DOOM_LOOP, &[tool]).0 {
            PermissionAction::Allow => Decision::Allow,
            PermissionAction::Deny => Decision::Deny {
                message: format!(
                    "Permission denied: `{tool}` was called {} times in a row with the same input. \
                     Stop repeating it; try something else or ask the user.",
                    doom.count()
                ),
            },
            PermissionAction::Ask => {
                Decision::Ask(doom_loop_request(tool, input, doom.count(), ctx))
            }
        }
    }

    /// Records the user's answer. `Always` allows the request's patterns for the rest of the
    /// session; `Once` and `Deny` grant nothing.
    pub fn reply(&mut self, request: &PermissionRequest, reply: PermissionReply) {
        self.notes.remove(&request.id);
        let grants = self.pending.remove(&request.id).unwrap_or_else(|| {
            request
                .patterns
                .iter()
                .map(|p| (request.tool.clone(), p.clone()))
                .collect()
        });
        if reply == PermissionReply::Always {
            for (table, pattern) in grants {
                tracing::debug!(table, pattern, "permission granted for the session");
                self.granted
                    .entry(table)
                    .or_default()
                    .push(Rule::new(&pattern, PermissionAction::Allow));
            }
        }
    }

    /// The action for `forms` in `table` and the pattern that decided it.
    fn decide(&self, table: &str, forms: &[&str]) -> (PermissionAction, Option<String>) {
        let Some(rules) = self.rules.get(table) else {
            // A tool nobody configured: ask.
            return (PermissionAction::Ask, None);
        };
        let best = rules
            .iter()
            .filter(|r| forms.iter().any(|f| r.matches(f)))
            .max_by(|a, b| {
                a.pattern
                    .chars()
                    .count()
                    .cmp(&b.pattern.chars().count())
                    .then(severity(a.action).cmp(&severity(b.action)))
            });
        match best {
            Some(r) => (r.action, Some(r.pattern.clone())),
            None => (PermissionAction::Ask, None),
        }
    }

    fn is_granted(&self, table: &str, forms: &[&str]) -> bool {
        self.granted
            .get(table)
            .is_some_and(|rules| rules.iter().any(|r| forms.iter().any(|f| r.matches(f))))
    }

    /// What a call touches, or why it cannot be judged.
    fn subjects(
        &self,
        tool: &str,
        input: &Value,
        ctx: &ToolContext,
    ) -> Result<Vec<Subject>, Unjudged> {
        match (tool, ToolInput::of(tool, input)) {
            ("read" | "write" | "edit", _) => {
                let raw = match ToolInput::file_arg(input) {
                    FileArg::One(raw) => raw,
                    FileArg::Missing => return Err(Unjudged::Malformed),
                    FileArg::Several => return Err(Unjudged::SeveralFiles),
                };
                let r = resolve(&ctx.workspace, raw);
                Ok(self.path_subjects(tool, &r, ctx))
            }
            ("glob" | "grep", ToolInput::Search { path, .. })
            | ("list", ToolInput::List { path }) => {
                let pattern = input.get("pattern").and_then(Value::as_str);
                Ok(self.search_subjects(tool, path, pattern, ctx))
            }
            // `[permission.task]` patterns match the agent's name
            ("task", ToolInput::Task { agent, .. }) => {
                Ok(vec![Subject::named(tool, agent.unwrap_or_default())])
            }
            // `[permission.webfetch]` patterns match the host
            ("webfetch", ToolInput::Fetch { url }) => {
                // a URL with no host the tool would fetch is judged as `*` (it fails anyway)
                let host = super::webfetch::host_of(url.unwrap_or_default())
                    .unwrap_or_else(|_| "*".into());
                Ok(vec![Subject::named(tool, &host)])
            }
            _ => Ok(vec![match self.mcp.get(tool) {
                Some((server, name)) => Subject::named(server, name),
                None => Subject::named(tool, "*"),
            }]),
        }
    }

    /// The subjects of a search (`glob`, `grep`: for `pattern`) or listing (`list`) of `dir`
    /// (the workspace when not given): the directory when it lies outside the workspace (the
    /// read rules when it is a file), then the tool's own. The tool-output folder is free.
    fn search_subjects(
        &self,
        tool: &str,
        dir: Option<&str>,
        pattern: Option<&str>,
        ctx: &ToolContext,
    ) -> Vec<Subject> {
        let raw = dir.filter(|s| !s.trim().is_empty()).unwrap_or(".");
        let r = resolve(&ctx.workspace, raw);
        if in_tool_output(&r, ctx) {
            return Vec::new();
        }
        let mut subjects = Vec::new();
        if r.path.is_file() {
            // Searching a file reads it: the read rules apply (`.env` asks).
            subjects = self.path_subjects("read", &r, ctx);
        } else if !r.inside {
            subjects.push(external(&r, true));
        }
        let what = match tool {
            "list" => r.display(&ctx.workspace),
            _ => pattern.unwrap_or("*").to_string(),
        };
        subjects.push(Subject::named(tool, &what));
        subjects
    }
}

/// Why a call's subjects are not known.
enum Unjudged {
    /// The input is not what the tool takes (no file named): the tool refuses it.
    Malformed,
    /// A file tool's call names its file under more than one key: which one it means is not
    /// known, so none is judged (the tool refuses it too).
    SeveralFiles,
}

/// The refusal of a file tool's call that names its file more than once.
fn several_files(tool: &str) -> Decision {
    Decision::Deny {
        message: format!(
            "Not run: this {tool} call names its file more than once (`file_path` and an alias \
             such as `path`), so which file it means is unclear. Name the file once, as \
             `file_path`."
        ),
    }
}

/// The decision for a denied subject, with what the model is told.
fn deny_message(table: &str, shown: &str, pattern: Option<&str>) -> Decision {
    let rule = pattern
        .map(|p| format!(" (rule `{p}`)"))
        .unwrap_or_default();
    Decision::Deny {
        message: format!(
            "Permission denied: the user's rules deny {table} for `{shown}`{rule}. \
             Do not retry this call; find another way or ask the user."
        ),
    }
}

impl Permissions {
    /// The subjects of reading or writing a resolved path with `tool`'s table: the path itself,
    /// and `external_directory` when it lies outside the workspace. Reads of the tool-output
    /// folder are free.
    fn path_subjects(&self, tool: &str, r: &Resolved, ctx: &ToolContext) -> Vec<Subject> {
        if tool == "read" && in_tool_output(r, ctx) {
            return Vec::new();
        }
        let mut subjects = Vec::new();
        if !r.inside {
            subjects.push(external(r, r.path.is_dir()));
        }
        let shown = r.display(&ctx.workspace);
        let abs = r.path.to_string_lossy().into_owned();
        if tool != "read" && link_count(&r.path) > 1 {
            subjects.push(Subject {
                table: HARD_LINK.into(),
                grant: shown.clone(),
                forms: vec![shown.clone(), abs.clone()],
            });
        }
        subjects.push(Subject {
            table: tool.into(),
            grant: shown.clone(),
            forms: vec![shown, abs],
        });
        subjects
    }
}

/// How many names the regular file at `path` has (0 when it is missing or not a regular file;
/// a symlink is not followed).
fn link_count(path: &std::path::Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(path)
        .ok()
        .filter(|m| m.file_type().is_file())
        .map_or(0, |m| m.nlink())
}

fn in_tool_output(r: &Resolved, ctx: &ToolContext) -> bool {
    is_under(&r.path, &super::truncate::output_dir(&ctx.data_dir))
}

/// The `external_directory` subject for a resolved path: granted by its directory.
fn external(r: &Resolved, is_dir: bool) -> Subject {
    let abs = r.path.to_string_lossy().into_owned();
    let dir = if is_dir {
        r.path.clone()
    } else {
        r.path
            .parent()
            .map(|p| p.to_path_buf())
            .unwrap_or_else(|| r.path.clone())
    };
    let dir = dir.to_string_lossy().trim_end_matches('/').to_string();
    let form = if is_dir { format!("{abs}/") } else { abs };
    Subject {
        table: EXTERNAL_DIRECTORY.into(),
        grant: format!("{dir}/*"),
        forms: vec![form],
    }
}

fn title(tool: &str, input: &Value, subjects: &[Subject], ctx: &ToolContext) -> String {
    let main = subjects.iter().rfind(|s| s.table == tool);
    let outside = subjects.iter().any(|s| s.table == EXTERNAL_DIRECTORY);
    let linked = subjects.iter().any(|s| s.table == HARD_LINK);
    let base = match main {
        Some(s) if matches!(tool, "read" | "write" | "edit" | "list") => s.forms[0].clone(),
        Some(s) if s.forms[0] != "*" => {
            let path = input
                .get("path")
                .and_then(Value::as_str)
                .map(|p| resolve(&ctx.workspace, p).display(&ctx.workspace));
            match path {
                Some(p) => format!("{} in {p}", s.forms[0]),
                None => s.forms[0].clone(),
            }
        }
        _ => tool.to_string(),
    };
    let base = if linked {
        format!("{base} (a hard link: the change also reaches the file's other names)")
    } else {
        base
    };
    if outside {
        format!("{base} (outside the workspace)")
    } else {
        base
    }
}

pub(super) fn cut(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_string(),
        Some((i, _)) => format!("{}…", &s[..i]),
    }
}

/// The request the doom-loop check raises.
pub fn doom_loop_request(
    tool: &str,
    input: &Value,
    count: usize,
    ctx: &ToolContext,
) -> PermissionRequest {
    let view = ToolInput::of(tool, input);
    let what = match view.command().or_else(|| view.path()) {
        Some(s) => format!(" `{}`", cut(s, 120)),
        None => String::new(),
    };
    PermissionRequest {
        id: format!("perm_{}", ulid::Ulid::new()),
        tool: tool.to_string(),
        call_id: ctx.call_id.clone(),
        title: format!(
            "{tool}{what} called {count} times in a row with the same input: run it again?"
        ),
        patterns: Vec::new(),
        agent: None,
    }
}

/// Broken calls in a row (arguments that are not JSON, a tool that does not exist), whatever
/// their arguments, that stop a turn.
pub const BROKEN_CALLS_LIMIT: usize = 5;

fn broken_why(input: &Value) -> &'static str {
    if input.is_string() {
        "its arguments are not valid JSON"
    } else {
        "no tool has that name"
    }
}

/// Why a turn stops because the model is looping; the text is what the user is shown.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoopStop {
    /// The same call that cannot run, [`DOOM_LOOP_THRESHOLD`] times in a row.
    #[error(
        "stopped: the model sent the same call to `{tool}` {count} times in a row, and it cannot run ({why}). Ask again in other words, or try another model"
    )]
    SameBrokenCall {
        tool: String,
        count: usize,
        why: &'static str,
    },
    /// [`BROKEN_CALLS_LIMIT`] calls in a row that cannot run.
    #[error(
        "stopped: the model sent {count} tool calls in a row that cannot run (the last to `{tool}`: {why}). Ask again in other words, or try another model"
    )]
    BrokenCalls {
        tool: String,
        count: usize,
        why: &'static str,
    },
    /// A repeated call with no one to allow it (headless).
    #[error(
        "stopped: the model called `{tool}` {count} times in a row with the same input, and this run has no one to allow it"
    )]
    Unattended { tool: String, count: usize },
}

/// Detects the same tool called with the same input several times in a row, and a model that
/// keeps sending calls that cannot run.
#[derive(Debug, Clone, Default)]
pub struct DoomLoop {
    last: Option<(String, Value)>,
    count: usize,
    /// Broken calls in a row.
    broken: usize,
}

impl DoomLoop {
    /// Records a call; true when it is the third (or later) identical call in a row.
    pub fn record(&mut self, tool: &str, input: &Value) -> bool {
        self.broken = 0;
        self.count_identical(tool, input)
    }

    fn count_identical(&mut self, tool: &str, input: &Value) -> bool {
        match &self.last {
            Some((t, i)) if t == tool && i == input => self.count += 1,
            _ => {
                self.last = Some((tool.to_string(), input.clone()));
                self.count = 1;
            }
        }
        self.count >= DOOM_LOOP_THRESHOLD
    }

    /// Records a call that cannot run (`input` is the raw text of arguments that are not JSON,
    /// or the tool does not exist). Returns why the turn must stop when this is a loop: the
    /// third identical broken call, or the [`BROKEN_CALLS_LIMIT`]th broken call in a row.
    pub fn record_broken(&mut self, tool: &str, input: &Value) -> Option<LoopStop> {
        let identical = self.count_identical(tool, input);
        self.broken += 1;
        if identical {
            Some(LoopStop::SameBrokenCall {
                tool: tool.to_string(),
                count: self.count,
                why: broken_why(input),
            })
        } else if self.broken >= BROKEN_CALLS_LIMIT {
            Some(LoopStop::BrokenCalls {
                tool: tool.to_string(),
                count: self.broken,
                why: broken_why(input),
            })
        } else {
            None
        }
    }

    /// How many identical calls in a row were recorded last.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Forget the streaks (a new user turn).
    pub fn reset(&mut self) {
        *self = DoomLoop::default();
    }
}

#[cfg(test)]
#[path = "permission_tests.rs"]
mod tests;
