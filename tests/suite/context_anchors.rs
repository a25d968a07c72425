//! The anchor index through the real binary: exact identifiers that left the view (an error
//! code, a port, a commit hash, a path with its line, a command with its exit status) are in
//! every request after a compaction — after a second one too — though the summariser forgot
//! everything; and the summary requests list them as kept.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use crate::support;

use serde_json::{Value, json};
use support::openai;
use support::pith::{PithEnv, of_type, stderr};
use support::{MockResponse, MockServer};

/// A summary with every heading of the template and nothing under them.
const FORGETFUL: &str = "## Goal\n## Constraints & Preferences\n## Progress\n### Done\n### In progress\n### Blocked\n## Key Decisions\n## Next Steps\n## Critical Context\n## Relevant Files";

fn text_of(body: &Value) -> String {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .map(support::message_text)
        .collect::<Vec<_>>()
        .join("\n")
}

/// A summary request: the cache-friendly one (the instruction appended to the session's
/// request) or the compaction agent's dedicated one (no tools).
fn is_summary_request(body: &Value) -> bool {
    let last = body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .map(|m| text_of(&json!({ "messages": [m] })))
        .unwrap_or_default();
    last.starts_with("[pith: context compaction]")
        || body.get("tools").is_none() && text_of(body).contains("## Critical Context")
}

/// The identifiers of the first turn, and where each must show after a compaction.
const ERROR_CODE: &str = "E0308";
const PORT: &str = "localhost:5433";
const HASH: &str = "3f9a2c7e1b";
const PATH_LINE: &str = "src/parse.rs:88:14";
const COMMAND_EXIT: &str = "→ exit 3";

/// A mock whose summariser forgets everything (every summary request gets the bare headings)
/// and whose agent answers with `script`, in order ("ok" once it is used up).
fn forgetful_server(server: &MockServer, script: Vec<MockResponse>) {
    let script = Arc::new(Mutex::new(VecDeque::from(script)));
    server.respond_with(move |body| {
        if is_summary_request(body) {
            return openai::text(FORGETFUL, Some((6_000, 40)));
        }
        script
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or_else(|| openai::text("ok", Some((3_000, 2))))
    });
}

