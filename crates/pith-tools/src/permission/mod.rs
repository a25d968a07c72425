//! Permission rules: per tool `allow | ask | deny`, with patterns (bash by command prefix,
//! file tools by path glob), `external_directory` for paths outside the workspace, session-wide
//! "always" grants, and the doom-loop check.
//!
//! Matching: within a tool's table the longest matching pattern wins (ties: the stricter action).
//! Patterns are globs whose `*` also crosses `/` (`src/*` covers the whole `src` tree). A bash
//! command line is read with a shell grammar and every command it runs must pass (see
//! `bash`). `grep`, `glob` and `list` on a file are checked like `read` of it.
//! The user's rules are merged over the defaults pattern by pattern. A default that is more
//! lenient than the user's `*` rule for the same tool is dropped (so `read = "deny"` denies
//! `.env.example` too), while stricter defaults stay (so `edit = "allow"` still asks for `*.env`).
//!
//! Here: the check of a call and the replies. The tables and matching are in `rules`, what a
//! call touches in `subjects`, a bash line in `bash`, the loop guards in `doom_loop`.

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

use super::ToolContext;
use pith_config::PermissionAction;
use pith_protocol::event::{PermissionReply, PermissionRequest};

mod bash;
mod destructive;
mod doom_loop;
mod rules;
mod subjects;
mod webfetch;

pub use bash::Note;
#[cfg(test)]
pub(crate) use doom_loop::BROKEN_CALLS_LIMIT;
pub(crate) use doom_loop::doom_loop_request;
pub use doom_loop::{DOOM_LOOP_THRESHOLD, DoomLoop, LoopStop};
use rules::Rule;
pub use rules::defaults_text;
pub(crate) use rules::is_env_file;
use subjects::{Firm, Subject, Unjudged, title};

/// The table for paths outside the workspace.
pub(crate) const EXTERNAL_DIRECTORY: &str = "external_directory";
/// The table consulted before `write` or `edit` changes a file with more than one name (a hard
/// link): the other names may lie outside the workspace, so the change reaches them too.
pub(crate) const HARD_LINK: &str = "hard_link";
/// The table consulted when the doom-loop check fires (default ask).
pub(crate) const DOOM_LOOP: &str = "doom_loop";

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

/// The permission state of one session: the configured rules plus "always" grants.
#[derive(Debug, Clone)]
pub struct Permissions {
    rules: BTreeMap<String, Vec<Rule>>,
    granted: BTreeMap<String, Vec<Rule>>,
    /// Request id → (table, pattern, exact pattern): what an "always" reply grants, and what
    /// an "always, this exact command" reply grants instead.
    pending: HashMap<String, Vec<(String, String, String)>>,
    /// MCP tools: the name the model calls → (server, the server's name for the tool). Their
    /// rules are the server's table (`[permission.SERVER]`), matched against the tool's name.
    mcp: HashMap<String, (String, String)>,
    /// Request id → why a bash request asks and whether `--yes` may approve it.
    notes: HashMap<String, Note>,
}

impl Permissions {
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
        let firm = firm_reason(&asks);
        let request = self.request(tool, title, &asks, ctx);
        if let Some(why) = firm {
            let note = Note {
                command: cut(&request.title, 300),
                firm: Some(why),
                ..Note::default()
            };
            self.notes.insert(request.id.clone(), note);
        }
        Decision::Ask(request)
    }

    /// Whether `decision` is a question nothing but the user may answer (a protected path, a
    /// hard link): a permission mode must not turn it into an allow.
    pub fn is_firm(&self, decision: &Decision) -> bool {
        match decision {
            Decision::Ask(r) => self.notes.get(&r.id).is_some_and(|n| n.firm.is_some()),
            _ => false,
        }
    }

    /// Checks each subject: the first denied one decides (`Err`); otherwise the ones that must
    /// be asked about (not granted for the session).
    // the denial is returned as it is handed on; boxing it would only move the allocation
    #[allow(clippy::result_large_err)]
    fn evaluate<'a>(&self, subjects: &'a [Subject]) -> Result<Vec<&'a Subject>, Decision> {
        let mut asks = Vec::new();
        for s in subjects {
            if let Some(message) = &s.refused {
                return Err(Decision::Deny {
                    message: message.clone(),
                });
            }
            let forms: Vec<&str> = s.forms.iter().map(String::as_str).collect();
            let (action, pattern) = self.decide(&s.table, &forms);
            match action {
                PermissionAction::Deny => {
                    let shown = s.forms.first().map(String::as_str).unwrap_or_default();
                    return Err(deny_message(&s.table, shown, pattern.as_deref()));
                }
                // a protected path asks whatever the rules and grants say
                _ if matches!(s.firm, Some(Firm::Protected(_))) => asks.push(s),
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
        let mut grants: Vec<(String, String, String)> = Vec::new();
        // "always" never covers a protected path: it asks every time
        for s in grantable
            .iter()
            .filter(|s| !matches!(s.firm, Some(Firm::Protected(_))))
        {
            if !patterns.contains(&s.grant) {
                patterns.push(s.grant.clone());
            }
            grants.push((s.table.clone(), s.grant.clone(), s.exact()));
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

    /// Why headless `--yes` (and bypass mode, and a hook's approval) must not approve this
    /// request (a protected path, a hard link, a deny rule that could match a command pith
    /// cannot fully read), or `None` when it may.
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
                .map(|p| (request.tool.clone(), p.clone(), p.clone()))
                .collect()
        });
        let exact = reply == PermissionReply::AlwaysExact;
        if reply == PermissionReply::Always || exact {
            for (table, prefix, whole) in grants {
                let pattern = if exact { whole } else { prefix };
                tracing::debug!(table, pattern, "permission granted for the session");
                self.granted
                    .entry(table)
                    .or_default()
                    .push(Rule::new(&pattern, PermissionAction::Allow));
            }
        }
    }
}

/// Why the first firm subject among `asks` must be put to the user.
fn firm_reason(asks: &[&Subject]) -> Option<String> {
    // a protected path is named first: nothing but the user approves it
    let mut asks = asks.to_vec();
    asks.sort_by_key(|s| !matches!(s.firm, Some(Firm::Protected(_))));
    asks.iter().find_map(|s| match &s.firm {
        Some(Firm::Protected(why)) => Some(format!("`{}` is protected: {why}", s.grant)),
        Some(Firm::HardLink(why) | Firm::Outside(why)) => Some(why.clone()),
        None => None,
    })
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

pub(super) fn cut(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_string(),
        Some((i, _)) => format!("{}…", &s[..i]),
    }
}

#[cfg(test)]
mod tests;
