//! Typed views of a tool call: what it was asked (`ToolInput`, from the tool's name and its
//! arguments) and what it reported (`ToolOutcome`, from the `metadata` of
//! `ToolState::Completed`). The stored forms stay JSON — sessions of earlier builds load as they
//! are — and this is the one place that knows their keys.

use serde::Deserialize;
use serde_json::Value;

use crate::message::ToolState;

mod metadata;

pub use metadata::{
    BashMetadata, CountMetadata, EditMetadata, FetchMetadata, GrepMetadata, Marker, McpFile,
    McpMetadata, ReadMetadata, RecallMetadata, SavedOutput, TaskMetadata, TodoMetadata,
    ToolMetadata, ToolSearchMetadata, WriteMetadata,
};

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
    /// task: the sub-agent's session, agent and spending.
    pub task: Option<TaskMetadata>,
    /// An MCP server's tool: which it was, and the files its result carried.
    pub mcp: Option<McpMetadata>,
    /// tool_search: the MCP tools it loaded (names stored otherwise than as strings are
    /// skipped).
    pub loaded: Option<Vec<String>>,
}

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
            task: TaskMetadata::deserialize(metadata).ok(),
            mcp: McpMetadata::deserialize(metadata).ok(),
            loaded: metadata
                .get("loaded")
                .and_then(Value::as_array)
                .map(|names| {
                    names
                        .iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                }),
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
        let mime = metadata.get("mime").and_then(Value::as_str);
        return Some(ReadExtent::Image {
            mime: mime.map(str::to_string),
        });
    }
    let (shown, total, offset) = (n("lines_shown"), n("total_lines"), n("offset"));
    (shown.is_some() || total.is_some()).then_some(ReadExtent::Lines {
        shown,
        total,
        offset,
    })
}

