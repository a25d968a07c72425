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
    assert_kept_and_left(&events);
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
    assert_step_in_hand(section);
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

/// The compaction's figures as the front ends hear them: the two outputs left, the request in
/// hand was kept, no tail.
fn assert_kept_and_left(events: &[Value]) {
    let finished = of_type(events, "compaction_finished")[0];
    assert_eq!(finished["left"]["tool_outputs"], 2, "{finished}");
    assert_eq!(finished["left"]["replies"], 0, "{finished}");
    assert_eq!(
        finished["kept"]["user_messages"], 1,
        "the request in hand: {finished}"
    );
    assert_eq!(finished["kept"]["tail_messages"], 0, "{finished}");
}

/// The step in hand: the small output word for word, the big one as its edges and its id.
fn assert_step_in_hand(section: &str) {
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
}

/// What the user says in the first turn; the model's reply to it.
const FIRST: &str = "Remember this: the vault code is VAULT-7731 and it must never change.";
const REPLY: &str = "Noted: VAULT-7731 goes in config/vault.toml, line 12, and stays as it is.";
/// The pasted log of the third turn, fenced.
const PASTE: &str = "```\nerror: build failed at step 4\n  --> src/vault.rs:12:5\nPASTE-LINE-8080 checksum mismatch\nnote: run with RUST_BACKTRACE=1\n```";

