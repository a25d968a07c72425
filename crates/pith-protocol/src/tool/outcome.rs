//! What a tool reported beside its output, read back from a call's stored `metadata` by the
//! tool's name: the typed [`ToolMetadata`] of that tool, and what front ends ask of it.

use serde::Deserialize;
use serde_json::Value;

use super::metadata::{
    BashMetadata, CountMetadata, EditMetadata, FetchMetadata, GrepMetadata, McpMetadata,
    ReadMetadata, RecallMetadata, SearchMetadata, TaskMetadata, TodoMetadata, ToolMetadata,
    ToolSearchMetadata, WriteMetadata,
};
use super::name::{Builtin, ToolName};
use super::todo::Todo;
use crate::message::ToolState;

/// How much a `read` read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadExtent {
    /// A directory listing of `entries` entries.
    Directory { entries: u64 },
    /// An image (of this MIME type, when it said).
    Image { mime: Option<String> },
    /// Lines of a text file: `shown` of `total`, from line `offset` (1-based) when it said.
    Lines {
        shown: Option<u64>,
        total: Option<u64>,
        offset: Option<u64>,
    },
}

impl ToolMetadata {
    /// The metadata a call of `tool` stored, as the form that tool writes; `None` when the
    /// tool writes none (`exit_plan_mode`, a tool pith does not know) or `metadata` is not of
    /// its form.
    pub fn read(tool: &ToolName, metadata: &Value) -> Option<ToolMetadata> {
        fn form<'a, T: Deserialize<'a>>(
            metadata: &'a Value,
            variant: fn(T) -> ToolMetadata,
        ) -> Option<ToolMetadata> {
            T::deserialize(metadata).ok().map(variant)
        }
        let b = match tool {
            ToolName::Builtin(b) => *b,
            ToolName::Mcp { .. } => return form::<McpMetadata>(metadata, ToolMetadata::Mcp),
            ToolName::Other(_) => return None,
        };
        match b {
            Builtin::Bash => form::<BashMetadata>(metadata, ToolMetadata::Bash),
            Builtin::Read => form::<ReadMetadata>(metadata, ToolMetadata::Read),
            Builtin::Write => form::<WriteMetadata>(metadata, ToolMetadata::Write),
            Builtin::Edit => form::<EditMetadata>(metadata, ToolMetadata::Edit),
            Builtin::Glob | Builtin::List => form::<CountMetadata>(metadata, ToolMetadata::Count),
            Builtin::Grep => form::<GrepMetadata>(metadata, ToolMetadata::Grep),
            Builtin::TodoWrite => form::<TodoMetadata>(metadata, ToolMetadata::Todo),
            Builtin::Recall => form::<RecallMetadata>(metadata, ToolMetadata::Recall),
            Builtin::WebFetch => form::<FetchMetadata>(metadata, ToolMetadata::Fetch),
            Builtin::Task => form::<TaskMetadata>(metadata, ToolMetadata::Task),
            Builtin::ToolSearch => form::<ToolSearchMetadata>(metadata, ToolMetadata::ToolSearch),
            Builtin::ExitPlanMode
            | Builtin::Remember
            | Builtin::Skill
            | Builtin::JobOutput
            | Builtin::JobKill => None,
            Builtin::WebSearch => form::<SearchMetadata>(metadata, ToolMetadata::Search),
        }
    }

    /// bash: the command's exit code (`None`: killed by a signal, timed out, unknown).
    pub fn exit_code(&self) -> Option<i64> {
        match self {
            ToolMetadata::Bash(b) => b.exit_code.map(i64::from),
            _ => None,
        }
    }

    /// bash: the sandbox likely refused what the command tried.
    pub fn sandbox_denied(&self) -> bool {
        matches!(self, ToolMetadata::Bash(b) if b.sandbox_denied)
    }

    /// edit, write: the change as a unified diff.
    pub fn diff(&self) -> Option<&str> {
        match self {
            ToolMetadata::Edit(e) => Some(&e.diff),
            ToolMetadata::Write(w) => w.diff.as_deref(),
            _ => None,
        }
    }

    /// read: how much of the file (or directory) it read.
    pub fn read_extent(&self) -> Option<ReadExtent> {
        let ToolMetadata::Read(r) = self else {
            return None;
        };
        let n = |v: usize| Some(v as u64);
        Some(match r {
            ReadMetadata::Directory { entries, .. } => ReadExtent::Directory {
                entries: *entries as u64,
            },
            ReadMetadata::Image { mime, .. } => ReadExtent::Image {
                mime: (!mime.is_empty()).then(|| mime.clone()),
            },
            ReadMetadata::Lines {
                offset,
                lines_shown,
                total_lines,
                ..
            } => ReadExtent::Lines {
                shown: n(*lines_shown),
                total: n(*total_lines),
                offset: n(*offset),
            },
            ReadMetadata::Empty {
                total_lines,
                lines_shown,
                ..
            } => ReadExtent::Lines {
                shown: n(*lines_shown),
                total: n(*total_lines),
                offset: None,
            },
        })
    }

