//! Permission modes over the rules (ARCHITECTURE.md §11): `plan` lets only tools that read
//! run, `accept-edits` lets edits and writes inside the workspace through without a question,
//! `bypass` asks nothing (the engine treats it as `--yes`). The rules are decided first: a deny
//! rule holds in every mode, and the sandbox wraps every command whatever the mode.

use serde_json::Value;

pub(crate) mod getopt;
mod readers;

use super::bash_parse;
use super::path;
use super::permission::Decision;
use pith_protocol::event::PermissionMode;
use pith_protocol::tool::{Builtin, FileArg, ToolInput, ToolName};

/// Whether a built-in tool only reads (or only keeps pith's own state): those run in plan mode.
/// `task` runs a sub-agent, which inherits the mode. `None`: it depends on the call (`bash`).
fn reads_by_itself(tool: Builtin) -> Option<bool> {
    match tool {
        Builtin::Read
        | Builtin::Grep
        | Builtin::Glob
        | Builtin::List
        | Builtin::Recall
        | Builtin::TodoWrite
        | Builtin::WebFetch
        | Builtin::WebSearch
        | Builtin::Task
        | Builtin::ExitPlanMode
        // it always asks the user, whatever the mode
        | Builtin::Remember
        | Builtin::Skill
        // the session's own jobs: reading one, stopping one
        | Builtin::JobOutput
        | Builtin::JobKill => Some(true),
        Builtin::Edit | Builtin::Write | Builtin::ToolSearch => Some(false),
        Builtin::Bash => None,
    }
}

/// The tool with which the model presents its plan in plan mode (offered only then; the
/// engine runs it: it asks the user and switches the mode).
pub const EXIT_PLAN_TOOL: &str = pith_protocol::tool::Builtin::ExitPlanMode.as_str();

/// What the model is told while in plan mode (after the system prompt).
pub const PLAN_PROMPT: &str = include_str!("../../../prompts/plan-mode.md");

/// The spec of [`EXIT_PLAN_TOOL`].
pub fn exit_plan_spec() -> pith_protocol::llm::ToolSpec {
    pith_protocol::llm::ToolSpec {
        name: EXIT_PLAN_TOOL.to_string(),
        description: include_str!("../../../prompts/tools/exit_plan_mode.md")
            .trim()
            .to_string(),
        parameters: serde_json::json!({
            "type": "object",
            "properties": {
                "plan": {"type": "string", "description": "The plan, in Markdown"}
            },
            "required": ["plan"]
        }),
    }
}

/// What `mode` makes of the rules' `decision` for this call. A `firm` question (a protected
/// path, a hard link: [`Permissions::is_firm`](crate::Permissions::is_firm)) stays a question
/// in every mode but plan, which refuses it.
pub fn apply(
    mode: PermissionMode,
    tool: &str,
    input: &Value,
    workspace: &std::path::Path,
    decision: Decision,
    firm: bool,
) -> Decision {
    if matches!(decision, Decision::Deny { .. }) {
        return decision;
    }
    match mode {
        PermissionMode::Plan if !reads_only(tool, input) => Decision::Deny {
            message: format!(
                "Not run: pith is in plan mode, where only tools that read run (no {tool} that \
                 changes anything). Look around, then present your plan with `{EXIT_PLAN_TOOL}` \
                 for the user to accept."
            ),
        },
        PermissionMode::AcceptEdits
            if !firm && matches!(tool, "edit" | "write") && edits_inside(input, workspace) =>
        {
            match decision {
                Decision::Ask(_) => Decision::Allow,
                d => d,
            }
        }
        _ => decision,
    }
}

/// Whether the call only reads: a reading tool, or a command line every command of which only
/// reads, with no redirection that writes (other than to `/dev/null`).
pub(crate) fn reads_only(tool: &str, input: &Value) -> bool {
    // edit, write, MCP tools: they may change anything
    let Some(tool) = ToolName::parse(tool).builtin() else {
        return false;
    };
    if let Some(reads) = reads_by_itself(tool) {
        return reads;
    }
    let Some(command) = input.get("command").and_then(Value::as_str) else {
        return false;
    };
    let a = bash_parse::analyse(command);
    !a.is_opaque()
        && !a.hidden
        && !a.commands.is_empty()
        && a.redirects
            .iter()
            .all(|r| !r.write || r.target.literal && r.target.text == "/dev/null")
        && a.commands.iter().all(readers::command_reads_only)
}

