//! The execution frontier through the real binary: a compaction that hits in the middle of a
//! tool loop, with a summariser that forgets everything, still leaves the next request knowing
//! what was verified and how it ended, what was in progress and the step the model announced
//! (ARCHITECTURE.md §6.4, "The execution frontier").

use crate::support;

use serde_json::Value;
use support::MockServer;
use support::openai;
use support::pith::{PithEnv, stderr};

/// A summary with every section of the template that says nothing.
const FORGETFUL: &str = "## Goal\nNone\n## Constraints & Preferences\nNone\n## Progress\nNone\n## Key Decisions\nNone\n## Next Steps\nNone\n## Critical Context\nNone\n## Relevant Files\nNone";

fn text_of(body: &Value) -> String {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .map(support::message_text)
        .collect::<Vec<_>>()
        .join("\n")
}

/// A `cargo` on the workspace's `bin/` that fails the way a failing test run does.
fn failing_cargo(env: &PithEnv) {
    use std::os::unix::fs::PermissionsExt;
    let bin = env.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let cargo = bin.join("cargo");
    std::fs::write(
        &cargo,
        "#!/bin/sh\necho 'test bound::overflow ... FAILED'\necho 'test result: FAILED. 6 passed; 1 failed'\nexit 101\n",
    )
    .unwrap();
    std::fs::set_permissions(&cargo, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[tokio::test]
async fn the_frontier_survives_a_compaction_mid_tool_loop_with_a_forgetful_summariser() {
    let server = MockServer::start().await;
    // 8,192 tokens, 1,000 of output: the last step's report overflows the usable window.
    let env = PithEnv::new(&server.url(), 8_192, 1_000, "");
    failing_cargo(&env);
    std::fs::create_dir_all(env.path().join("src")).unwrap();
    std::fs::write(
        env.path().join("src/parse.rs"),
        "fn bound(n: usize) -> usize {\n    n + 1\n}\n",
    )
    .unwrap();
    server.push(openai::tool_calls(
        &[
            (
                "todo_1",
                "todowrite",
                r#"{"todos":[{"content":"fix the parser's bound","status":"in_progress"},{"content":"read the issue","status":"completed"}]}"#,
            ),
            (
                "call_test",
                "bash",
                r#"{"command":"PATH=./bin:$PATH timeout 300 cargo test -p parser 2>&1"}"#,
            ),
        ],
        Some((1_500, 60)),
    ));
    server.push(openai::tool_calls(
        &[("call_read", "read", r#"{"file_path":"src/parse.rs"}"#)],
        Some((2_500, 20)),
    ));
    server.push(openai::text_and_tool_calls(
        "The overflow test fails because bound adds one. Next, I'll rerun `cargo test -p parser` once the edit is in.",
        &[(
            "call_edit",
            "edit",
            r#"{"file_path":"src/parse.rs","old_string":"n + 1","new_string":"n"}"#,
        )],
        Some((7_600, 80)),
    ));
    server.push(openai::text(FORGETFUL, Some((3_000, 60))));
    server.push(openai::text("Going on.", Some((2_000, 5))));
    let out = env
        .run(&[
            "run",
            "--yes",
            "The parser overflows on long input; fix it.",
        ])
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let reqs = server.requests();
    assert_eq!(reqs.len(), 5, "three steps, the summary, the step after it");
    // The bash call really failed the way the frontier reports it.
    assert!(
        text_of(&reqs[2].body).contains("test result: FAILED"),
        "the failing run reached the model"
    );
    let after = text_of(&reqs[4].body);
    for want in [
        "## Where the work stands (recorded by pith from the session, not the summary)",
        "- Verified: `cargo test -p parser` → failed (exit 101): test result: FAILED. 6 passed; 1 failed [call_test]",
        // the todo items are the todo list's; the frontier adds the call in hand
        "- In progress: edit src/parse.rs [call_edit]",
        "- [~] fix the parser's bound (in_progress)",
        "- [x] read the issue (completed)",
        "- Next (as the model said): Next, I'll rerun `cargo test -p parser` once the edit is in.",
        "- Done: edited src/parse.rs",
    ] {
        assert!(
            after.contains(want),
            "{want:?} missing after the compaction:\n{after}"
        );
    }
    // The frontier comes before the ledger, after the todo list.
    let at = |s: &str| after.find(s).unwrap_or(usize::MAX);
    assert!(at("## Todo list") < at("## Where the work stands"));
    assert!(at("## Where the work stands") < at("## Files and commands so far"));
}
