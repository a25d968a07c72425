//! `pith run` says a fault once: each retry one short line, then one `pith: error:` line; a
//! start-up warning once per directory. Through the real binary.

use crate::support;

use serde_json::json;
use support::openai;
use support::pith::{PithEnv, stderr, stdout};
use support::{MockResponse, MockServer};

/// `retrying N/MAX in S.S s`.
fn assert_retry_line(line: &str, n: usize, max: usize) {
    let prefix = format!("retrying {n}/{max} in ");
    let secs = line
        .strip_prefix(&prefix)
        .and_then(|r| r.strip_suffix(" s"))
        .unwrap_or_else(|| panic!("not a retry line {n}/{max}: {line:?}"));
    let (whole, tenth) = secs.split_once('.').unwrap();
    assert!(
        whole.parse::<u64>().is_ok() && tenth.len() == 1 && tenth.parse::<u8>().is_ok(),
        "{line:?}"
    );
}

#[tokio::test]
async fn a_server_that_is_down_is_retried_once_and_reported_with_the_fix() {
    // a port nothing listens on
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let env = PithEnv::with_provider(&url, 128_000, 16_000, "", "max_retries = 4");
    let out = env.run(&["run", "hello"]).await;
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stdout(&out), "");
    let err = stderr(&out);
    let lines: Vec<&str> = err.lines().collect();
    // one quick retry, not four: a refused connection does not go away by waiting
    assert_eq!(lines.len(), 2, "{err}");
    assert_retry_line(lines[0], 1, 1);
    assert!(
        lines[1].starts_with(&format!(
            "pith: error: cannot reach {url}/v1/chat/completions"
        )),
        "{err}"
    );
    assert!(
        lines[1].contains(&format!("is the server running on 127.0.0.1:{port}")),
        "{err}"
    );
    assert!(!lines[1].contains("still failing after"), "{err}");
    assert_eq!(err.matches("cannot reach").count(), 1, "{err}");
}

#[tokio::test]
async fn a_llamacpp_server_that_is_down_names_llama_server() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let env = PithEnv::new("http://unused.invalid", 128_000, 16_000, "");
    let config = format!(
        "model = \"llamacpp/local\"\n\n[provider.llamacpp]\nbase_url = \"http://127.0.0.1:{port}/v1\"\n\n[models.\"llamacpp/local\"]\ncontext = 32000\noutput = 4000\n"
    );
    std::fs::write(&env.config, config).unwrap();
    let out = env.run(&["run", "hello"]).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!("is llama-server running on 127.0.0.1:{port}?")),
        "{err}"
    );
    assert!(err.lines().count() <= 2, "retried more than once: {err}");
}

#[tokio::test]
async fn a_503_is_retried_quietly_then_one_error() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 128_000, 16_000, "");
    let busy = || {
        MockResponse::status(
            503,
            json!({"error": {"message": "the model is overloaded", "type": "server_error"}}),
        )
    };
    server.push_all((0..4).map(|_| busy()));
    let out = env.run(&["run", "hello"]).await;
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 4, "{err}");
    for (i, line) in lines[..3].iter().enumerate() {
        assert_retry_line(line, i + 1, 3);
    }
    assert!(lines[3].starts_with("pith: error: "), "{err}");
    assert!(lines[3].contains("overloaded"), "{err}");
    assert_eq!(err.matches("overloaded").count(), 1, "{err}");
    assert_eq!(server.requests().len(), 4);
}

#[tokio::test]
async fn a_retry_that_helps_leaves_one_line() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 128_000, 16_000, "");
    server.push(MockResponse::status(
        503,
        json!({"error": {"message": "the model is overloaded", "type": "server_error"}}),
    ));
    server.push(openai::text("recovered", Some((900, 1))));
    let out = env.run(&["run", "hello"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "recovered\n");
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_retry_line(err.trim_end(), 1, 3);
}

#[tokio::test]
async fn a_warning_is_shown_once_per_directory() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 128_000, 16_000, "");
    let dir = env.path().join(".pith/commands");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("x.md"), "Do x.").unwrap();
    server.push(openai::text("one", None));
    server.push(openai::text("two", None));
    let first = env.run(&["run", "hello"]).await;
    assert!(first.status.success(), "{}", stderr(&first));
    let warning = format!(
        "pith: warning: {}: project commands not used: this directory is not trusted; run `pith --trust` here to use them\n",
        dir.display()
    );
    assert_eq!(stderr(&first), warning);
    let second = env.run(&["run", "hello"]).await;
    assert!(second.status.success(), "{}", stderr(&second));
    assert_eq!(stderr(&second), "", "the warning is not repeated");
    assert_eq!(stdout(&second), "two\n");
}
