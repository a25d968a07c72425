//! The printing commands behave like command-line tools when their reader goes away.

use crate::support;

use serde_json::json;
use support::openai;
use support::pith::{PithEnv, stderr, stdout};
use support::{MockResponse, MockServer};

/// `pith sessions export ID | head` and `pith config | head`: a closed pipe ends the command
/// quietly, with no panic.
#[tokio::test]
async fn a_closed_stdout_does_not_panic_the_printing_commands() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 128_000, 16_000, "");
    server.push(openai::text("hello there", Some((1000, 5))));
    let out = env.run(&["run", "say hello"]).await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let export = env.export_latest().await;
    let id = export["session"]["id"].as_str().unwrap().to_string();
    for args in [
        vec!["sessions", "export", id.as_str(), "--format", "md"],
        vec!["sessions", "export", id.as_str()],
        vec!["sessions", "list"],
        vec!["config"],
    ] {
        // (`output()` would replace stdout with its own pipe: spawn instead.)
        // A pipe whose read end is already closed: the first write fails with EPIPE.
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = env
            .command(&args)
            .stdout(std::process::Stdio::from(writer))
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
            .wait_with_output()
            .await
            .unwrap();
        let err = stderr(&out);
        assert!(!err.contains("panicked"), "pith {args:?} panicked: {err}");
    }
}

/// A stream cut after some text is retried: the retried answer starts on a new line, and stderr
/// says the partial text was discarded (it is not in the session).
#[tokio::test]
async fn a_retried_answer_starts_on_its_own_line() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 128_000, 16_000, "");
    let frames = vec![
        openai::frame(&openai::delta_chunk(json!({"role": "assistant"}), None)),
        openai::frame(&openai::delta_chunk(json!({"content": "partial "}), None)),
        openai::frame(&openai::delta_chunk(json!({"content": "text"}), None)),
    ];
    server.push(MockResponse::sse(frames).cut_after(3));
    server.push(openai::text("full answer", Some((1000, 5))));
    let out = env.run(&["run", "answer me"]).await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert_eq!(stdout(&out), "partial text\nfull answer\n");
    assert!(
        stderr(&out).contains("partial answer above is discarded"),
        "{}",
        stderr(&out)
    );
}

/// A trusted workspace's `[mcp.NAME]` with only `enabled = false`, over a server of the user's
/// config, turns it off (`pith mcp list` says so) instead of stopping pith; a partial table
/// over nothing is one error line, printed once.
#[tokio::test]
async fn a_partial_mcp_table_in_a_trusted_workspace_turns_a_server_off() {
    let server = MockServer::start().await;
    let env = PithEnv::new(
        &server.url(),
        128_000,
        16_000,
        "[mcp.who]\nurl = \"http://127.0.0.1:9/mcp\"\n",
    );
    std::fs::write(
        env.workspace.path().join("pith.toml"),
        "[mcp.who]\nenabled = false\n",
    )
    .unwrap();
    let out = env.run(&["--trust", "mcp", "list"]).await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let listed = stdout(&out);
    assert!(
        listed
            .lines()
            .any(|l| l.starts_with("who") && l.contains("disabled")),
        "{listed}"
    );

    std::fs::write(
        env.workspace.path().join("pith.toml"),
        "[mcp.nobody]\nenabled = false\n",
    )
    .unwrap();
    let out = env.run(&["--trust", "mcp", "list"]).await;
    assert!(!out.status.success());
    let err = stderr(&out);
    assert_eq!(err.matches("mcp.nobody: set command").count(), 1, "{err}");
    assert!(err.ends_with('\n'), "{err:?}");
}
