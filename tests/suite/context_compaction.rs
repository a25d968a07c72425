//! Context management through the real binary: when compaction fires, what each summary request
//! holds, what the requests after it hold, pruning, overflow recovery, the breaker.

use crate::support;

use serde_json::{Value, json};
use support::openai;
use support::pith::{PithEnv, normalized, of_type, stderr, stdout};
use support::{MockResponse, MockServer};

/// context 20,000, output 4,000 → reserved 4,000, usable 16,000, verbatim tail 4,000 tokens.
async fn small_window(extra: &str) -> (MockServer, PithEnv) {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 20_000, 4_000, extra);
    (server, env)
}

fn messages(body: &Value) -> Vec<Value> {
    body["messages"].as_array().cloned().unwrap_or_default()
}

/// Text of a chat message (string content or text parts).
fn content(m: &Value) -> String {
    support::message_text(m)
}

fn all_text(body: &Value) -> String {
    messages(body)
        .iter()
        .map(content)
        .collect::<Vec<_>>()
        .join("\n")
}

/// A summary request has no tools and the compaction agent's system prompt.
/// A summary request: the cache-friendly one (the session's request with the instruction
/// appended) or the compaction agent's dedicated one (its own system prompt, no tools).
fn is_summary_request(body: &Value) -> bool {
    is_inline_summary_request(body) || is_dedicated_summary_request(body)
}

fn is_inline_summary_request(body: &Value) -> bool {
    messages(body)
        .last()
        .is_some_and(|m| content(m).starts_with("[pith: context compaction]"))
}

fn is_dedicated_summary_request(body: &Value) -> bool {
    body.get("tools").is_none() && content(&messages(body)[0]).contains("compaction agent")
}

/// Config that has summaries written by a separate model: the dedicated summary request.
const DEDICATED: &str = "[compaction]\nmodel = \"mock/summariser\"\n\n[models.\"mock/summariser\"]\ncontext = 20000\noutput = 4000\n";

/// A summary with every section of the template, `goal` under its Goal.
fn full_summary(goal: &str) -> String {
    format!(
        "## Goal\n{goal}\n## Constraints & Preferences\nNone\n## Progress\nStarted.\n## Key Decisions\nNone\n## Next Steps\nNone\n## Critical Context\nNone\n## Relevant Files\nNone"
    )
}

/// A summary with every section of the template (one without them is retried).
const SUMMARY_1: &str = "## Goal\nHelp Zorblax port the billing service.\n## Constraints & Preferences\nNone\n## Progress\nStarted.\n## Key Decisions\nNone\n## Next Steps\nPlan.\n## Relevant Files\nNone\n## Critical Context\nRepo at /srv/zorb-billing; ticket ZB-4411.";
const SUMMARY_2: &str = "## Goal\nHelp Zorblax port the billing service.\n## Constraints & Preferences\nNone\n## Progress\nStarted.\n## Key Decisions\nNone\n## Next Steps\nPlan.\n## Relevant Files\nNone\n## Critical Context\nRepo at /srv/zorb-billing; ticket ZB-4411; the flag is --dry-run-7.";

#[tokio::test]
async fn overflow_at_step_finish_compacts_and_the_next_request_starts_from_the_summary() {
    let (server, env) = small_window("").await;
    server.push(openai::text("Noted, Zorblax.", Some((3_000, 50))));
    let first = env
        .run(&[
            "run",
            "I am Zorblax. The repo is /srv/zorb-billing and the ticket is ZB-4411.",
        ])
        .await;
    assert!(first.status.success(), "stderr: {}", stderr(&first));

    // The second step reports 15,000 + 1,500 = 16,500 ≥ 16,000 usable: compaction fires.
    server.push(openai::text("Here is the plan.", Some((15_000, 1_500))));
    server.push(openai::text(SUMMARY_1, Some((9_000, 300))));
    let (out, events) = env.run_json(&["--continue", "Make a plan."]).await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3, "turn 1, turn 2, one summary call");
    let summary_req = &reqs[2].body;
    assert!(is_inline_summary_request(summary_req), "{summary_req}");
    assert_first_summary_request(&reqs[1].body, summary_req);
    insta::assert_json_snapshot!(
        "first_compaction_request",
        normalized(summary_req, env.path())
    );
    assert_one_compaction_then_an_estimate(&events);

    // The next request: summary in, older turns out.
    server.push(openai::text("Continuing.", Some((2_500, 20))));
    let third = env.run(&["run", "--continue", "Next?"]).await;
    assert!(third.status.success(), "stderr: {}", stderr(&third));
    let body = &server.requests()[3].body;
    let msgs = messages(body);
    assert_eq!(content(&msgs[1]), "What did we do so far?");
    // The summary, then what pith carried itself: the user's words, verbatim.
    let summary = content(&msgs[2]);
    assert!(summary.starts_with(SUMMARY_1), "{summary}");
    assert!(summary.contains("Recorded by pith itself"), "{summary}");
    assert!(
        summary.contains("I am Zorblax. The repo is /srv/zorb-billing and the ticket is ZB-4411."),
        "the user's words were not carried: {summary}"
    );
    assert!(!all_text(body).contains("Continue if you have next steps"));
    assert_eq!(content(msgs.last().unwrap()), "Next?");
    insta::assert_json_snapshot!("request_after_compaction", normalized(body, env.path()));
}

