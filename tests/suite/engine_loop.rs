//! The agent loop driven through the real binary (`pith run`) against the mock provider.

use crate::support;

use serde_json::{Value, json};
use support::openai;
use support::pith::{PithEnv, normalized, of_type, stderr, stdout};
use support::{MockResponse, MockServer};

async fn setup() -> (MockServer, PithEnv) {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 128_000, 16_000, "");
    (server, env)
}

/// The `tool` messages of a request body.
fn tool_results(body: &Value) -> Vec<Value> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .cloned()
        .collect()
}

#[tokio::test]
async fn text_turn_prints_the_answer_and_sends_the_expected_request() {
    let (server, env) = setup().await;
    server.push(openai::text("Hello from the model.", Some((1200, 8))));
    let out = env.run(&["run", "say hello"]).await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert_eq!(stdout(&out), "Hello from the model.\n");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0].path, "/v1/chat/completions");
    let body = normalized(&reqs[0].body, env.path());
    // Tool definitions are checked by name here; their schemas belong to the tools.
    let names: Vec<String> = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect();
    for tool in [
        "bash",
        "read",
        "write",
        "edit",
        "glob",
        "grep",
        "list",
        "todowrite",
    ] {
        assert!(
            names.iter().any(|n| n == tool),
            "missing tool {tool}: {names:?}"
        );
    }
    let mut body = body;
    body["tools"] = json!(names);
    insta::assert_json_snapshot!("text_turn_request", body);
}

#[tokio::test]
async fn json_format_prints_one_event_per_line() {
    let (server, env) = setup().await;
    server.push(openai::text("Hi", Some((900, 2))));
    let (out, events) = env.run_json(&["hello"]).await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let deltas: String = of_type(&events, "text_delta")
        .iter()
        .map(|e| e["delta"].as_str().unwrap())
        .collect();
    assert_eq!(deltas, "Hi");
    let step = of_type(&events, "step_finished");
    assert_eq!(step.len(), 1);
    assert_eq!(step[0]["usage"]["input"], 900);
    assert_eq!(step[0]["usage"]["output"], 2);
    let usage = of_type(&events, "context_usage");
    let last = usage.last().unwrap();
    assert_eq!(last["used"], 902, "{last}");
    assert_eq!(last["estimated"], false);
    assert_eq!(last["window"], 128_000);
    assert_eq!(events.last().unwrap()["type"], "turn_finished");
    assert_eq!(events.last().unwrap()["reason"], "stop");
}

#[tokio::test]
async fn tool_turn_runs_bash_with_yes_and_sends_the_result() {
    let (server, env) = setup().await;
    server.push(openai::tool_calls(
        &[(
            "call_1",
            "bash",
            r#"{"command":"echo pith-was-here","description":"echo"}"#,
        )],
        Some((1000, 20)),
    ));
    server.push(openai::text(
        "The command printed pith-was-here.",
        Some((1100, 10)),
    ));
    let out = env.run(&["run", "--yes", "run echo"]).await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert!(stdout(&out).contains("The command printed pith-was-here."));
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    let results = tool_results(&reqs[1].body);
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["tool_call_id"], "call_1");
    assert!(
        results[0]["content"]
            .as_str()
            .unwrap()
            .contains("pith-was-here"),
        "{}",
        results[0]
    );
    // The assistant's tool call is sent back before its result.
    let msgs = reqs[1].body["messages"].as_array().unwrap();
    let call_msg = &msgs[msgs.len() - 2];
    assert_eq!(call_msg["role"], "assistant");
    assert_eq!(call_msg["tool_calls"][0]["id"], "call_1");
    assert_eq!(call_msg["tool_calls"][0]["function"]["name"], "bash");
}

