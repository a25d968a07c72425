//! pith's tool calls as ACP tool calls: kind, title, locations, and content (the diff of an
//! edit, the output of a command). Pure functions of the tool's name, input and state.

use std::path::{Path, PathBuf};

use agent_client_protocol_schema::v1::{
    ContentBlock, Diff, Plan, PlanEntry, PlanEntryPriority, PlanEntryStatus, TextContent,
    ToolCallContent, ToolCallLocation, ToolCallStatus, ToolCallUpdateFields, ToolKind,
};
use serde_json::Value;

use pith_protocol::message::ToolState;
use pith_protocol::tool::{Builtin, Todo, TodoPriority, TodoStatus, ToolInput, ToolName};

/// The most output of one call shown in the editor (its tail when longer).
const MAX_SHOWN: usize = 16 * 1024;

/// The kind of a call of `tool`: each built-in tool's; a tool of an MCP server (or a name pith
/// does not have) is `Fetch` when its name says it fetches, else `Other`.
pub(crate) fn kind(tool: &str) -> ToolKind {
    let b = match ToolName::parse(tool) {
        ToolName::Builtin(b) => b,
        ToolName::Mcp { tool, .. } | ToolName::Other(tool) if tool.contains("fetch") => {
            return ToolKind::Fetch;
        }
        ToolName::Mcp { .. } | ToolName::Other(_) => return ToolKind::Other,
    };
    match b {
        Builtin::Read | Builtin::List | Builtin::Recall | Builtin::Skill | Builtin::JobOutput => {
            ToolKind::Read
        }
        Builtin::Edit | Builtin::Write => ToolKind::Edit,
        Builtin::Bash | Builtin::JobKill => ToolKind::Execute,
        Builtin::Grep | Builtin::Glob | Builtin::ToolSearch => ToolKind::Search,
        Builtin::TodoWrite | Builtin::Task => ToolKind::Think,
        Builtin::WebFetch | Builtin::WebSearch => ToolKind::Fetch,
        Builtin::ExitPlanMode | Builtin::Remember => ToolKind::Other,
    }
}

/// A string the call gave, unless empty (the editor shows nothing for an empty one).
fn given(s: Option<&str>) -> Option<&str> {
    s.filter(|s| !s.is_empty())
}

fn one_line(s: &str, max: usize) -> String {
    let line = s.lines().next().unwrap_or("").trim();
    let short: String = line.chars().take(max).collect();
    if short.len() < line.len() || s.trim().lines().nth(1).is_some() {
        format!("{short}…")
    } else {
        short
    }
}

/// What the editor shows as the call's title.
pub(crate) fn title(tool: &str, input: &Value) -> String {
    let name = ToolName::parse(tool);
    match ToolInput::of(&name, input) {
        ToolInput::Exec { command } => {
            given(command).map_or_else(|| tool.to_string(), |c| one_line(c, 120))
        }
        ToolInput::Read { path, .. } => titled("Read", given(path), tool),
        ToolInput::Edit { path, .. } => titled("Edit", given(path), tool),
        ToolInput::Write { path, .. } => titled("Write", given(path), tool),
        ToolInput::List { path } => format!("List {}", given(path).unwrap_or(".")),
        ToolInput::Search { pattern, path, .. } => {
            let pattern = given(pattern).unwrap_or("");
            let verb = if name.is(Builtin::Grep) {
                "Search"
            } else {
                "Find"
            };
            match given(path) {
                Some(p) => format!("{verb} {pattern} in {p}"),
                None => format!("{verb} {pattern}"),
            }
        }
        ToolInput::Todos { .. } => "Update the plan".into(),
        ToolInput::Task { description, .. } => given(description).map_or("Sub-agent".into(), |d| {
            format!("Sub-agent: {}", one_line(d, 80))
        }),
        // the whole URL (its path and query carry data), on one line, bounded
        ToolInput::Fetch { url } => given(url).map_or_else(
            || tool.to_string(),
            |u| {
                let shown = pith_tools::webfetch::Target::parse(u)
                    .map_or_else(|_| pith_tools::webfetch::shown_url(u), |t| t.shown());
                format!("Fetch {shown}")
            },
        ),
        ToolInput::WebSearch { query } => given(query).map_or_else(
            || tool.to_string(),
            |q| format!("Search the web: {}", one_line(q, 120)),
        ),
        ToolInput::Mcp { .. } | ToolInput::Other => tool.to_string(),
    }
}

/// "{verb} {path}", or the tool's name when the call names no file.
fn titled(verb: &str, path: Option<&str>, tool: &str) -> String {
    path.map_or_else(|| tool.to_string(), |p| format!("{verb} {p}"))
}

