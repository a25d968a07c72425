//! The command line a careless user types: flags before `run`, a prompt on stdin, a session
//! that does not exist, a config whose limits cannot work.

use crate::support;

use std::process::Stdio;

use tokio::io::AsyncWriteExt;

use support::MockServer;
use support::openai as oa;
use support::pith::{PithEnv, stderr};

async fn run_with_stdin(env: &PithEnv, args: &[&str], input: &str) -> std::process::Output {
    let mut cmd = env.command(args);
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).await.unwrap();
    drop(stdin);
    tokio::time::timeout(std::time::Duration::from_secs(60), child.wait_with_output())
        .await
        .expect("pith ends")
        .unwrap()
}

fn last_user(server: &MockServer, i: usize) -> String {
    server.requests()[i].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rfind(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .unwrap()
}

#[tokio::test]
async fn the_prompt_can_come_from_stdin() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 128_000, 16_000, "");
    // Longer than one command-line argument may be (128 KiB on Linux).
    let long = format!("explain this:\n{}", "word ".repeat(40_000));
    server.push(oa::text("piped", None));
    let out = run_with_stdin(&env, &["run"], &long).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let sent = last_user(&server, 0);
    assert!(
        sent == long,
        "sent {} bytes, not the {} piped",
        sent.len(),
        long.len()
    );

    server.push(oa::text("dash", None));
    let out = run_with_stdin(&env, &["run", "-c", "-"], "from a dash\n").await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(last_user(&server, 1), "from a dash");

    let out = run_with_stdin(&env, &["run", "-"], "  \n").await;
    assert_eq!(out.status.code(), Some(2), "refused as a usage error");
    assert!(
        stderr(&out).contains("the prompt read from stdin is empty"),
        "{}",
        stderr(&out)
    );
}

#[tokio::test]
async fn global_flags_before_run_are_honoured() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 128_000, 16_000, "");
    server.push(oa::text("one", None));
    assert!(env.run(&["run", "first"]).await.status.success());

    // -c before run continues the session (the first message is in the request).
    server.push(oa::text("two", None));
    let out = env.run(&["-c", "run", "second"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let body = server.requests()[1].body.to_string();
    assert!(body.contains("first") && body.contains("second"), "{body}");

    // -m before run picks the model: an unknown provider is an error naming it.
    let out = env.run(&["-m", "nowhere/x", "run", "third"]).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("unknown provider \"nowhere\""),
        "{}",
        stderr(&out)
    );

    // --session before run: a session that does not exist says so.
    let out = env.run(&["--session", "NOPE", "run", "x"]).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("no session with id NOPE"),
        "{}",
        stderr(&out)
    );

    // They mean nothing to other commands: said, not ignored.
    let out = env.run(&["-c", "sessions", "list"]).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("apply to the TUI and `pith run`"),
        "{}",
        stderr(&out)
    );
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn an_output_limit_as_large_as_the_window_is_a_config_error() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 8_000, 8_000, "");
    let out = env.run(&["run", "hello"]).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let want = format!("pith: error: {}:", env.config.display());
    assert!(err.starts_with(&want), "{err}");
    assert!(
        err.contains(
            "models.\"mock/test-model\".output (8000) must be less than its context (8000)"
        ),
        "{err}"
    );
    assert!(!err.contains("preserve_recent_tokens"), "{err}");
    assert!(server.requests().is_empty());
}
