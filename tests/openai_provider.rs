//! The OpenAI-compatible provider against the in-process mock server.

mod support;

use serde_json::json;
use support::{MockResponse, MockServer, openai as oa};

// ---- the mock server itself -------------------------------------------------------------

#[tokio::test]
async fn mock_records_requests_and_redacts_credentials() {
    let server = MockServer::start().await;
    server.push(MockResponse::status(200, json!({"ok": true})).header("x-test", "1"));
    let client = support::http_client();
    let resp = client
        .post(format!("{}/chat/completions", server.openai_base_url()))
        .header("authorization", "Bearer sk-secret")
        .header("x-custom", "yes")
        .json(&json!({"model": "m"}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["x-test"], "1");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0].path, "/v1/chat/completions");
    assert_eq!(reqs[0].header("authorization"), Some("REDACTED"));
    assert_eq!(reqs[0].secret("authorization"), Some("Bearer sk-secret"));
    assert_eq!(reqs[0].header("x-custom"), Some("yes"));
    assert_eq!(reqs[0].body, json!({"model": "m"}));
    assert!(!format!("{reqs:?}").contains("sk-secret"));
}

#[tokio::test]
async fn mock_answers_500_when_exhausted_and_404_on_unknown_paths() {
    let server = MockServer::start().await;
    let client = support::http_client();
    let resp = client
        .post(format!("{}/v1/messages", server.url()))
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 500);
    assert!(resp.text().await.unwrap().contains("mock script exhausted"));
    let resp = client
        .post(format!("{}/v2/nope", server.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 404);
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn mock_sse_frames_arrive_in_order_and_cut_breaks_the_body() {
    let server = MockServer::start().await;
    let frames = vec![
        "data: 1\n\n".to_string(),
        "event: x\ndata: 2\n\n".to_string(),
        "data: 3\n\n".to_string(),
    ];
    server.push(MockResponse::sse(frames.clone()).delay_ms(5));
    server.push(MockResponse::sse(frames).cut_after(2));
    let client = support::http_client();
    let url = format!("{}/chat/completions", server.openai_base_url());
    let resp = client.post(&url).send().await.unwrap();
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    assert_eq!(
        resp.text().await.unwrap(),
        "data: 1\n\nevent: x\ndata: 2\n\ndata: 3\n\n"
    );

    let mut resp = client.post(&url).send().await.unwrap();
    let mut got = Vec::new();
    let err = loop {
        match resp.chunk().await {
            Ok(Some(b)) => got.extend_from_slice(&b),
            Ok(None) => panic!("a cut stream must not end cleanly"),
            Err(e) => break e,
        }
    };
    assert_eq!(
        String::from_utf8(got).unwrap(),
        "data: 1\n\nevent: x\ndata: 2\n\n"
    );
    assert!(
        err.is_body() || err.is_decode() || err.is_request(),
        "{err:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_mock_servers_run_in_parallel() {
    let mut handles = Vec::new();
    for i in 0..8u64 {
        handles.push(tokio::spawn(async move {
            let server = MockServer::start().await;
            server.push(oa::text(&format!("hello {i}"), Some((i, 1))));
            let resp = support::http_client()
                .post(format!("{}/chat/completions", server.openai_base_url()))
                .json(&json!({ "n": i }))
                .send()
                .await
                .unwrap();
            let body = resp.text().await.unwrap();
            assert!(body.ends_with("data: [DONE]\n\n"));
            assert_eq!(server.request_body(0), json!({ "n": i }));
            server.url()
        }));
    }
    let mut urls = Vec::new();
    for h in handles {
        urls.push(h.await.unwrap());
    }
    urls.sort();
    urls.dedup();
    assert_eq!(urls.len(), 8);
}
