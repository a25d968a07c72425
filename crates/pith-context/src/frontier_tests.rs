use serde_json::{Value, json};

use super::*;
use crate::budget::Budget;
use crate::testutil::*;
use pith_config::CompactionConfig;
use pith_protocol::message::ToolTime;

fn est() -> Estimator {
    Estimator::for_model("gpt-4o")
}

/// A bash call of `command` that ended with `exit` (and `extra` metadata).
fn bash(call: &str, command: &str, exit: Option<i32>, extra: Value) -> PartKind {
    let mut metadata = json!({"command": command, "exit_code": exit});
    if let (Some(m), Some(e)) = (metadata.as_object_mut(), extra.as_object()) {
        m.extend(e.clone());
    }
    PartKind::Tool {
        call_id: call.into(),
        tool: "bash".into(),
        input: json!({"command": command}),
        state: ToolState::Completed {
            output: "…".into(),
            title: command.into(),
            metadata,
            time: ToolTime {
                start: 1,
                end: 2,
                compacted: None,
            },
        },
    }
}

fn edit(call: &str, path: &str) -> PartKind {
    PartKind::Tool {
        call_id: call.into(),
        tool: "edit".into(),
        input: json!({"file_path": path, "old_string": "a", "new_string": "b"}),
        state: completed("ok"),
    }
}

/// An assistant step with `parts`, finished for tool calls unless it has text last.
fn step(id: &str, parts: Vec<PartKind>) -> Message {
    let mut m = assistant(id, "u1");
    for p in parts {
        add(&mut m, p);
    }
    m
}

fn todo(content: &str, status: TodoStatus) -> Todo {
    Todo {
        id: String::new(),
        content: content.into(),
        status,
        priority: Default::default(),
    }
}

#[test]
fn the_last_run_of_each_check_is_verified_with_its_result_and_recall_id() {
    let view = vec![
        user("u1", "Fix the parser."),
        step(
            "a1",
            vec![
                bash("c1", "cargo test -p parser", Some(101), json!({})),
                bash("c2", "cat test.txt", Some(0), json!({})),
                bash("c3", "cargo clippy -p parser", Some(0), json!({})),
            ],
        ),
        step("a2", vec![edit("c4", "src/parse.rs")]),
        step(
            "a3",
            vec![bash(
                "c5",
                "cd crates/parser && timeout 300 cargo test -p parser 2>&1",
                Some(0),
                json!({}),
            )],
        ),
        step(
            "a4",
            vec![bash("c6", "npm test", None, json!({"timed_out": true}))],
        ),
    ];
    let f = build(&view, None, &Frontier::default(), 800, &est());
    let got: Vec<(&str, &str, Option<bool>, Option<&str>)> = f
        .verified
        .iter()
        .map(|c| {
            (
                c.command.as_str(),
                c.result.as_str(),
                c.passed,
                c.recall.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                "cargo test -p parser",
                "failed (exit 101)",
                Some(false),
                Some("c1")
            ),
            ("cargo clippy -p parser", "passed", Some(true), Some("c3")),
            (
                "cd crates/parser && cargo test -p parser",
                "passed",
                Some(true),
                Some("c5")
            ),
            ("npm test", "timed out", Some(false), Some("c6")),
        ]
    );
    assert_eq!(f.done, ["edited src/parse.rs +`b`"]);
    let text = render(&f);
    assert!(
        text.contains("- Verified: `cargo test -p parser` → failed (exit 101) [c1]"),
        "{text}"
    );
    assert!(!text.contains("cat test.txt"), "{text}");
}

#[test]
fn a_file_changed_again_moves_to_the_newest_done_entry() {
    // Another file of a like name stays.
    let again = vec![
        user("u1", "go"),
        step(
            "a1",
            vec![
                edit("e1", "lib/src/parse.rs"),
                edit("e2", "src/parse.rs"),
                edit("e3", "lib/src/parse.rs"),
            ],
        ),
    ];
    let changed = build(&again, None, &Frontier::default(), 800, &est());
    assert_eq!(
        changed.done,
        ["edited src/parse.rs +`b`", "edited lib/src/parse.rs +`b`"],
        "each change names the lines it added"
    );
}

