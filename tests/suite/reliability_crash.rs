//! Crashes, kills and a full disk, with the real binary: commands die with pith, one writer per
//! session, a kill mid-compaction leaves nothing the model sees, parts a crash cut off are
//! marked interrupted, a failed store write is reported (and the next start recovers).

use crate::support;

use std::path::Path;
use std::time::Duration;

use serde_json::Value;
use support::faults::{big_answer, limit_file_size, running, signal, survivors, wait_for_requests};
use support::openai as oa;
use support::pith::{PithEnv, compactable_session, run_sleepers, stderr, stdout};
use support::{MockResponse, MockServer};

fn session_id(env: &PithEnv) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_pith"))
        .args(["sessions", "list"])
        .current_dir(env.path())
        .env("PITH_DATA_DIR", env.data.path())
        .env("PITH_CONFIG", &env.config)
        .env("HOME", env.home.path())
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .nth(1)
        .and_then(|l| l.split_whitespace().next())
        .expect("a session")
        .to_string()
}

/// A command started by a tool, and what it left in the background, end with pith: killed
/// outright (SIGKILL, nothing of pith runs), or asked to stop (SIGTERM, SIGHUP: the turn stops
/// cleanly and pith exits 128 + the signal).
#[tokio::test]
async fn commands_die_with_pith_however_it_ends() {
    if !Path::new("/proc/self/stat").exists() {
        eprintln!("skipped: needs /proc to watch processes");
        return;
    }
    for (sig, code) in [
        (libc::SIGKILL, None),
        (libc::SIGTERM, Some(143)),
        (libc::SIGHUP, Some(129)),
    ] {
        let server = MockServer::start().await;
        let env = PithEnv::new(&server.url(), 128_000, 16_000, "");
        let (child, started) = run_sleepers(&server, &env).await;
        assert_eq!(started.len(), 3, "{started:?}");
        assert!(started.iter().all(|&p| running(p)));
        signal(&child, sig);
        let out = tokio::time::timeout(Duration::from_secs(20), child.wait_with_output())
            .await
            .expect("pith ends")
            .unwrap();
        assert_eq!(out.status.code(), code, "signal {sig}: {}", stderr(&out));
        assert_eq!(
            survivors(&started).await,
            Vec::<i32>::new(),
            "signal {sig}: the command's processes outlived pith"
        );
    }
}

/// A second pith on a session that one is working on is refused with a clear message; it
/// works once the first is gone (even if it was killed).
#[tokio::test]
async fn one_writer_per_session() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 128_000, 16_000, "");
    server.push(oa::text("first", Some((10, 1))));
    assert!(env.run(&["run", "hello"]).await.status.success());
    let id = session_id(&env);

    // The first holds the session while its answer is stuck.
    server.push(MockResponse::sse(Vec::new()).hold_open());
    let first = env.spawn(&["run", "--session", &id, "more"]);
    wait_for_requests(&server, 2).await;
    for args in [
        &["run", "--session", &id, "at the same time"][..],
        &["-c", "run", "at the same time"][..],
    ] {
        let second = env.run(args).await;
        let err = stderr(&second);
        assert_eq!(second.status.code(), Some(1), "{err}");
        assert!(
            err.contains(&format!("session {id} is open in another pith (pid "))
                && err.contains("two cannot write to one session at once"),
            "{err}"
        );
    }
    assert_eq!(
        server.requests().len(),
        2,
        "the second never reached the model"
    );

    signal(&first, libc::SIGKILL);
    let _ = first.wait_with_output().await;
    server.push(oa::text("after", Some((10, 1))));
    let again = env.run(&["run", "--session", &id, "now alone"]).await;
    assert!(again.status.success(), "{}", stderr(&again));
    // The turns did not interleave: the killed turn's step is marked, then the new turn.
    let body = &server.requests()[2].body;
    let users: Vec<&str> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert_eq!(users, ["hello", "more", "now alone"]);
}

fn stored_messages(export: &Value) -> Vec<Value> {
    export["messages"].as_array().unwrap().clone()
}