/// The files the call touches, absolute (with the line a read starts at).
pub(crate) fn locations(workspace: &Path, tool: &str, input: &Value) -> Vec<ToolCallLocation> {
    let name = ToolName::parse(tool);
    let asked = ToolInput::of(&name, input);
    let path = match asked {
        ToolInput::Read { path, .. }
        | ToolInput::Edit { path, .. }
        | ToolInput::Write { path, .. }
        | ToolInput::List { path }
        | ToolInput::Search { path, .. }
        | ToolInput::Mcp { path, .. } => path,
        ToolInput::Exec { .. }
        | ToolInput::Fetch { .. }
        | ToolInput::WebSearch { .. }
        | ToolInput::Task { .. }
        | ToolInput::Todos { .. }
        | ToolInput::Other => None,
    };
    let Some(path) = given(path) else {
        return Vec::new();
    };
    let mut location = ToolCallLocation::new(absolute(workspace, path));
    if let ToolInput::Read {
        offset: Some(line), ..
    } = asked
    {
        location = location.line(u32::try_from(line).ok());
    }
    vec![location]
}

fn absolute(workspace: &Path, path: &str) -> PathBuf {
    let p = Path::new(path);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        workspace.join(p)
    }
}

/// The change an edit or write makes, as a diff (`None` for other tools).
pub(crate) fn diff(workspace: &Path, tool: &str, input: &Value) -> Option<ToolCallContent> {
    let name = ToolName::parse(tool);
    let diff = match ToolInput::of(&name, input) {
        ToolInput::Edit { path, old, new } => {
            Diff::new(absolute(workspace, given(path)?), given(new).unwrap_or(""))
                .old_text(given(old).map(str::to_string))
        }
        ToolInput::Write { path, content } => {
            Diff::new(absolute(workspace, given(path)?), content.unwrap_or(""))
        }
        _ => return None,
    };
    Some(ToolCallContent::Diff(diff))
}

pub(crate) fn text(s: impl Into<String>) -> ToolCallContent {
    ToolCallContent::from(ContentBlock::Text(TextContent::new(s)))
}

/// A command's output as the editor shows it: its tail, in a code block.
pub(crate) fn output_block(output: &str) -> ToolCallContent {
    let mut start = output.len().saturating_sub(MAX_SHOWN);
    while !output.is_char_boundary(start) {
        start += 1;
    }
    let cut = if start > 0 { "…\n" } else { "" };
    text(format!("```\n{cut}{}\n```", output[start..].trim_end()))
}

/// Everything known of a call from its input: title, kind, locations, input, and the diff of
/// an edit.
pub(crate) fn from_input(workspace: &Path, tool: &str, input: &Value) -> ToolCallUpdateFields {
    let mut fields = ToolCallUpdateFields::new()
        .title(title(tool, input))
        .kind(kind(tool));
    if !input.is_null() {
        fields = fields
            .locations(locations(workspace, tool, input))
            .raw_input(input.clone());
    }
    if let Some(d) = diff(workspace, tool, input) {
        fields = fields.content(vec![d]);
    }
    fields
}

/// What a state change tells the editor: the status, and when done, what came out.
pub(crate) fn from_state(
    workspace: &Path,
    tool: &str,
    input: &Value,
    state: &ToolState,
) -> ToolCallUpdateFields {
    let fields = ToolCallUpdateFields::new();
    match state {
        ToolState::Pending => fields.status(ToolCallStatus::Pending),
        ToolState::Running { .. } => fields.status(ToolCallStatus::InProgress),
        ToolState::Completed {
            output, metadata, ..
        } => {
            let content = match diff(workspace, tool, input) {
                Some(d) => vec![d],
                None if let Some(links) = search_links(tool, metadata) => vec![links],
                // the file is in the editor already; its text would only crowd the thread
                None if shows_no_output(&ToolName::parse(tool)) => Vec::new(),
                None => vec![output_block(output)],
            };
            fields.status(ToolCallStatus::Completed).content(content)
        }
        ToolState::Error { message, .. } => fields
            .status(ToolCallStatus::Failed)
            .content(vec![text(message.clone())]),
    }
}

/// A web search's hits as a list of Markdown links (`None` for other tools, or no hits).
fn search_links(tool: &str, metadata: &Value) -> Option<ToolCallContent> {
    let outcome = pith_protocol::tool::ToolMetadata::read(&ToolName::parse(tool), metadata)?;
    let hits = &outcome.search()?.hits;
    if hits.is_empty() {
        return None;
    }
    let escape = |s: &str| one_line(s, 200).replace(['[', ']'], "");
    let list: Vec<String> = hits
        .iter()
        .map(|h| {
            format!(
                "- [{}](<{}>)",
                escape(&h.title),
                h.url.replace(['<', '>'], "")
            )
        })
        .collect();
    Some(text(list.join("\n")))
}