#[test]
fn a_check_run_again_replaces_the_older_run() {
    let view = vec![
        user("u1", "go"),
        step("a1", vec![bash("c1", "cargo test", Some(101), json!({}))]),
        step("a2", vec![bash("c2", "cargo build", Some(0), json!({}))]),
        step(
            "a3",
            vec![bash("c3", "RUST_LOG=debug cargo test", Some(0), json!({}))],
        ),
    ];
    let f = build(&view, None, &Frontier::default(), 800, &est());
    let runs: Vec<_> = f
        .verified
        .iter()
        .map(|c| (c.command.as_str(), c.result.as_str()))
        .collect();
    assert_eq!(runs, [("cargo build", "passed"), ("cargo test", "passed")]);
}

#[test]
fn a_piped_check_claims_no_pass_and_reports_a_failure_its_output_shows() {
    let mut failing = bash("c1", "cargo test 2>&1 | tail -5", Some(0), json!({}));
    if let PartKind::Tool {
        state: ToolState::Completed { output, .. },
        ..
    } = &mut failing
    {
        *output = "test result: FAILED. 3 passed; 1 failed".into();
    }
    let view = vec![
        user("u1", "go"),
        step(
            "a1",
            vec![
                failing,
                bash("c2", "go test ./... | head", Some(0), json!({})),
                bash("c3", "cargo build; echo done", Some(0), json!({})),
            ],
        ),
    ];
    let f = build(&view, None, &Frontier::default(), 800, &est());
    assert_eq!(f.verified[0].passed, Some(false));
    assert_eq!(
        f.verified[0].result,
        "failed per its output (exit 0 through a pipe): test result: FAILED. 3 passed; 1 failed"
    );
    assert_eq!(f.verified[1].passed, None);
    assert_eq!(f.verified[1].result, "exit 0 through a pipe");
    assert_eq!(
        (f.verified[2].result.as_str(), f.verified[2].passed),
        ("exit 0 of the command after it", None)
    );
}

#[test]
fn merged_with_the_previous_frontier() {
    let previous = Frontier {
        done: vec!["port the lexer".into(), "edited src/lex.rs".into()],
        verified: vec![
            Check {
                command: "cargo test".into(),
                result: "failed (exit 101)".into(),
                passed: Some(false),
                recall: Some("old1".into()),
                before: None,
            },
            Check {
                command: "cargo clippy".into(),
                result: "passed".into(),
                passed: Some(true),
                recall: Some("old2".into()),
                before: None,
            },
        ],
        in_progress: vec!["stale item".into()],
        next: Some("Let me port the lexer.".into()),
    };
    let view = vec![
        compaction_msg("c", None),
        summary_msg(
            "s",
            "c",
            "## Next Steps\nLet me invent something the summary says.",
        ),
        user("u2", "go on"),
        step("a1", vec![bash("c9", "cargo test", Some(0), json!({}))]),
        step("a2", vec![edit("c10", "src/parse.rs")]),
    ];
    let todos = [
        todo("port the lexer", TodoStatus::Completed),
        todo("port the parser", TodoStatus::InProgress),
    ];
    let f = build(&view, Some(&todos), &previous, 800, &est());
    assert_eq!(
        f.done,
        [
            "port the lexer",
            "edited src/lex.rs",
            "edited src/parse.rs +`b`"
        ]
    );
    let runs: Vec<_> = f
        .verified
        .iter()
        .map(|c| (c.command.as_str(), c.recall.as_deref()))
        .collect();
    assert_eq!(
        runs,
        [("cargo clippy", Some("old2")), ("cargo test", Some("c9"))]
    );
    // What is in progress is the session's now; the step in hand is the last one's call.
    assert_eq!(
        f.in_progress,
        ["port the parser", "edit t [c10]"],
        "the old in-progress item is gone"
    );
    // No assistant text since: the previous announcement stands; never the summary's.
    assert_eq!(f.next.as_deref(), Some("Let me port the lexer."));
}

