//! What a call touches: the subjects its rules are checked on (a path, with `external_directory`
//! outside the workspace and `hard_link` for a file with other names; a search's directory; a
//! task's agent; a fetch's host; an MCP tool in its server's table), and the question's title.

use serde_json::Value;

use super::{EXTERNAL_DIRECTORY, HARD_LINK, Permissions};
use crate::ToolContext;
use std::path::{Path, PathBuf};

use crate::path::{Resolved, lexical_normalize, resolve};
use crate::policy::OwnState;
use pith_protocol::tool::{FileArg, ToolInput, ToolName};

/// One thing a call touches, checked against one table.
#[derive(Clone)]
pub(super) struct Subject {
    pub(super) table: String,
    /// Strings matched against the table's patterns (e.g. relative and absolute path).
    pub(super) forms: Vec<String>,
    /// What an "always" reply allows from now on.
    pub(super) grant: String,
    /// Why the call must be put to the user whatever else says (`None`: the rules decide).
    pub(super) firm: Option<Firm>,
    /// Why no one may approve the call (pith's own state): it is denied with this message.
    pub(super) refused: Option<String>,
}

/// Why a subject is always asked about: no mode, `--yes` or hook approves it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Firm {
    /// A protected path (`policy`), with why: no rule or session grant allows it either.
    Protected(String),
    /// A file with other names: an allow rule or the user's "always" decides, nothing else.
    HardLink(String),
    /// A write outside the workspace (or through a link into a hidden path): like a hard
    /// link, an `external_directory` allow rule in the user's config or the user decides.
    Outside(String),
}

impl Subject {
    /// What an "always, this exact command" reply grants: a command only as written (its
    /// form, escaped), anything else as an "always" reply would.
    pub(super) fn exact(&self) -> String {
        match self.forms.first() {
            Some(form) if self.table == "bash" || self.table == super::bash::UNSANDBOXED => {
                globset::escape(form)
            }
            _ => self.grant.clone(),
        }
    }

    /// `what` in `table`, matched and granted as it is.
    pub(super) fn named(table: &str, what: &str) -> Subject {
        Subject {
            table: table.into(),
            grant: what.into(),
            forms: vec![what.into()],
            firm: None,
            refused: None,
        }
    }
}

impl Permissions {
    /// What a call touches, or why it cannot be judged.
    pub(super) fn subjects(
        &self,
        tool: &str,
        input: &Value,
        ctx: &ToolContext,
    ) -> Result<Vec<Subject>, Unjudged> {
        let name = ToolName::parse(tool);
        match ToolInput::of(&name, input) {
            ToolInput::Read { .. } | ToolInput::Write { .. } | ToolInput::Edit { .. } => {
                let raw = match ToolInput::file_arg(input) {
                    FileArg::One(raw) => raw,
                    FileArg::Missing => return Err(Unjudged::Malformed),
                    FileArg::Several => return Err(Unjudged::SeveralFiles),
                };
                let r = resolve(&ctx.workspace, raw);
                // the call acts on this resolution, not on the path string again
                crate::open::remember(ctx, raw, &r);
                let mut subjects = self.path_subjects(tool, raw, &r, ctx);
                // a link inside the workspace into a hidden path asks like one out of it
                if crate::open::leads_into_hidden(ctx, &crate::open::peek(ctx, raw))
                    && !subjects.iter().any(|s| s.table == EXTERNAL_DIRECTORY)
                {
                    subjects.insert(0, outside(tool, external(&r, false)));
                }
                Ok(subjects)
            }
            ToolInput::Search { path, .. } | ToolInput::List { path } => {
                let pattern = input.get("pattern").and_then(Value::as_str);
                Ok(self.search_subjects(tool, path, pattern, ctx))
            }
            // `[permission.task]` patterns match the agent's name
            ToolInput::Task { agent, .. } => {
                Ok(vec![Subject::named(tool, agent.unwrap_or_default())])
            }
            // `[permission.webfetch]` patterns match `host:port` (`webfetch.rs`)
            ToolInput::Fetch { url } => {
                // a URL the tool would not fetch is judged as `*` (it fails anyway)
                Ok(vec![
                    match crate::webfetch::Target::parse(url.unwrap_or_default()) {
                        Ok(target) => self.fetch_subject(&target),
                        Err(_) => Subject::named(tool, "*"),
                    },
                ])
            }
            // `[permission.websearch]` patterns match the query; "always" grants every search
            // (the service is the one the user configured)
            ToolInput::WebSearch { query } => {
                let mut s = Subject::named(tool, query.unwrap_or_default());
                s.grant = "*".into();
                Ok(vec![s])
            }
            ToolInput::Exec { .. }
            | ToolInput::Todos { .. }
            | ToolInput::Mcp { .. }
            | ToolInput::Other => Ok(vec![match self.mcp.get(tool) {
                Some((server, name)) => Subject::named(server, name),
                None => Subject::named(tool, "*"),
            }]),
        }
    }