/// Whether a finished call of `tool` shows no output in the thread: a read (the file is in the
/// editor already) and the todo list (the plan shows it).
fn shows_no_output(tool: &ToolName) -> bool {
    let Some(b) = tool.builtin() else {
        return false;
    };
    match b {
        Builtin::Read | Builtin::TodoWrite | Builtin::Skill => true,
        Builtin::Bash
        | Builtin::Write
        | Builtin::Edit
        | Builtin::Glob
        | Builtin::Grep
        | Builtin::List
        | Builtin::Recall
        | Builtin::WebFetch
        | Builtin::Task
        | Builtin::ToolSearch
        | Builtin::ExitPlanMode
        | Builtin::Remember
        | Builtin::JobOutput
        | Builtin::JobKill
        | Builtin::WebSearch => false,
    }
}

/// `todowrite`'s list as the editor's plan (`None` for other tools, or when the input holds no
/// list).
pub(crate) fn plan(tool: &str, input: &Value) -> Option<Plan> {
    let name = ToolName::parse(tool);
    let ToolInput::Todos { todos: Some(todos) } = ToolInput::of(&name, input) else {
        return None;
    };
    let entries = todos
        .iter()
        .filter_map(|t| plan_entry(Todo::read(t)))
        .collect();
    Some(Plan::new(entries))
}

