//! `pith run PROMPT` with something piped on stdin: the input is appended to the prompt as a
//! pasted block (stored as the TUI stores a pasted chip), blank input adds nothing, input too
//! large for the model is refused with exit code 2 and nothing stored, and a command with
//! piped input is refused rather than the input dropped.

use crate::support;

use pith_protocol::message::PartKind;
use pith_store::Store;
use support::MockServer;
use support::openai;
use support::pith::{PithEnv, stderr};

/// `pith ARGS` with `input` piped on its stdin.
async fn piped(env: &PithEnv, args: &[&str], input: &[u8]) -> std::process::Output {
    use tokio::io::AsyncWriteExt;
    let mut cmd = env.command(args);
    cmd.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // pith may refuse before reading everything: a closed pipe is not the test's failure
    let _ = stdin.write_all(input).await;
    drop(stdin);
    let out = child.wait_with_output();
    tokio::time::timeout(std::time::Duration::from_secs(60), out)
        .await
        .expect("pith did not finish within 60 s")
        .unwrap()
}

fn last_user_text(server: &MockServer) -> String {
    let body = server.request_body(server.requests().len() - 1);
    let users: Vec<_> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .collect();
    support::message_text(users.last().unwrap())
}

#[tokio::test]
async fn piped_input_is_appended_to_the_prompt_as_a_pasted_block() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 128_000, 16_000, "");
    server.push(openai::text("it adds two lines", Some((1000, 5))));
    let diff = "--- a/x\n+++ b/x\n+one\n+two\n";
    let out = piped(&env, &["run", "review", "this"], diff.as_bytes()).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let sent = last_user_text(&server);
    assert_eq!(sent, "review this\n\n--- a/x\n+++ b/x\n+one\n+two");
    // stored as the TUI stores a pasted chip: the span of the piped block
    let store = Store::open(env.data.path()).unwrap();
    let session = &store.list_sessions().unwrap()[0];
    let messages = store.load_all(&session.id).unwrap();
    let spans = messages
        .iter()
        .flat_map(|m| &m.parts)
        .find_map(|p| match &p.kind {
            PartKind::Pasted { spans } => Some(spans.clone()),
            _ => None,
        })
        .expect("the piped block is stored as pasted");
    assert_eq!(spans.len(), 1);
    assert_eq!(&sent[spans[0].0..spans[0].1], diff.trim_end());
}

#[tokio::test]
async fn blank_piped_input_adds_nothing_and_dash_still_reads_the_prompt() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 128_000, 16_000, "");
    server.push(openai::text("hi", Some((1000, 5))));
    let out = piped(&env, &["run", "explain", "this:"], b" \n\n").await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(last_user_text(&server), "explain this:");
    server.push(openai::text("hi", Some((1000, 5))));
    let out = piped(&env, &["run", "-"], b"the whole prompt\n").await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(last_user_text(&server), "the whole prompt");
}

#[tokio::test]
async fn piped_input_too_large_for_the_model_is_refused_with_code_2_and_not_stored() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 8_000, 1_000, "");
    server.push(openai::text("never", None));
    let big = "secret-marker lorem ipsum dolor sit amet\n".repeat(4_000);
    let out = piped(&env, &["run", "summarise", "this"], big.as_bytes()).await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("not sent"), "{}", stderr(&out));
    assert!(server.requests().is_empty(), "the model got the input");
    assert!(!env.export_latest_raw().await.contains("secret-marker"));
}

#[tokio::test]
async fn a_command_with_piped_input_is_refused_not_the_input_dropped() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 128_000, 16_000, "");
    let out = piped(&env, &["run", "/compact"], b"some notes\n").await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("does not take piped input"),
        "{}",
        stderr(&out)
    );
    assert!(server.requests().is_empty());
}
