//! Tool cells: headers, folded and open bodies, diffs, live output.

use super::*;
use crate::tool_shapes::DIFF_LINES;
use pith_protocol::message::ToolTime;
use serde_json::json;

fn done(output: &str, metadata: Value) -> ToolState {
    ToolState::Completed {
        output: output.into(),
        title: String::new(),
        metadata,
        time: ToolTime {
            start: 0,
            end: 1200,
            compacted: None,
        },
    }
}

fn text(lines: &[Line]) -> Vec<String> {
    lines
        .iter()
        .map(|l| l.to_string().trim_end().to_string())
        .collect()
}

fn call<'a>(tool: &'a str, input: &'a Value, state: &'a ToolState) -> Call<'a> {
    Call {
        tool,
        name: tool.into(),
        input,
        state,
        reported_ms: None,
        decision: None,
        live: None,
        elapsed_secs: 0,
    }
}

/// A folded output shows its first lines and counts the rest; one hidden line is shown, not
/// counted (a "+1 lines" hint would take the line it hides).
#[test]
fn folding_never_hides_a_single_line() {
    let input = json!({"command": "seq 4"});
    let four = done("1\n2\n3\n4\n\nExit code: 0", json!({"exit_code": 0}));
    let out = text(&render(&call("bash", &input, &four), 60, false));
    assert_eq!(out[1..], ["  ⎿ 1", "    2", "    3", "    4"], "{out:?}");
    let five = done("1\n2\n3\n4\n5\n\nExit code: 0", json!({"exit_code": 0}));
    let out = text(&render(&call("bash", &input, &five), 60, false));
    assert_eq!(
        out[1..],
        ["  ⎿ 1", "    2", "    3", "    … +2 lines (ctrl+o)"]
    );
    let failed = done("boom\n\nExit code: 2", json!({"exit_code": 2}));
    let out = text(&render(&call("bash", &input, &failed), 60, false));
    assert!(out[0].ends_with("1.2s · exit 2"), "{out:?}");
}

#[test]
fn todos_are_a_checklist() {
    let input = json!({"todos": [
        {"content": "read the code", "status": "completed"},
        {"content": "fix the bug", "status": "in_progress"},
        {"content": "test it", "status": "pending"}
    ]});
    let state = done("3 todos", json!({"todos": input["todos"]}));
    let out = text(&render(&call("todowrite", &input, &state), 60, false));
    assert!(out[0].contains("todowrite 3 items"), "{out:?}");
    assert_eq!(
        out[1..],
        ["  ⎿ ☑ read the code", "    ◐ fix the bug", "    ☐ test it"]
    );
}

/// The list as set comes from the metadata, read by the tool's name; without one, the list as
/// asked (its statuses as models spell them). Another tool's metadata shows no checklist or diff.
#[test]
fn what_a_call_shows_is_read_by_its_tool() {
    let input = json!({"todos": [{"content": "ship", "status": "done"}]});
    let state = done("1 todo", json!({}));
    let out = text(&render(&call("todowrite", &input, &state), 60, false));
    assert_eq!(out[1..], ["  ⎿ ☑ ship"]);
    let set = json!({"todos": [{"id": "1", "content": "later", "status": "cancelled"}]});
    let state = done("1 todo", set);
    let out = text(&render(&call("todowrite", &input, &state), 60, false));
    assert_eq!(out[1..], ["  ⎿ ☒ later"]);
    // an MCP tool's metadata with a `diff` key is not an edit's
    let state = done(
        "changed",
        json!({"diff": "-a\n+b", "mcp_server": "s", "mcp_tool": "t"}),
    );
    let out = text(&render(&call("srv_edit", &json!({}), &state), 60, false));
    assert_eq!(out[1..], ["  ⎿ changed"]);
}

#[test]
fn an_edit_shows_its_diff_folded_after_a_few_lines() {
    let diff: String = "--- a/f\n+++ b/f\n@@ -1,12 +1,12 @@\n".to_string()
        + &(0..12)
            .map(|i| format!("-old {i}\n+new {i}\n"))
            .collect::<String>();
    let input = json!({"file_path": "f"});
    let state = done("Edited f", json!({"diff": diff}));
    let folded = text(&render(&call("edit", &input, &state), 60, false));
    assert_eq!(folded[1], "  ⎿ @@ -1,12 +1,12 @@");
    assert_eq!(folded[2], "    -old 0");
    assert_eq!(folded[3], "    +new 0");
    assert_eq!(folded.len(), 1 + DIFF_LINES + 1);
    assert_eq!(folded.last().unwrap(), "    … +17 lines (ctrl+o)");
    let open = text(&render(&call("edit", &input, &state), 60, true));
    assert!(open.iter().any(|l| l.ends_with("+new 11")), "{open:?}");
}

#[test]
fn a_running_command_shows_its_latest_output_and_time() {
    let input = json!({"command": "cargo build"});
    let state = ToolState::Running {
        start: 0,
        title: None,
    };
    let live: String = (1..=9).map(|i| format!("line {i}\n")).collect();
    let mut c = call("bash", &input, &state);
    c.live = Some(&live);
    c.elapsed_secs = 12;
    let out = text(&render(&c, 60, false));
    assert!(out[0].ends_with("running · 12s"), "{out:?}");
    assert_eq!(
        out[1..],
        [
            "  ⎿ … 4 earlier lines",
            "    line 5",
            "    line 6",
            "    line 7",
            "    line 8",
            "    line 9"
        ]
    );
}

#[test]
fn a_folded_read_says_how_much_it_read() {
    let input = json!({"file_path": "src/main.rs"});
    let state = done(
        "1\tfn main() {}\n(End of file: 1 lines)",
        json!({"total_lines": 120, "lines_shown": 120, "offset": 1}),
    );
    let out = text(&render(&call("read", &input, &state), 60, false));
    assert_eq!(out[1], "  ⎿ 120 lines");
    let attached = text(&by_user(&call("read", &input, &state), 60, false));
    assert_eq!(attached, ["  ◇ src/main.rs  120 lines"]);
}

/// A command the user ran with `!` shows more of its output before it folds than the
/// agent's commands do.
#[test]
fn the_users_own_command_shows_more_before_it_folds() {
    let input = json!({"command": "ls"});
    let listing: String = (1..=10).map(|i| format!("file{i}\n")).collect();
    let state = done(&format!("{listing}\nExit code: 0"), json!({"exit_code": 0}));
    let mine = text(&by_user(&call("bash", &input, &state), 60, false));
    assert_eq!(mine.len(), 11, "{mine:?}");
    assert_eq!(mine[10], "    file10");
    let agents = text(&render(&call("bash", &input, &state), 60, false));
    assert_eq!(agents.last().unwrap(), "    … +7 lines (ctrl+o)");
    let long: String = (1..=30).map(|i| format!("line{i}\n")).collect();
    let state = done(&long, json!({"exit_code": 0}));
    let mine = text(&by_user(&call("bash", &input, &state), 60, false));
    assert_eq!(mine.len(), 1 + USER_PREVIEW_LINES + 1);
    assert_eq!(mine.last().unwrap(), "    … +18 lines (ctrl+o)");
}