/// One item of the list as a plan entry (`None` when it has no text).
fn plan_entry(item: Todo) -> Option<PlanEntry> {
    let content = given(Some(&item.content))?;
    let (status, content) = match item.status {
        TodoStatus::InProgress => (PlanEntryStatus::InProgress, content.to_string()),
        TodoStatus::Completed => (PlanEntryStatus::Completed, content.to_string()),
        TodoStatus::Cancelled => (PlanEntryStatus::Completed, format!("(cancelled) {content}")),
        TodoStatus::Pending => (PlanEntryStatus::Pending, content.to_string()),
    };
    let priority = match item.priority {
        TodoPriority::High => PlanEntryPriority::High,
        TodoPriority::Low => PlanEntryPriority::Low,
        TodoPriority::Medium => PlanEntryPriority::Medium,
    };
    Some(PlanEntry::new(content, priority, status))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn calls_have_kinds_titles_and_locations() {
        let ws = Path::new("/ws");
        assert_eq!(kind("bash"), ToolKind::Execute);
        assert_eq!(kind("edit"), ToolKind::Edit);
        assert_eq!(kind("grep"), ToolKind::Search);
        assert_eq!(kind("read"), ToolKind::Read);
        assert_eq!(kind("todowrite"), ToolKind::Think);
        assert_eq!(kind("webfetch"), ToolKind::Fetch);
        assert_eq!(kind("web_fetch"), ToolKind::Fetch);
        assert_eq!(kind("fetch"), ToolKind::Fetch);
        assert_eq!(kind("srv__thing"), ToolKind::Other);
        assert_eq!(kind("exit_plan_mode"), ToolKind::Other);
        assert_eq!(kind("tool_search"), ToolKind::Search);
        assert_eq!(kind("recall"), ToolKind::Read);
        assert_eq!(
            title("bash", &json!({"command": "ls -la\necho x"})),
            "ls -la…"
        );
        assert_eq!(
            title("read", &json!({"file_path": "src/a.rs"})),
            "Read src/a.rs"
        );
        assert_eq!(
            title("grep", &json!({"pattern": "fn", "path": "src"})),
            "Search fn in src"
        );
        let loc = locations(ws, "read", &json!({"file_path": "src/a.rs", "offset": 10}));
        assert_eq!(loc[0].path, Path::new("/ws/src/a.rs"));
        assert_eq!(loc[0].line, Some(10));
        assert!(locations(ws, "bash", &json!({"command": "ls"})).is_empty());
    }

    /// A web search (pith's or the provider's) is a fetch titled with its query; done, its hits
    /// are Markdown links, their brackets taken out of titles so no link is broken.
    #[test]
    fn a_web_search_shows_its_query_and_links() {
        let input = json!({"query": "tokio spawn_blocking"});
        assert_eq!(kind("websearch"), ToolKind::Fetch);
        assert_eq!(
            title("websearch", &input),
            "Search the web: tokio spawn_blocking"
        );
        let state = ToolState::Completed {
            output: "1. …".into(),
            title: "2 results".into(),
            metadata: json!({"query": "tokio spawn_blocking", "backend": "hosted", "hits": [
                {"title": "[Docs] spawn_blocking", "url": "https://docs.rs/tokio/"},
                {"title": "Bridging", "url": "https://tokio.rs/bridging"}
            ]}),
            time: pith_protocol::message::ToolTime {
                start: 0,
                end: 1,
                compacted: None,
            },
        };
        let fields = from_state(Path::new("/ws"), "websearch", &input, &state);
        let shown = serde_json::to_string(&fields.content).unwrap();
        assert!(
            shown.contains(
                "- [Docs spawn_blocking](<https://docs.rs/tokio/>)\\n- [Bridging](<https://tokio.rs/bridging>)"
            ),
            "{shown}"
        );
    }

    #[test]
    fn titles_and_locations_of_searches_and_other_tools() {
        let ws = Path::new("/ws");
        let grep = json!({"pattern": "fn", "path": "src"});
        assert_eq!(title("glob", &json!({"pattern": "*.rs"})), "Find *.rs");
        assert_eq!(title("github_search", &grep), "github_search");
        assert_eq!(title("edit", &json!({"file_path": ""})), "edit");
        assert_eq!(title("list", &json!({})), "List .");
        assert_eq!(title("task", &json!({"description": ""})), "Sub-agent");
        assert_eq!(
            title(
                "webfetch",
                &json!({"url": "https://example.com/up?data=c2VjcmV0"})
            ),
            "Fetch https://example.com/up?data=c2VjcmV0"
        );
        let long = title(
            "webfetch",
            &json!({"url": format!("https://e.com/?{}\nEND", "x".repeat(900))}),
        );
        // cut in the middle; the newline is not part of what is fetched (the parser drops it)
        assert!(
            long.chars().count() < 420 && long.ends_with("xEND"),
            "{long}"
        );
        let loc = locations(ws, "grep", &grep);
        assert_eq!(
            (loc[0].path.as_path(), loc[0].line),
            (Path::new("/ws/src"), None)
        );
        let loc = locations(ws, "github_search", &grep);
        assert_eq!(loc[0].path, Path::new("/ws/src"));
        let filtered = json!({"pattern": "fn", "include": "*.rs"});
        assert!(locations(ws, "grep", &filtered).is_empty());
        assert!(plan("read", &json!({"todos": []})).is_none());
    }

    #[test]
    fn edits_carry_their_diff() {
        let ws = Path::new("/ws");
        let input = json!({"file_path": "/abs/f.rs", "old_string": "a", "new_string": "b"});
        let Some(ToolCallContent::Diff(d)) = diff(ws, "edit", &input) else {
            panic!("an edit has a diff")
        };
        assert_eq!(
            (d.path.as_path(), d.old_text.as_deref(), d.new_text.as_str()),
            (Path::new("/abs/f.rs"), Some("a"), "b")
        );
        let Some(ToolCallContent::Diff(d)) =
            diff(ws, "write", &json!({"file_path": "n.txt", "content": "hi"}))
        else {
            panic!("a write has a diff")
        };
        assert_eq!((d.old_text, d.new_text.as_str()), (None, "hi"));
        assert!(diff(ws, "bash", &json!({"command": "x"})).is_none());
    }

    #[test]
    fn long_output_shows_its_tail() {
        let long = format!("{}END", "é".repeat(MAX_SHOWN));
        let ToolCallContent::Content(c) = output_block(&long) else {
            panic!()
        };
        let ContentBlock::Text(t) = c.content else {
            panic!()
        };
        assert!(
            t.text.starts_with("```\n…\n") && t.text.ends_with("END\n```"),
            "{}",
            &t.text[..20]
        );
    }

    #[test]
    fn a_read_or_the_todo_list_shows_no_output_when_done() {
        let ws = Path::new("/ws");
        let done: ToolState = serde_json::from_value(json!({
            "status": "completed", "input": {}, "output": "text", "title": "",
            "metadata": {}, "time": {"start": 0, "end": 1}
        }))
        .unwrap();
        let content = |tool: &str| {
            let fields = from_state(ws, tool, &json!({}), &done);
            fields.content.map(|c| c.len())
        };
        assert_eq!(content("read"), Some(0));
        assert_eq!(content("todowrite"), Some(0));
        for shown in ["bash", "grep", "recall", "github_read", "multiedit"] {
            assert_eq!(content(shown), Some(1), "{shown}");
        }
    }

    #[test]
    fn todos_become_the_plan() {
        let p = plan(
            "todowrite",
            &json!({"todos": [
                {"content": "a", "status": "in_progress", "priority": "high"},
                {"content": "b", "status": "cancelled"},
                {"content": "c", "status": "pending"}
            ]}),
        )
        .unwrap();
        let v = serde_json::to_value(&p).unwrap();
        assert_eq!(
            v["entries"][0],
            json!({"content": "a", "priority": "high", "status": "in_progress"})
        );
        assert_eq!(v["entries"][1]["content"], "(cancelled) b");
        assert_eq!(v["entries"][2]["status"], "pending");
        assert!(plan("todowrite", &json!({})).is_none());
    }
}
