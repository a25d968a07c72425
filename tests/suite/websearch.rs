//! `websearch` through the real binary against a stub search service on 127.0.0.1 (Brave's and
//! SearXNG's JSON): off until configured; the key goes to the configured service only, in its
//! header, and nowhere else (not the model, the store, the log, an export); a service that is
//! down is one line to the model.

use std::sync::{Arc, Mutex};

use crate::support;

use serde_json::json;
use support::MockServer;
use support::openai;
use support::pith::{PithEnv, last_tool_result, stderr};

const KEY_VAR: &str = "PITH_TEST_SEARCH_KEY";
const KEY: &str = "brave-key-test-7f3a9c2e51";

/// What the stub was asked: the path and query, and its headers (lower-case names).
type Seen = Arc<Mutex<Vec<(String, Vec<(String, String)>)>>>;

/// A Brave-shaped service that echoes the subscription token it got into a snippet (a hostile
/// or broken service), and a SearXNG-shaped one at `/search`.
async fn service() -> (u16, Seen) {
    use axum::http::HeaderMap;
    let seen: Seen = Arc::new(Mutex::new(Vec::new()));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let log = seen.clone();
    let record = move |uri: axum::http::Uri, headers: &HeaderMap| {
        let hs = headers
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or("").to_string()))
            .collect();
        log.lock().unwrap().push((uri.to_string(), hs));
    };
    let r1 = record.clone();
    let app = axum::Router::new()
        .route(
            "/res/v1/web/search",
            axum::routing::get(move |uri: axum::http::Uri, headers: HeaderMap| async move {
                r1(uri, &headers);
                let token = headers
                    .get("x-subscription-token")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("")
                    .to_string();
                axum::Json(json!({"type": "search", "web": {"results": [
                    {"title": "Tokio <strong>spawn_blocking</strong>", "url": "https://docs.rs/tokio/latest/tokio/task/fn.spawn_blocking.html",
                     "description": format!("Runs the provided closure on a thread pool. echo {token}")},
                    {"title": "Bridging with sync code", "url": "https://tokio.rs/tokio/topics/bridging", "description": "How to call async from sync."}
                ]}}))
            }),
        )
        .route(
            "/search",
            axum::routing::get(move |uri: axum::http::Uri, headers: HeaderMap| async move {
                record(uri, &headers);
                axum::Json(json!({"query": "x", "results": [
                    {"title": "SearX hit", "url": "https://example.org/a", "content": "from searxng"}
                ]}))
            }),
        );
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (port, seen)
}

fn env_for(server: &MockServer, websearch: &str) -> PithEnv {
    PithEnv::new(&server.url(), 128_000, 16_000, websearch)
}

async fn run(env: &PithEnv, args: &[&str]) -> std::process::Output {
    let mut cmd = env.command(args);
    cmd.env(KEY_VAR, KEY).env("PITH_LOG", "debug");
    tokio::time::timeout(std::time::Duration::from_secs(60), cmd.output())
        .await
        .expect("pith finished")
        .expect("pith ran")
}

fn search_call(server: &MockServer, query: &str) {
    let args = json!({ "query": query }).to_string();
    server.push(openai::tool_calls(&[("call_1", "websearch", &args)], None));
    server.push(openai::text("done", None));
}

fn offered_tools(body: &serde_json::Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|t| {
            t.iter()
                .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn websearch_is_off_until_a_backend_is_configured() {
    let server = MockServer::start().await;
    let env = env_for(&server, "");
    server.push(openai::text("hi", None));
    let out = run(&env, &["run", "hello"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let tools = offered_tools(&server.request_body(0));
    assert!(
        !tools.is_empty() && !tools.iter().any(|t| t == "websearch"),
        "{tools:?}"
    );
    // a key variable alone turns nothing on: the config is refused until a backend is named
    std::fs::write(
        &env.config,
        std::fs::read_to_string(&env.config).unwrap()
            + &format!("\n[websearch]\nkey_env = \"{KEY_VAR}\"\n"),
    )
    .unwrap();
    let out = run(&env, &["run", "hello"]).await;
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("websearch.backend"),
        "{}",
        stderr(&out)
    );
}

#[tokio::test]
async fn the_search_key_goes_to_the_configured_service_only() {
    let (port, seen) = service().await;
    let server = MockServer::start().await;
    let env = env_for(
        &server,
        &format!(
            "[websearch]\nbackend = \"brave\"\nurl = \"http://127.0.0.1:{port}\"\nkey_env = \"{KEY_VAR}\"\n"
        ),
    );
    search_call(&server, "tokio spawn_blocking");
    let out = run(&env, &["run", "go"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    // offered, and its result is what the model reads: hits without markup, the key scrubbed
    assert!(
        offered_tools(&server.request_body(0))
            .iter()
            .any(|t| t == "websearch")
    );
    let result = last_tool_result(&server);
    assert!(
        result.contains("1. Tokio spawn_blocking\n   https://docs.rs/tokio/latest/tokio/task/fn.spawn_blocking.html"),
        "{result}"
    );
    assert!(result.contains("echo [REDACTED]"), "{result}");
    // the service got it, in its header only
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1, "{seen:?}");
    let (uri, headers) = &seen[0];
    assert!(
        uri.starts_with("/res/v1/web/search?q=tokio+spawn_blocking&count=8"),
        "{uri}"
    );
    assert!(headers.contains(&("x-subscription-token".to_string(), KEY.to_string())));
    assert!(!uri.contains(KEY));
    // and nothing else did: the provider, the terminal, the log, the store
    for r in server.requests() {
        assert!(
            !r.body.to_string().contains(KEY),
            "the provider saw the key"
        );
    }
    assert!(!String::from_utf8_lossy(&out.stdout).contains(KEY));
    assert!(!stderr(&out).contains(KEY));
    // pith run prints the hits on stderr
    assert!(
        stderr(&out).contains("↳ Tokio spawn_blocking  https://docs.rs/tokio/"),
        "{}",
        stderr(&out)
    );
    let log = std::fs::read_to_string(env.data.path().join("logs/pith.log")).unwrap_or_default();
    assert!(
        !log.is_empty() && !log.contains(KEY),
        "the log holds the key"
    );
    let export = env.export_latest_raw().await;
    assert!(export.contains("spawn_blocking") && !export.contains(KEY));
}

#[tokio::test]
async fn searxng_answers_and_a_service_that_is_down_is_one_line() {
    let (port, seen) = service().await;
    let server = MockServer::start().await;
    let env = env_for(
        &server,
        &format!("[websearch]\nbackend = \"searxng\"\nurl = \"http://127.0.0.1:{port}/\"\n"),
    );
    search_call(&server, "pith agent");
    let out = run(&env, &["run", "go"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        last_tool_result(&server)
            .contains("1. SearX hit\n   https://example.org/a\n   from searxng")
    );
    assert_eq!(
        seen.lock().unwrap()[0].0,
        "/search?q=pith+agent&format=json"
    );
    // nothing listens on port 9
    let down = env_for(
        &server,
        "[websearch]\nbackend = \"searxng\"\nurl = \"http://127.0.0.1:9\"\ntimeout_secs = 2\n",
    );
    search_call(&server, "pith agent");
    let out = run(&down, &["run", "go"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let result = last_tool_result(&server);
    assert!(
        result.starts_with(
            "websearch: cannot reach the search backend (searxng at http://127.0.0.1:9)"
        ),
        "{result}"
    );
    assert_eq!(result.lines().count(), 1, "{result}");
}
