use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpListener;

use super::*;

/// A server that takes connections and never answers (the tester's `blackhole.py`).
async fn blackhole() -> (String, tokio::task::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((s, _)) = listener.accept().await {
            held.push(s);
        }
    });
    (url, task)
}

#[tokio::test]
async fn a_server_that_never_answers_is_said_to_have_stalled() {
    let (url, task) = blackhole().await;
    let http = client().unwrap();
    let limit = Duration::from_millis(300);
    let err = within(limit, &url, probe_unbounded(&http, &url))
        .await
        .unwrap_err();
    let text = err.to_string();
    assert_eq!(text, format!("{url} did not answer within 1 s"));
    assert!(!text.contains("HTTP client") && !text.contains("error sending"));
    task.abort();
}

#[tokio::test]
async fn a_refused_connection_is_one_plain_line() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    drop(listener);
    let err = probe(&client().unwrap(), &url).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("cannot reach {url}: the connection was refused or could not be made")
    );
}

/// A revocation endpoint answering its requests with `statuses` in turn (then 200); the
/// requests it got, head and body, when its task is awaited after `n` requests.
async fn endpoint(statuses: Vec<u16>, n: usize) -> (String, tokio::task::JoinHandle<Vec<String>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/revoke", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        let mut seen = Vec::new();
        for i in 0..n {
            let (mut s, _) = listener.accept().await.unwrap();
            let request = read_request(&mut s).await;
            let status = statuses.get(i).copied().unwrap_or(200);
            let answer =
                format!("HTTP/1.1 {status} X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
            s.write_all(answer.as_bytes()).await.unwrap();
            seen.push(request);
        }
        seen
    });
    (url, task)
}

async fn read_request(s: &mut tokio::net::TcpStream) -> String {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let n = s.read(&mut chunk).await.unwrap();
        buf.extend_from_slice(&chunk[..n]);
        let text = String::from_utf8_lossy(&buf).to_string();
        if let Some(end) = text.find("\r\n\r\n") {
            let len = text
                .lines()
                .filter_map(|l| l.split_once(':'))
                .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
                .and_then(|(_, v)| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            if buf.len() >= end + 4 + len {
                return text;
            }
        }
        if n == 0 {
            return text;
        }
    }
}

fn entry(endpoint: &str) -> super::super::store::Entry {
    let token = serde_json::from_value(serde_json::json!({
        "access_token": "AT-1", "token_type": "Bearer", "expires_in": 60, "refresh_token": "RT-1",
    }))
    .unwrap();
    super::super::store::Entry {
        url: "http://127.0.0.1:1/mcp".into(),
        credentials: Some(rmcp::transport::auth::StoredCredentials::new(
            "corp cli".into(),
            Some(token),
            vec![],
            None,
        )),
        revocation_endpoint: Some(endpoint.to_string()),
        account: None,
    }
}

/// `corp cli:s3cret:x`, each part form-encoded (RFC 6749 §2.3.1), then base64.
const BASIC: &str = "authorization: Basic Y29ycCtjbGk6czNjcmV0JTNBeA==";

#[tokio::test]
async fn a_client_with_a_secret_authenticates_its_revocation_with_basic() {
    let (url, task) = endpoint(vec![], 2).await;
    assert_eq!(revoke(&entry(&url), Some("s3cret:x")).await, Some(true));
    let seen = task.await.unwrap();
    assert!(
        seen[0].contains("token=RT-1") && seen[1].contains("token=AT-1"),
        "{seen:?}"
    );
    for request in &seen {
        assert!(request.contains(BASIC), "{request}");
        // The Python SDK wants the id in the form too; the secret only in the header.
        assert!(request.contains("client_id=corp+cli"), "{request}");
        assert!(!request.contains("client_secret"), "{request}");
    }
}

#[tokio::test]
async fn a_refused_basic_revocation_is_tried_with_the_secret_in_the_form() {
    let (url, task) = endpoint(vec![401, 200, 401, 200], 4).await;
    assert_eq!(revoke(&entry(&url), Some("s3cret:x")).await, Some(true));
    let seen = task.await.unwrap();
    assert!(seen[1].contains("client_secret=s3cret%3Ax"), "{}", seen[1]);
    assert!(
        !seen[1].to_ascii_lowercase().contains("authorization:"),
        "{}",
        seen[1]
    );
}

#[tokio::test]
async fn a_public_client_sends_no_secret() {
    let (url, task) = endpoint(vec![], 2).await;
    assert_eq!(revoke(&entry(&url), None).await, Some(true));
    for request in task.await.unwrap() {
        assert!(
            !request.to_ascii_lowercase().contains("authorization:"),
            "{request}"
        );
        assert!(!request.contains("client_secret"), "{request}");
    }
}