#[test]
fn the_step_in_hand_and_the_announced_next_step() {
    let mut mid = step(
        "a2",
        vec![text(
            "The test fails at line 12. Next, I'll fix the bounds check in parse.rs.",
        )],
    );
    add(
        &mut mid,
        bash("c2", "cargo test -p parser", Some(101), json!({})),
    );
    let view = vec![
        user("u1", "Fix the parser."),
        step("a1", vec![text("Let me read the code first.")]),
        mid,
    ];
    let f = build(&view, None, &Frontier::default(), 800, &est());
    assert_eq!(f.in_progress, ["bash cargo test -p parser [c2]"]);
    assert_eq!(
        f.next.as_deref(),
        Some("Next, I'll fix the bounds check in parse.rs.")
    );

    // A turn that ended with an answer announcing nothing: nothing in hand, no next step.
    let done = vec![
        user("u1", "Fix the parser."),
        step("a1", vec![bash("c1", "cargo test", Some(0), json!({}))]),
        step("a2", vec![text("All tests pass; the parser is fixed.")]),
    ];
    let f = build(
        &done,
        None,
        &Frontier {
            next: Some("Let me run the tests.".into()),
            ..Frontier::default()
        },
        800,
        &est(),
    );
    assert!(f.in_progress.is_empty(), "{f:?}");
    assert_eq!(f.next, None);
}

#[test]
fn bounded_to_its_budget_as_rendered_dropping_the_oldest_first() {
    let mut parts = Vec::new();
    for i in 0..30 {
        parts.push(edit(&format!("e{i}"), &format!("src/module_{i}/file.rs")));
        parts.push(bash(
            &format!("b{i}"),
            &format!("cargo test -p crate{i}"),
            Some(i % 2),
            json!({}),
        ));
    }
    parts.push(text("Now I will run the whole suite."));
    let view = vec![user("u1", "go"), step("a1", parts)];
    let est = est();
    let all = build(&view, None, &Frontier::default(), 100_000, &est);
    assert_eq!((all.done.len(), all.verified.len()), (30, 30));
    let budget = 120;
    let f = build(&view, None, &Frontier::default(), budget, &est);
    assert!(est.text(&render(&f)) <= budget, "{}", render(&f));
    // The newest survive: no done item left (they go first), the last check, the next step.
    assert!(f.done.is_empty(), "{f:?}");
    assert!(!f.verified.is_empty() && f.verified.len() < 30, "{f:?}");
    assert_eq!(f.verified.last().unwrap().recall.as_deref(), Some("b29"));
    assert_eq!(f.next.as_deref(), Some("Now I will run the whole suite."));
    // Nothing fits in no room.
    assert!(build(&view, None, &Frontier::default(), 0, &est).is_empty());
}

/// At a 4,096-token window the frontier's budget is what the rendered section takes at most,
/// however much there is to record.
#[test]
fn at_a_4k_window_the_frontier_stays_within_its_budget() {
    let limits = crate::Limits {
        context: 4_096,
        input: None,
        output: 512,
        max_tokens: None,
    };
    let budget = Budget::new(&limits, &CompactionConfig::default());
    let mut parts = Vec::new();
    for i in 0..12 {
        parts.push(edit(&format!("e{i}"), &format!("src/module_{i}.rs")));
        parts.push(bash(
            &format!("call_{i}"),
            &format!("cargo test -p crate{i} -- --nocapture"),
            Some(101),
            json!({}),
        ));
    }
    parts.push(text(
        "The failure is in the tokenizer. Next, I'll fix the off-by-one in src/lex.rs and rerun the tests.",
    ));
    parts.push(bash(
        "call_last",
        "cargo test -p lexer",
        Some(101),
        json!({}),
    ));
    let view = vec![user("u1", "go"), step("a1", parts)];
    let todos = [todo("fix the tokenizer", TodoStatus::InProgress)];
    let est = est();
    let f = build(
        &view,
        Some(&todos),
        &Frontier::default(),
        budget.frontier,
        &est,
    );
    // as carried: beside the todo list, whose items it does not repeat
    let rendered = render_beside(&f, &todos);
    let tokens = est.text(&rendered);
    println!(
        "4k window: frontier budget {} tokens, rendered {tokens}:\n{rendered}",
        budget.frontier,
    );
    assert!(tokens <= budget.frontier, "{tokens} > {}", budget.frontier);
    assert!(!f.verified.is_empty(), "the last check is kept: {f:?}");
}

