//! Typed views of a finished tool call: what it reported (`ToolOutcome`), read from the
//! `metadata` JSON the store keeps (`ToolState::Completed`). The stored form stays JSON — sessions
//! of earlier builds load as they are — and this is the one place that knows its keys.

use serde_json::Value;

use crate::message::ToolState;

/// The line bash ends a command's output with for the model when the command exited (after a
/// blank line).
pub fn exit_line(code: i64) -> String {
    format!("Exit code: {code}")
}

/// What a tool reported beside its output.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolOutcome {
    /// bash: the command's exit code (`None`: killed by a signal, timed out, unknown).
    pub exit_code: Option<i64>,
    /// bash: the sandbox likely refused what the command tried.
    pub sandbox_denied: bool,
    /// edit, write: the change as a unified diff.
    pub diff: Option<String>,
    /// read: how much of the file (or directory) it read.
    pub read: Option<ReadExtent>,
    /// todowrite: the list as it set it.
    pub todos: Option<Vec<Value>>,
}

/// How much a `read` read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadExtent {
    /// A directory listing of `entries` entries.
    Directory { entries: u64 },
    /// An image.
    Image,
    /// Lines of a text file: `shown` of `total`, from line `offset` (1-based) when it said.
    Lines {
        shown: Option<u64>,
        total: Option<u64>,
        offset: Option<u64>,
    },
}

impl ToolOutcome {
    /// The outcome a tool's stored `metadata` describes; keys it lacks (or holds with another
    /// type) are absent.
    pub fn of(metadata: &Value) -> ToolOutcome {
        ToolOutcome {
            exit_code: metadata.get("exit_code").and_then(Value::as_i64),
            sandbox_denied: flag(metadata, "sandbox_denied"),
            diff: metadata
                .get("diff")
                .and_then(Value::as_str)
                .map(str::to_string),
            read: read_extent(metadata),
            todos: metadata.get("todos").and_then(Value::as_array).cloned(),
        }
    }
}

impl ToolState {
    /// What a completed call reported (`None` until it completed, or when it failed).
    pub fn outcome(&self) -> Option<ToolOutcome> {
        match self {
            ToolState::Completed { metadata, .. } => Some(ToolOutcome::of(metadata)),
            _ => None,
        }
    }
}

fn flag(metadata: &Value, key: &str) -> bool {
    metadata.get(key).and_then(Value::as_bool) == Some(true)
}

/// What a read's metadata says it read; `None` when it says nothing of it.
fn read_extent(metadata: &Value) -> Option<ReadExtent> {
    let n = |k: &str| metadata.get(k).and_then(Value::as_u64);
    if flag(metadata, "directory") {
        return Some(ReadExtent::Directory {
            entries: n("entries").unwrap_or(0),
        });
    }
    if flag(metadata, "image") {
        return Some(ReadExtent::Image);
    }
    let (shown, total, offset) = (n("lines_shown"), n("total_lines"), n("offset"));
    (shown.is_some() || total.is_some()).then_some(ReadExtent::Lines {
        shown,
        total,
        offset,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_bash_outcome_reads_its_exit_code_and_denial() {
        let o = ToolOutcome::of(&json!({"exit_code": 2, "sandbox_denied": true, "signal": null}));
        assert_eq!(o.exit_code, Some(2));
        assert!(o.sandbox_denied);
        assert_eq!(ToolOutcome::of(&json!({"exit_code": null})).exit_code, None);
    }

    #[test]
    fn read_extents_from_stored_metadata() {
        let lines = json!({"lines_shown": 10, "total_lines": 40, "offset": 5});
        assert_eq!(
            ToolOutcome::of(&lines).read,
            Some(ReadExtent::Lines {
                shown: Some(10),
                total: Some(40),
                offset: Some(5)
            })
        );
        let dir = json!({"directory": true, "entries": 3});
        assert_eq!(
            ToolOutcome::of(&dir).read,
            Some(ReadExtent::Directory { entries: 3 })
        );
        let image = json!({"image": true, "mime": "image/png"});
        assert_eq!(ToolOutcome::of(&image).read, Some(ReadExtent::Image));
        assert_eq!(ToolOutcome::of(&Value::Null), ToolOutcome::default());
    }

    #[test]
    fn diffs_and_todos() {
        let o = ToolOutcome::of(&json!({"diff": "-a\n+b", "todos": [{"content": "x"}]}));
        assert_eq!(o.diff.as_deref(), Some("-a\n+b"));
        assert_eq!(o.todos.map(|t| t.len()), Some(1));
    }
}
