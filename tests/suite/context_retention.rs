//! The user's words survive compaction even when every message carries a pasted log (issue 28):
//! ten turns on a 4,096-token window, each giving a code word and pasting ~500 tokens of build
//! log, traceback or diff, with a summariser that forgets everything; then the question. The
//! code words must be in the final request, wherever in the message they were said.

use crate::support;

use pith_protocol::event::{Event, Op, OutputEvent, TurnEnd};
use serde_json::Value;
use support::MockServer;
use support::engine::{Harness, harness_with};
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

/// About 500 tokens of a cargo build log for task `n`.
fn build_log(n: usize) -> String {
    let mut out = Vec::new();
    for i in 0..14 {
        out.push(format!(
            "   Compiling crate-{n}-{i} v0.{i}.{n} (/home/dev/work/task{n}/crates/crate-{i})"
        ));
    }
    out.push(format!("warning: unused variable: `tmp_{n}`"));
    out.push(format!("  --> src/task{n}/lib.rs:{}:9", 10 + n));
    out.push("   |".into());
    out.push(format!(
        "{} |     let tmp_{n} = compute_all(&inputs);",
        10 + n
    ));
    out.push(
        "   |         ^^^^^ help: if this is intentional, prefix it with an underscore".into(),
    );
    out.push(format!(
        "error[E0308]: mismatched types in task{n}/src/main.rs"
    ));
    for i in 0..6 {
        out.push(format!("2026-11-24T10:{i:02}:13.{n:03}Z INFO build::runner step={i} target=x86_64 elapsed_ms={}", 120 * i + n));
    }
    out.push(format!(
        "    Finished `dev` profile [unoptimized + debuginfo] target(s) in {n}.42s"
    ));
    out.join("\n")
}

/// About 500 tokens of a Python traceback.
fn traceback(n: usize) -> String {
    let mut out = vec!["Traceback (most recent call last):".to_string()];
    for i in 0..12 {
        out.push(format!(
            "  File \"/srv/app/task{n}/module_{i}.py\", line {}, in handler_{i}",
            40 + i * 3
        ));
        out.push(format!(
            "    result = dispatch_{i}(request, context=ctx_{n}, retries={i})"
        ));
    }
    out.push(format!("KeyError: 'missing_key_{n}'"));
    out.join("\n")
}

/// About 500 tokens of a unified diff.
fn diff(n: usize) -> String {
    let mut out = vec![
        format!("diff --git a/src/task{n}.rs b/src/task{n}.rs"),
        "index 3b18e51..a9c2f4d 100644".into(),
        format!("--- a/src/task{n}.rs"),
        format!("+++ b/src/task{n}.rs"),
    ];
    for h in 0..4 {
        out.push(format!(
            "@@ -{0},7 +{0},8 @@ fn handler_{h}(input: &Input) -> Output {{",
            10 + h * 20
        ));
        for i in 0..5 {
            out.push(format!("     let value_{i} = input.field_{i}.clone();"));
        }
        out.push(format!("-    let total = value_0 + value_{h};"));
        out.push(format!(
            "+    let total = value_0.saturating_add(value_{h});"
        ));
        out.push(format!(
            "+    tracing::debug!(total, \"handler {h} of task {n}\");"
        ));
    }
    out.join("\n")
}

/// Where in the message the code word is said.
#[derive(Clone, Copy, Debug)]
enum Place {
    Start,
    Middle,
    End,
}

fn message(n: usize, word: &str, paste: &str, place: Place) -> String {
    let fact = format!("Remember this for later: the code word for task {n} is {word}.");
    match place {
        Place::Start => format!("{fact} Here is the log of task {n}:\n{paste}"),
        Place::End => format!("Here is the log of task {n}:\n{paste}\n{fact}"),
        Place::Middle => {
            let lines: Vec<&str> = paste.lines().collect();
            let half = lines.len() / 2;
            format!(
                "Here is the log of task {n}:\n{}\n{fact}\n{}",
                lines[..half].join("\n"),
                lines[half..].join("\n")
            )
        }
    }
}