/// The summary request after step `step` of the first compaction: cache-friendly, capped, with
/// the user's facts and every section of the template.
fn assert_first_summary_request(step: &Value, summary_req: &Value) {
    // Cache-friendly: the summary request is the last step's request byte for byte (system
    // prompt, tools, every message), then the step's answer, then the instruction — so the
    // provider's prompt cache written by the last step is read, not paid again.
    assert_eq!(summary_req["tools"], step["tools"]);
    assert_eq!(summary_req["model"], step["model"]);
    let (sent, summary_msgs) = (messages(step), messages(summary_req));
    assert_eq!(summary_msgs[..sent.len()], sent[..], "the prefix differs");
    assert_eq!(content(&summary_msgs[sent.len()]), "Here is the plan.");
    assert_eq!(summary_msgs.len(), sent.len() + 2);
    // The summary's own cap (2,666), or what the window leaves after the 16,500 counted
    // tokens, the instruction and a margin, when that is less.
    let cap = summary_req["max_tokens"].as_u64().unwrap();
    assert!((1_333..2_666).contains(&cap), "{cap}");
    // The facts the user gave are in the summary request's input.
    let input = all_text(summary_req);
    for fact in ["Zorblax", "/srv/zorb-billing", "ZB-4411"] {
        assert!(
            input.contains(fact),
            "{fact} missing from the summary request"
        );
    }
    for section in [
        "Goal",
        "Constraints",
        "Progress",
        "Key Decisions",
        "Next Steps",
        "Critical Context",
        "Relevant Files",
    ] {
        assert!(
            input.contains(section),
            "template section {section} missing"
        );
    }
}

/// One compaction, one model call, a smaller context after; the usage shown right after it is
/// an estimate; the turn had finished, so no continue message.
fn assert_one_compaction_then_an_estimate(events: &[Value]) {
    let finished = of_type(events, "compaction_finished");
    assert_eq!(finished.len(), 1);
    assert_eq!(finished[0]["model_calls"], 1);
    assert!(finished[0]["after"].as_u64().unwrap() < finished[0]["before"].as_u64().unwrap());
    // The usage shown right after is an estimate of the compacted context.
    let usage = of_type(events, "context_usage");
    let last = usage.last().unwrap();
    assert_eq!(last["estimated"], true);
    assert!(last["used"].as_u64().unwrap() < 16_000);
    // The turn had finished: no synthetic continue message.
    assert_eq!(events.last().unwrap()["reason"], "stop");
}

#[tokio::test]
async fn second_compaction_merges_the_previous_summary() {
    // The dedicated request, where the previous summary travels as <previous-summary>.
    let (server, env) = small_window(DEDICATED).await;
    server.push(openai::text("Noted.", Some((3_000, 50))));
    assert!(
        env.run(&[
            "run",
            "I am Zorblax; repo /srv/zorb-billing; ticket ZB-4411."
        ])
        .await
        .status
        .success()
    );
    server.push(openai::text("Plan ready.", Some((15_000, 1_500))));
    server.push(openai::text(SUMMARY_1, Some((9_000, 300))));
    assert!(env.run(&["run", "-c", "Plan it."]).await.status.success());
    server.push(openai::text("Flag noted.", Some((15_500, 1_000))));
    server.push(openai::text(SUMMARY_2, Some((6_000, 300))));
    let out = env
        .run(&["run", "-c", "Always pass --dry-run-7 to the migrator."])
        .await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let reqs = server.requests();
    assert_eq!(reqs.len(), 5);
    let second = &reqs[4].body;
    let text = all_text(second);
    assert!(text.contains("<previous-summary>"), "{text}");
    assert!(
        text.contains(SUMMARY_1),
        "previous summary not carried into the request: {text}"
    );
    // The newest turn (with the new fact) is the verbatim tail: not summarised, kept word for word.
    assert!(
        !text.contains("--dry-run-7"),
        "the tail was summarised: {}",
        std::fs::read_to_string(env.data.path().join("logs/pith.log")).unwrap_or_default()
    );
    // Only the latest summary: the old one appears once, as <previous-summary>, not as a Q/A pair.
    assert!(
        !text.contains("What did we do so far?"),
        "summaries stacked: {text}"
    );
    insta::assert_json_snapshot!("second_compaction_request", normalized(second, env.path()));

    server.push(openai::text("ok", Some((2_000, 5))));
    assert!(env.run(&["run", "-c", "status?"]).await.status.success());
    let after = &server.requests()[5].body;
    let t = all_text(after);
    assert!(t.contains(SUMMARY_2));
    assert!(
        !t.contains(SUMMARY_1.lines().last().unwrap()),
        "the old summary is still in context"
    );
    assert_eq!(t.matches("What did we do so far?").count(), 1);
    assert!(
        t.contains("Always pass --dry-run-7 to the migrator."),
        "the tail was lost"
    );
}

