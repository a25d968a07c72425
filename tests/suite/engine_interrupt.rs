//! Interrupts and kills: the history stays valid and the session still loads.

use crate::support;

use std::time::Duration;

use serde_json::{Value, json};
use support::faults::{signal, wait_for_requests};
use support::openai;
use support::pith::{PithEnv, stderr};
use support::{MockResponse, MockServer};

/// A text answer streamed slowly: `n` chunks, `ms` apart.
fn slow_text(n: usize, ms: u64) -> MockResponse {
    let mut frames: Vec<String> = (0..n)
        .map(|i| {
            openai::frame(&openai::delta_chunk(
                json!({"content": format!("word{i} ")}),
                None,
            ))
        })
        .collect();
    frames.push(openai::frame(&openai::delta_chunk(json!({}), Some("stop"))));
    frames.push(openai::done());
    MockResponse::sse(frames).delay_ms(ms)
}

/// The command the stop tests interrupt in its `sleep 3`, run in `dir`. Its shell first takes a
/// lock on `dir/lock` (opened for reading: nothing is written), which it and the `sleep` hold
/// for as long as either lives; so once the lock is free, nothing of the command can run any
/// more, and whether `after` exists is final.
pub(super) fn stopped_command(dir: &std::path::Path) -> &'static str {
    std::fs::write(dir.join("lock"), "").unwrap();
    r#"{"command":"exec 9<lock; flock 9; touch started; sleep 3; touch after"}"#
}

/// Whether no process of [`stopped_command`] run in `dir` holds its lock any more (tried once;
/// the lock is let go again at once).
pub(super) fn command_gone(dir: &std::path::Path) -> bool {
    use std::os::fd::AsRawFd;
    let Ok(file) = std::fs::File::open(dir.join("lock")) else {
        return false;
    };
    // SAFETY: flock on a descriptor this function owns for its whole call.
    unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0 }
}

fn assistant_texts(export: &Value) -> Vec<String> {
    export["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "assistant")
        .flat_map(|m| m["parts"].as_array().unwrap().clone())
        .filter(|p| p["type"] == "text")
        .map(|p| p["text"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn ctrl_c_mid_stream_keeps_the_partial_answer_and_exits_130() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 128_000, 16_000, "");
    server.push(slow_text(100, 50));
    let child = env.command(&["run", "tell me a story"]).spawn().unwrap();
    wait_for_requests(&server, 1).await;
    tokio::time::sleep(Duration::from_millis(700)).await;
    signal(&child, libc::SIGINT);
    let out = tokio::time::timeout(Duration::from_secs(20), child.wait_with_output())
        .await
        .expect("pith exits after Ctrl-C")
        .unwrap();
    assert_eq!(out.status.code(), Some(130), "stderr: {}", stderr(&out));
    let export = env.export_latest().await;
    let texts = assistant_texts(&export);
    assert_eq!(texts.len(), 1);
    assert!(texts[0].starts_with("word0 "), "{texts:?}");
    assert!(!texts[0].contains("word99"), "the stream was not stopped");
}

#[tokio::test]
async fn ctrl_c_during_a_tool_kills_it_and_the_next_turn_sees_an_error_result() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 128_000, 16_000, "");
    server.push(openai::tool_calls(
        &[(
            "call_sleep",
            "bash",
            r#"{"command":"sleep 20 && touch after-sleep"}"#,
        )],
        Some((1000, 10)),
    ));
    let child = env
        .command(&["run", "--yes", "wait a while"])
        .spawn()
        .unwrap();
    wait_for_requests(&server, 1).await;
    tokio::time::sleep(Duration::from_millis(1200)).await;
    signal(&child, libc::SIGINT);
    let out = tokio::time::timeout(Duration::from_secs(20), child.wait_with_output())
        .await
        .expect("pith exits after Ctrl-C")
        .unwrap();
    assert_eq!(out.status.code(), Some(130), "stderr: {}", stderr(&out));

    server.push(openai::text("ok, stopped", Some((1100, 3))));
    let next = env.run(&["run", "--continue", "what happened?"]).await;
    assert!(next.status.success(), "stderr: {}", stderr(&next));
    let body = &server.requests()[1].body;
    let results: Vec<&Value> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .collect();
    assert_eq!(results.len(), 1, "every tool call needs a result: {body}");
    assert_eq!(results[0]["tool_call_id"], "call_sleep");
    assert!(
        results[0]["content"]
            .as_str()
            .unwrap()
            .contains("interrupted"),
        "{}",
        results[0]
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!env.path().join("after-sleep").exists());
}