const WORDS: [&str; 10] = [
    "AMBER-FALCON",
    "BRASS-OTTER",
    "CEDAR-MOTH",
    "DUSK-HERON",
    "EMBER-LYNX",
    "FROST-WREN",
    "GRANITE-IBIS",
    "HAZEL-VOLE",
    "IVORY-SKATE",
    "JADE-MARTEN",
];

/// A request body with what differs between runs replaced: the workspace, the date, and the
/// message ids in recall ids (`paste:<end of a message id>:<n>`).
fn stable(body: &Value, env: &PithEnv) -> Value {
    let text = support::pith::normalized(body, env.path()).to_string();
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(i) = rest.find("paste:") {
        out.push_str(&rest[..i + 6]);
        rest = &rest[i + 6..];
        let id_len = rest.find(':').filter(|&n| n <= 10).unwrap_or(0);
        if id_len > 0 {
            out.push_str("[ID]");
            rest = &rest[id_len..];
        }
    }
    out.push_str(rest);
    serde_json::from_str(&anchors_as_one_line(&condense_blocks(&out))).unwrap()
}

/// The anchor index as its heading and one line: how many anchors fit its budget moves with the
/// token counts of the random recall ids they name, so the snapshot keeps that the section is
/// there and the test checks what it holds ([`code_words_survive_pasted_build_logs`]).
fn anchors_as_one_line(json: &str) -> String {
    const HEADING: &str = "\\n## Exact identifiers that left the view (newest first; `recall` [id] brings back the source)";
    const KEPT: &str = "<kept-identifiers>";
    const KEPT_END: &str = "\\n</kept-identifiers>";
    // the summary request lists the same anchors
    if let Some(i) = json.find(KEPT)
        && let Some(j) = json[i..].find(KEPT_END)
    {
        let (start, end) = (i + KEPT.len(), i + j);
        return format!("{}\\n- [anchors]{}", &json[..start], &json[end..]);
    }
    let Some(i) = json.find(HEADING) else {
        return json.to_string();
    };
    let start = i + HEADING.len();
    let end = json[start..]
        .find("\\n\\n")
        .map_or(json.len(), |j| start + j);
    format!("{}\\n- [anchors]{}", &json[..start], &json[end..])
}

/// Each condensed block as its fence and note only: which of its lines are shown depends on
/// token counts that move with when the exact tokenizer is ready (a background load), so the
/// snapshot keeps what is stable — where the blocks are, their size and recall ids.
fn condense_blocks(json: &str) -> String {
    const NOTE: &str = "\\n[pasted output: ";
    const FENCE: &str = "```\\n";
    let mut out = String::with_capacity(json.len());
    let mut rest = json;
    while let Some(i) = rest.find(NOTE) {
        let head = &rest[..i];
        let open = head.rfind(FENCE).map_or(i, |f| f + FENCE.len());
        out.push_str(&rest[..open]);
        out.push('…');
        let note = &rest[i..];
        let end = note.find(']').map_or(note.len(), |e| e + 1);
        let shown = &note[..end];
        // "27 lines, 3 shown; recall …" → "27 lines; recall …"
        let shown = match (shown.find(", "), shown.find(" shown")) {
            (Some(a), Some(b)) if a < b => format!("{}{}", &shown[..a], &shown[b + 6..]),
            _ => shown.to_string(),
        };
        out.push_str(&shown);
        rest = &note[end..];
    }
    out.push_str(rest);
    out
}

/// What a retention run saw.
struct Run {
    kept: usize,
    requests: Vec<support::mock::Recorded>,
    env: PithEnv,
}

/// Ten turns with `paste(n)` and the code word at `place(n)`; returns how many code words the
/// final request holds, and checks no turn failed and every request fit and was capped.
async fn retained(paste: fn(usize) -> String, place: fn(usize) -> Place) -> usize {
    run(paste, place).await.kept
}

