use std::time::{Duration, Instant};

use serde_json::json;

use super::*;
use crate::tools::testutil::Ws;

async fn run(ws: &Ws, input: Value) -> Result<ToolOutput, String> {
    Bash::default()
        .run(input, &ws.ctx)
        .await
        .map_err(|e| e.to_string())
}

/// Whether a pid is gone (or a zombie nobody reaped: it no longer runs).
fn dead(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

async fn wait_dead(pid: i32) -> bool {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(10) {
        if dead(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

#[tokio::test]
async fn runs_in_workspace_with_exit_code() {
    let ws = Ws::new();
    ws.write("hello.txt", "hi");
    let out = run(
        &ws,
        json!({"command": "ls; pwd; exit 3", "description": "List files"}),
    )
    .await
    .unwrap();
    assert!(out.output.contains("hello.txt"), "{}", out.output);
    assert!(out.output.contains(&ws.ctx.workspace.display().to_string()));
    assert!(
        out.output.trim_end().ends_with("Exit code: 3"),
        "{}",
        out.output
    );
    assert_eq!(out.metadata["exit_code"], 3);
    assert_eq!(out.title, "List files");
}

#[tokio::test]
async fn stdout_and_stderr_in_order() {
    let ws = Ws::new();
    let out = run(
        &ws,
        json!({"command": "echo one; echo two >&2; echo three; echo four >&2"}),
    )
    .await
    .unwrap();
    assert!(
        out.output.starts_with("one\ntwo\nthree\nfour\n"),
        "{}",
        out.output
    );
    assert_eq!(
        out.title,
        "echo one; echo two >&2; echo three; echo four >&2"
    );
}

#[tokio::test]
async fn stdin_is_empty_so_readers_do_not_hang() {
    let ws = Ws::new();
    let out = tokio::time::timeout(
        Duration::from_secs(30),
        run(&ws, json!({"command": "cat; read x; echo \"got:[$x]\""})),
    )
    .await
    .expect("a command reading stdin must not hang")
    .unwrap();
    assert!(out.output.contains("got:[]"), "{}", out.output);
    assert_eq!(out.metadata["exit_code"], 0);
}

#[tokio::test]
async fn no_output() {
    let ws = Ws::new();
    let out = run(&ws, json!({"command": "true"})).await.unwrap();
    assert_eq!(out.output, "(no output)\n\nExit code: 0");
}

#[tokio::test]
async fn timeout_kills_the_whole_group() {
    let ws = Ws::new();
    let pidfile = ws.path("child.pid");
    let cmd = format!(
        "echo started; sleep 1000 & echo $! > {}; sleep 1000",
        pidfile.display()
    );
    let out = tokio::time::timeout(
        Duration::from_secs(60),
        run(&ws, json!({"command": cmd, "timeout": 300})),
    )
    .await
    .expect("timeout must stop the command")
    .unwrap();
    assert!(out.output.starts_with("started\n"), "{}", out.output);
    assert!(
        out.output.contains("timed out after 300 ms"),
        "{}",
        out.output
    );
    assert_eq!(out.metadata["timed_out"], true);
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        wait_dead(pid).await,
        "background child {pid} survived the timeout"
    );
}

#[tokio::test]
async fn cancel_kills_the_group() {
    let ws = Ws::new();
    let pidfile = ws.path("child.pid");
    let cmd = format!(
        "sleep 1000 & echo $! > {}; echo ready; wait",
        pidfile.display()
    );
    let cancel = ws.ctx.cancel.clone();
    let pf = pidfile.clone();
    tokio::spawn(async move {
        while !pf.exists()
            || std::fs::read_to_string(&pf)
                .unwrap_or_default()
                .trim()
                .is_empty()
        {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        cancel.cancel();
    });
    let err = tokio::time::timeout(Duration::from_secs(60), run(&ws, json!({"command": cmd})))
        .await
        .expect("cancel must stop the command")
        .unwrap_err();
    assert!(err.contains("interrupted"), "{err}");
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        wait_dead(pid).await,
        "background child {pid} survived the cancel"
    );
}

#[tokio::test]
async fn dropped_future_kills_the_group() {
    let ws = Ws::new();
    let pidfile = ws.path("child.pid");
    let cmd = format!("sleep 1000 & echo $! > {}; wait", pidfile.display());
    let fut = run(&ws, json!({"command": cmd}));
    let _ = tokio::time::timeout(Duration::from_millis(500), fut).await;
    // The future was dropped by the timeout above.
    let start = Instant::now();
    while !pidfile.exists() && start.elapsed() < Duration::from_secs(10) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        wait_dead(pid).await,
        "background child {pid} survived the drop"
    );
}

#[tokio::test]
async fn bad_input() {
    let ws = Ws::new();
    assert!(
        run(&ws, json!({}))
            .await
            .unwrap_err()
            .contains("missing field `command`")
    );
    assert!(
        run(&ws, json!({"command": "  "}))
            .await
            .unwrap_err()
            .contains("empty")
    );
    assert!(
        run(&ws, json!({"command": "true", "timeout": -5}))
            .await
            .unwrap_err()
            .contains("timeout")
    );
    assert!(
        run(&ws, json!({"command": 5}))
            .await
            .unwrap_err()
            .starts_with("Invalid input for bash")
    );
}

#[tokio::test]
async fn timeout_is_capped() {
    let ws = Ws::new();
    // A huge timeout is clamped, not rejected.
    let out = run(&ws, json!({"command": "echo ok", "timeout": 1e12}))
        .await
        .unwrap();
    assert!(out.output.starts_with("ok\n"));
}

#[test]
fn long_command_title_is_cut() {
    let t = command_title(&format!("echo {}\nsecond", "x".repeat(200)));
    assert!(t.chars().count() == 81 && t.ends_with('…'), "{t}");
}

/// A running command's output reaches `ctx.progress` as it arrives: all of it, in order, in
/// whole characters.
#[tokio::test]
async fn output_streams_to_the_progress_sink() {
    let mut ws = Ws::new();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let sink = seen.clone();
    ws.ctx.progress = Some(std::sync::Arc::new(move |s: &str| {
        sink.lock().unwrap().push(s.to_string())
    }));
    let out = run(
        &ws,
        json!({"command": "printf 'one\\n'; sleep 0.2; printf 'twö\\n' >&2"}),
    )
    .await
    .unwrap();
    let pieces = seen.lock().unwrap().clone();
    assert_eq!(pieces.concat(), "one\ntwö\n", "{pieces:?}");
    assert!(out.output.starts_with("one\ntwö\n"), "{}", out.output);
}

#[test]
fn a_character_split_between_reads_waits_for_its_other_half() {
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let sink = seen.clone();
    let mut live = Live::new(Some(std::sync::Arc::new(move |s: &str| {
        sink.lock().unwrap().push(s.to_string())
    })));
    let bytes = "aé".as_bytes();
    live.push(&bytes[..2]);
    live.push(&bytes[2..]);
    live.push(b"\xffz");
    assert_eq!(*seen.lock().unwrap(), ["a", "é", "\u{fffd}z"]);
}