#[tokio::test]
async fn anchors_survive_two_compactions_with_a_summariser_that_forgets_everything() {
    let server = MockServer::start().await;
    // usable 16,000: an answer reported at 15,000 + 1,500 compacts at its step's end.
    let env = PithEnv::new(&server.url(), 20_000, 4_000, "");
    // The identifiers are in the output only (the ledger names the command, not what it said).
    let script = "printf 'error[E0308]: mismatched types\\n --> src/parse.rs:88:14\\n'\nexit 3\n";
    std::fs::write(env.path().join("build.sh"), script).unwrap();
    let command = r#"{"command":"sh build.sh"}"#;
    let long = "Working through the parser, step by step. ".repeat(700);
    forgetful_server(
        &server,
        vec![
            openai::text_and_tool_calls(
                "The test database listens on localhost:5433; HEAD is 3f9a2c7e1b.",
                &[("b1", "bash", command)],
                Some((3_000, 60)),
            ),
            openai::text(&long, Some((15_000, 1_500))),
            // Second turn: another answer that fills the window.
            openai::text(&long, Some((15_000, 1_500))),
        ],
    );
    let (out, events) = env
        .run_json(&["--yes", "Fix the parser build, please."])
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(of_type(&events, "compaction_finished").len(), 1);
    let (out, events) = env.run_json(&["-c", "Go on."]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(of_type(&events, "compaction_finished").len(), 1);
    assert!(
        env.run(&["run", "-c", "Where are we?"])
            .await
            .status
            .success()
    );

    let reqs = server.requests();
    let (summaries, turns): (Vec<_>, Vec<_>) = reqs
        .iter()
        .map(|r| &r.body)
        .partition(|b| is_summary_request(b));
    assert_eq!(
        summaries.len(),
        2,
        "two compactions, one summary request each"
    );
    // The requests after the first compaction (the second turn's) and after the second (the
    // last): the identifiers are there though no summary holds them.
    let after_first = text_of(turns[2]);
    let after_second = text_of(turns.last().unwrap());
    for (when, text) in [("first", &after_first), ("second", &after_second)] {
        assert!(text.contains("Recorded by pith itself"), "{when}: {text}");
        assert!(
            !text.contains("Working through the parser"),
            "{when}: not compacted"
        );
        for want in [ERROR_CODE, PORT, HASH, PATH_LINE, COMMAND_EXIT] {
            assert!(
                text.contains(want),
                "{want} lost after the {when} compaction:\n{text}"
            );
        }
    }
    // the command and how it ended: in the ledger, which the anchor index does not repeat
    assert!(
        after_second.contains("`sh build.sh → exit 3"),
        "{after_second}"
    );
    // Each summary request lists what pith keeps, to be used, not restated: the second lists
    // the first compaction's anchors, which its own history no longer shows.
    for s in &summaries {
        let t = text_of(s);
        assert!(t.contains("<kept-identifiers>"), "{t}");
        assert!(t.contains("do not copy them out"), "{t}");
    }
    let second = text_of(summaries[1]);
    assert!(second.contains(&format!("- port: {PORT}")), "{second}");
}

/// The anchor section of the last "Recorded by pith itself" appendix in `text`: its heading
/// and its lines.
fn anchor_section(text: &str) -> Option<String> {
    let start = text.rfind("## Exact identifiers that left the view")?;
    let mut lines = text[start..].lines();
    let heading = lines.next()?;
    let items = lines.take_while(|l| l.starts_with("- "));
    Some(
        std::iter::once(heading)
            .chain(items)
            .collect::<Vec<_>>()
            .join("\n"),
    )
}

/// At a 4,096-token window (a mock that counts a request as a real server would) the
/// identifiers of the first turn outlive its words through several compactions, and the
/// section holding them stays within its budget (a 24th of the usable window).
#[tokio::test]
async fn at_a_4k_window_anchors_stay_within_their_budget() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 4_096, 512, "");
    let script = "printf 'error[E0308]: mismatched types\\n --> src/parse.rs:88:14\\n'\nexit 3\n";
    std::fs::write(env.path().join("build.sh"), script).unwrap();
    let first = Arc::new(Mutex::new(true));
    server.respond_with(move |body| {
        let prompt = (body.to_string().len() / 4) as u64;
        if is_summary_request(body) {
            return openai::text(FORGETFUL, Some((prompt, 40)));
        }
        let mut first = first.lock().unwrap();
        if std::mem::take(&mut *first) {
            return openai::text_and_tool_calls(
                "The test database listens on localhost:5433; HEAD is 3f9a2c7e1b.",
                &[("b1", "bash", r#"{"command":"sh build.sh"}"#)],
                Some((prompt, 60)),
            );
        }
        let answer = "Here is a detailed answer about the parser and its tests. ".repeat(30);
        openai::text(&answer, Some((prompt, 200)))
    });
    let mut compactions = 0;
    for turn in 0..12 {
        let prompt = format!("Step {turn}: tell me more about the parser.");
        let mut args = vec!["--yes"];
        if turn > 0 {
            args.push("-c");
        }
        args.push(&prompt);
        let (out, events) = env.run_json(&args).await;
        assert!(out.status.success(), "turn {turn}: {}", stderr(&out));
        compactions += of_type(&events, "compaction_finished").len();
    }
    assert!(compactions >= 2, "{compactions} compactions");
    let reqs = server.requests();
    let last = reqs
        .iter()
        .rev()
        .find(|r| !is_summary_request(&r.body))
        .unwrap();
    let text = text_of(&last.body);
    assert!(
        !text.contains("HEAD is 3f9a2c7e1b"),
        "the first turn is still in view"
    );
    let section = anchor_section(&text).unwrap_or_else(|| panic!("no anchors:\n{text}"));
    for want in [PORT, HASH, PATH_LINE] {
        assert!(section.contains(want), "{want} lost:\n{section}");
    }
    // the command, how it ended and the error it reported last: in the ledger, which the
    // anchor index does not repeat
    for want in [ERROR_CODE, COMMAND_EXIT] {
        assert!(text.contains(want), "{want} lost:\n{text}");
    }
    let tokens = pith_context::tokens::Estimator::for_model("test-model").text(&section);
    let budget = (4_096 - 512) / 24;
    println!("4k window: the anchor section takes {tokens} of its {budget} tokens:\n{section}");
    assert!(tokens <= budget, "{tokens} > {budget}:\n{section}");
}
