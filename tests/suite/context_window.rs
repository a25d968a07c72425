//! Context management as a real, small window makes it: every request carries an output cap, the
//! real window is learned (from an overflow error or from the server), a long session on a 4k
//! window never fails a turn, every compaction shrinks, and the user's words, the todo list and
//! the ledger survive compactions; a pruned output can be recalled.

use crate::support;

use serde_json::{Value, json};
use support::openai;
use support::pith::{PithEnv, of_type, stderr};
use support::{MockResponse, MockServer};

/// A summary with every section of the template, `body` under its Critical Context.
fn full_summary(body: &str) -> String {
    format!(
        "## Goal\nKeep going.\n## Constraints & Preferences\nNone\n## Progress\nSome.\n## Key Decisions\nNone\n## Next Steps\nNone\n## Critical Context\n{body}\n## Relevant Files\nNone"
    )
}

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

#[tokio::test]
async fn every_request_carries_the_output_cap_in_the_configured_field() {
    let server = MockServer::start().await;
    // 4,096 tokens, no output limit configured: the cap is a quarter of the window.
    let env = PithEnv::new(&server.url(), 4_096, 0, "");
    server.push(openai::text("one", Some((300, 5))));
    assert!(env.run(&["run", "hi"]).await.status.success());
    assert_eq!(server.request_body(0)["max_tokens"], 1_024);
    assert!(
        server
            .request_body(0)
            .get("max_completion_tokens")
            .is_none()
    );

    // The field a server takes is a provider setting.
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 8_192, 2_000, "");
    let config = std::fs::read_to_string(&env.config).unwrap().replace(
        "max_retries = 3",
        "max_retries = 3\noutput_cap = \"max_completion_tokens\"",
    );
    std::fs::write(&env.config, config).unwrap();
    server.push(openai::text("two", Some((300, 5))));
    let out = env.run(&["run", "hi"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let body = server.request_body(0);
    assert_eq!(body["max_completion_tokens"], 2_000);
    assert!(body.get("max_tokens").is_none());
}

/// A server started with a smaller window than configured: its overflow error states the real
/// window, which pith uses from then on, says so once, and remembers for the next session.
#[tokio::test]
async fn the_window_an_overflow_error_states_is_learned_and_remembered() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 32_000, 4_000, "");
    let answer = "The plan has many steps. ".repeat(300);
    server.push(openai::text(&answer, Some((3_000, 1_800))));
    assert!(
        env.run(&["run", "Plan the migration."])
            .await
            .status
            .success()
    );
    // llama.cpp's 400 body, as a real llama-server sends it.
    server.push(MockResponse::status(
        400,
        json!({"error": {"code": 400, "message": "request (6120 tokens) exceeds the available context size (6000 tokens), try increasing it", "type": "exceed_context_size_error", "n_prompt_tokens": 6120, "n_ctx": 6000}}),
    ));
    server.push(openai::text(
        &full_summary("migration plan"),
        Some((1_500, 200)),
    ));
    server.push(openai::text("Done.", Some((2_000, 5))));
    let (out, events) = env.run_json(&["-c", "Go on."]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let learned = of_type(&events, "context_window");
    assert_eq!(learned.len(), 1, "{events:?}");
    assert_eq!(learned[0]["window"], 6_000);
    assert_eq!(learned[0]["previous"], 32_000);
    assert_eq!(learned[0]["source"], "server error");
    let infos = of_type(&events, "info");
    assert_eq!(
        infos
            .iter()
            .filter(|i| i["message"].as_str().unwrap().contains("6,000 tokens"))
            .count(),
        1,
        "said once: {infos:?}"
    );
    // The compaction's figures are real: before is what the server counted.
    let finished = of_type(&events, "compaction_finished");
    assert_eq!(finished[0]["before"], 6_120);
    assert!(finished[0]["after"].as_u64().unwrap() < 3_000);
    // The status figure follows the learned window.
    let usage = of_type(&events, "context_usage");
    assert_eq!(usage.last().unwrap()["window"], 6_000);
    assert_eq!(usage.last().unwrap()["usable"], 4_500);
    // The retried request fits the learned window's usable part.
    let reqs = server.requests();
    assert!(is_summary_request(&reqs[2].body));
    assert_eq!(
        reqs[3].body["max_tokens"], 1_500,
        "the cap follows the window"
    );

    // A new session on the same model starts from the learned window, and says nothing.
    server.push(openai::text("ok", Some((900, 2))));
    let (out, events) = env.run_json(&["Anything else?"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(of_type(&events, "context_window").is_empty());
    assert_eq!(of_type(&events, "context_usage")[0]["window"], 6_000);
}

/// No window configured and a local server: pith asks it (llama.cpp's /props).
#[tokio::test]
async fn a_local_server_is_asked_for_its_window() {
    let server = MockServer::start().await;
    server.set_props(json!({"default_generation_settings": {"n_ctx": 8192}, "total_slots": 1}));
    let env = PithEnv::new(&server.url(), 0, 0, "");
    server.push(openai::text("hello", Some((500, 3))));
    let (out, events) = env.run_json(&["hi"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let learned = of_type(&events, "context_window");
    assert_eq!(learned.len(), 1, "{events:?}");
    assert_eq!(learned[0]["window"], 8_192);
    assert!(
        learned[0]["source"].as_str().unwrap().contains("/props"),
        "{learned:?}"
    );
    // The server answers before the first figure goes out: no figure says "no window".
    let usage = of_type(&events, "context_usage");
    assert!(!usage.is_empty(), "{events:?}");
    assert!(
        usage.iter().all(|u| u["window"] == 8_192),
        "every context figure has the window: {usage:?}"
    );
    let chat = server
        .requests()
        .into_iter()
        .find(|r| r.path.ends_with("/chat/completions"))
        .expect("the prompt was sent");
    assert_eq!(
        chat.body["max_tokens"], 2_048,
        "the cap follows the asked window"
    );
    // The server told: no warning that compaction is off, now or on the next run (the window
    // is remembered).
    let warned = |events: &[Value]| {
        of_type(events, "info")
            .iter()
            .any(|e| e["message"].as_str().unwrap().contains("no context size"))
    };
    assert!(!warned(&events), "{events:?}");
    server.push(openai::text("again", Some((520, 3))));
    let (out, events) = env.run_json(&["-c", "more"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!warned(&events), "{events:?}");

    // A server that cannot tell: the warning stands.
    let silent = MockServer::start().await;
    let env = PithEnv::new(&silent.url(), 0, 0, "");
    silent.push(openai::text("hello", Some((500, 3))));
    let (out, events) = env.run_json(&["hi"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(warned(&events), "{events:?}");
}

#[tokio::test]
async fn compact_with_nothing_worth_compacting_says_so_and_changes_nothing() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 4_096, 512, "");
    server.push(openai::text("Hi there.", Some((400, 4))));
    assert!(env.run(&["run", "hello"]).await.status.success());
    let (out, events) = env.run_json(&["-c", "/compact"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(server.requests().len(), 1, "no model call");
    assert!(of_type(&events, "compaction_finished").is_empty());
    let info = of_type(&events, "info");
    assert!(
        info.iter()
            .any(|i| i["message"].as_str().unwrap().contains("nothing")),
        "{events:?}"
    );
    assert_eq!(events.last().unwrap()["reason"], "nothing_to_compact");
    // The next request is the same conversation, with no summary in it.
    server.push(openai::text("ok", Some((420, 2))));
    assert!(env.run(&["run", "-c", "next"]).await.status.success());
    let text = text_of(&server.request_body(1));
    assert!(!text.contains("What did we do so far?"), "{text}");
    assert!(text.contains("hello") && text.contains("Hi there."));
}

/// The todo list, the ledger of files and commands, and every message the user typed are in the
/// context after a compaction, whatever the summary says.
#[tokio::test]
async fn todos_ledger_and_the_users_words_survive_a_useless_summary() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 20_000, 4_000, "");
    std::fs::write(env.path().join("notes.md"), "alpha\nbeta\n").unwrap();
    server.push(openai::tool_calls(
        &[
            (
                "t1",
                "todowrite",
                r#"{"todos":[{"content":"port the parser","status":"in_progress"},{"content":"write the tests","status":"pending"}]}"#,
            ),
            ("r1", "read", r#"{"file_path":"notes.md"}"#),
            ("b1", "bash", r#"{"command":"echo built"}"#),
        ],
        Some((3_000, 60)),
    ));
    let answer = "Working through the parser. ".repeat(500);
    server.push(openai::text(&answer, Some((15_000, 1_500))));
    // A summary that says nothing useful.
    server.push(openai::text(&full_summary("nothing"), Some((6_000, 100))));
    let out = env
        .run(&["run", "--yes", "Port the parser; never touch legacy/."])
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    server.push(openai::text("ok", Some((3_000, 2))));
    assert!(env.run(&["run", "-c", "status?"]).await.status.success());
    let reqs = server.requests();
    let after = text_of(&reqs.last().unwrap().body);
    for want in [
        "never touch legacy/",
        "- [~] port the parser (in_progress)",
        "- [ ] write the tests (pending)",
        "- Read: notes.md",
        "- Commands run: `echo built → exit 0: built`",
    ] {
        assert!(
            after.contains(want),
            "{want} missing after the compaction:\n{after}"
        );
    }
}

/// A tool call cut off at the output cap is not run; the model is told why and goes on.
#[tokio::test]
async fn a_tool_call_cut_at_the_output_cap_is_not_run() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 8_192, 1_000, "");
    let frames = vec![
        openai::frame(&openai::delta_chunk(
            json!({"tool_calls": [{"index": 0, "id": "w1", "type": "function",
                "function": {"name": "write", "arguments": "{\"file_path\":\"big.txt\",\"content\":\"aaaa"}}]}),
            None,
        )),
        openai::frame(&openai::delta_chunk(json!({}), Some("length"))),
        openai::frame(&openai::usage_chunk(900, 1_000, 0)),
        openai::done(),
    ];
    server.push(MockResponse::sse(frames));
    server.push(openai::text("I will write it in pieces.", Some((1_200, 8))));
    let (out, events) = env.run_json(&["--yes", "write a big file"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!env.path().join("big.txt").exists(), "a cut call ran");
    let results: Vec<String> = server.request_body(1)["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(results.len(), 1);
    assert!(
        results[0].contains("cut off at the output limit of 1000 tokens"),
        "{results:?}"
    );
    assert_eq!(events.last().unwrap()["reason"], "stop");
}

/// A pruned output names its recall id, and `recall` brings the output back.
#[tokio::test]
async fn a_pruned_output_can_be_recalled() {
    let server = MockServer::start().await;
    let env = PithEnv::new(
        &server.url(),
        100_000,
        4_000,
        "[compaction]\nprune_protect = 10\nprune_minimum = 10\n",
    );
    std::fs::write(env.path().join("data.txt"), "the secret number is 4711\n").unwrap();
    server.push(openai::tool_calls(
        &[("read_1", "read", r#"{"file_path":"data.txt"}"#)],
        Some((3_000, 20)),
    ));
    server.push(openai::text("Read it.", Some((3_100, 5))));
    assert!(env.run(&["run", "read data.txt"]).await.status.success());
    server.push(openai::text("Noted.", Some((3_200, 5))));
    assert!(env.run(&["run", "-c", "two"]).await.status.success());
    // Third turn: the first turn's output is pruned; the model recalls it.
    server.push(openai::tool_calls(
        &[("rc", "recall", r#"{"id":"read_1"}"#)],
        Some((3_300, 10)),
    ));
    server.push(openai::text("It is 4711.", Some((3_400, 5))));
    let out = env.run(&["run", "-c", "what was the number?"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let reqs = server.requests();
    let pruned = text_of(&reqs[3].body);
    assert!(
        pruned.contains("[Old tool result content cleared] (recall id \"read_1\""),
        "{pruned}"
    );
    assert!(!pruned.contains("4711"), "not pruned: {pruned}");
    let recalled = text_of(&reqs[4].body);
    assert!(recalled.contains("the secret number is 4711"), "{recalled}");
}

/// Thirty turns on a 4,096-token window against a mock that counts tokens as a real server
/// would (from the request's size) and summarises faithfully: no turn fails, the context
/// compacts several times, every compaction shrinks, no request exceeds the window, and every
/// fact the user gave is still in the last request.
#[tokio::test]
async fn a_4k_window_runs_a_long_session() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 4_096, 512, "");
    server.respond_with(|body| {
        let prompt = (body.to_string().len() / 4) as u64;
        let text = text_of(body);
        if is_summary_request(body) {
            // A faithful summariser: keeps every fact it is shown.
            let facts: Vec<&str> = text
                .split(|c: char| c.is_whitespace() || c == '.' || c == '"')
                .filter(|w| w.starts_with("FACT-"))
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect();
            return openai::text(&full_summary(&facts.join(" ")), Some((prompt, 120)));
        }
        let answer = "Here is a detailed answer with some reasoning about the request. ".repeat(14);
        openai::text(&answer, Some((prompt, 200)))
    });
    let mut facts = Vec::new();
    let mut compactions = Vec::new();
    for turn in 0..30 {
        let fact = format!("FACT-{turn}-{}", 1000 + turn * 7);
        let prompt = format!("Remember {fact}. Then tell me something about Rust lifetimes.");
        let args = if turn == 0 {
            vec![prompt.as_str()]
        } else {
            vec!["-c", prompt.as_str()]
        };
        let (out, events) = env.run_json(&args).await;
        assert!(
            out.status.success(),
            "turn {turn} failed: {} {:?}",
            stderr(&out),
            of_type(&events, "error")
        );
        for f in of_type(&events, "compaction_finished") {
            compactions.push((f["before"].as_u64().unwrap(), f["after"].as_u64().unwrap()));
        }
        facts.push(fact);
    }
    assert!(compactions.len() >= 3, "{compactions:?}");
    for (before, after) in &compactions {
        assert!(after < before, "{compactions:?}");
        assert!(
            *after <= 3_072 / 2 + 600,
            "not compacted to about half: {compactions:?}"
        );
    }
    let reqs = server.requests();
    for r in &reqs {
        let size = (r.body.to_string().len() / 4) as u64;
        assert!(
            size < 4_096,
            "a request of ~{size} tokens was sent to a 4k window (summary request: {}, max_tokens {}, tools {})",
            is_summary_request(&r.body),
            r.body["max_tokens"],
            r.body.get("tools").is_some()
        );
    }
    let last = reqs
        .iter()
        .rev()
        .find(|r| !is_summary_request(&r.body))
        .unwrap();
    let text = text_of(&last.body);
    let lost: Vec<&String> = facts
        .iter()
        .filter(|f| !text.contains(f.as_str()))
        .collect();
    assert!(
        lost.is_empty(),
        "lost after {} compactions: {lost:?}",
        compactions.len()
    );
}
