//! What a call touches: the subjects its rules are checked on (a path, with `external_directory`
//! outside the workspace and `hard_link` for a file with other names; a search's directory; a
//! task's agent; a fetch's host; an MCP tool in its server's table), and the question's title.

use serde_json::Value;

use super::{EXTERNAL_DIRECTORY, HARD_LINK, Permissions};
use crate::ToolContext;
use crate::path::{Resolved, is_under, resolve};
use pith_protocol::tool::{FileArg, ToolInput};

/// One thing a call touches, checked against one table.
pub(super) struct Subject {
    pub(super) table: String,
    /// Strings matched against the table's patterns (e.g. relative and absolute path).
    pub(super) forms: Vec<String>,
    /// What an "always" reply allows from now on.
    pub(super) grant: String,
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
                let host = crate::webfetch::host_of(url.unwrap_or_default())
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
    pub(super) fn search_subjects(
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
pub(super) enum Unjudged {
    /// The input is not what the tool takes (no file named): the tool refuses it.
    Malformed,
    /// A file tool's call names its file under more than one key: which one it means is not
    /// known, so none is judged (the tool refuses it too).
    SeveralFiles,
}

impl Permissions {
    /// The subjects of reading or writing a resolved path with `tool`'s table: the path itself,
    /// and `external_directory` when it lies outside the workspace. Reads of the tool-output
    /// folder are free.
    pub(super) fn path_subjects(
        &self,
        tool: &str,
        r: &Resolved,
        ctx: &ToolContext,
    ) -> Vec<Subject> {
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
    is_under(&r.path, &crate::truncate::output_dir(&ctx.data_dir))
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

pub(super) fn title(tool: &str, input: &Value, subjects: &[Subject], ctx: &ToolContext) -> String {
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