/// `kill -9` while the summary is being written: the next request has no stray "What did we do
/// so far?", and a tool call cut off by the kill is an error, not "running" forever.
#[tokio::test]
async fn a_kill_mid_compaction_and_mid_tool_leaves_nothing_stray() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 200_000, 8_000, "");
    compactable_session(&server, &env).await;
    // A turn whose tool is still running when pith is killed.
    server.push(oa::tool_calls(
        &[("c1", "bash", r#"{"command":"sleep 30"}"#)],
        Some((13_000, 5)),
    ));
    let child = env.spawn(&["run", "-c", "--yes", "sleep"]);
    wait_for_requests(&server, 5).await;
    // Until the tool runs (its part is stored as running).
    for _ in 0..500 {
        if env.export_latest_raw().await.contains("\"running\"") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    signal(&child, libc::SIGKILL);
    let _ = child.wait_with_output().await;
    let export = env.export_latest().await;
    let tools: Vec<Value> = stored_messages(&export)
        .iter()
        .flat_map(|m| m["parts"].as_array().unwrap().clone())
        .filter(|p| p["type"] == "tool")
        .collect();
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0]["state"]["status"], "error", "{}", tools[0]);
    assert!(
        tools[0]["state"]["message"]
            .as_str()
            .unwrap()
            .contains("interrupted"),
        "{}",
        tools[0]
    );

    // Now a compaction whose summary never arrives: killed while waiting for it.
    server.push(MockResponse::sse(Vec::new()).hold_open());
    let child = env.spawn(&["run", "-c", "/compact"]);
    wait_for_requests(&server, 6).await;
    signal(&child, libc::SIGKILL);
    let _ = child.wait_with_output().await;

    server.push(oa::text("carrying on", Some((100, 2))));
    let next = env.run(&["run", "-c", "go on"]).await;
    assert!(next.status.success(), "{}", stderr(&next));
    let body = server.requests()[6].body.to_string();
    assert!(!body.contains("What did we do so far?"), "{body}");
    assert!(body.contains("go on"));
    let export = env.export_latest().await;
    assert!(
        !stored_messages(&export)
            .iter()
            .any(|m| m["parts"].to_string().contains("\"compaction\"")),
        "{export}"
    );
}

/// Ctrl-C while `/compact` waits for the summary: exit 130 like any interrupted turn, nothing
/// stored.
#[tokio::test]
async fn ctrl_c_during_compact_exits_130() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 200_000, 8_000, "");
    compactable_session(&server, &env).await;
    server.push(MockResponse::sse(Vec::new()).hold_open());
    let child = env.spawn(&["run", "-c", "/compact"]);
    wait_for_requests(&server, 5).await;
    signal(&child, libc::SIGINT);
    let out = tokio::time::timeout(Duration::from_secs(20), child.wait_with_output())
        .await
        .expect("pith exits")
        .unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(!stderr(&out).contains("error:"), "{}", stderr(&out));
}

/// A store that cannot be written mid-answer (here a file-size limit stands in for a full
/// disk): the answer is still printed, the error is reported, the exit code is 1; the next start
/// opens the session and goes on.
#[tokio::test]
async fn a_store_write_that_fails_is_reported_and_the_next_start_recovers() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 128_000, 16_000, "");
    server.push(oa::text("warm up", Some((10, 1))));
    assert!(env.run(&["run", "hello"]).await.status.success());
    let db_size = std::fs::metadata(env.data.path().join("pith.db"))
        .unwrap()
        .len();

    // 24 chunks of 20 KB, 80 ms apart: the stored text part grows past the limit.
    server.push(big_answer(24, 20_000, 80));
    let mut cmd = env.command(&["run", "-c", "write a lot"]);
    limit_file_size(&mut cmd, db_size + 128 * 1024);
    let out = tokio::time::timeout(Duration::from_secs(60), cmd.output())
        .await
        .expect("pith ends")
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(
        err.matches("error: could not save the session to ").count(),
        1,
        "{err}"
    );
    assert!(err.contains("pith --session"), "{err}");
    // Everything streamed was shown.
    let shown = stdout(&out);
    assert!(
        shown.contains("[00]") && shown.contains("[23]"),
        "{}",
        shown.len()
    );

    // The next start, with room again: the session loads, the cut step is marked, the turn runs.
    server.push(oa::text("recovered", Some((10, 1))));
    let next = env.run(&["run", "-c", "still there?"]).await;
    assert!(next.status.success(), "{}", stderr(&next));
    let users: Vec<String> = server.requests()[2].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].to_string())
        .collect();
    assert_eq!(users.len(), 3, "{users:?}");
}

/// `read` of a FIFO through the engine: the tool refuses at once, the turn goes on.
#[tokio::test]
async fn reading_a_fifo_does_not_hang_the_turn() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 128_000, 16_000, "");
    let fifo = env.path().join("pipe");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo with a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    server.push(oa::tool_calls(
        &[("r1", "read", r#"{"file_path":"pipe"}"#)],
        None,
    ));
    server.push(oa::text("it is a pipe", None));
    let out = env.run(&["run", "read the pipe"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let result = server.requests()[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .map(|m| m["content"].to_string())
        .unwrap();
    assert!(result.contains("named pipe (FIFO)"), "{result}");
}

/// The same broken call again and again stops the turn after three, not at max_steps.
#[tokio::test]
async fn a_repeated_broken_call_stops_the_turn() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 128_000, 16_000, "");
    for _ in 0..10 {
        server.push(oa::tool_calls(&[("b1", "bash", "{\"command\": ")], None));
    }
    let out = env.run(&["run", "--yes", "loop"]).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("stopped: the model sent the same call to `bash` 3 times in a row"),
        "{err}"
    );
    assert_eq!(server.requests().len(), 3);
    assert_eq!(server.remaining(), 7);
}