    /// The subjects of a search (`glob`, `grep`: for `pattern`) or listing (`list`) of `dir`
    /// (the workspace when not given): the directory when it lies outside the workspace (the
    /// read rules when it is a file), then the tool's own. The tool-output folder is free.
    pub(super) fn search_subjects(
        &self,
        tool: &str,
        dir: Option<&str>,
        pattern: Option<&str>,
        ctx: &ToolContext,
    ) -> Vec<Subject> {
        let raw = dir.map(str::trim).filter(|s| !s.is_empty()).unwrap_or(".");
        let r = resolve(&ctx.workspace, raw);
        // the search opens this resolution, not the path string again (`glob::search_root`)
        crate::open::remember(ctx, raw, &r);
        let mut subjects = Vec::new();
        if r.path.is_file() {
            // Searching a file reads it: the read rules apply (`.env` asks).
            subjects = self.path_subjects("read", raw, &r, ctx);
            if subjects.is_empty() || subjects.iter().any(|s| s.refused.is_some()) {
                return subjects; // the tool-output folder (free), or pith's own state
            }
        } else {
            match ctx.policy.own_state(&given(&ctx.workspace, raw)) {
                OwnState::ToolOutput => return Vec::new(),
                OwnState::Yes => return vec![own_state(tool, &r.display(&ctx.workspace))],
                // outside, or a path the sandbox hides (a workspace that holds `~/.ssh`)
                OwnState::No if !r.inside || ctx.policy.is_hidden(&r.path) => {
                    subjects.push(external(&r, true))
                }
                OwnState::No => {}
            }
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
pub(super) enum Unjudged {
    /// The input is not what the tool takes (no file named): the tool refuses it.
    Malformed,
    /// A file tool's call names its file under more than one key: which one it means is not
    /// known, so none is judged (the tool refuses it too).
    SeveralFiles,
}

impl Permissions {
    /// The subjects of reading or writing `raw` with `tool`'s table: the path itself (firm when
    /// the policy protects it and the call writes), and `external_directory` when it lies
    /// outside the workspace. Reads of the tool-output folder are free; pith's own state is
    /// refused.
    pub(super) fn path_subjects(
        &self,
        tool: &str,
        raw: &str,
        r: &Resolved,
        ctx: &ToolContext,
    ) -> Vec<Subject> {
        let shown = r.display(&ctx.workspace);
        let given = given(&ctx.workspace, raw);
        match ctx.policy.own_state(&given) {
            OwnState::ToolOutput if tool == "read" => return Vec::new(),
            OwnState::No => {}
            OwnState::ToolOutput | OwnState::Yes => return vec![own_state(tool, &shown)],
        }
        let mut subjects = Vec::new();
        // outside, or a path the sandbox hides (a workspace that holds `~/.ssh`): asked
        if !r.inside || ctx.policy.is_hidden(&r.path) {
            subjects.push(outside(tool, external(r, r.path.is_dir())));
        }
        let abs = r.path.to_string_lossy().into_owned();
        if tool != "read" && link_count(&r.path) > 1 {
            let mut linked = Subject::named(HARD_LINK, &shown);
            linked.forms.push(abs.clone());
            linked.firm = Some(Firm::HardLink(format!(
                "`{shown}` has other names (a hard link), so the change would reach them too"
            )));
            subjects.push(linked);
        }
        let mut own = Subject::named(tool, &shown);
        own.forms.push(abs);
        if tool != "read"
            && let Some(why) = ctx.policy.protected(&given)
        {
            own.firm = Some(Firm::Protected(why.to_string()));
        }
        subjects.push(own);
        subjects
    }
}

/// `raw` made absolute against the workspace (`~/` expanded), links not followed.
fn given(workspace: &Path, raw: &str) -> PathBuf {
    let raw = raw.trim();
    let expanded = match (raw.strip_prefix('~'), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) if rest.is_empty() || rest.starts_with('/') => {
            PathBuf::from(home).join(rest.trim_start_matches('/'))
        }
        _ => PathBuf::from(raw),
    };
    lexical_normalize(&workspace.join(expanded))
}

/// The subject of a call on pith's own state: refused.
fn own_state(tool: &str, shown: &str) -> Subject {
    let mut s = Subject::named(tool, shown);
    s.refused = Some(format!(
        "Permission denied: `{shown}` is pith's own state (its data or config folder: trust \
         store, stored keys, sandbox settings, sessions, logs), which no tool reads or writes \
         (only saved tool output may be read). Do not retry; ask the user if it matters."
    ));
    s
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

/// `subject` (an `external_directory` one) made firm when `tool` writes: a file outside the
/// workspace may run code later (`~/.ssh/config`, `~/.local/bin/git`), so no mode, `--yes`
/// or hook approves it — only the user, or an allow rule of the user's own.
fn outside(tool: &str, mut subject: Subject) -> Subject {
    if tool != "read" {
        subject.firm = Some(Firm::Outside(format!(
            "`{}` is outside the workspace",
            subject.forms[0].trim_end_matches('/')
        )));
    }
    subject
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
    let mut s = Subject::named(EXTERNAL_DIRECTORY, &format!("{dir}/*"));
    s.forms = vec![form];
    s
}

pub(super) fn title(tool: &str, input: &Value, subjects: &[Subject], ctx: &ToolContext) -> String {
    let name = ToolName::parse(tool);
    if let ToolInput::Fetch { url: Some(url) } = ToolInput::of(&name, input) {
        // the whole URL: its path and query carry data out
        return crate::webfetch::Target::parse(url)
            .map_or_else(|_| crate::webfetch::shown_url(url), |t| t.shown());
    }
    let main = subjects.iter().rfind(|s| s.table == tool);
    let outside = subjects.iter().any(|s| s.table == EXTERNAL_DIRECTORY);
    let linked = subjects.iter().any(|s| s.table == HARD_LINK);
    let protected = subjects.iter().find_map(|s| match &s.firm {
        Some(Firm::Protected(why)) => Some(why),
        _ => None,
    });
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
    let base = match protected {
        Some(why) => format!("{base} (protected: {why})"),
        None => base,
    };
    let base = if linked {
        format!("{base} (a hard link: the change also reaches the file's other names)")
    } else {
        base
    };
    if !outside {
        return base;
    }
    // a symlink's target is what the user approves: named with the link it was reached by
    let (inside, link) = match ToolInput::file_arg(input) {
        FileArg::One(raw) if matches!(tool, "read" | "write" | "edit") => {
            let c = crate::open::peek(ctx, raw);
            let link = crate::open::through_link(&ctx.workspace, &c).then_some(raw);
            (c.resolved.inside, link)
        }
        _ => {
            let dir = input.get("path").and_then(Value::as_str).map(str::trim);
            let dir = dir.filter(|d| !d.is_empty()).unwrap_or(".");
            (resolve(&ctx.workspace, dir).inside, None)
        }
    };
    match (inside, link) {
        (true, Some(raw)) => format!("{base} (a hidden path, through the symlink {raw})"),
        (true, None) => format!("{base} (a hidden path: commands cannot read it)"),
        (false, Some(raw)) => {
            format!("{base} (outside the workspace, through the symlink {raw})")
        }
        (false, None) => format!("{base} (outside the workspace)"),
    }
}
