//! Nothing a compaction removes is lost (issue 40, must 1 and 4): every item that leaves the
//! view is listed by recall id in the left-the-view note, and `recall` brings each back
//! exactly, across compactions; the results of the tool calls the model just made survive a
//! compaction in the middle of a turn.

use crate::support;

use serde_json::Value;
use support::MockServer;
use support::openai;
use support::pith::{PithEnv, of_type, stderr};

/// A summary with every section and nothing in it: what a small model often writes.
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

fn is_summary_request(body: &Value) -> bool {
    let t = text_of(body);
    t.contains("[pith: context compaction]")
        || body.get("tools").is_none() && t.contains("## Critical Context")
}

/// The results of the tool messages of a request body.
fn tool_results(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "tool")
        .map(support::message_text)
        .collect()
}

fn seq(from: usize, to: usize) -> String {
    (from..=to)
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// An 8,192-token window: the model asks for two `seq` outputs and the step that ran them fills
/// the window, so the compaction hits before the model has seen them. The request after it
/// carries the small one word for word and the large one as its edges with its recall id, and
/// `recall` brings the large one back whole.
#[tokio::test]
async fn the_step_in_hand_survives_a_compaction_mid_turn() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 8_192, 0, "");
    server.push_all([
        openai::tool_calls(
            &[
                ("call_small", "bash", r#"{"command":"seq 1 60"}"#),
                ("call_big", "bash", r#"{"command":"seq 1 900"}"#),
            ],
            // 6,100 + 60 reaches the 6,144 usable tokens: compaction at the step's end.
            Some((6_100, 60)),
        ),
        openai::text(FORGETFUL, Some((3_000, 60))),
        openai::tool_calls(
            &[("call_rc", "recall", r#"{"id":"call_big"}"#)],
            Some((2_500, 10)),
        ),
        openai::text("Line 60 is 60 and line 900 is 900.", Some((3_500, 10))),
    ]);
    let (out, events) = env
        .run_json(&[
            "--yes",
            "Print 1 to 60 and 1 to 900 with seq, then tell me the last lines.",
        ])
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        of_type(&events, "compaction_finished").len(),
        1,
        "{events:?}"
    );
    let reqs = server.requests();
    assert_eq!(
        reqs.len(),
        4,
        "turn, summary, the step after it, after the recall"
    );
    assert!(is_summary_request(&reqs[1].body));

    let after = text_of(&reqs[2].body);
    assert!(
        after.contains("## The step in hand: the results of your last tool calls, word for word"),
        "{after}"
    );
    let section = &after[after.find("## The step in hand").unwrap()..];
    assert!(
        section.contains(&format!("recall=\"call_small\">\n{}\n", seq(1, 60))),
        "the small output word for word:\n{section}"
    );
    assert!(
        section.contains("recall \"call_big\" brings the whole output back"),
        "{section}"
    );
    assert!(section.contains(&seq(1, 5)) && section.contains(&seq(896, 900)));
    assert!(
        !section.contains("\n450\n"),
        "the middle of the big one is left out"
    );
    println!(
        "the request after the compaction: ~{} tokens, the step in hand ~{} of them",
        reqs[2].body.to_string().len() / 4,
        section.len() / 4
    );

    let recalled = tool_results(&reqs[3].body).join("\n");
    assert!(
        recalled.contains(&seq(1, 900)),
        "recalled whole: {recalled}"
    );
}
