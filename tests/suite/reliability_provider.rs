//! Provider faults injected into the mock, driven through the real binary (`pith run`): a server
//! that never answers, one that stalls mid-answer, one that never stops, HTML instead of events,
//! a `retry-after` of days, a wrong URL, a refused key. Each must end in bounded time with one
//! clear error (exit 1), or recover by retrying.

use crate::support;

use serde_json::json;
use support::openai as oa;
use support::pith::{MODEL, PithEnv, of_type, stderr, stdout};
use support::{MockResponse, MockServer};

/// Timeouts short enough for a test; a notice shows after a quarter of the first-byte one.
const FAST: &str = "first_byte_timeout_secs = 1\nidle_timeout_secs = 1\nmax_retries = 1";

#[tokio::test]
async fn a_server_that_never_answers_times_out_retries_and_reports_once() {
    let server = MockServer::start().await;
    // No headers at all (the request is read, then nothing), twice: the first try and the retry.
    server.push(MockResponse::sse(Vec::new()).first_delay_ms(60_000));
    server.push(MockResponse::sse(Vec::new()).first_delay_ms(60_000));
    let env = PithEnv::with_provider(&server.url(), 32_000, 4_000, "", FAST);
    let out = env.run(&["run", "hello"]).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let endpoint = format!("{}/v1/chat/completions", server.url());
    let want =
        format!("pith: error: no answer from {endpoint} within 1 s (first_byte_timeout_secs)");
    assert_eq!(err.matches(&want).count(), 1, "{err}");
    assert!(err.contains("(still failing after 1 retries)"), "{err}");
    assert!(err.contains("retrying 1/1 in "), "{err}");
    assert_eq!(
        err.matches("no answer from").count(),
        1,
        "the fault is said once: {err}"
    );
    // What pith was waiting for was said while it waited.
    let notice = err
        .lines()
        .find(|l| l.starts_with(&format!("waiting for {MODEL}: no answer yet after ")))
        .unwrap_or_else(|| panic!("no waiting notice: {err}"));
    assert!(notice.ends_with(" s (gives up at 1 s)"), "{notice}");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn headers_then_silence_is_a_first_byte_timeout() {
    let server = MockServer::start().await;
    server.push(MockResponse::sse(Vec::new()).hold_open());
    server.push(oa::text("recovered", Some((10, 2))));
    let env = PithEnv::with_provider(&server.url(), 32_000, 4_000, "", FAST);
    let out = env.run(&["run", "hello"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "recovered");
    // the retry is announced; its cause is said only if retrying does not help
    assert!(
        stderr(&out).contains("retrying 1/1 in "),
        "{}",
        stderr(&out)
    );
}

#[tokio::test]
async fn a_stall_mid_answer_is_retried_and_the_partial_answer_discarded() {
    let server = MockServer::start().await;
    let mut frames = vec![oa::frame(&oa::delta_chunk(
        json!({"content": "half an"}),
        None,
    ))];
    frames.push(oa::frame(&oa::delta_chunk(
        json!({"content": " answ"}),
        None,
    )));
    server.push(MockResponse::sse(frames).hold_open());
    server.push(oa::text("the whole answer", Some((10, 3))));
    let env = PithEnv::with_provider(&server.url(), 32_000, 4_000, "", FAST);
    let out = env.run(&["run", "hello"]).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("retrying 1/1 in ") && err.contains("the partial answer above is discarded"),
        "{err}"
    );
    assert!(
        stdout(&out).ends_with("the whole answer\n"),
        "{}",
        stdout(&out)
    );
    // Only the final answer is stored.
    let export = env.export_latest().await.to_string();
    assert!(export.contains("the whole answer") && !export.contains("half an"));
}

#[tokio::test]
async fn an_endless_answer_is_cut_kept_and_reported() {
    let server = MockServer::start().await;
    let chunk = "x".repeat(4000);
    server.push(MockResponse::endless(oa::frame(&oa::delta_chunk(
        json!({"content": chunk}),
        None,
    ))));
    // output 4000 tokens: the step bound is its floor, 1 MiB.
    let env = PithEnv::with_provider(&server.url(), 32_000, 4_000, "", FAST);
    let out = env.run(&["run", "go on forever"]).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(
        err.matches("error: the answer passed 1 MiB in one step")
            .count(),
        1,
        "{err}"
    );
    assert_eq!(server.requests().len(), 1, "not retried");
    let printed = stdout(&out).matches('x').count();
    assert!(
        (1024 * 1024 - 4000..=1024 * 1024 + 4000).contains(&printed),
        "{printed}"
    );
    // What arrived is stored, with the error.
    let export = env.export_latest().await;
    let stored: usize = export.to_string().matches('x').count();
    assert!(stored >= 1024 * 1024 - 4000, "{stored}");
    assert!(export.to_string().contains("passed 1 MiB"));
}

#[tokio::test]
async fn an_html_page_with_status_200_says_so_and_is_not_retried() {
    let server = MockServer::start().await;
    server.push(MockResponse::raw(
        200,
        "text/html; charset=utf-8",
        "<!DOCTYPE html><html><head><title>Sign in · Corp Proxy</title></head><body>…</body></html>",
    ));
    let env = PithEnv::new(&server.url(), 32_000, 4_000, "");
    let out = env.run(&["run", "hello"]).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(
        err.matches("answered HTTP 200 with an HTML page (\"Sign in · Corp Proxy\")")
            .count(),
        1,
        "{err}"
    );
    assert!(err.contains("check base_url"), "{err}");
    assert!(!err.contains("stream ended"), "{err}");
    assert_eq!(server.requests().len(), 1);

    // The same page without a content type is recognised too.
    let server = MockServer::start().await;
    server.push(MockResponse::raw(
        200,
        "",
        "\n  <html><title>Oops</title></html>",
    ));
    let env = PithEnv::new(&server.url(), 32_000, 4_000, "");
    let out = env.run(&["run", "hello"]).await;
    assert!(
        stderr(&out).contains("HTML page (\"Oops\")"),
        "{}",
        stderr(&out)
    );
}

#[tokio::test]
async fn a_retry_after_longer_than_the_bound_is_reported_at_once() {
    let server = MockServer::start().await;
    server.push(
        MockResponse::status(429, oa::error_body("rate_limit_exceeded", "Slow down"))
            .header("retry-after", "999999"),
    );
    let env = PithEnv::new(&server.url(), 32_000, 4_000, "");
    let out = env.run(&["run", "hello"]).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("HTTP 429 rate limited: Slow down; the server asks to wait 999999 s before trying again, longer than pith waits (60 s, max_retry_wait_secs): try again later"),
        "{err}"
    );
    assert!(!err.contains("retrying"), "{err}");
    assert_eq!(server.requests().len(), 1);

    // Within the bound it is honoured (a short wait here), then the answer comes.
    let server = MockServer::start().await;
    server.push(
        MockResponse::status(429, oa::error_body("rate_limit_exceeded", "Slow down"))
            .header("retry-after", "0.05"),
    );
    server.push(oa::text("ok", None));
    let env = PithEnv::new(&server.url(), 32_000, 4_000, "");
    let out = env.run(&["run", "hello"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("retrying 1/3 in 0.1 s"),
        "{}",
        stderr(&out)
    );
}

#[tokio::test]
async fn not_found_names_the_endpoint_and_a_refused_key_its_variable() {
    let server = MockServer::start().await;
    server.push(MockResponse::status(
        404,
        json!({"error": {"message": "The model `test-model` does not exist"}}),
    ));
    let env = PithEnv::new(&server.url(), 32_000, 4_000, "");
    let out = env.run(&["run", "hello"]).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let want = format!(
        "error: HTTP 404 not found: The model `test-model` does not exist (POST {}/v1/chat/completions); check base_url in [provider.mock] and the model name",
        server.url()
    );
    assert_eq!(err.matches(&want).count(), 1, "{err}");
    assert!(!err.contains("bad request"), "{err}");

    let server = MockServer::start().await;
    server.push(MockResponse::status(
        401,
        json!({"error": {"message": "Incorrect API key provided: sk-te****cret"}}),
    ));
    let env = PithEnv::with_provider(
        &server.url(),
        32_000,
        4_000,
        "",
        "api_key_env = \"PITH_TEST_MOCK_KEY\"",
    );
    let mut cmd = env.command(&["run", "hello"]);
    cmd.env("PITH_TEST_MOCK_KEY", "sk-test-secret");
    let out = cmd.output().await.unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("HTTP 401 unauthorized: Incorrect API key provided")
            && err.contains("check the API key in the environment variable PITH_TEST_MOCK_KEY (provider \"mock\")"),
        "{err}"
    );
    assert!(!err.contains("sk-test-secret"), "{err}");
}

#[tokio::test]
async fn an_unreachable_server_says_where_it_tried() {
    // A port nothing listens on.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let env = PithEnv::with_provider(&url, 32_000, 4_000, "", "max_retries = 0");
    let out = env.run(&["run", "hello"]).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "error: cannot reach {url}/v1/chat/completions: connection failed"
        )) && err.contains("is the server running"),
        "{err}"
    );
}

#[tokio::test]
async fn json_events_carry_the_waiting_notice() {
    let server = MockServer::start().await;
    server.push(oa::text("late", None).first_delay_ms(700));
    let env = PithEnv::with_provider(&server.url(), 32_000, 4_000, "", FAST);
    let (out, events) = env.run_json(&["hello"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let waiting: Vec<_> = of_type(&events, "state")
        .into_iter()
        .filter(|e| {
            e["detail"]
                .as_str()
                .is_some_and(|d| d.starts_with("waiting for"))
        })
        .collect();
    assert!(!waiting.is_empty(), "{events:?}");
}
