//! `pith run` against an Anthropic Messages mock: thinking blocks sent back with signatures,
//! cache breakpoints, cached usage and cache prices, retries, overflow recovery.

use crate::support;

use serde_json::Value;
use support::anthropic::{self, Block};
use support::pith::{PithEnv, of_type, stderr, stdout};
use support::{MockResponse, MockServer};

const KEY: &str = "sk-ant-test-secret-0042";

/// A config whose default model is Anthropic's (`anth/claude-sonnet-4-5`, catalog limits and
/// prices), served by the mock.
async fn setup() -> (MockServer, PithEnv) {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 200_000, 64_000, "");
    let config = format!(
        r#"model = "anth/claude-sonnet-4-5"

[provider.anth]
kind = "anthropic"
base_url = "{}"
api_key_env = "PITH_TEST_ANTHROPIC_KEY"
max_retries = 3
"#,
        server.url()
    );
    std::fs::write(&env.config, config).unwrap();
    (server, env)
}

async fn run(env: &PithEnv, args: &[&str]) -> std::process::Output {
    env.command(args)
        .env("PITH_TEST_ANTHROPIC_KEY", KEY)
        .output()
        .await
        .unwrap()
}

fn json_lines(out: &std::process::Output) -> Vec<Value> {
    stdout(out)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn count_cache_breakpoints(v: &Value) -> usize {
    match v {
        Value::Object(m) => {
            usize::from(m.contains_key("cache_control"))
                + m.values().map(count_cache_breakpoints).sum::<usize>()
        }
        Value::Array(a) => a.iter().map(count_cache_breakpoints).sum(),
        _ => 0,
    }
}

#[tokio::test]
async fn thinking_and_tool_use_round_trip_with_signatures_and_cache_breakpoints() {
    let (server, env) = setup().await;
    server.push(anthropic::message(
        &[
            Block::Thinking {
                text: "The user wants the date; run it.",
                signature: "sig-abc-123",
            },
            Block::ToolUse {
                id: "toolu_01",
                name: "bash",
                input_json: r#"{"command":"echo tool-ran"}"#,
            },
        ],
        "tool_use",
        (1500, 40, 0, 1400),
    ));
    server.push(anthropic::message(
        &[Block::Text("It printed tool-ran.")],
        "end_turn",
        (120, 12, 1400, 60),
    ));
    let out = run(&env, &["run", "--yes", "run it"]).await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert_eq!(stdout(&out), "It printed tool-ran.\n");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(reqs[0].path, "/v1/messages");
    assert_eq!(reqs[0].secret("x-api-key"), Some(KEY));
    assert!(reqs[0].header("anthropic-version").is_some());
    let body = &reqs[1].body;
    assert!(body["max_tokens"].as_u64().unwrap() > 0);
    let msgs = body["messages"].as_array().unwrap();
    assert_eq!(msgs.len(), 3, "{body}");
    // The assistant turn goes back with its thinking block (and signature) first.
    let content = msgs[1]["content"].as_array().unwrap();
    assert_eq!(content[0]["type"], "thinking");
    assert_eq!(content[0]["signature"], "sig-abc-123");
    assert_eq!(content[0]["thinking"], "The user wants the date; run it.");
    assert_eq!(content[1]["type"], "tool_use");
    assert_eq!(content[1]["id"], "toolu_01");
    assert_eq!(content[1]["input"]["command"], "echo tool-ran");
    let result = &msgs[2]["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert_eq!(result["tool_use_id"], "toolu_01");
    assert!(result.to_string().contains("tool-ran"));
    // Cache breakpoints: the stable system header, the tools, the last messages; at most 4.
    let n = count_cache_breakpoints(body);
    assert!((3..=4).contains(&n), "{n} breakpoints");
    assert!(body["system"][0].get("cache_control").is_some());
    // The key never reaches the stored session.
    let export = env.export_latest().await.to_string();
    assert!(!export.contains(KEY));
    assert!(
        export.contains("sig-abc-123"),
        "the signature is stored for later steps"
    );
}

#[tokio::test]
async fn cached_tokens_are_shown_and_priced_with_cache_prices() {
    let (server, env) = setup().await;
    server.push(anthropic::message(
        &[Block::Text("hello")],
        "end_turn",
        (100, 10, 50_000, 2_000),
    ));
    let out = run(&env, &["run", "--format", "json", "hi"]).await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let events = json_lines(&out);
    let step = of_type(&events, "step_finished");
    assert_eq!(step[0]["usage"]["cache_read"], 50_000);
    assert_eq!(step[0]["usage"]["cache_write"], 2_000);
    let usage = of_type(&events, "context_usage");
    let last = usage.last().unwrap();
    assert_eq!(last["used"], 52_110);
    assert_eq!(last["cached"], 50_000);
    let config = pith_config::Config::default();
    let info = pith_config::catalog::resolve(&config, "anthropic/claude-sonnet-4-5").info;
    let read = info
        .cost_cache_read
        .expect("catalog has a cache-read price");
    let write = info
        .cost_cache_write
        .expect("catalog has a cache-write price");
    let expected =
        (100.0 * info.cost_input + 10.0 * info.cost_output + 50_000.0 * read + 2_000.0 * write)
            / 1e6;
    let cost = step[0]["cost"].as_f64().unwrap();
    assert!((cost - expected).abs() < 1e-9, "{cost} vs {expected}");
}

#[tokio::test]
async fn overloaded_then_success_is_retried() {
    let (server, env) = setup().await;
    server.push(MockResponse::status(
        529,
        anthropic::error_body("overloaded_error", "Overloaded"),
    ));
    server.push(MockResponse::sse(vec![
        anthropic::frame(
            "message_start",
            &serde_json::json!({"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"x","content":[],"usage":{"input_tokens":10,"output_tokens":1}}}),
        ),
        anthropic::frame(
            "error",
            &anthropic::error_body("overloaded_error", "Overloaded"),
        ),
    ]));
    server.push(anthropic::message(
        &[Block::Text("finally")],
        "end_turn",
        (100, 3, 0, 0),
    ));
    let out = run(&env, &["run", "hi"]).await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert_eq!(stdout(&out), "finally\n");
    assert_eq!(server.requests().len(), 3);
    assert_eq!(
        stderr(&out).matches("retrying").count(),
        2,
        "{}",
        stderr(&out)
    );
}

#[tokio::test]
async fn prompt_too_long_compacts_and_retries() {
    let (server, env) = setup().await;
    server.push(MockResponse::status(
        400,
        anthropic::error_body(
            "invalid_request_error",
            "prompt is too long: 210000 tokens > 200000 maximum",
        ),
    ));
    server.push(anthropic::message(
        &[Block::Text(
            "## Goal\nsummary\n## Constraints & Preferences\nNone\n## Progress\nNone\n## Key Decisions\nNone\n## Next Steps\nNone\n## Critical Context\nNone\n## Relevant Files\nNone",
        )],
        "end_turn",
        (5_000, 300, 0, 0),
    ));
    server.push(anthropic::message(
        &[Block::Text("answered")],
        "end_turn",
        (2_000, 5, 0, 0),
    ));
    let out = run(&env, &["run", "a long question"]).await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert!(stdout(&out).ends_with("answered\n"));
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3);
    // The summary request has no tools; the retried step starts from the summary.
    assert!(reqs[1].body.get("tools").is_none());
    let retried = reqs[2].body.to_string();
    assert!(retried.contains("What did we do so far?"));
}