    /// todowrite: the list as it set it.
    pub fn todos(&self) -> Option<&[Todo]> {
        match self {
            ToolMetadata::Todo(t) => Some(&t.todos),
            _ => None,
        }
    }

    /// task: the sub-agent's session, agent and spending.
    pub fn task(&self) -> Option<&TaskMetadata> {
        match self {
            ToolMetadata::Task(t) => Some(t),
            _ => None,
        }
    }

    /// An MCP server's tool: which it was, and the files its result carried.
    pub fn mcp(&self) -> Option<&McpMetadata> {
        match self {
            ToolMetadata::Mcp(m) => Some(m),
            _ => None,
        }
    }

    /// tool_search: the MCP tools it loaded.
    pub fn loaded(&self) -> Option<&[String]> {
        match self {
            ToolMetadata::ToolSearch(s) => Some(&s.loaded),
            _ => None,
        }
    }

    /// websearch: what was searched and the hits.
    pub fn search(&self) -> Option<&SearchMetadata> {
        match self {
            ToolMetadata::Search(s) => Some(s),
            _ => None,
        }
    }
}

impl ToolState {
    /// What a completed call of `tool` reported (`None` until it completed, when it failed, or
    /// when its tool stores nothing readable).
    pub fn outcome(&self, tool: &ToolName) -> Option<ToolMetadata> {
        match self {
            ToolState::Completed { metadata, .. } => ToolMetadata::read(tool, metadata),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(tool: &str, metadata: Value) -> Option<ToolMetadata> {
        ToolMetadata::read(&ToolName::parse(tool), &metadata)
    }

    #[test]
    fn a_bash_outcome_reads_its_exit_code_and_denial() {
        let o = read(
            "bash",
            json!({"exit_code": 2, "sandbox_denied": true, "signal": null}),
        )
        .unwrap();
        assert_eq!(o.exit_code(), Some(2));
        assert!(o.sandbox_denied());
        let null = read("bash", json!({"exit_code": null})).unwrap();
        assert_eq!(null.exit_code(), None);
        // by name: another tool's exit code is no command's
        assert_eq!(
            read("grep", json!({"exit_code": 2})).unwrap().exit_code(),
            None
        );
        assert_eq!(read("bash", Value::Null), None);
    }

    #[test]
    fn read_extents_from_stored_metadata() {
        let lines = json!({"path": "a", "lines_shown": 10, "total_lines": 40, "offset": 5});
        assert_eq!(
            read("read", lines).unwrap().read_extent(),
            Some(ReadExtent::Lines {
                shown: Some(10),
                total: Some(40),
                offset: Some(5)
            })
        );
        // an earlier build's page, without the flags or the offset
        let older = json!({"path": "a", "lines_shown": 3, "total_lines": 3});
        assert_eq!(
            read("read", older).unwrap().read_extent(),
            Some(ReadExtent::Lines {
                shown: Some(3),
                total: Some(3),
                offset: None
            })
        );
        let dir = json!({"directory": true, "entries": 3});
        assert_eq!(
            read("read", dir).unwrap().read_extent(),
            Some(ReadExtent::Directory { entries: 3 })
        );
        let image = json!({"image": true, "mime": "image/png"});
        let png = Some("image/png".to_string());
        assert_eq!(
            read("read", image).unwrap().read_extent(),
            Some(ReadExtent::Image { mime: png })
        );
        assert_eq!(read("read", json!({"path": "a"})), None);
        assert_eq!(read("read", Value::Null), None);
    }

    #[test]
    fn diffs_and_todos_by_tool() {
        let edit = read("edit", json!({"diff": "-a\n+b"})).unwrap();
        assert_eq!(edit.diff(), Some("-a\n+b"));
        let created = read("write", json!({"diff": null, "created": true})).unwrap();
        assert_eq!(created.diff(), None);
        let todos = read("todowrite", json!({"todos": [{"content": "x"}]})).unwrap();
        assert_eq!(todos.todos().map(|t| t.len()), Some(1));
        assert_eq!(todos.diff(), None);
        // the names pith does not have store nothing it reads
        assert_eq!(read("multiedit", json!({"diff": "-a\n+b"})), None);
        assert_eq!(read("exit_plan_mode", json!({})), None);
    }

    #[test]
    fn a_state_reads_its_outcome_only_when_completed() {
        let bash = ToolName::parse("bash");
        assert_eq!(ToolState::Pending.outcome(&bash), None);
        let done: ToolState = serde_json::from_value(json!({
            "status": "completed", "input": {}, "output": "", "title": "",
            "metadata": {"exit_code": 1}, "time": {"start": 0, "end": 1}
        }))
        .unwrap();
        assert_eq!(done.outcome(&bash).and_then(|o| o.exit_code()), Some(1));
    }
}