/// What a tool call was asked, by tool: the arguments front ends and the context show. Fields
/// hold what the call gave (a string the model left out or typed otherwise is `None`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ToolInput<'a> {
    /// `bash` (or a `shell` tool): the command line.
    Exec { command: Option<&'a str> },
    /// `read`: the file, from line `offset` when given.
    Read {
        path: Option<&'a str>,
        offset: Option<u64>,
    },
    /// `edit` (`multiedit`, `patch`): the file changed, the text replaced and what replaces it.
    Edit {
        path: Option<&'a str>,
        old: Option<&'a str>,
        new: Option<&'a str>,
    },
    /// `write`: the file written, and the text written to it.
    Write {
        path: Option<&'a str>,
        content: Option<&'a str>,
    },
    /// `list` (`ls`): the directory.
    List { path: Option<&'a str> },
    /// `grep`, `glob` (`search`): what it looks for, and where: `within` is the directory or,
    /// without one, the file filter (`include`, `glob`); `path` the directory alone.
    Search {
        pattern: Option<&'a str>,
        within: Option<&'a str>,
        path: Option<&'a str>,
    },
    /// `webfetch` (`fetch`): the address.
    Fetch { url: Option<&'a str> },
    /// `task`: the sub-agent's job and which agent runs it.
    Task {
        description: Option<&'a str>,
        agent: Option<&'a str>,
    },
    /// `todowrite`: the list it sets.
    Todos { todos: Option<&'a [Value]> },
    /// A tool of an MCP server, offered as `{server}_{tool}`; `path` is the file its arguments
    /// name, when they use a file tool's key (`file_path`, `path`, …).
    Mcp {
        server: &'a str,
        tool: &'a str,
        path: Option<&'a str>,
    },
    /// Any other tool (`recall`, `tool_search`, …).
    Other,
}

/// The keys pith's file tools (`read`, `write`, `edit`) take their file under: `file_path`, and
/// the aliases their inputs accept.
const FILE_KEYS: [&str; 3] = ["file_path", "path", "filePath"];

/// The keys a path is shown from, most likely first: the file tools' and `file`, which other
/// tools (an MCP server's, a `patch`) name theirs with.
const PATH_KEYS: [&str; 4] = [FILE_KEYS[0], FILE_KEYS[1], FILE_KEYS[2], "file"];

/// The key pith's `list`, `grep` and `glob` take their directory under (they know no alias).
const DIR_KEY: &str = "path";

/// The keys pith's own tools name what they work on with (a command, a file, a directory, a
/// pattern), most telling first: what `pith run` shows of a call no view reads.
const GIST_KEYS: [&str; 4] = ["command", FILE_KEYS[0], DIR_KEY, "pattern"];

/// The file a call of one of pith's file tools (`read`, `write`, `edit`) names, as the tool
/// takes it: under `file_path` or one of its aliases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileArg<'a> {
    /// No key names it as a string: the tool refuses the call.
    Missing,
    /// One key names it.
    One(&'a str),
    /// More than one key is given (`file_path` and an alias): which file the call means is not
    /// known, and the tool refuses it.
    Several,
}

impl<'a> ToolInput<'a> {
    /// The view of `input`, the arguments of a call of `tool`.
    pub fn of(tool: &'a str, input: &'a Value) -> ToolInput<'a> {
        let s = |k: &str| input.get(k).and_then(Value::as_str);
        let first_of = |keys: &[&str]| keys.iter().find_map(|k| s(k));
        let path = first_of(&PATH_KEYS);
        let dir = s(DIR_KEY);
        match tool {
            "bash" | "shell" => ToolInput::Exec {
                command: first_of(&["command", "cmd"]),
            },
            "read" => ToolInput::Read {
                path,
                offset: input.get("offset").and_then(Value::as_u64),
            },
            "edit" | "multiedit" | "patch" => ToolInput::Edit {
                path,
                old: s("old_string"),
                new: s("new_string"),
            },
            "write" => ToolInput::Write {
                path,
                content: s("content"),
            },
            "list" => ToolInput::List { path: dir },
            "ls" => ToolInput::List { path },
            "grep" | "glob" | "search" => ToolInput::Search {
                pattern: first_of(&["pattern", "query"]),
                within: first_of(&[DIR_KEY, "include", "glob"]),
                path: if tool == "search" { path } else { dir },
            },
            "webfetch" | "fetch" => ToolInput::Fetch { url: s("url") },
            "task" => ToolInput::Task {
                description: s("description"),
                agent: s("agent"),
            },
            "todowrite" => ToolInput::Todos {
                todos: input
                    .get("todos")
                    .and_then(Value::as_array)
                    .map(Vec::as_slice),
            },
            "tool_search" => ToolInput::Other,
            name => match mcp_name(name) {
                Some((server, tool)) => ToolInput::Mcp { server, tool, path },
                None => ToolInput::Other,
            },
        }
    }

    /// The file a call of `read`, `write` or `edit` names in `input`, as the tool takes it (the
    /// permission rules judge this one).
    pub fn file_arg(input: &'a Value) -> FileArg<'a> {
        let mut given = FILE_KEYS.iter().filter_map(|k| input.get(k));
        match (given.next(), given.next()) {
            (None, _) => FileArg::Missing,
            (Some(_), Some(_)) => FileArg::Several,
            (Some(v), None) => v.as_str().map_or(FileArg::Missing, FileArg::One),
        }
    }

    /// The first argument `input` gives as a string, in the call's order: the gist front ends
    /// show of a call no view reads (an MCP server's tool, `tool_search`), or of one that gave
    /// none of its tool's keys.
    pub fn first_string(input: &'a Value) -> Option<&'a str> {
        input.as_object()?.values().find_map(Value::as_str)
    }

    /// The argument under the first of the keys pith's own tools name what they work on with
    /// (`command`, `file_path`, `path`, `pattern`), as text (a string as it is, any other
    /// value as JSON): the gist `pith run` shows of a call its view says nothing of.
    pub fn common_argument(input: &Value) -> Option<String> {
        let value = GIST_KEYS.iter().find_map(|k| input.get(k))?;
        Some(
            value
                .as_str()
                .map_or_else(|| value.to_string(), str::to_string),
        )
    }

    /// The file (or directory) a file tool works on.
    pub fn path(&self) -> Option<&'a str> {
        match *self {
            ToolInput::Read { path, .. }
            | ToolInput::Edit { path, .. }
            | ToolInput::Write { path, .. }
            | ToolInput::List { path } => path,
            ToolInput::Exec { .. }
            | ToolInput::Search { .. }
            | ToolInput::Fetch { .. }
            | ToolInput::Task { .. }
            | ToolInput::Todos { .. }
            | ToolInput::Mcp { .. }
            | ToolInput::Other => None,
        }
    }

    /// The command line of a command.
    pub fn command(&self) -> Option<&'a str> {
        match *self {
            ToolInput::Exec { command } => command,
            _ => None,
        }
    }
}

/// The server and tool of an MCP tool's name `{server}_{tool}`. Server names are letters, digits
/// and `-` (the config refuses others, and the built-in names: `tool_search` is not `tool`'s), so
/// the first `_` separates the two. `tool` is the name as offered: a server's tool name that
/// providers would refuse, or one too long, is offered changed (with a hash), and stays so here.
fn mcp_name(name: &str) -> Option<(&str, &str)> {
    let (server, tool) = name.split_once('_')?;
    let plain = |c: char| c.is_ascii_alphanumeric() || c == '-';
    (!server.is_empty() && server.chars().all(plain) && !tool.is_empty()).then_some((server, tool))
}

/// One item of a `todowrite` list, as given (strings the model left out or typed otherwise are
/// `None`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TodoItem<'a> {
    pub content: Option<&'a str>,
    pub status: Option<&'a str>,
    pub priority: Option<&'a str>,
}

impl<'a> TodoItem<'a> {
    /// The view of one item of a `todos` list.
    pub fn of(item: &'a Value) -> TodoItem<'a> {
        let s = |k: &str| item.get(k).and_then(Value::as_str);
        TodoItem {
            content: s("content"),
            status: s("status"),
            priority: s("priority"),
        }
    }
}

#[cfg(test)]
#[path = "tool/metadata_tests.rs"]
mod metadata_tests;

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
        let png = Some("image/png".to_string());
        assert_eq!(
            ToolOutcome::of(&image).read,
            Some(ReadExtent::Image { mime: png })
        );
        assert_eq!(ToolOutcome::of(&Value::Null), ToolOutcome::default());
    }

    #[test]
    fn diffs_and_todos() {
        let o = ToolOutcome::of(&json!({"diff": "-a\n+b", "todos": [{"content": "x"}]}));
        assert_eq!(o.diff.as_deref(), Some("-a\n+b"));
        assert_eq!(o.todos.map(|t| t.len()), Some(1));
    }

    #[test]
    fn inputs_by_tool() {
        let bash = json!({"command": "ls -l", "description": "list"});
        assert_eq!(ToolInput::of("bash", &bash).command(), Some("ls -l"));
        assert_eq!(ToolInput::of("bash", &bash).path(), None);
        let read = json!({"file_path": "src/a.rs", "offset": 10});
        assert_eq!(
            ToolInput::of("read", &read),
            ToolInput::Read {
                path: Some("src/a.rs"),
                offset: Some(10)
            }
        );
        let older = json!({"filePath": "b.rs"});
        assert_eq!(ToolInput::of("edit", &older).path(), Some("b.rs"));
        let grep = json!({"pattern": "fn main", "path": "src"});
        assert_eq!(
            ToolInput::of("grep", &grep),
            ToolInput::Search {
                pattern: Some("fn main"),
                within: Some("src"),
                path: Some("src"),
            }
        );
        let filtered = json!({"pattern": "x", "include": "*.rs"});
        assert_eq!(
            ToolInput::of("grep", &filtered),
            ToolInput::Search {
                pattern: Some("x"),
                within: Some("*.rs"),
                path: None,
            }
        );
        let edit = json!({"file_path": "a", "old_string": "x", "new_string": "y"});
        assert_eq!(
            ToolInput::of("edit", &edit),
            ToolInput::Edit {
                path: Some("a"),
                old: Some("x"),
                new: Some("y")
            }
        );
        let write = json!({"file_path": "a", "content": "hi"});
        assert_eq!(
            ToolInput::of("write", &write),
            ToolInput::Write {
                path: Some("a"),
                content: Some("hi")
            }
        );
        let todos = json!({"todos": [{"content": "x"}]});
        assert!(matches!(
            ToolInput::of("todowrite", &todos),
            ToolInput::Todos { todos: Some([_]) }
        ));
        assert_eq!(
            ToolInput::of("github_search", &grep),
            ToolInput::Mcp {
                server: "github",
                tool: "search",
                path: Some("src")
            }
        );
        assert_eq!(
            ToolInput::of("bash", &json!({"command": 3})).command(),
            None
        );
    }

    #[test]
    fn a_file_tool_names_its_file_once_or_not_at_all() {
        let arg = |input: Value| match ToolInput::file_arg(&input) {
            FileArg::One(p) => Ok(Some(p.to_string())),
            FileArg::Missing => Ok(None),
            FileArg::Several => Err(()),
        };
        for key in ["file_path", "path", "filePath"] {
            assert_eq!(arg(json!({key: "a.rs"})), Ok(Some("a.rs".into())), "{key}");
        }
        // `file` is no key of pith's file tools: they refuse the call
        assert_eq!(arg(json!({"file": "a.rs"})), Ok(None));
        assert_eq!(arg(json!({"file_path": 3})), Ok(None));
        assert_eq!(arg(json!({})), Ok(None));
        // named twice, whatever the values: which one is meant is not known, none is picked
        for (a, b) in [
            ("file_path", "path"),
            ("path", "filePath"),
            ("filePath", "file_path"),
        ] {
            assert_eq!(arg(json!({a: "x", b: "y"})), Err(()), "{a} + {b}");
            assert_eq!(arg(json!({a: 3, b: "y"})), Err(()), "{a} + {b}");
        }
    }

    #[test]
    fn pith_s_searches_and_listings_look_where_the_tool_does() {
        // grep, glob and list take their directory under `path` alone
        let misnamed = json!({"pattern": "x", "file_path": "/etc", "path": "src"});
        for tool in ["grep", "glob"] {
            let ToolInput::Search { path, .. } = ToolInput::of(tool, &misnamed) else {
                panic!("{tool}");
            };
            assert_eq!(path, Some("src"), "{tool}");
        }
        assert_eq!(
            ToolInput::of("list", &misnamed),
            ToolInput::List { path: Some("src") }
        );
        let elsewhere = json!({"file_path": "/etc"});
        assert_eq!(
            ToolInput::of("list", &elsewhere),
            ToolInput::List { path: None }
        );
        // other agents' `ls` and `search`: any path key
        assert_eq!(
            ToolInput::of("ls", &elsewhere),
            ToolInput::List { path: Some("/etc") }
        );
    }

    #[test]
    fn the_gist_of_arguments_no_view_reads() {
        // (written in key order: the order a map keeps depends on serde_json's features)
        let mcp = json!({"a_query": "is:open", "path": "src", "repo": 7});
        assert_eq!(ToolInput::first_string(&mcp), Some("is:open"));
        assert_eq!(ToolInput::common_argument(&mcp).as_deref(), Some("src"));
        let numbers = json!({"n": 1, "command": 3});
        assert_eq!(ToolInput::first_string(&numbers), None);
        assert_eq!(ToolInput::common_argument(&numbers).as_deref(), Some("3"));
        let ordered = json!({"pattern": "p", "file_path": "f", "command": "c"});
        assert_eq!(ToolInput::common_argument(&ordered).as_deref(), Some("c"));
        for none in [json!({}), json!(null), json!("text"), json!(["a"])] {
            assert_eq!(ToolInput::first_string(&none), None, "{none}");
            assert_eq!(ToolInput::common_argument(&none), None, "{none}");
        }
    }

    #[test]
    fn mcp_names_split_at_the_first_underscore() {
        let none = json!({});
        let mcp = |name| match ToolInput::of(name, &none) {
            ToolInput::Mcp { server, tool, .. } => Some((server, tool)),
            _ => None,
        };
        assert_eq!(
            mcp("chrome-devtools_click"),
            Some(("chrome-devtools", "click"))
        );
        assert_eq!(mcp("github_create_issue"), Some(("github", "create_issue")));
        assert_eq!(mcp("srv__thing"), Some(("srv", "_thing")));
        for not_mcp in ["tool_search", "recall", "_x", "srv_", "a.b_c", "bash"] {
            assert_eq!(mcp(not_mcp), None, "{not_mcp}");
        }
    }

    #[test]
    fn todo_items() {
        let item = json!({"content": "a", "status": "done", "priority": 1});
        assert_eq!(
            TodoItem::of(&item),
            TodoItem {
                content: Some("a"),
                status: Some("done"),
                priority: None
            }
        );
    }
}