/// Whether the one file an edit or write names lies inside the workspace (a call that names
/// none, or more than one, is not let through: the tool refuses it).
fn edits_inside(input: &Value, workspace: &std::path::Path) -> bool {
    match ToolInput::file_arg(input) {
        FileArg::One(p) => path::resolve(workspace, p).inside,
        FileArg::Missing | FileArg::Several => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn plan_mode_runs_only_what_reads() {
        for cmd in [
            "ls -la src",
            "git status && git log --oneline -5",
            "grep -rn foo src | head -20",
            "find . -name '*.rs' -type f",
            "cat Cargo.toml 2>/dev/null",
            "sed -n 1,20p src/main.rs",
            "sed -n '5p' f.txt",
            "sed -n '$p' f.txt",
            "git branch -a",
            "git branch --list",
            "git tag -l",
            "git remote -v",
            "git reflog",
            "git reflog show HEAD",
            "uniq -c sorted.txt",
            "tree -L 2 src",
            "date +%F",
            "rg -n TODO src",
            "file README.md",
            "hostname",
        ] {
            assert!(reads_only("bash", &json!({ "command": cmd })), "{cmd}");
        }
        for cmd in [
            "rm -rf build",
            "echo x > notes.txt",
            "git commit -am wip",
            "git branch -D old",
            "find . -name '*.tmp' -delete",
            "find . -exec rm {} +",
            "sed -i s/a/b/ f.txt",
            "cargo build",
            "ls $(rm -rf /tmp/x)",
            "eval \"$CMD\"",
            "X=1 ls",
            "sort -o out.txt in.txt",
            "",
            // readers that write or run something when asked to
            "sed -n 'w stolen.txt' f.txt",
            "sed 'e touch x' f.txt",
            "sed -n '1p;w out' f.txt",
            "git -c core.fsmonitor='touch x' status",
            "git -c core.pager='touch x' log",
            "git --exec-path=/tmp status",
            "git branch new-branch",
            "git tag v9",
            "git remote remove origin",
            "git remote rename origin up",
            "git reflog expire --all",
            "git reflog delete HEAD@{1}",
            "uniq in.txt out.txt",
            "tree -o listing.txt",
            "date -s 2020-01-01",
            "date --set=2020-01-01",
            "rg --pre ./evil.sh pattern",
            "rg --pre=./evil.sh pattern",
            "file -C -m magic",
            "hostname evil",
        ] {
            assert!(!reads_only("bash", &json!({ "command": cmd })), "{cmd}");
        }
        assert!(reads_only("read", &json!({})));
        assert!(!reads_only("write", &json!({})));
        assert!(!reads_only("mcp__github__create_issue", &json!({})));
    }

    /// Accepting edits lets through an edit of the one file it names inside the workspace,
    /// under any key the tool takes; a call naming its file twice is never let through on one
    /// of them.
    #[test]
    fn accepting_edits_judges_the_one_file_the_tool_writes() {
        let ws = tempfile::tempdir().unwrap();
        let ask = || {
            Decision::Ask(pith_protocol::event::PermissionRequest {
                id: "p".into(),
                tool: "write".into(),
                call_id: "c".into(),
                title: "write".into(),
                patterns: Vec::new(),
                agent: None,
            })
        };
        let accepts = |input: Value| {
            let d = apply(
                PermissionMode::AcceptEdits,
                "write",
                &input,
                ws.path(),
                ask(),
                false,
            );
            matches!(d, Decision::Allow)
        };
        for key in ["file_path", "path", "filePath"] {
            assert!(accepts(json!({key: "src/a.rs", "content": ""})), "{key}");
            assert!(!accepts(json!({key: "/etc/hosts", "content": ""})), "{key}");
        }
        for (a, b) in [("file_path", "path"), ("path", "filePath")] {
            let twice = json!({a: "src/a.rs", b: "src/b.rs", "content": ""});
            assert!(!accepts(twice), "{a} + {b}");
            let planted = json!({a: "src/a.rs", b: "/etc/hosts", "content": ""});
            assert!(!accepts(planted), "{a} + {b}");
        }
        assert!(!accepts(json!({"file": "src/a.rs", "content": ""})));
    }

    #[test]
    fn modes_change_what_is_asked_but_never_a_denial() {
        let ws = tempfile::tempdir().unwrap();
        let ask = || {
            Decision::Ask(pith_protocol::event::PermissionRequest {
                id: "p".into(),
                tool: "edit".into(),
                call_id: "c".into(),
                title: "edit".into(),
                patterns: Vec::new(),
                agent: None,
            })
        };
        let deny = || Decision::Deny {
            message: "no".into(),
        };
        let inside = json!({"file_path": "src/a.rs"});
        let outside = json!({"file_path": "/etc/hosts"});
        let m = |mode, tool, input: &Value, d| apply(mode, tool, input, ws.path(), d, false);
        use PermissionMode::*;
        assert!(matches!(
            m(AcceptEdits, "edit", &inside, ask()),
            Decision::Allow
        ));
        // a protected path or a hard link: accept-edits leaves the question, plan refuses
        let firm = |mode, d| apply(mode, "edit", &inside, ws.path(), d, true);
        assert!(matches!(firm(AcceptEdits, ask()), Decision::Ask(_)));
        assert!(matches!(firm(Bypass, ask()), Decision::Ask(_)));
        assert!(matches!(firm(Plan, ask()), Decision::Deny { .. }));
        assert!(matches!(
            m(AcceptEdits, "write", &outside, ask()),
            Decision::Ask(_)
        ));
        assert!(matches!(
            m(AcceptEdits, "bash", &json!({"command": "ls"}), ask()),
            Decision::Ask(_)
        ));
        assert!(matches!(
            m(AcceptEdits, "edit", &inside, deny()),
            Decision::Deny { .. }
        ));
        assert!(matches!(
            m(Plan, "edit", &inside, Decision::Allow),
            Decision::Deny { .. }
        ));
        assert!(matches!(
            m(Plan, "read", &inside, Decision::Allow),
            Decision::Allow
        ));
        assert!(matches!(
            m(Plan, "read", &inside, deny()),
            Decision::Deny { .. }
        ));
        assert!(matches!(
            m(Default, "edit", &inside, ask()),
            Decision::Ask(_)
        ));
        assert!(matches!(
            m(Bypass, "edit", &inside, deny()),
            Decision::Deny { .. }
        ));
    }
}