#[tokio::test]
async fn provider_overflow_error_compacts_and_retries_the_step_without_rerunning_tools() {
    let (server, env) = small_window("").await;
    server.push(openai::tool_calls(
        &[(
            "call_count",
            "bash",
            r#"{"command":"echo ran >> count.txt && echo counted"}"#,
        )],
        Some((3_000, 40)),
    ));
    server.push(MockResponse::status(
        400,
        openai::error_body(
            "context_length_exceeded",
            "This model's maximum context length is 20000 tokens. However, your messages resulted in 21000 tokens.",
        ),
    ));
    server.push(openai::text(SUMMARY_1, Some((4_000, 200))));
    server.push(openai::text("All done.", Some((2_000, 10))));
    let (out, events) = env.run_json(&["--yes", "count once"]).await;
    assert!(
        out.status.success(),
        "exit {:?}, stderr: {}",
        out.status.code(),
        stderr(&out)
    );
    let count = std::fs::read_to_string(env.path().join("count.txt")).unwrap();
    assert_eq!(count, "ran\n", "the tool ran more than once");
    let reqs = server.requests();
    assert_eq!(
        reqs.len(),
        4,
        "step, overflowed step, summary, retried step"
    );
    assert!(is_summary_request(&reqs[2].body));
    let started = of_type(&events, "compaction_started");
    assert_eq!(started.len(), 1);
    assert_eq!(started[0]["overflow"], true);
    assert!(of_type(&events, "error").is_empty(), "{events:?}");
    assert_eq!(events.last().unwrap()["reason"], "stop");
    // The retried step starts from the summary and carries on.
    let retry = &reqs[3].body;
    let msgs = messages(retry);
    assert_eq!(content(&msgs[1]), "What did we do so far?");
    insta::assert_json_snapshot!("overflow_retry_request", normalized(retry, env.path()));
    insta::assert_json_snapshot!(
        "overflow_summary_request",
        normalized(&reqs[2].body, env.path())
    );
}

