use serde_json::{Value, json};

use super::*;
use crate::testutil::*;
use pith_protocol::message::ToolState;

fn call(m: &mut Message, tool_name: &str, input: Value) {
    add(
        m,
        PartKind::Tool {
            call_id: format!("c{}", m.parts.len()),
            tool: tool_name.into(),
            input,
            state: completed("ok"),
        },
    );
}

#[test]
fn the_ledger_names_files_and_commands_most_recent_last() {
    let mut a = assistant("a1", "u1");
    call(&mut a, "read", json!({"file_path": "src/a.rs"}));
    call(&mut a, "read", json!({"path": "src/b.rs"}));
    call(
        &mut a,
        "edit",
        json!({"file_path": "src/a.rs", "old_string": "x"}),
    );
    call(
        &mut a,
        "write",
        json!({"filePath": "NOTES.md", "content": "secret"}),
    );
    call(&mut a, "bash", json!({"command": "cargo test\n# and more"}));
    call(&mut a, "grep", json!({"pattern": "fn"}));
    call(&mut a, "read", json!({"file_path": "src/a.rs"}));
    let l = ledger_of([&a]);
    assert_eq!(l.read, vec!["src/b.rs", "src/a.rs"]);
    assert_eq!(l.edited, vec!["src/a.rs"]);
    assert_eq!(l.written, vec!["NOTES.md"]);
    assert_eq!(l.commands, vec!["cargo test …: ok"]);
    // Names only: no file content reaches the ledger.
    assert!(!render_ledger(&l).contains("secret"));
    let long = "x".repeat(500);
    assert_eq!(
        one_command(&long).chars().count(),
        COMMAND_MAX_CHARS + 2,
        "cut, with a marker"
    );
}

#[test]
fn ledgers_merge_and_shrink_to_their_budget() {
    let older = Ledger {
        read: vec!["a".into(), "b".into()],
        commands: vec!["ls".into()],
        ..Ledger::default()
    };
    let newer = Ledger {
        read: vec!["a".into(), "c".into()],
        dropped: 2,
        ..Ledger::default()
    };
    let m = merge_ledgers(&older, &newer);
    assert_eq!(m.read, vec!["b", "a", "c"]);
    assert_eq!(m.commands, vec!["ls"]);
    assert_eq!(m.dropped, 2);

    let est = Estimator::for_model("gpt-4o");
    let big = Ledger {
        read: (0..300)
            .map(|i| format!("src/module_{i}/file_{i}.rs"))
            .collect(),
        commands: (0..50).map(|i| format!("cargo test case_{i}")).collect(),
        ..Ledger::default()
    };
    let b = bound_ledger(big, 200, &est);
    assert!(est.text(&render_ledger(&b)) <= 200);
    assert!(b.dropped > 250, "{}", b.dropped);
    // The newest entries are the ones kept.
    assert_eq!(
        b.read.last().map(String::as_str),
        Some("src/module_299/file_299.rs")
    );
    assert!(render_ledger(&b).contains("older entries not listed"));
}

#[test]
fn only_what_the_user_typed_is_carried() {
    let mut ms = vec![
        user("u1", "first request"),
        tool_msg("a1", "u1", "read", "file"),
        synthetic_user("s1", "Continue if you have next steps"),
        compaction_msg("c1", None),
        user("u2", "second request"),
        tool_msg("a2", "u2", "read", "file"),
    ];
    let synthetic = ms[2].parts[0].clone();
    ms[0].parts.push(synthetic);
    let (texts, current) = user_messages(&ms);
    let texts: Vec<(Option<&str>, &str)> = texts
        .iter()
        .map(|s| (s.id.as_deref(), s.text.as_str()))
        .collect();
    assert_eq!(
        texts,
        vec![
            (Some("u1"), "first request"),
            (Some("u2"), "second request")
        ]
    );
    assert_eq!(current, Some(1));
    assert_eq!(user_messages(&ms[2..4]), (vec![], None));
}