#[test]
fn nothing_to_record_renders_nothing() {
    let view = vec![user("u1", "hi"), step("a1", vec![text("Hello!")])];
    let f = build(&view, None, &Frontier::default(), 800, &est());
    assert!(f.is_empty(), "{f:?}");
    assert_eq!(render(&f), "");
}

/// A check's result names the line its output reported it with: "what did the last run
/// report?" is answered by the figure, not only by "passed".
#[test]
fn a_check_keeps_the_line_its_output_reported_with() {
    assert_eq!(
        super::summary_line("running 14 tests\n...\ntest result: ok. 14 passed; 0 failed; 0 ignored\n\n   Doc-tests x\n\ntest result: ok. 0 passed; 0 failed\n").as_deref(),
        Some("test result: ok. 14 passed; 0 failed · test result: ok. 0 passed; 0 failed")
    );
    // cargo's zero counts and time go; `Finished` goes when the run reported more
    assert_eq!(
        super::summary_line("   Finished `test` profile [unoptimized] target(s) in 4.1s\ntest result: ok. 41 passed; 0 failed; 2 ignored; 0 measured; 0 filtered out; finished in 0.38s\n").as_deref(),
        Some("test result: ok. 41 passed; 0 failed; 2 ignored")
    );
    assert_eq!(
        super::summary_line("   Finished `dev` profile [unoptimized] target(s) in 4.87s\n")
            .as_deref(),
        Some("Finished `dev` profile [unoptimized] target(s) in 4.87s")
    );
    // criterion: each benchmark's estimate, and its change against a baseline
    let criterion = "    Finished `bench` profile [optimized] target(s) in 36.41s\nappend_batch_1k         time:   [809.87 µs 813.12 µs 816.70 µs]\n                        change: [-0.9512% -0.3407% +0.2766%] (p = 0.28 > 0.05)\n                        No change in performance detected.\nsnapshot_under_append_load\n                        time:   [1.1840 ms 1.2093 ms 1.2371 ms]\n                        change: [-65.792% -65.231% -64.618%] (p = 0.00 < 0.05)\n                        Performance has improved.\nFound 5 outliers among 100 measurements (5.00%)\n";
    assert_eq!(
        super::summary_line(criterion).as_deref(),
        Some(
            "append_batch_1k 813.12 µs (change -0.3407%) · snapshot_under_append_load 1.2093 ms (change -65.231%)"
        )
    );
    assert_eq!(
        super::summary_line("collected 23 items\n\n==== 23 passed in 1.20s ====\n").as_deref(),
        Some("23 passed in 1.20s")
    );
    assert_eq!(
        super::summary_line("goos: linux\nBenchmarkGet-8   24062148   49.9 ns/op\nPASS\nok  \tthumbd/internal/cache\t3.1s\n").as_deref(),
        Some("BenchmarkGet-8 49.9 ns/op · ok thumbd/internal/cache 3.1s")
    );
    assert_eq!(super::summary_line("hello\nworld\n"), None);
}

/// A bash call of `command` that printed `output` and ended with `exit`.
fn bash_said(call: &str, command: &str, exit: i32, output: &str) -> PartKind {
    let mut p = bash(call, command, Some(exit), json!({}));
    if let PartKind::Tool {
        state: ToolState::Completed { output: o, .. },
        ..
    } = &mut p
    {
        *o = output.into();
    }
    p
}

