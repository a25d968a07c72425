//! The tool against a stub service on 127.0.0.1 speaking SearXNG's and Brave's JSON: what is
//! sent (the key only in its header, to the configured address), what the model gets back
//! (bounded, without markup), and the one line a broken, slow or refusing service becomes.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::*;
use crate::testutil::Ws;

/// One canned answer: status line, content type, body, and how long to wait first.
#[derive(Clone)]
struct Answer {
    status: &'static str,
    body: String,
    delay: Duration,
    extra: &'static str,
}

impl Answer {
    fn ok(body: String) -> Answer {
        Answer {
            status: "200 OK",
            body,
            delay: Duration::ZERO,
            extra: "",
        }
    }
}

/// A stub HTTP service on 127.0.0.1 answering every request with `answer`; the requests it
/// got, head and body, as text.
struct Stub {
    port: u16,
    seen: Arc<Mutex<Vec<String>>>,
}

impl Stub {
    async fn start(answer: Answer) -> Stub {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        tokio::spawn(async move {
            while let Ok((mut sock, _)) = listener.accept().await {
                let answer = answer.clone();
                let log = log.clone();
                tokio::spawn(async move {
                    let mut buf = Vec::new();
                    let mut chunk = [0u8; 4096];
                    // the head, then as much body as it announces
                    loop {
                        let n = sock.read(&mut chunk).await.unwrap_or(0);
                        buf.extend_from_slice(&chunk[..n]);
                        let text = String::from_utf8_lossy(&buf).to_string();
                        if let Some(end) = text.find("\r\n\r\n") {
                            let len = text
                                .lines()
                                .find_map(|l| {
                                    l.to_ascii_lowercase()
                                        .strip_prefix("content-length:")
                                        .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                                })
                                .unwrap_or(0);
                            if buf.len() >= end + 4 + len || n == 0 {
                                break;
                            }
                        }
                        if n == 0 {
                            break;
                        }
                    }
                    log.lock()
                        .unwrap()
                        .push(String::from_utf8_lossy(&buf).to_string());
                    tokio::time::sleep(answer.delay).await;
                    let reply = format!(
                        "HTTP/1.1 {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n{}connection: close\r\n\r\n{}",
                        answer.status,
                        answer.body.len(),
                        answer.extra,
                        answer.body
                    );
                    let _ = sock.write_all(reply.as_bytes()).await;
                    let _ = sock.shutdown().await;
                });
            }
        });
        Stub { port, seen }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn seen(&self) -> Vec<String> {
        self.seen.lock().unwrap().clone()
    }
}

const KEY: &str = "brv-SECRET-key-0123456789";

fn tool(backend: &str, url: &str, extra: &str) -> Websearch {
    let config: WebsearchConfig = toml::from_str(&format!(
        "backend = \"{backend}\"\nurl = \"{url}\"\n{extra}"
    ))
    .unwrap();
    let keys: KeyLookup = Arc::new(|var| (var == "TEST_SEARCH_KEY").then(|| KEY.to_string()));
    Websearch::new(config, keys).unwrap()
}

fn searx_hits(n: usize, snippet: &str) -> String {
    let results: Vec<_> = (0..n)
        .map(|i| {
            json!({
                "title": format!("Result <b>{i}</b>"),
                "url": format!("https://example.org/{i}"),
                "content": snippet,
                "engine": "duckduckgo"
            })
        })
        .collect();
    json!({"query": "q", "results": results}).to_string()
}

async fn run(t: &Websearch, query: &str) -> Result<ToolOutput, ToolError> {
    pith_http::init_tls();
    let ws = Ws::new();
    t.run(json!({ "query": query }), &ws.ctx).await
}

#[tokio::test]
async fn searxng_hits_are_numbered_without_markup_and_bounded() {
    let stub = Stub::start(Answer::ok(searx_hits(
        30,
        &format!(
            "A <strong>long</strong> &amp; winding {}",
            "word ".repeat(400)
        ),
    )))
    .await;
    let t = tool("searxng", &stub.url(), "max_results = 5");
    let out = run(&t, "rust async").await.unwrap();
    assert!(
        out.output
            .starts_with("Results for \"rust async\" (searxng, 5 of 5):"),
        "{}",
        out.output
    );
    assert!(
        out.output
            .contains("1. Result 0\n   https://example.org/0\n   A long & winding word")
    );
    assert!(!out.output.contains("<strong>") && !out.output.contains("<b>"));
    assert!(out.output.contains("5. Result 4") && !out.output.contains("6. "));
    assert!(out.output.contains("webfetch"));
    // every snippet cut: the whole stays small
    assert!(
        out.output.len() < 5 * (text::MAX_SNIPPET + 100) + 300,
        "{}",
        out.output.len()
    );
    let m = pith_protocol::tool::ToolMetadata::read(
        &pith_protocol::tool::Builtin::WebSearch.into(),
        &out.metadata,
    )
    .unwrap();
    let m = m.search().unwrap();
    assert_eq!(
        (m.query.as_str(), m.backend.as_str(), m.hits.len()),
        ("rust async", "searxng", 5)
    );
    assert_eq!(m.hits[2].url, "https://example.org/2");
    let seen = stub.seen();
    assert_eq!(seen.len(), 1);
    assert!(
        seen[0].starts_with("GET /search?q=rust+async&format=json HTTP/1.1"),
        "{}",
        seen[0]
    );
    assert!(
        !seen[0].to_ascii_lowercase().contains("authorization"),
        "{}",
        seen[0]
    );
}

#[tokio::test]
async fn the_total_is_capped_whatever_max_results_says() {
    let stub = Stub::start(Answer::ok(searx_hits(20, &"x".repeat(2_000)))).await;
    let t = tool("searxng", &stub.url(), "max_results = 20");
    let out = run(&t, "q").await.unwrap();
    assert!(out.output.len() <= MAX_OUTPUT + 300, "{}", out.output.len());
    assert!(out.output.contains("more left out"), "{}", out.output);
}

#[tokio::test]
async fn brave_gets_the_key_in_its_header_only() {
    let body = json!({"type": "search", "web": {"results": [
        {"title": "Brave <strong>hit</strong>", "url": "https://b.example/", "description": "the <strong>words</strong>"},
        {"title": "no address", "url": "javascript:alert(1)", "description": "dropped"}
    ]}})
    .to_string();
    let stub = Stub::start(Answer::ok(body)).await;
    let t = tool("brave", &stub.url(), "key_env = \"TEST_SEARCH_KEY\"");
    let out = run(&t, "q").await.unwrap();
    assert!(
        out.output
            .contains("1. Brave hit\n   https://b.example/\n   the words"),
        "{}",
        out.output
    );
    assert!(!out.output.contains("javascript") && !out.output.contains("dropped"));
    let seen = stub.seen();
    assert!(
        seen[0].starts_with("GET /res/v1/web/search?q=q&count=8 "),
        "{}",
        seen[0]
    );
    let lower = seen[0].to_ascii_lowercase();
    assert!(lower.contains(&format!(
        "x-subscription-token: {}",
        KEY.to_ascii_lowercase()
    )));
    // only in that header: not in the address
    assert_eq!(seen[0].matches(KEY).count(), 1, "{}", seen[0]);
    assert!(!out.output.contains(KEY) && !out.metadata.to_string().contains(KEY));
}

#[tokio::test]
async fn a_refused_key_is_one_line_without_the_key() {
    let stub = Stub::start(Answer {
        status: "401 Unauthorized",
        body: format!("{{\"error\": \"bad token {KEY}\"}}"),
        delay: Duration::ZERO,
        extra: "",
    })
    .await;
    let t = tool("brave", &stub.url(), "key_env = \"TEST_SEARCH_KEY\"");
    let e = run(&t, "q").await.unwrap_err().to_string();
    assert!(
        e.contains("HTTP 401") && e.contains("TEST_SEARCH_KEY"),
        "{e}"
    );
    assert!(!e.contains(KEY) && !e.contains('\n'), "{e}");
    assert!(
        e.contains(&format!("brave at http://127.0.0.1:{}", stub.port)),
        "{e}"
    );
}

#[tokio::test]
async fn a_missing_key_variable_says_which() {
    let t = tool(
        "tavily",
        "http://127.0.0.1:9",
        "key_env = \"UNSET_SEARCH_KEY\"",
    );
    let e = run(&t, "q").await.unwrap_err().to_string();
    assert!(
        e.contains("UNSET_SEARCH_KEY") && e.contains("not set"),
        "{e}"
    );
}

#[tokio::test]
async fn malformed_slow_and_redirecting_services_are_one_line_each() {
    let html = Stub::start(Answer::ok(
        "<!doctype html><html>forbidden format</html>".into(),
    ))
    .await;
    let e = run(&tool("searxng", &html.url(), ""), "q")
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("HTML page") && e.contains("search.formats"),
        "{e}"
    );
    let junk = Stub::start(Answer::ok("{\"results\": 7}".into())).await;
    let e = run(&tool("searxng", &junk.url(), ""), "q")
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("not the JSON expected"), "{e}");
    let slow = Stub::start(Answer {
        delay: Duration::from_secs(5),
        ..Answer::ok(searx_hits(1, "late"))
    })
    .await;
    let e = run(&tool("searxng", &slow.url(), "timeout_secs = 1"), "q")
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("did not answer within 1 s"), "{e}");
    let moved = Stub::start(Answer {
        status: "302 Found",
        extra: "location: http://127.0.0.1:9/elsewhere\r\n",
        ..Answer::ok(String::new())
    })
    .await;
    let t = tool("brave", &moved.url(), "key_env = \"TEST_SEARCH_KEY\"");
    let e = run(&t, "q").await.unwrap_err().to_string();
    assert!(e.contains("HTTP 302"), "{e}");
    assert_eq!(moved.seen().len(), 1);
    let closed = run(&tool("searxng", "http://127.0.0.1:9", ""), "q")
        .await
        .unwrap_err()
        .to_string();
    assert!(
        closed.starts_with(
            "websearch: cannot reach the search backend (searxng at http://127.0.0.1:9)"
        ),
        "{closed}"
    );
    for e in [&e, &closed] {
        assert!(!e.contains('\n'), "{e}");
    }
}

#[tokio::test]
async fn no_results_and_an_empty_query() {
    let stub = Stub::start(Answer::ok(json!({"results": []}).to_string())).await;
    let t = tool("searxng", &stub.url(), "");
    let out = run(&t, "nothing here").await.unwrap();
    assert!(
        out.output.starts_with("No results for \"nothing here\""),
        "{}",
        out.output
    );
    let ws = Ws::new();
    assert!(t.precheck(&json!({"query": "  "}), &ws.ctx).is_err());
    assert!(stub.seen().len() == 1);
}