#[test]
fn render_shows_each_section_and_nothing_when_empty() {
    assert_eq!(render(&Carried::default()), "");
    let c = Carried {
        user_messages: vec!["keep the API stable".into()],
        dropped_user_messages: 2,
        current_request: Some("now fix the parser".into()),
        todos: Todo::read_list(&json!([
            {"id": "1", "content": "write tests", "status": "completed", "priority": "high"},
            {"id": "2", "content": "fix parser", "status": "in_progress", "priority": "high"}
        ])),
        ledger: Ledger {
            edited: vec!["src/parse.rs".into()],
            commands: vec!["cargo test".into()],
            ..Ledger::default()
        },
        ..Carried::default()
    };
    let r = render(&c);
    assert!(r.starts_with(HEADER), "{r}");
    for want in [
        "2 older message(s) not kept",
        "<user_message>\nkeep the API stable\n</user_message>",
        "<user_message current=\"true\">\nnow fix the parser\n</user_message>",
        "- [x] write tests (completed)",
        "- [~] fix parser (in_progress)",
        "- Edited: src/parse.rs",
        "- Commands run: `cargo test`",
    ] {
        assert!(r.contains(want), "{want} missing from\n{r}");
    }
    assert!(!r.contains("Read:"));
    assert_eq!(render_todos(&[]), None);
    let textless = Todo::read_list(&json!([{"status": "pending"}])).unwrap();
    assert_eq!(render_todos(&textless), None);
}

#[test]
fn errored_tool_calls_are_in_the_ledger_too() {
    // A failed command still ran; a failed edit still names the file the agent worked on.
    let mut a = assistant("a1", "u1");
    add(
        &mut a,
        PartKind::Tool {
            call_id: "c".into(),
            tool: "bash".into(),
            input: json!({"command": "make"}),
            state: ToolState::Error {
                message: "exit 2".into(),
                start: None,
                end: None,
            },
        },
    );
    assert_eq!(ledger_of([&a]).commands, vec!["make → failed"]);
}

/// A command the frontier lists as a verified check is not named again in the ledger (the
/// frontier says how it ended, with its recall id); other commands stay.
#[test]
fn the_ledger_does_not_repeat_a_check_the_frontier_verified() {
    use pith_protocol::carried::{Check, Frontier};
    let carried = Carried {
        ledger: Ledger {
            commands: vec![
                "cd web && npm run build → exit 0: built in 2s".into(),
                "git rm -q old.jsx → exit 0: (no output)".into(),
            ],
            ..Ledger::default()
        },
        frontier: Frontier {
            verified: vec![Check {
                command: "cd web && npm run build".into(),
                result: "passed: built in 2s".into(),
                passed: Some(true),
                recall: Some("c1".into()),
                before: None,
            }],
            ..Frontier::default()
        },
        ..Carried::default()
    };
    let out = render(&carried);
    assert_eq!(out.matches("npm run build").count(), 1, "{out}");
    assert!(
        out.contains("- Commands run: `git rm -q old.jsx → exit 0: (no output)`"),
        "{out}"
    );
    // with only verified commands, the ledger's section is left out
    let mut only = carried;
    only.ledger.commands.pop();
    assert!(
        !render(&only).contains("## Files and commands"),
        "{}",
        render(&only)
    );
}

#[test]
fn running_jobs_are_rendered_with_their_id_command_and_last_line_and_ended_ones_are_not() {
    let job = |id, state, last: &str| Job {
        id,
        command: format!("npm run dev --port 30{id}\nsecond line"),
        started: 0,
        state,
        last_line: last.into(),
    };
    let c = Carried {
        jobs: vec![
            job(1, JobState::Running, "Listening on :3001"),
            job(2, JobState::Killed, "bye"),
            job(3, JobState::Running, ""),
        ],
        ..Carried::default()
    };
    assert!(!c.is_empty(), "jobs alone are worth carrying");
    let r = render(&c);
    assert!(r.contains("## Background jobs still running"), "{r}");
    assert!(
        r.contains("- job 1: `npm run dev --port 301 …` — last printed: Listening on :3001"),
        "{r}"
    );
    assert!(
        r.contains("- job 3: `npm run dev --port 303 …`\n")
            || r.ends_with("- job 3: `npm run dev --port 303 …`"),
        "{r}"
    );
    assert!(!r.contains("job 2"), "{r}");
    let many = Carried {
        jobs: (0..40).map(|i| job(i, JobState::Running, "x")).collect(),
        ..Carried::default()
    };
    assert_eq!(render(&many).matches("- job ").count(), JOBS_MAX);
}