async fn run(paste: fn(usize) -> String, place: fn(usize) -> Place) -> Run {
    let messages = WORDS
        .iter()
        .enumerate()
        .map(|(n, word)| message(n, word, &paste(n), place(n)))
        .collect();
    run_messages(messages, &WORDS, "List every code word I gave you.").await
}

/// Ten turns of `messages`, then `question`; counts the `facts` in the final request.
async fn run_messages(messages: Vec<String>, facts: &[&str], question: &str) -> Run {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 4_096, 512, "");
    server.respond_with(|body| {
        let prompt = (body.to_string().len() / 4) as u64;
        if is_summary_request(body) {
            return openai::text(FORGETFUL, Some((prompt, 60)));
        }
        openai::text(
            "Noted. I will keep that in mind for the task.",
            Some((prompt, 20)),
        )
    });
    for (n, m) in messages.iter().enumerate() {
        let args = if n == 0 {
            vec![m.as_str()]
        } else {
            vec!["-c", m.as_str()]
        };
        let (out, events) = env.run_json(&args).await;
        assert!(
            out.status.success(),
            "turn {n} failed: {} {:?}",
            stderr(&out),
            of_type(&events, "error")
        );
    }
    let (out, _) = env.run_json(&["-c", question]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let reqs = server.requests();
    for r in &reqs {
        let size = (r.body.to_string().len() / 4) as u64;
        assert!(size < 4_096, "a request of ~{size} tokens");
        assert!(
            r.body["max_tokens"].as_u64().is_some(),
            "a request without a cap"
        );
    }
    let last = text_of(&reqs.last().unwrap().body);
    let kept = facts.iter().filter(|w| last.contains(*w)).count();
    let summaries = reqs.iter().filter(|r| is_summary_request(&r.body)).count();
    println!(
        "kept {kept} of {} facts; {} requests, {summaries} summary requests, final request ~{} tokens",
        facts.len(),
        reqs.len(),
        reqs.last().unwrap().body.to_string().len() / 4
    );
    Run {
        kept,
        requests: reqs,
        env,
    }
}

fn rotate(n: usize) -> Place {
    [Place::Start, Place::Middle, Place::End][n % 3]
}

#[tokio::test]
async fn code_words_survive_pasted_build_logs() {
    let r = run(build_log, rotate).await;
    assert!(r.kept >= 9, "kept {} of 10", r.kept);
    // The request after the first compaction: the summary, then the user's words for every
    // compacted turn, each log condensed with its recall id.
    let first = r
        .requests
        .iter()
        .position(|q| is_summary_request(&q.body))
        .unwrap();
    let after = r.requests[first + 1..]
        .iter()
        .find(|q| !is_summary_request(&q.body))
        .unwrap();
    let text = text_of(&after.body);
    assert!(text.contains("recall \"paste:"), "{text}");
    // the anchor index (one line in the snapshot): a path with its line, with the paste's id
    let anchors = text
        .split("## Exact identifiers that left the view")
        .nth(1)
        .and_then(|s| s.split("\n\n").next())
        .unwrap_or_default();
    assert!(
        anchors.contains("] path: src/task") && anchors.contains("[paste:"),
        "{text}"
    );
    insta::assert_json_snapshot!(
        "retention_request_after_compaction",
        stable(&after.body, &r.env)
    );
    insta::assert_json_snapshot!(
        "retention_summary_request",
        stable(&r.requests[first].body, &r.env)
    );
}

#[tokio::test]
async fn code_words_survive_pasted_tracebacks() {
    let kept = retained(traceback, rotate).await;
    assert!(kept >= 9, "kept {kept} of 10");
}

#[tokio::test]
async fn code_words_survive_pasted_diffs() {
    let kept = retained(diff, rotate).await;
    assert!(kept >= 9, "kept {kept} of 10");
}