/// About 250 tokens of the user's prose for turn `n`: sentences worth keeping, so the carry
/// budget of a 4k window must cut some.
fn prose(n: usize) -> String {
    (0..12)
        .map(|i| {
            format!(
                "Note {n}.{i}: the service on port {} must use region eu-west-{i} and key K{n}{i}.",
                8000 + n * 10 + i
            )
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The items the left-the-view notes of `body` list: (heading, id).
fn listed(body: &Value) -> Vec<(String, String)> {
    let text = text_of(body);
    let mut out = Vec::new();
    for note in text.split("## Left the view\n").skip(1) {
        for line in note.lines().skip(1) {
            let Some(rest) = line.strip_prefix("- ") else {
                break;
            };
            let Some((heading, items)) = rest.split_once(": ") else {
                break;
            };
            for (k, piece) in items.split('`').enumerate() {
                if k % 2 == 1 {
                    out.push((heading.to_string(), piece.to_string()));
                }
            }
        }
    }
    out
}

/// The left-the-view note of `body`, as sent.
fn note_of(body: &Value) -> String {
    let text = text_of(body);
    let Some(at) = text.find("\n## Left the view") else {
        return String::new();
    };
    let note = &text[at + 1..];
    let end = note
        .match_indices("\n")
        .map(|(i, _)| i)
        .find(|&i| {
            let next = &note[i + 1..];
            !next.starts_with("- ") && !next.starts_with('(') && i > 17
        })
        .unwrap_or(note.len());
    note[..end].to_string()
}

/// The mock model: summaries forget everything; the first turn gets [`REPLY`]; "Run the check"
/// runs a command; "RECALL <id>" calls `recall` with the id; anything else is acknowledged.
fn model(server: &MockServer) {
    let calls = std::sync::atomic::AtomicUsize::new(0);
    server.respond_with(move |body| {
        let prompt = (body.to_string().len() / 4) as u64;
        if is_summary_request(body) {
            return openai::text(FORGETFUL, Some((prompt, 60)));
        }
        let last = body["messages"].as_array().and_then(|m| m.last()).cloned();
        let last = last.unwrap_or_default();
        let said = support::message_text(&last);
        if last["role"] == "tool" {
            return openai::text("Done.", Some((prompt, 5)));
        }
        if said.contains(FIRST) {
            return openai::text(REPLY, Some((prompt, 30)));
        }
        if said.contains("Run the check") {
            let args = r#"{"command":"echo TOOL-OUTPUT-5150"}"#;
            return openai::tool_calls(&[("call_check", "bash", args)], Some((prompt, 20)));
        }
        if let Some(id) = said.trim().strip_prefix("RECALL ") {
            let n = calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let args = serde_json::json!({ "id": id }).to_string();
            return openai::tool_calls(
                &[(&format!("rc_{n}"), "recall", &args)],
                Some((prompt, 10)),
            );
        }
        openai::text("Noted. I will keep that in mind.", Some((prompt, 10)))
    });
}

/// Two compactions on a 4,096-token window with a summariser that forgets everything; then
/// the model recalls, by the ids the left-the-view notes name, one item of each kind that left
/// — a message of the user's the carry budget cut, a reply, a tool output, a pasted block — and
/// gets each back exactly. The note stays within its budget.
#[tokio::test]
async fn recall_brings_back_every_kind_of_item_after_two_compactions() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 4_096, 512, "");
    model(&server);
    let (turns, sent) = turns_until_two_compactions(&env).await;

    // One more turn: its request carries the second compaction's note.
    let (out, _) = env.run_json(&["-c", "Where are we?"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let reqs = server.requests();
    let last = &reqs.last().unwrap().body;
    let note = note_of(last);
    println!(
        "{turns} turns; the note after the second compaction: {} chars (~{} tokens):\n{note}",
        note.len(),
        note.len() / 4
    );
    assert!(!note.is_empty(), "{}", text_of(last));
    // Budget::left_view at this window is 3,584 / 24 = 149 tokens.
    assert!(note.len() <= 149 * 4, "{} chars:\n{note}", note.len());
    // The first compaction's items are merged: the tool output and the paste of the first
    // turns are still counted.
    assert!(
        note.contains("1 tool output") && note.contains("1 pasted block"),
        "{note}"
    );

    let [user, reply, tool, paste] = ids_named(&reqs);
    let recalled = recall_each(&server, &env, [&user, &reply, &tool, &paste]).await;
    assert!(
        sent.contains(&recalled[0]),
        "the user's message {user}, exactly: {}",
        recalled[0]
    );
    assert!(
        recalled[1] == REPLY || recalled[1] == "Noted. I will keep that in mind.",
        "the reply {reply}, exactly: {}",
        recalled[1]
    );
    assert!(
        recalled[2].contains("TOOL-OUTPUT-5150"),
        "the output: {}",
        recalled[2]
    );
    assert_eq!(recalled[3], PASTE, "the pasted block, exactly");

    // Another session cannot recall this one's items.
    let ask = format!("RECALL {user}");
    let (out, _) = env.run_json(&[&ask]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let reqs = server.requests();
    let other = tool_results(&reqs.last().unwrap().body).join("\n");
    assert!(other.contains("Nothing to recall with id"), "{other}");
    assert!(!sent.iter().any(|m| other.contains(m.as_str())), "{other}");
}

/// The first turns (a fact and its reply, a command, a pasted log), then prose until the second
/// compaction: how many turns that took, and what the user sent.
async fn turns_until_two_compactions(env: &PithEnv) -> (usize, Vec<String>) {
    let mut sent = vec![
        format!("{FIRST} {}", prose(0)),
        format!("Run the check. {}", prose(1)),
        format!("Here is the failing build:\n{PASTE}\n{}", prose(2)),
    ];
    let mut turn = 0;
    let mut compactions = 0;
    while compactions < 2 || turn < 4 {
        assert!(turn < 30, "no second compaction in 30 turns");
        if turn >= sent.len() {
            sent.push(prose(turn));
        }
        let mut args = vec!["--yes"];
        if turn > 0 {
            args.push("-c");
        }
        args.push(&sent[turn]);
        let (out, events) = env.run_json(&args).await;
        assert!(
            out.status.success(),
            "turn {turn}: {} {events:?}",
            stderr(&out)
        );
        turn += 1;
        compactions += of_type(&events, "compaction_finished").len();
    }
    (turn, sent)
}

/// The ids the notes of `reqs` named, newest first, of a cut user message, a reply, the
/// command's output and a pasted block.
fn ids_named(reqs: &[support::mock::Recorded]) -> [String; 4] {
    let mut named: Vec<(String, String)> = Vec::new();
    for r in reqs.iter().rev() {
        for item in listed(&r.body) {
            if !named.contains(&item) {
                named.push(item);
            }
        }
    }
    let id_of = |heading: &str, pick: &dyn Fn(&str) -> bool| {
        named
            .iter()
            .find(|(h, id)| h == heading && pick(id))
            .map(|(_, id)| id.clone())
            .unwrap_or_else(|| panic!("no {heading} item in the notes: {named:?}"))
    };
    [
        id_of("User messages cut from the record", &|_| true),
        id_of("Your replies", &|_| true),
        id_of("Tool outputs", &|id| id == "call_check"),
        id_of("Pasted blocks", &|_| true),
    ]
}

/// Has the model recall each of `ids` in a turn of its own; what each recall returned.
async fn recall_each(server: &MockServer, env: &PithEnv, ids: [&String; 4]) -> Vec<String> {
    let before = server.requests().len();
    let mut recalled = Vec::new();
    for id in ids {
        let ask = format!("RECALL {id}");
        let (out, events) = env.run_json(&["-c", &ask]).await;
        assert!(out.status.success(), "{}: {} {events:?}", id, stderr(&out));
        let reqs = server.requests();
        let answered = reqs[before..]
            .iter()
            .rev()
            .find(|r| text_of(&r.body).contains(&ask))
            .unwrap();
        let result = tool_results(&answered.body).last().cloned();
        recalled.push(result.unwrap_or_default());
    }
    recalled
}