#[tokio::test]
async fn old_tool_outputs_are_pruned_at_step_boundaries() {
    let server = MockServer::start().await;
    let env = PithEnv::new(
        &server.url(),
        400_000,
        16_000,
        "[compaction]\nprune_protect = 6000\nprune_minimum = 1000\n",
    );
    // Five files of roughly 2,500 tokens each (as read shows them), read in one turn: the two
    // newest fit in the 6,000-token protect window, the one crossing it and all older are pruned.
    for i in 0..5 {
        let body: String = (0..250)
            .map(|n| format!("file{i} line {n} alpha beta\n"))
            .collect();
        std::fs::write(env.path().join(format!("f{i}.txt")), body).unwrap();
    }
    for i in 0..5 {
        let args = format!(r#"{{"file_path":"f{i}.txt"}}"#);
        let id = format!("read_{i}");
        server.push(openai::tool_calls(
            &[(id.as_str(), "read", args.as_str())],
            Some((5_000, 20)),
        ));
    }
    server.push(openai::text("Read them all.", Some((11_000, 10))));
    assert!(env.run(&["run", "read the files"]).await.status.success());
    server.push(openai::text("Sure.", Some((11_500, 5))));
    assert!(env.run(&["run", "-c", "thanks"]).await.status.success());
    server.push(openai::text("Here.", Some((4_000, 5))));
    let (out, events) = env.run_json(&["-c", "and now?"]).await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let pruned = of_type(&events, "pruned");
    assert_eq!(pruned.len(), 1, "{events:?}");
    let body = server.requests().last().unwrap().body.clone();
    let results: Vec<String> = messages(&body)
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(content)
        .collect();
    assert_eq!(results.len(), 5);
    // The placeholder names the call, so `recall` can bring the output back.
    let cleared = results
        .iter()
        .filter(|r| r.starts_with("[Old tool result content cleared] (recall id \"read_"))
        .count();
    assert_eq!(cleared, 3, "{results:?}");
    // Oldest first: the newest outputs inside the protect window stay.
    assert_eq!(
        results[2],
        "[Old tool result content cleared] (recall id \"read_2\" brings it back)"
    );
    assert!(results[3].contains("file3 line 0"));
    assert!(results[4].contains("file4 line 0"));
    insta::assert_json_snapshot!("request_after_pruning", normalized(&body, env.path()));
    // Pruned outputs are marked, never deleted: the export still has them.
    let export = env.export_latest().await.to_string();
    assert!(export.contains("file0 line 0 alpha beta"));
    assert!(export.contains("compacted"));
}

#[tokio::test]
async fn prune_can_be_turned_off_by_environment() {
    let server = MockServer::start().await;
    let env = PithEnv::new(
        &server.url(),
        400_000,
        16_000,
        "[compaction]\nprune_protect = 10\nprune_minimum = 10\n",
    );
    std::fs::write(env.path().join("a.txt"), "x\n".repeat(500)).unwrap();
    server.push(openai::tool_calls(
        &[("r", "read", r#"{"file_path":"a.txt"}"#)],
        Some((5_000, 20)),
    ));
    server.push(openai::text("ok", Some((6_000, 5))));
    assert!(env.run(&["run", "read"]).await.status.success());
    server.push(openai::text("ok", Some((6_000, 5))));
    assert!(env.run(&["run", "-c", "more"]).await.status.success());
    server.push(openai::text("ok", Some((6_000, 5))));
    let out = env
        .command(&["run", "--format", "json", "-c", "again"])
        .env("PITH_DISABLE_PRUNE", "1")
        .output()
        .await
        .unwrap();
    assert!(out.status.success());
    assert!(!stdout(&out).contains("\"type\":\"pruned\""));
    let body = server.requests().last().unwrap().body.clone();
    let results: Vec<String> = messages(&body)
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(content)
        .collect();
    assert_eq!(results.len(), 1);
    assert!(
        results[0].contains("x"),
        "pruned although PITH_DISABLE_PRUNE=1: {results:?}"
    );
}

#[tokio::test]
async fn provider_without_usage_still_compacts_from_the_estimate() {
    let (server, env) = small_window("").await;
    // ~ 6,000 tokens of user text per turn, no usage reported ever.
    let big = |tag: &str| {
        format!(
            "{tag} {}",
            "lorem ipsum dolor sit amet consectetur ".repeat(900)
        )
    };
    server.push(openai::text("one", None));
    assert!(
        env.run(&["run", &big("Zorblax-first")])
            .await
            .status
            .success()
    );
    server.push(openai::text("two", None));
    assert!(
        env.run(&["run", "-c", &big("second")])
            .await
            .status
            .success()
    );
    // The third turn's message alone exceeds the verbatim-tail budget: it travels whole after
    // the summary (never summarised away); the summariser sees it only in short, for context.
    // Two chunks; the last summary misses the template's sections: one retry, with a note.
    server.push(openai::text("partial summary with Zorblax-first", None));
    server.push(openai::text(
        "## Goal\nfinal summary without sections",
        None,
    ));
    server.push(openai::text(SUMMARY_1, None));
    server.push(openai::text("three", None));
    let third = big("third");
    let (out, events) = env.run_json(&["-c", &third]).await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let finished = of_type(&events, "compaction_finished");
    assert_eq!(finished.len(), 1, "{events:?}");
    assert_eq!(finished[0]["model_calls"], 3);
    let reqs = server.requests();
    assert_eq!(reqs.len(), 6);
    assert!(is_summary_request(&reqs[2].body));
    let first = all_text(&reqs[2].body);
    assert!(first.contains("Zorblax-first") && first.contains("second lorem"));
    assert!(!first.contains("third lorem"));
    assert_second_chunk_carries_the_summary_and_a_short_tail(&all_text(&reqs[3].body));
    let retry = all_text(&reqs[4].body);
    assert!(
        retry.contains("missing these sections: Constraints, Progress"),
        "{retry}"
    );
    // The request that followed starts from the accepted summary, then the third message whole.
    let sent = all_text(&reqs[5].body);
    assert!(sent.contains(SUMMARY_1.lines().nth(1).unwrap()));
    assert!(!sent.contains("partial summary") && !sent.contains("without sections"));
    assert!(
        sent.contains(third.trim()),
        "the current request is not verbatim"
    );
    insta::assert_json_snapshot!(
        "no_usage_summary_request",
        normalized(&reqs[2].body, env.path())
    );
}

/// The second chunk's summary request (text `second`): the running summary goes on, and the
/// current message is only shown short, its words asked for within the summary's cap.
fn assert_second_chunk_carries_the_summary_and_a_short_tail(second: &str) {
    assert!(
        second.contains("partial summary with Zorblax-first"),
        "running summary lost"
    );
    assert!(second.contains("kept word for word after your summary, shortened here"));
    // (The words of the older messages pith could not carry are asked for apart, in
    // `<user-words>`, within the summary's cap.)
    let outside_words = match (second.find("<user-words>"), second.find("</user-words>")) {
        (Some(a), Some(b)) => format!("{}{}", &second[..a], &second[b..]),
        _ => second.to_string(),
    };
    assert!(
        outside_words.matches("lorem").count() < 900,
        "the current request was summarised whole"
    );
    let words = second.matches("lorem").count() - outside_words.matches("lorem").count();
    assert!(
        words < 900,
        "{words} words asked for beyond the summary's cap"
    );
}

#[tokio::test]
async fn compaction_input_larger_than_the_window_is_summarised_in_chunks() {
    let server = MockServer::start().await;
    // The session model has a large window; the compaction model a tiny one.
    let extra = "[compaction]\nmodel = \"mock/small\"\n\n[models.\"mock/small\"]\ncontext = 6000\noutput = 1000\n";
    let env = PithEnv::new(&server.url(), 200_000, 8_000, extra);
    // Long answers to short requests: the bulk is what a summary replaces (the user's own
    // words travel verbatim after it).
    for i in 0..4 {
        server.push(openai::text(
            &format!(
                "answer {i}: {}",
                "the quick brown fox jumps over the lazy dog ".repeat(300)
            ),
            Some((3_000 * (i + 1), 2_700)),
        ));
        let prompt = format!("fact-{i}: remember me");
        let args = if i == 0 {
            vec!["run", prompt.as_str()]
        } else {
            vec!["run", "-c", prompt.as_str()]
        };
        assert!(env.run(&args).await.status.success());
    }
    for i in 0..10 {
        server.push(openai::text(
            &full_summary(&format!("running summary {i} with fact-0")),
            Some((4_000, 100)),
        ));
    }
    let (out, events) = env.run_json(&["-c", "/compact"]).await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let finished = of_type(&events, "compaction_finished");
    assert_eq!(finished.len(), 1, "{events:?}");
    let calls = finished[0]["model_calls"].as_u64().unwrap();
    assert!(
        calls >= 2,
        "expected chunked summarising, got {calls} call(s)"
    );
    let reqs = server.requests();
    let summary_reqs: Vec<&Value> = reqs[4..].iter().map(|r| &r.body).collect();
    assert_eq!(summary_reqs.len() as u64, calls);
    // Oldest first; each later chunk carries the running summary forward.
    assert!(all_text(summary_reqs[0]).contains("fact-0"));
    for (i, body) in summary_reqs.iter().enumerate().skip(1) {
        let text = all_text(body);
        assert!(
            text.contains("<previous-summary>"),
            "chunk {i} lacks the running summary"
        );
        assert!(text.contains(&format!("running summary {}", i - 1)));
        assert_eq!(body["model"], "small");
    }
    insta::assert_json_snapshot!(
        "chunked_compaction_requests",
        summary_reqs
            .iter()
            .map(|b| normalized(b, env.path()))
            .collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn manual_compact_with_focus_adds_the_focus_and_no_continue_message() {
    let (server, env) = small_window("").await;
    // A long answer: worth compacting.
    let plan = "Step: copy the orders rows in batches and verify the checksums. ".repeat(200);
    server.push(openai::text(&plan, Some((5_000, 2_500))));
    assert!(
        env.run(&["run", "We are migrating the orders table."])
            .await
            .status
            .success()
    );
    server.push(openai::text(SUMMARY_1, Some((3_500, 200))));
    let (out, events) = env
        .run_json(&["-c", "/compact keep the orders schema details"])
        .await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let req = &server.requests()[1].body;
    assert!(all_text(req).contains("keep the orders schema details"));
    let started = of_type(&events, "compaction_started");
    assert_eq!(started[0]["auto"], false);
    assert_eq!(started[0]["focus"], "keep the orders schema details");
    assert_eq!(
        server.requests().len(),
        2,
        "a manual compaction makes one call and no step"
    );
    server.push(openai::text("ok", Some((1_500, 5))));
    assert!(env.run(&["run", "-c", "go"]).await.status.success());
    let next = all_text(&server.requests()[2].body);
    assert!(!next.contains("Continue if you have next steps"));
}

/// `compaction.instructions` reach every summary request, and a `/compact` focus adds to them.
#[tokio::test]
async fn standing_compaction_instructions_reach_the_summary_request() {
    let (server, env) = small_window(
        "[compaction]\ninstructions = \"Keep every ticket number such as ZB-4411 verbatim.\"",
    )
    .await;
    let plan = "Step: copy the orders rows in batches and verify the checksums. ".repeat(200);
    server.push(openai::text(&plan, Some((5_000, 2_500))));
    assert!(
        env.run(&["run", "We are migrating the orders table."])
            .await
            .status
            .success()
    );
    server.push(openai::text(SUMMARY_1, Some((3_500, 200))));
    let (out, _) = env.run_json(&["-c", "/compact the orders schema"]).await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let req = all_text(&server.requests()[1].body);
    assert!(
        req.contains("Keep every ticket number such as ZB-4411 verbatim."),
        "{req}"
    );
    assert!(req.contains("focus on: the orders schema"), "{req}");
}

#[tokio::test]
async fn automatic_compaction_mid_turn_adds_the_continue_message() {
    let (server, env) = small_window("").await;
    server.push(openai::tool_calls(
        &[("c1", "bash", r#"{"command":"echo step-one"}"#)],
        Some((15_000, 1_200)),
    ));
    server.push(openai::text(SUMMARY_1, Some((8_000, 200))));
    server.push(openai::text("Finished.", Some((3_000, 10))));
    let out = env.run(&["run", "--yes", "do the long task"]).await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3);
    let after = all_text(&reqs[2].body);
    assert!(after.contains("Continue if you have next steps"), "{after}");
}

#[tokio::test]
async fn a_summary_longer_than_what_it_replaces_is_cut() {
    let (server, env) = small_window("").await;
    let answer = "Working through the ledger entries one by one. ".repeat(250);
    server.push(openai::text(&answer, Some((15_000, 1_500))));
    // A server that ignores the summary's output cap: a "summary" far larger than the history.
    let huge = format!("{}\n{}", SUMMARY_1, "detail ".repeat(14_000));
    server.push(openai::text(&huge, Some((9_000, 3_000))));
    let (out, events) = env.run_json(&["Reconcile the ledger."]).await;
    assert!(out.status.success(), "stderr: {} {events:?}", stderr(&out));
    let finished = of_type(&events, "compaction_finished");
    assert_eq!(finished.len(), 1, "{events:?}");
    let (before, after) = (
        finished[0]["before"].as_u64().unwrap(),
        finished[0]["after"].as_u64().unwrap(),
    );
    assert!(after < before * 9 / 10, "{before} -> {after}");
    assert_eq!(server.requests().len(), 2, "no retry for a long summary");
    // The stored summary was cut to what it replaces.
    server.push(openai::text("ok", Some((3_000, 5))));
    assert!(env.run(&["run", "-c", "status?"]).await.status.success());
    let next = all_text(&server.requests()[2].body);
    assert!(next.contains("characters cut for the summary"), "not cut");
    assert!(
        next.matches("detail").count() < 6_000,
        "the summary was kept whole"
    );
}

#[tokio::test]
async fn a_request_larger_than_the_window_stops_with_a_clear_message() {
    let (server, env) = small_window("").await;
    // ~20,000 tokens in one message, 16,000 usable: it can be neither sent nor summarised away.
    let paste = "lorem ipsum dolor sit amet consectetur ".repeat(3_000);
    let (out, events) = env.run_json(&[&paste]).await;
    // refused like a bad command line (README: exit code 2)
    assert_eq!(out.status.code(), Some(2), "stderr: {}", stderr(&out));
    // Refused before it is stored (a typed event, not an error to parse).
    let refused = of_type(&events, "prompt_refused");
    assert_eq!(refused.len(), 1, "{events:?}");
    assert_eq!(refused[0]["usable"], 16_000);
    let message = refused[0]["message"].as_str().unwrap();
    assert!(
        message.contains("does not fit") && message.contains("16,000"),
        "{message}"
    );
    assert!(server.requests().is_empty(), "no model call can help");
}

#[tokio::test]
async fn autocompact_off_by_environment_never_compacts() {
    let (server, env) = small_window("").await;
    server.push(openai::text("big", Some((19_000, 500))));
    let out = env
        .command(&["run", "--format", "json", "hi"])
        .env("PITH_DISABLE_AUTOCOMPACT", "1")
        .output()
        .await
        .unwrap();
    assert!(out.status.success());
    assert!(!stdout(&out).contains("compaction_started"));
    assert_eq!(server.requests().len(), 1);
    let _ = json!(null);
}

/// Issue 4 §9 through the binary: across three compactions, every fact the user gave is either in
/// the input of each summary request (as history or in the previous summary) or in the verbatim
/// tail that follows it; no summary request loses the previous summary.
#[tokio::test]
async fn facts_survive_three_compactions() {
    let (server, env) = small_window("").await;
    let facts: Vec<String> = (1..=7)
        .map(|i| format!("FACT-{i}-codename-{}", i * 1111))
        .collect();
    let summary = |upto: usize| {
        full_summary(&format!(
            "Track the codenames.\n{}",
            facts[..upto].join("\n")
        ))
    };
    let mut summaries = Vec::new();
    let mut compaction_reqs = Vec::new();
    for turn in 1..=7usize {
        // Every second turn ends near the window, which triggers a compaction at step finish.
        let high = turn % 2 == 0 && turn < 7;
        let usage = if high { (15_000, 1_500) } else { (3_000, 20) };
        server.push(openai::text("Noted.", Some(usage)));
        if high {
            let s = summary(turn);
            server.push(openai::text(&s, Some((6_000, 200))));
            summaries.push(s);
        }
        let prompt = format!("Remember {}.", facts[turn - 1]);
        let args: Vec<&str> = if turn == 1 {
            vec!["run", &prompt]
        } else {
            vec!["run", "-c", &prompt]
        };
        let out = env.run(&args).await;
        assert!(out.status.success(), "turn {turn}: {}", stderr(&out));
        if high {
            compaction_reqs.push(server.requests().len() - 1);
        }
    }
    let reqs = server.requests();
    assert_eq!(compaction_reqs.len(), 3);
    for (k, &i) in compaction_reqs.iter().enumerate() {
        let input = all_text(&reqs[i].body);
        assert!(is_summary_request(&reqs[i].body));
        if k > 0 {
            // The cache-friendly request holds the conversation as the model sees it: the
            // previous summary answers "What did we do so far?".
            assert!(
                input.contains(&summaries[k - 1]),
                "summary request {k} lost the previous summary"
            );
        }
        // The request after the compaction holds the verbatim tail.
        let next = all_text(&reqs[i + 1].body);
        let given = 2 * (k + 1);
        for fact in &facts[..given] {
            assert!(
                input.contains(fact.as_str()) || next.contains(fact.as_str()),
                "{fact} is neither in summary request {k} nor in the tail after it"
            );
        }
    }
    // Only the latest summary is in context at the end.
    let last = all_text(&reqs.last().unwrap().body);
    assert_eq!(last.matches("What did we do so far?").count(), 1);
    assert!(last.contains(&summaries[2]));
}

#[tokio::test]
async fn tool_outputs_in_the_summary_request_are_cut_to_2000_chars() {
    let server = MockServer::start().await;
    // Outputs are cut in the dedicated request (the cache-friendly one is the session's own).
    let env = PithEnv::new(&server.url(), 200_000, 8_000, DEDICATED);
    // A 30,000-character tool output: under the truncation limit, so stored whole.
    server.push(openai::tool_calls(
        &[(
            "call_big",
            "bash",
            r#"{"command":"for i in $(seq 1 3000); do echo line-$i-xyzzy; done"}"#,
        )],
        Some((3_000, 40)),
    ));
    server.push(openai::text("Listed.", Some((12_000, 10))));
    let out = env.run(&["run", "--yes", "list lines"]).await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    server.push(openai::text(SUMMARY_1, Some((4_000, 100))));
    let (out, events) = env.run_json(&["-c", "/compact"]).await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let finished = of_type(&events, "compaction_finished");
    assert_eq!(finished.len(), 1, "{events:?}");
    assert_eq!(finished[0]["model_calls"], 1);
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3);
    let summary = &reqs[2].body;
    assert!(is_summary_request(summary), "{summary}");
    let result = messages(summary)
        .iter()
        .map(content)
        .find(|t| t.starts_with("[tool result]"))
        .expect("the tool result is in the summary request");
    assert!(result.contains("line-1-xyzzy"), "the head is kept");
    assert!(result.contains("line-3000-xyzzy"), "the end is kept");
    assert!(result.contains("characters cut for the summary"));
    assert!(
        result.chars().count() < 2_200,
        "tool output not cut: {} chars",
        result.chars().count()
    );
}

/// What a report teaches about the fixed part (system prompt and tool definitions) applies after
/// a compaction: for a server that counts 40% more for it than the estimator, the figure is about
/// 1.4 times the estimate, not the bare estimate of the fixed part.
#[tokio::test]
async fn the_estimate_after_a_compaction_is_corrected_by_the_learned_ratio() {
    // The estimate of a fresh session's first request (system prompt, tools, the prompt).
    let (server, env) = small_window("").await;
    server.push(openai::text("ok", Some((1_000, 5))));
    let (_, events) = env.run_json(&["hi"]).await;
    let first = of_type(&events, "context_usage")
        .into_iter()
        .find(|u| u["used"].as_u64().unwrap() > 0)
        .unwrap()["used"]
        .as_u64()
        .unwrap();

    // The same first request in a new session; the provider counts 40% more.
    let (server, env) = small_window("").await;
    server.push(openai::tool_calls(
        &[("call_1", "bash", r#"{"command":"echo one"}"#)],
        Some((first * 14 / 10, 10)),
    ));
    // The second step fills the window: compaction at step finish.
    server.push(openai::text("done", Some((16_500, 10))));
    server.push(openai::text(SUMMARY_1, Some((3_000, 50))));
    let (out, events) = env.run_json(&["--yes", "hi"]).await;
    assert!(
        out.status.success(),
        "{:?} stderr: {} log: {}",
        out.status,
        stderr(&out),
        std::fs::read_to_string(env.data.path().join("logs/pith.log")).unwrap_or_default()
    );
    let finished = of_type(&events, "compaction_finished");
    assert_eq!(finished.len(), 1, "{events:?}");
    let after = finished[0]["after"].as_u64().unwrap();
    assert!(
        after * 10 >= first * 13,
        "after compaction ~{after} tokens, but the fixed part alone is ~{} as learned",
        first * 14 / 10
    );
}

/// A resumed session starts from the provider's last report (the count of record), not from a
/// fresh estimate: a report just under the limit plus a new message compacts before sending.
#[tokio::test]
async fn resumed_session_uses_the_last_reported_usage_before_sending() {
    let (server, env) = small_window("").await;
    server.push(openai::text("Noted.", Some((15_000, 200))));
    let first = env.run(&["run", "Keep the ledger in /srv/ledger."]).await;
    assert!(first.status.success(), "stderr: {}", stderr(&first));
    assert_eq!(
        server.requests().len(),
        1,
        "15,200 < 16,000 usable: no compaction yet"
    );
    // ~1,000 new tokens on top of the reported 15,200 pass the 16,000 usable tokens.
    let question = format!("Also: {}", "check every entry twice ".repeat(220));
    server.push(openai::text(SUMMARY_1, Some((6_000, 200))));
    server.push(openai::text("Done.", Some((3_000, 5))));
    let (out, events) = env.run_json(&["-c", &question]).await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let first_usage = of_type(&events, "context_usage")[0].clone();
    assert!(
        first_usage["used"].as_u64().unwrap() >= 15_200,
        "{first_usage}"
    );
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3);
    assert!(
        is_summary_request(&reqs[1].body),
        "compacted before sending"
    );
    // The new question is kept word for word after the summary.
    assert!(all_text(&reqs[2].body).contains("check every entry twice"));
}

/// Counts start cheap (no BPE for a short session) and are exact tiktoken counts once the context
/// is large: a big CJK message is counted by the BPE, not one token per character.
#[tokio::test]
async fn large_contexts_are_counted_with_the_real_tokenizer() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 400_000, 16_000, "");
    let cjk = "上下文管理决定了代理能走多远。".repeat(2_000); // 30,000 characters
    let exact = pith_context::tokens::Estimator::for_model("test-model").text(&cjk);
    let chars = cjk.chars().count() as u64;
    assert!(
        exact < chars * 3 / 4,
        "o200k counts this text well below one token per char"
    );
    server.push(openai::text("ok", None));
    let (out, events) = env.run_json(&[&cjk]).await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let last = (*of_type(&events, "context_usage").last().unwrap()).clone();
    let used = last["used"].as_u64().unwrap();
    // The figure is the exact count of the message plus system prompt and tools (a few thousand).
    assert!(
        used > exact && used < exact + 6_000,
        "used {used}, message {exact}, chars {chars}"
    );
}