/// A paste the TUI marked as such (`Op::UserTurn::pasted`) is carried as a pasted block even
/// when it reads like prose — which by shape alone would be the user's words, carried whole —
/// and `recall` with the id its note names brings it back whole through the engine and store.
#[tokio::test]
async fn a_marked_paste_is_condensed_and_recalled_whole() {
    let mut h = harness_with(vec![], true, |c| {
        let m = c.models.values_mut().next().unwrap();
        m.context = 8_000;
        m.output = 1_000;
    })
    .await;
    let user_id = send_a_marked_paste(&mut h).await;
    three_turns_then_a_forgetful_compaction(&mut h).await;

    let id = format!("paste:{}:1", &user_id[user_id.len() - 10..]);
    let args = format!(r#"{{"id":"{id}"}}"#);
    h.server.push_all([
        openai::tool_calls(&[("call_1", "recall", &args)], Some((1_000, 5))),
        openai::text(
            "HERON-4, and shipment 77 arrives on time.",
            Some((3_000, 9)),
        ),
    ]);
    h.send(Op::user_turn(
        "What was the code word, and what about shipment 77?",
    ));
    assert_eq!(h.turn_finished().await, TurnEnd::Stop);

    let n = h.server.requests().len();
    let after = text_of(&h.server.request_body(n - 2));
    assert!(after.contains("HERON-4"), "the user's words are carried");
    assert!(
        after.contains("Please keep both in mind."),
        "words after the paste too"
    );
    assert!(
        after.contains(&format!("recall \"{id}\"")),
        "the note names the id:\n{after}"
    );
    assert!(
        after.contains("[pasted output: 200 lines, "),
        "the marked paste is carried as a pasted block, not as words:\n{after}"
    );
    let shown = after.matches("Paragraph ").count();
    assert!(shown < 200, "condensed to fit: {shown} of 200 lines shown");
    let recalled = h.tool_results(n - 1).join("\n");
    assert!(
        recalled.contains("Paragraph 77: the vendor says shipment 77"),
        "{recalled}"
    );
    assert!(recalled.contains("Paragraph 200:") && recalled.contains("Paragraph 1:"));
    assert!(
        !recalled.contains("HERON-4"),
        "recall returns the paste, not the message"
    );
}

/// Sends a prompt whose middle the TUI marked as pasted (200 lines of prose); returns the
/// stored message's id.
async fn send_a_marked_paste(h: &mut Harness) -> String {
    let paste: String = (1..=200)
        .map(|i| format!("Paragraph {i}: the vendor says shipment {i} arrives on time.\n"))
        .collect();
    let before = "The code word is HERON-4. Here is the vendor's note: ";
    let text = format!("{before}{paste}Please keep both in mind.");
    let span = (before.len(), before.len() + paste.len());
    h.server.push(openai::text("Noted.", Some((3_500, 5))));
    h.send(Op::UserTurn {
        id: "u1".into(),
        text,
        pasted: vec![span],
    });
    let user_id = match h
        .until("the stored prompt", |e| {
            matches!(e, Event::Output(OutputEvent::Message { message }) if message.submission_id.as_deref() == Some("u1"))
        })
        .await
    {
        Event::Output(OutputEvent::Message { message }) => message.id,
        _ => unreachable!(),
    };
    assert_eq!(h.turn_finished().await, TurnEnd::Stop);
    user_id
}

/// Three later turns, so that the first is older than the verbatim tail a compaction keeps, then
/// a compaction whose summary forgets everything.
async fn three_turns_then_a_forgetful_compaction(h: &mut Harness) {
    for n in 0..3 {
        let answer = format!("Answer {n}: {}", "details of the plan. ".repeat(60));
        h.server.push(openai::text(&answer, Some((2_500, 300))));
        h.send(Op::user_turn(format!("Next step {n}, please.")));
        assert_eq!(h.turn_finished().await, TurnEnd::Stop);
    }

    h.server.push(openai::text(FORGETFUL, Some((2_000, 60))));
    h.send(Op::Compact { focus: None });
    assert_eq!(h.turn_finished().await, TurnEnd::Compacted);
}

/// ~400 tokens of one of ten paste shapes that are neither logs, tracebacks nor diffs.
fn shaped(n: usize) -> String {
    let rows = |f: &dyn Fn(usize) -> String| (0..22).map(f).collect::<Vec<_>>().join("\n");
    match n {
        0 => format!(
            "{{\n  \"request_id\": \"req-{n}\",\n  \"results\": [\n{}\n  ]\n}}",
            rows(&|i| format!(
                "    {{\"id\": {i}, \"name\": \"user{i}\", \"plan\": \"team\", \"seats\": {}}},",
                i * 3
            ))
        ),
        1 => format!(
            "id,name,email,plan,created_at\n{}",
            rows(&|i| format!("{i},user{i},user{i}@example.org,team,2025-01-{:02}", i + 1))
        ),
        2 => format!(
            "NAME                         READY   STATUS    RESTARTS   AGE\n{}",
            rows(&|i| format!(
                "api-{i:02}-7d9f8b-x2k              1/1     Running   {i}          3d"
            ))
        ),
        3 => format!(
            " id | name    | total\n----+---------+-------\n{}\n(22 rows)",
            rows(&|i| format!(" {i:2} | user{i:<3} | {:5}.50", i * 7))
        ),
        4 => format!(
            "Exception in thread \"main\" java.lang.IllegalStateException: order {n} failed\n{}",
            rows(&|i| format!(
                "\tat com.acme.orders.Service{i}.handle(Service{i}.java:{})",
                40 + i
            ))
        ),
        5 => format!(
            "panic: runtime error: invalid memory address\n\ngoroutine 1 [running]:\n{}",
            rows(&|i| format!(
                "main.step{i}(0xc00001{i:04})\n\t/src/app/step{i}.go:{} +0x1d",
                10 + i
            ))
        ),
        6 => rows(&|i| {
            format!("npm ERR! code E{i}04 while fetching package-{i}@^1.{i}.0 from the registry")
        }),
        7 => format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: orders\nspec:\n{}",
            rows(&|i| format!("  container{i}:\n    image: registry.local/app{i}:1.{i}"))
        ),
        8 => format!(
            "import os\n\n{}",
            rows(&|i| format!(
                "def handler_{i}(event):\n    return os.environ.get(\"KEY_{i}\", {i})"
            ))
        ),
        _ => rows(&|i| {
            format!(
                "{i:3}  2026-11-24 10:{i:02}:13  worker-{i}  processed batch {} in {}ms",
                i * 40,
                90 + i
            )
        }),
    }
}

