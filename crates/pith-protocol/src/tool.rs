//! Typed views of a tool call: which tool it is (`ToolName`, parsed once from the stored
//! name), what it was asked (`ToolInput`, from the tool's name and its arguments) and what it
//! reported (`ToolMetadata`, read back by the tool's name from the `metadata` of
//! `ToolState::Completed`). The stored forms stay JSON — sessions of earlier builds load as they
//! are — and this is the one place that knows their keys.

use serde_json::Value;

mod metadata;
mod name;
mod outcome;
mod todo;

pub use metadata::{
    BashMetadata, CountMetadata, EditMetadata, FetchMetadata, GrepMetadata, Marker, McpFile,
    McpMetadata, ReadMetadata, RecallMetadata, SavedOutput, SearchHit, SearchMetadata,
    TaskMetadata, TodoMetadata, ToolMetadata, ToolSearchMetadata, WriteMetadata,
};
pub use name::{Builtin, ToolName};
pub use outcome::ReadExtent;
pub(crate) use todo::lenient_option as lenient_todos;
pub use todo::{Todo, TodoPriority, TodoStatus};

/// The `backend` of the `websearch` metadata of a search the provider ran itself (its hosted
/// search): such a part shows the search, and is neither run nor sent back to the model.
pub const HOSTED_SEARCH: &str = "hosted";

/// Whether a tool part records a search the provider ran itself ([`HOSTED_SEARCH`]).
pub fn is_hosted_search(tool: &str, state: &crate::message::ToolState) -> bool {
    tool == Builtin::WebSearch.as_str()
        && matches!(state, crate::message::ToolState::Completed { metadata, .. }
            if metadata.get("backend").and_then(Value::as_str) == Some(HOSTED_SEARCH))
}

/// The line bash ends a command's output with for the model when the command exited (after a
/// blank line).
pub fn exit_line(code: i64) -> String {
    format!("Exit code: {code}")
}

/// What a tool call was asked, by tool: the arguments front ends and the context show. Fields
/// hold what the call gave (a string the model left out or typed otherwise is `None`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ToolInput<'a> {
    /// `bash`: the command line.
    Exec { command: Option<&'a str> },
    /// `read`: the file, from line `offset` when given.
    Read {
        path: Option<&'a str>,
        offset: Option<u64>,
    },
    /// `edit`: the file changed, the text replaced and what replaces it.
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
    /// `list`: the directory.
    List { path: Option<&'a str> },
    /// `grep`, `glob`: what it looks for, and where: `within` is the directory or, without one,
    /// grep's file filter (`include`); `path` the directory alone.
    Search {
        pattern: Option<&'a str>,
        within: Option<&'a str>,
        path: Option<&'a str>,
    },
    /// `webfetch`: the address.
    Fetch { url: Option<&'a str> },
    /// `websearch`: what it searches the web for.
    WebSearch { query: Option<&'a str> },
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
    /// Any other tool (`recall`, `tool_search`, `exit_plan_mode`, one pith does not know).
    Other,
}

/// The keys pith's file tools (`read`, `write`, `edit`) take their file under: `file_path`, and
/// the aliases their inputs accept.
const FILE_KEYS: [&str; 3] = ["file_path", "path", "filePath"];

/// The keys a path is shown from, most likely first: the file tools' and `file`, which other
/// tools (an MCP server's) name theirs with.
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
    pub fn of(tool: &'a ToolName, input: &'a Value) -> ToolInput<'a> {
        let s = |k: &str| input.get(k).and_then(Value::as_str);
        let first_of = |keys: &[&str]| keys.iter().find_map(|k| s(k));
        let path = first_of(&PATH_KEYS);
        let dir = s(DIR_KEY);
        let b = match tool {
            ToolName::Builtin(b) => *b,
            ToolName::Mcp { server, tool } => return ToolInput::Mcp { server, tool, path },
            ToolName::Other(_) => return ToolInput::Other,
        };
        match b {
            Builtin::Bash => ToolInput::Exec {
                command: s("command"),
            },
            Builtin::Read => ToolInput::Read {
                path,
                offset: input.get("offset").and_then(Value::as_u64),
            },
            Builtin::Edit => ToolInput::Edit {
                path,
                old: s("old_string"),
                new: s("new_string"),
            },
            Builtin::Write => ToolInput::Write {
                path,
                content: s("content"),
            },
            Builtin::List => ToolInput::List { path: dir },
            Builtin::Grep | Builtin::Glob => ToolInput::Search {
                pattern: s("pattern"),
                within: first_of(&[DIR_KEY, "include"]),
                path: dir,
            },
            Builtin::WebFetch => ToolInput::Fetch { url: s("url") },
            Builtin::WebSearch => ToolInput::WebSearch { query: s("query") },
            Builtin::Task => ToolInput::Task {
                description: s("description"),
                agent: s("agent"),
            },
            Builtin::TodoWrite => ToolInput::Todos {
                todos: input
                    .get("todos")
                    .and_then(Value::as_array)
                    .map(Vec::as_slice),
            },
            Builtin::Recall
            | Builtin::ToolSearch
            | Builtin::ExitPlanMode
            | Builtin::Remember
            | Builtin::Skill
            | Builtin::JobOutput
            | Builtin::JobKill => ToolInput::Other,
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
            | ToolInput::WebSearch { .. }
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

#[cfg(test)]
#[path = "tool/metadata_tests.rs"]
mod metadata_tests;

#[cfg(test)]
#[path = "tool/input_tests.rs"]
mod input_tests;