#[tokio::test]
async fn kill_9_mid_stream_loses_at_most_the_last_fraction_of_a_second() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 128_000, 16_000, "");
    server.push(slow_text(200, 20));
    let child = env.command(&["run", "stream a lot"]).spawn().unwrap();
    wait_for_requests(&server, 1).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    signal(&child, libc::SIGKILL);
    let _ = child.wait_with_output().await;
    let export = env.export_latest().await;
    let texts = assistant_texts(&export);
    assert_eq!(texts.len(), 1, "{export}");
    // About 1.5 s of 20 ms chunks streamed; with a flush every 250 ms most of it is stored.
    let words = texts[0].split_whitespace().count();
    assert!(words >= 20, "only {words} words were stored");
    // The session still loads and continues.
    server.push(openai::text("continuing", Some((1500, 2))));
    let next = env.run(&["run", "--continue", "go on"]).await;
    assert!(next.status.success(), "stderr: {}", stderr(&next));
    let msgs = server.requests()[1].body["messages"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(msgs.last().unwrap()["content"], "go on");
}

#[tokio::test]
async fn text_streamed_before_a_stall_is_stored_without_waiting_for_the_next_chunk() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 128_000, 16_000, "");
    // A burst of text, then the stream stalls (held open, no further chunk).
    let frames = ["stalled ", "answer ", "here"]
        .iter()
        .map(|t| openai::frame(&openai::delta_chunk(json!({"content": t}), None)))
        .collect::<Vec<_>>();
    server.push(MockResponse::sse(frames).hold_open());
    let child = env.command(&["run", "think slowly"]).spawn().unwrap();
    wait_for_requests(&server, 1).await;
    // Poll the store while pith waits on the stalled stream: the burst must get there.
    let mut stored = Vec::new();
    for _ in 0..100 {
        stored = assistant_texts(&env.export_latest().await);
        if stored.first().is_some_and(|t| t == "stalled answer here") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    signal(&child, libc::SIGKILL);
    let _ = child.wait_with_output().await;
    assert_eq!(stored, vec!["stalled answer here".to_string()]);
}

/// Issue 37 item 8: SIGINT, SIGTERM or SIGHUP to `pith run` during `sleep 3; touch after`
/// ends the whole command at once: `after` is never created (the shell, handed a SIGTERM,
/// used to go on to its next statement), pith still exits with the signal's code. Whether
/// `after` exists is read once the command's lock is free (see [`stopped_command`]), not after
/// a fixed wait longer than the `sleep`.
#[tokio::test]
async fn a_stop_signal_ends_the_command_before_its_next_statement() {
    for (sig, code) in [
        (libc::SIGINT, 130),
        (libc::SIGTERM, 143),
        (libc::SIGHUP, 129),
    ] {
        let server = MockServer::start().await;
        let env = PithEnv::new(&server.url(), 128_000, 16_000, "");
        server.push(openai::tool_calls(
            &[("call_sleep", "bash", stopped_command(env.path()))],
            Some((1000, 10)),
        ));
        let child = env.command(&["run", "--yes", "wait"]).spawn().unwrap();
        let started = env.path().join("started");
        let begun = std::time::Instant::now();
        while !started.exists() && begun.elapsed() < Duration::from_secs(30) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(started.exists(), "the command never started");
        let signalled = std::time::Instant::now();
        signal(&child, sig);
        let out = tokio::time::timeout(Duration::from_secs(20), child.wait_with_output())
            .await
            .expect("pith exits after the signal")
            .unwrap();
        assert_eq!(out.status.code(), Some(code), "stderr: {}", stderr(&out));
        while !command_gone(env.path()) && signalled.elapsed() < Duration::from_secs(20) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(
            command_gone(env.path()),
            "signal {sig}: the command still runs"
        );
        assert!(
            !env.path().join("after").exists(),
            "signal {sig}: the statement after the interrupted one ran"
        );
    }
}