const FACTS: [&str; 10] = [
    "Our staging DB listens on port 5433.",
    "The client's name is Zephyr Labs, spell it exactly.",
    "Deadline: 14 March, don't forget",
    "use eu-west-3 for everything",
    "- remember: the VPN gateway is vpn-gw-42.corp",
    "ticket ABC-123 is the one",
    "btw the password hint is 'blue lagoon'",
    "## Important: never deploy on Fridays",
    "1. use node 20.11.1 only",
    "> the SLA is 99.95%",
];

/// The same with facts phrased ten ways — a bullet, a heading, a quote, chat style, no
/// punctuation — in pastes of ten other shapes (JSON, CSV, kubectl, psql, a Java trace, a Go
/// panic, npm errors, YAML, Python, a table), at the start, in the middle and at the end.
#[tokio::test]
async fn facts_survive_pastes_of_other_shapes() {
    let messages = (0..10)
        .map(|n| {
            let paste = shaped(n);
            let fact = FACTS[n];
            match rotate(n) {
                Place::Start => format!("{fact}\nHere is step {n}:\n{paste}"),
                Place::End => format!("Here is step {n}:\n{paste}\n{fact}"),
                Place::Middle => {
                    let lines: Vec<&str> = paste.lines().collect();
                    let half = lines.len() / 2;
                    format!(
                        "Here is step {n}:\n{}\n{fact}\n{}",
                        lines[..half].join("\n"),
                        lines[half..].join("\n")
                    )
                }
            }
        })
        .collect();
    let r = run_messages(messages, &FACTS, "List every fact I gave you.").await;
    assert!(r.kept >= 9, "kept {} of 10", r.kept);
}