#[tokio::test]
async fn headless_ask_is_denied_with_a_note_to_the_model() {
    let (server, env) = setup().await;
    server.push(openai::tool_calls(
        &[("call_1", "bash", r#"{"command":"touch should-not-exist"}"#)],
        Some((1000, 20)),
    ));
    server.push(openai::text("I could not run it.", Some((1100, 10))));
    let out = env.run(&["run", "make a file"]).await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert!(
        !env.path().join("should-not-exist").exists(),
        "bash ran without permission"
    );
    let results = tool_results(&server.requests()[1].body);
    let content = results[0]["content"].as_str().unwrap();
    assert!(content.contains("--yes"), "{content}");
}

#[tokio::test]
async fn multi_step_turn_reads_then_answers() {
    let (server, env) = setup().await;
    std::fs::write(env.path().join("notes.txt"), "alpha\nbeta\n").unwrap();
    server.push(openai::tool_calls(
        &[("c1", "read", r#"{"file_path":"notes.txt"}"#)],
        Some((1000, 10)),
    ));
    server.push(openai::tool_calls(
        &[("c2", "grep", r#"{"pattern":"beta"}"#)],
        Some((1200, 10)),
    ));
    server.push(openai::text("Found beta on line 2.", Some((1300, 10))));
    let (out, events) = env.run_json(&["find beta"]).await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert_eq!(server.requests().len(), 3);
    assert_eq!(of_type(&events, "step_finished").len(), 3);
    let finished = of_type(&events, "tool_finished");
    assert_eq!(finished.len(), 2);
    assert!(
        finished.iter().all(|e| e["error"].is_null()),
        "{finished:?}"
    );
    let third = &server.requests()[2].body;
    let results = tool_results(third);
    assert!(results[0]["content"].as_str().unwrap().contains("alpha"));
    assert!(results[1]["content"].as_str().unwrap().contains("beta"));
}

#[tokio::test]
async fn rate_limit_is_retried_after_retry_after() {
    let (server, env) = setup().await;
    server.push(
        MockResponse::status(429, openai::error_body("rate_limit_exceeded", "slow down"))
            .header("retry-after", "0"),
    );
    server.push(openai::text("ok", Some((900, 1))));
    let (out, events) = env.run_json(&["hi"]).await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let retries = of_type(&events, "retrying");
    assert_eq!(retries.len(), 1, "{events:?}");
    assert!(retries[0]["message"].as_str().unwrap().contains("429"));
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn server_error_then_success() {
    let (server, env) = setup().await;
    server.push(MockResponse::status(
        500,
        json!({"error": {"message": "internal", "type": "server_error"}}),
    ));
    server.push(openai::text("recovered", Some((900, 1))));
    let out = env.run(&["run", "hi"]).await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert_eq!(stdout(&out), "recovered\n");
    assert!(
        stderr(&out).contains("retrying 1/3 in "),
        "{}",
        stderr(&out)
    );
}

#[tokio::test]
async fn cut_stream_is_retried_and_the_partial_text_discarded() {
    let (server, env) = setup().await;
    let frames = vec![
        openai::frame(&openai::delta_chunk(json!({"content": "partial "}), None)),
        openai::frame(&openai::delta_chunk(json!({"content": "answer"}), None)),
    ];
    server.push(MockResponse::sse(frames).cut_after(1));
    server.push(openai::text("complete answer", Some((900, 2))));
    let out = env.run(&["run", "hi"]).await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert_eq!(server.requests().len(), 2);
    let export = env.export_latest().await;
    let texts: Vec<String> = export["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "assistant")
        .flat_map(|m| m["parts"].as_array().unwrap().clone())
        .filter(|p| p["type"] == "text")
        .map(|p| p["text"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(texts, vec!["complete answer".to_string()]);
}

#[tokio::test]
async fn malformed_chunk_is_retried() {
    let (server, env) = setup().await;
    server.push(MockResponse::sse(vec![
        "data: {not json\n\n".to_string(),
        openai::done(),
    ]));
    server.push(openai::text("fine", Some((900, 1))));
    let out = env.run(&["run", "hi"]).await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert_eq!(stdout(&out), "fine\n");
}

#[tokio::test]
async fn missing_usage_gives_an_estimate() {
    let (server, env) = setup().await;
    server.push(openai::text("no usage here", None));
    let (out, events) = env.run_json(&["hi"]).await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let usage = of_type(&events, "context_usage");
    let last = usage.last().unwrap();
    assert_eq!(last["estimated"], true);
    // System prompt and tool definitions alone are well over a thousand tokens.
    assert!(last["used"].as_u64().unwrap() > 1000, "{last}");
}

#[tokio::test]
async fn auth_error_fails_plainly_without_the_key() {
    let (server, mut_env) = setup().await;
    let env = mut_env;
    let config = std::fs::read_to_string(&env.config).unwrap().replace(
        "max_retries = 3",
        "max_retries = 3\napi_key_env = \"PITH_TEST_KEY\"",
    );
    std::fs::write(&env.config, config).unwrap();
    server.push(MockResponse::status(
        401,
        json!({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error", "code": "invalid_api_key"}}),
    ));
    let out = env
        .command(&["run", "hi"])
        .env("PITH_TEST_KEY", "sk-secret-value-123")
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("401"), "{err}");
    assert!(!err.contains("sk-secret-value-123"));
    assert_eq!(server.requests().len(), 1, "auth errors are not retried");
    assert_eq!(
        server.requests()[0].secret("authorization"),
        Some("Bearer sk-secret-value-123")
    );
    let export = env.export_latest().await;
    assert!(!export.to_string().contains("sk-secret-value-123"));
}

#[tokio::test]
async fn continue_resumes_the_last_session() {
    let (server, env) = setup().await;
    server.push(openai::text("first answer", Some((900, 2))));
    server.push(openai::text("second answer", Some((950, 2))));
    assert!(env.run(&["run", "first question"]).await.status.success());
    let out = env.run(&["run", "--continue", "second question"]).await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let body = &server.requests()[1].body;
    let msgs = body["messages"].as_array().unwrap();
    let roles: Vec<&str> = msgs.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, vec!["system", "user", "assistant", "user"]);
    assert_eq!(msgs[2]["content"], "first answer");
}

#[tokio::test]
async fn max_steps_withholds_tools_on_the_last_step() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 128_000, 16_000, "max_steps = 2");
    server.push(openai::tool_calls(
        &[("c1", "list", r#"{}"#)],
        Some((1000, 10)),
    ));
    server.push(openai::text(
        "Summary: I listed the files.",
        Some((1100, 10)),
    ));
    let out = env.run(&["run", "explore"]).await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let last = &server.requests()[1].body;
    assert!(last.get("tools").is_none(), "tools sent on the last step");
    let msgs = last["messages"].as_array().unwrap();
    let prefill = msgs.last().unwrap();
    assert_eq!(prefill["role"], "assistant");
    assert!(
        prefill["content"]
            .as_str()
            .unwrap()
            .contains("maximum number of steps")
    );
}

#[tokio::test]
async fn yes_does_not_let_a_doom_loop_run_a_third_time() {
    let (server, env) = setup().await;
    for i in 0..3 {
        let id = format!("c{i}");
        server.push(openai::tool_calls(
            &[(
                id.as_str(),
                "bash",
                r#"{"command":"echo again >> loop.txt"}"#,
            )],
            Some((1000, 10)),
        ));
    }
    server.push(openai::text("I will stop repeating.", Some((1100, 10))));
    let out = env.run(&["run", "--yes", "loop"]).await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let runs = std::fs::read_to_string(env.path().join("loop.txt")).unwrap();
    assert_eq!(runs.lines().count(), 2, "the third identical call ran");
    let results = tool_results(&server.requests()[3].body);
    assert!(
        results[2]["content"]
            .as_str()
            .unwrap()
            .contains("Repeating the same call"),
        "{}",
        results[2]
    );
}