/// "Which test failed before the fix?" and "how large was it before?": the first run of a check
/// that reported otherwise is kept beside the last, with its recall id; a run that differs only
/// in how long it took is no other report.
#[test]
fn a_check_keeps_its_first_run_when_a_later_run_reported_otherwise() {
    let failing = "FAILED tests/test_transform.py::test_no_rows_dropped - assert 311 == 500\n1 failed, 22 passed in 4.12s\n";
    let view = vec![
        user("u1", "fix it"),
        step(
            "a1",
            vec![
                bash_said("c1", "pytest -q", 1, failing),
                bash_said("c2", "pytest -q", 0, "24 passed in 4.37s\n"),
                bash_said("c3", "pytest -q", 0, "24 passed in 4.01s\n"),
                bash_said(
                    "b1",
                    "npm run build",
                    0,
                    "dist/index.js 1,284.51 kB\n✓ built in 11.92s\n",
                ),
                bash_said(
                    "b2",
                    "npm run build",
                    0,
                    "dist/index.js 409.62 kB\n✓ built in 12.30s\n",
                ),
                bash_said(
                    "t1",
                    "cargo test",
                    0,
                    "test result: ok. 3 passed; 0 failed; finished in 0.20s\n",
                ),
                bash_said(
                    "t2",
                    "cargo test",
                    0,
                    "test result: ok. 3 passed; 0 failed; finished in 0.31s\n",
                ),
            ],
        ),
    ];
    let f = build(&view, None, &Frontier::default(), 2_000, &est());
    let rendered = render(&f);
    assert!(
        rendered.contains("`pytest -q` → passed: 24 passed in 4.01s [c3]; first run: failed (exit 1): FAILED tests/test_transform.py::test_no_rows_dropped - assert 311 == 500"),
        "{rendered}"
    );
    assert!(rendered.contains("[c1]"), "{rendered}");
    assert!(
        rendered.contains(
            "409.62 kB · ✓ built in 12.30s [b2]; first run: passed: dist/index.js 1,284.51 kB"
        ),
        "{rendered}"
    );
    let cargo = f
        .verified
        .iter()
        .find(|c| c.command == "cargo test")
        .unwrap();
    assert_eq!(cargo.before, None, "only the time differed");
    // across compactions: the previous frontier's run is the first run
    let next = vec![
        user("u2", "again"),
        step(
            "a2",
            vec![bash_said("c4", "pytest -q", 0, "25 passed in 4.2s\n")],
        ),
    ];
    let g = build(&next, None, &f, 2_000, &est());
    let py = g
        .verified
        .iter()
        .find(|c| c.command == "pytest -q")
        .unwrap();
    assert!(py.before.as_deref().unwrap().ends_with("[c1]"), "{py:?}");
}

/// Beside the carried todo list, the frontier does not repeat its done and in-progress items;
/// what only the frontier knows (an edit, a check) stays.
#[test]
fn beside_the_todo_list_its_items_are_not_repeated() {
    let view = vec![
        user("u1", "go"),
        step("a1", vec![edit("c1", "src/a.rs"), text("Done.")]),
    ];
    let todos = [
        todo("port the lexer", TodoStatus::Completed),
        todo("port the parser", TodoStatus::InProgress),
    ];
    let f = build(&view, Some(&todos), &Frontier::default(), 800, &est());
    assert!(render(&f).contains("port the lexer"));
    let beside = render_beside(&f, &todos);
    assert!(!beside.contains("port the lexer"), "{beside}");
    assert!(!beside.contains("port the parser"), "{beside}");
    assert!(beside.contains("- Done: edited src/a.rs"), "{beside}");
    // nothing of its own left: nothing rendered
    let only_todos = build(
        &[user("u1", "go")],
        Some(&todos),
        &Frontier::default(),
        800,
        &est(),
    );
    assert_eq!(render_beside(&only_todos, &todos), "");
}

#[test]
fn the_ledger_leaves_a_check_to_the_frontier() {
    let f = Frontier {
        verified: vec![Check {
            command: "cd web && npm run build".into(),
            result: "passed".into(),
            passed: Some(true),
            recall: Some("c1".into()),
            before: None,
        }],
        ..Frontier::default()
    };
    assert!(verifies(
        &f,
        "cd web && NODE_ENV=production npm run build 2>&1"
    ));
    assert!(!verifies(&f, "cd web && npm test"));
    assert!(!verifies(&f, "git status"));
}
