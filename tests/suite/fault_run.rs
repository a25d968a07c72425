//! The fault-injection run behind RELIABILITY.md: every fault of issue 16, several times each,
//! against the binary this test is built with (`--release` for the figures), with what was
//! survived and what was lost *measured*. It asserts that every fault is survived, and prints
//! a Markdown table.
//!
//! ```sh
//! cargo test --release --test all fault_run:: -- --ignored --nocapture
//! FAULT_TRIES=10 cargo test --release --test all fault_run:: -- --ignored --nocapture
//! ```

use crate::support;

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::faults::{
    big_answer, limit_file_size, requests_reach, signal, signal_pid, slow_words, survivors,
};
use support::openai as oa;
use support::pith::{PithEnv, compactable_session, run_sleepers, stderr, stdout};
use support::{MockResponse, MockServer};

const FAST: &str = "first_byte_timeout_secs = 2\nidle_timeout_secs = 2\nmax_retries = 1";

struct Row {
    fault: &'static str,
    tries: usize,
    survived: usize,
    detail: String,
}

/// `FAULT_ONLY=word` runs only the faults whose name contains it.
fn wanted(fault: &str) -> bool {
    std::env::var("FAULT_ONLY").map_or(true, |w| fault.contains(&w))
}

fn skipped(fault: &'static str) -> Row {
    Row {
        fault,
        tries: 0,
        survived: 0,
        detail: String::new(),
    }
}

fn tries() -> usize {
    std::env::var("FAULT_TRIES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5)
}

async fn bounded(
    cmd: &mut tokio::process::Command,
    limit: Duration,
) -> Option<std::process::Output> {
    let child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .ok()?;
    tokio::time::timeout(limit, child.wait_with_output())
        .await
        .ok()?
        .ok()
}

fn stored_text(export: &Value) -> String {
    export["messages"]
        .as_array()
        .map(|ms| {
            ms.iter()
                .filter(|m| m["role"] == "assistant")
                .flat_map(|m| m["parts"].as_array().cloned().unwrap_or_default())
                .filter(|p| p["type"] == "text")
                .filter_map(|p| p["text"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// A provider fault: pith must end within `limit` with `code` and `message` on stderr, once.
async fn provider_fault(
    fault: &'static str,
    responses: impl Fn() -> Vec<MockResponse>,
    provider: &str,
    code: i32,
    message: &str,
) -> Row {
    if !wanted(fault) {
        return skipped(fault);
    }
    let n = tries();
    let mut survived = 0;
    let mut slowest = Duration::ZERO;
    for _ in 0..n {
        let server = MockServer::start().await;
        server.push_all(responses());
        let env = PithEnv::with_provider(&server.url(), 32_000, 4_000, "", provider);
        let started = Instant::now();
        let out = bounded(&mut env.command(&["run", "hello"]), Duration::from_secs(60)).await;
        slowest = slowest.max(started.elapsed());
        if let Some(out) = out
            && out.status.code() == Some(code)
            && stderr(&out).matches(message).count() == 1
            && env.run(&["sessions", "list"]).await.status.success()
        {
            survived += 1;
        }
    }
    Row {
        fault,
        tries: n,
        survived,
        detail: format!(
            "exit {code}, \"{message}\" once; slowest end {:.1} s",
            slowest.as_secs_f64()
        ),
    }
}

/// `kill -9` at a random moment of a streamed answer: what the user saw printed vs what the
/// session holds; the session must resume.
async fn kill_mid_stream() -> Row {
    if !wanted("kill -9 mid-answer") {
        return skipped("kill -9 mid-answer");
    }
    let n = tries();
    let mut survived = 0;
    let mut lost = Vec::new();
    for _ in 0..n {
        let server = MockServer::start().await;
        server.push(slow_words(300, 10));
        let env = PithEnv::new(&server.url(), 128_000, 16_000, "");
        let child = env.spawn(&["run", "stream"]);
        requests_reach(&server, 1, 120).await;
        tokio::time::sleep(Duration::from_millis(200 + fastrand::u64(0..2000))).await;
        signal(&child, libc::SIGKILL);
        let out = child.wait_with_output().await.unwrap();
        let printed = stdout(&out);
        let stored = stored_text(&env.export_latest().await);
        lost.push(printed.len().saturating_sub(stored.len()));
        server.push(oa::text("resumed", None));
        let next = env.run(&["run", "-c", "go on"]).await;
        if next.status.success() && printed.starts_with(&stored) {
            survived += 1;
        }
    }
    Row {
        fault: "kill -9 mid-answer",
        tries: n,
        survived,
        detail: format!(
            "chars printed but not stored: max {}, mean {:.0}; resumed every time it survived",
            lost.iter().max().unwrap_or(&0),
            lost.iter().sum::<usize>() as f64 / n.max(1) as f64
        ),
    }
}

/// A tool's command (and what it left in the background) after pith ends by `sig`.
async fn orphans(sig: i32, fault: &'static str) -> Row {
    if !wanted(fault) {
        return skipped(fault);
    }
    let n = tries();
    let mut survived = 0;
    let mut orphaned = 0;
    for _ in 0..n {
        let server = MockServer::start().await;
        let env = PithEnv::new(&server.url(), 128_000, 16_000, "");
        let (child, started) = run_sleepers(&server, &env).await;
        signal(&child, sig);
        let _ = tokio::time::timeout(Duration::from_secs(20), child.wait_with_output()).await;
        let alive = survivors(&started).await;
        orphaned += alive.len();
        for p in &alive {
            signal_pid(*p, libc::SIGKILL);
        }
        let export = env.export_latest().await.to_string();
        if started.len() == 3 && alive.is_empty() && !export.contains("\"running\"") {
            survived += 1;
        }
    }
    Row {
        fault,
        tries: n,
        survived,
        detail: format!(
            "{orphaned} of {} processes outlived pith; the tool call is stored as an error",
            3 * n
        ),
    }
}

/// `kill -9` while the summary of `/compact` streams; then the next request.
async fn kill_mid_compaction() -> Row {
    if !wanted("kill -9 mid-compaction") {
        return skipped("kill -9 mid-compaction");
    }
    let n = tries();
    let mut survived = 0;
    let mut stray = 0;
    for _ in 0..n {
        let server = MockServer::start().await;
        let env = PithEnv::new(&server.url(), 200_000, 8_000, "");
        compactable_session(&server, &env).await;
        server.push(slow_words(300, 10));
        let child = env.spawn(&["run", "-c", "/compact"]);
        requests_reach(&server, 5, 120).await;
        tokio::time::sleep(Duration::from_millis(fastrand::u64(0..1500))).await;
        signal(&child, libc::SIGKILL);
        let _ = child.wait_with_output().await;
        server.push(oa::text("next", None));
        let next = env.run(&["run", "-c", "go on"]).await;
        let body = server
            .requests()
            .last()
            .map(|r| r.body.to_string())
            .unwrap_or_default();
        let strays = body.matches("What did we do so far?").count();
        stray += strays;
        if next.status.success() && strays == 0 {
            survived += 1;
        }
    }
    Row {
        fault: "kill -9 mid-compaction",
        tries: n,
        survived,
        detail: format!("stray \"What did we do so far?\" in the next request: {stray}"),
    }
}

/// A file-size limit below what the answer needs (a full disk): reported, printed, recovered.
async fn full_disk() -> Row {
    if !wanted("disk full mid-answer (file-size limit)") {
        return skipped("disk full mid-answer (file-size limit)");
    }
    let n = tries();
    let mut survived = 0;
    let mut lost = Vec::new();
    for _ in 0..n {
        let server = MockServer::start().await;
        let env = PithEnv::new(&server.url(), 128_000, 16_000, "");
        server.push(oa::text("warm", None));
        env.run(&["run", "hello"]).await;
        let size = std::fs::metadata(env.data.path().join("pith.db"))
            .map(|m| m.len())
            .unwrap_or(0);
        server.push(big_answer(24, 20_000, 60));
        let mut cmd = env.command(&["run", "-c", "a lot"]);
        limit_file_size(&mut cmd, size + fastrand::u64(64..512) * 1024);
        let Some(out) = bounded(&mut cmd, Duration::from_secs(60)).await else {
            continue;
        };
        let printed = stdout(&out).matches('y').count();
        server.push(oa::text("recovered", None));
        let next = env.run(&["run", "-c", "still there?"]).await;
        let stored = stored_text(&env.export_latest().await).matches('y').count();
        lost.push(printed.saturating_sub(stored));
        if out.status.code() == Some(1)
            && stderr(&out).matches("could not save the session").count() == 1
            && printed == 24 * 20_000
            && next.status.success()
        {
            survived += 1;
        }
    }
    Row {
        fault: "disk full mid-answer (file-size limit)",
        tries: n,
        survived,
        detail: format!(
            "exit 1 with the error once, the whole answer printed, the next start fine; of the {} chars shown, not stored: min {}, mean {:.0}, max {}",
            24 * 20_000,
            lost.iter().min().unwrap_or(&0),
            lost.iter().sum::<usize>() as f64 / lost.len().max(1) as f64,
            lost.iter().max().unwrap_or(&0),
        ),
    }
}

/// `read` of special and huge files: it returns, and pith's peak memory stays small.
async fn hostile_reads() -> Row {
    if !wanted("read of a FIFO, /dev/stdin, /dev/zero, a 2 GB line") {
        return skipped("read of a FIFO, /dev/stdin, /dev/zero, a 2 GB line");
    }
    let n = tries();
    let mut survived = 0;
    let mut peak_kb = 0u64;
    for _ in 0..n {
        let server = MockServer::start().await;
        let env = PithEnv::new(&server.url(), 128_000, 16_000, "");
        let fifo = env.path().join("pipe");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo with a valid C string.
        unsafe { libc::mkfifo(c.as_ptr(), 0o600) };
        // 8 KB of text, then a 2 GB hole: one line of 2 GB.
        let big = env.path().join("big.txt");
        let mut f = std::fs::File::create(&big).unwrap();
        std::io::Write::write_all(&mut f, &[b'a'; 8192]).unwrap();
        f.set_len(2 << 30).unwrap();
        let calls = [
            ("r1", "read", r#"{"file_path":"pipe"}"#),
            ("r2", "read", r#"{"file_path":"/dev/stdin"}"#),
            ("r3", "read", r#"{"file_path":"/dev/zero"}"#),
            ("r4", "read", r#"{"file_path":"big.txt"}"#),
        ];
        server.push(oa::tool_calls(&calls, None));
        server.push(MockResponse::sse(Vec::new()).hold_open());
        let child = env.spawn(&["run", "--yes", "read them"]);
        let pid = child.id().unwrap();
        let answered = requests_reach(&server, 2, 120).await;
        let hwm = std::fs::read_to_string(format!("/proc/{pid}/status"))
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("VmHWM:"))
                    .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
            })
            .unwrap_or(0);
        peak_kb = peak_kb.max(hwm);
        signal(&child, libc::SIGKILL);
        let _ = child.wait_with_output().await;
        let results = server
            .requests()
            .get(1)
            .map(|r| r.body.to_string())
            .unwrap_or_default();
        if std::env::var_os("FAULT_DEBUG").is_some() {
            eprintln!("read results: {results}");
        }
        if answered && results.matches("not a regular file").count() == 3 && hwm < 200_000 {
            survived += 1;
        }
    }
    Row {
        fault: "read of a FIFO, /dev/stdin, /dev/zero, a 2 GB line",
        tries: n,
        survived,
        detail: format!("all four answered; pith's peak RSS {} MB", peak_kb / 1024),
    }
}

/// Two pith on one session: the second is refused, the turns never interleave.
async fn two_writers() -> Row {
    if !wanted("two pith on one session") {
        return skipped("two pith on one session");
    }
    let n = tries();
    let mut survived = 0;
    for _ in 0..n {
        let server = MockServer::start().await;
        let env = PithEnv::new(&server.url(), 128_000, 16_000, "");
        server.push(oa::text("one", None));
        env.run(&["run", "hello"]).await;
        server.push(slow_words(100, 20));
        let first = env.spawn(&["run", "-c", "first"]);
        requests_reach(&server, 2, 120).await;
        let second = env.run(&["run", "-c", "second"]).await;
        let first = first.wait_with_output().await.unwrap();
        let refused =
            second.status.code() == Some(1) && stderr(&second).contains("is open in another pith");
        if refused && first.status.success() && server.requests().len() == 2 {
            survived += 1;
        }
    }
    Row {
        fault: "two pith on one session",
        tries: n,
        survived,
        detail: "the second is refused with the owner's pid; no interleaved turn".into(),
    }
}

/// The same broken call forever: the turn stops after three.
async fn doom_loop() -> Row {
    if !wanted("the same invalid-JSON call, 99 times") {
        return skipped("the same invalid-JSON call, 99 times");
    }
    let n = tries();
    let mut survived = 0;
    let mut steps = 0;
    for _ in 0..n {
        let server = MockServer::start().await;
        let env = PithEnv::new(&server.url(), 128_000, 16_000, "");
        for _ in 0..99 {
            server.push(oa::tool_calls(&[("b", "bash", "{\"command\": ")], None));
        }
        let out = env.run(&["run", "--yes", "loop"]).await;
        steps = steps.max(server.requests().len());
        if out.status.code() == Some(1) && server.requests().len() == 3 {
            survived += 1;
        }
    }
    Row {
        fault: "the same invalid-JSON call, 99 times",
        tries: n,
        survived,
        detail: format!("stopped after {steps} steps"),
    }
}

#[tokio::test]
#[ignore = "the fault-injection run: cargo test --release --test all fault_run:: -- --ignored --nocapture"]
async fn fault_injection_run() {
    if !Path::new("/proc/self/status").exists() {
        eprintln!("skipped: needs Linux /proc");
        return;
    }
    let started = Instant::now();
    let mut rows = silent_provider_faults().await;
    rows.extend(bad_answer_faults().await);
    rows.push(kill_mid_stream().await);
    rows.push(orphans(libc::SIGKILL, "kill -9 while a command runs").await);
    rows.push(orphans(libc::SIGTERM, "SIGTERM while a command runs").await);
    rows.push(orphans(libc::SIGHUP, "SIGHUP while a command runs").await);
    rows.push(kill_mid_compaction().await);
    rows.push(full_disk().await);
    rows.push(hostile_reads().await);
    rows.push(two_writers().await);
    rows.push(doom_loop().await);
    rows.retain(|r| r.tries > 0);
    print_table(&rows, started);
    let failed: Vec<&str> = rows
        .iter()
        .filter(|r| r.survived < r.tries)
        .map(|r| r.fault)
        .collect();
    assert!(failed.is_empty(), "not survived every time: {failed:?}");
}

/// Providers that go quiet: no answer, headers then silence, a stall mid-answer, a cut.
async fn silent_provider_faults() -> Vec<Row> {
    vec![
        provider_fault(
            "no answer at all",
            || vec![MockResponse::sse(Vec::new()).first_delay_ms(600_000); 2],
            FAST,
            1,
            "within 2 s (first_byte_timeout_secs); the server may be overloaded or stuck (still failing after 1 retries)",
        )
        .await,
        provider_fault(
            "headers, then silence",
            || vec![MockResponse::sse(Vec::new()).hold_open(); 2],
            FAST,
            1,
            "within 2 s (first_byte_timeout_secs); the server may be overloaded or stuck (still failing after 1 retries)",
        )
        .await,
        provider_fault(
            "stall mid-answer, twice",
            || {
                let f = vec![oa::frame(&oa::delta_chunk(json!({"content": "half"}), None))];
                vec![MockResponse::sse(f).hold_open(); 2]
            },
            FAST,
            1,
            "stalled: nothing for 2 s (idle_timeout_secs) (still failing after 1 retries)",
        )
        .await,
        provider_fault(
            "stall mid-answer, then an answer",
            || {
                let f = vec![oa::frame(&oa::delta_chunk(json!({"content": "half"}), None))];
                vec![MockResponse::sse(f).hold_open(), oa::text("whole", None)]
            },
            FAST,
            0,
            // the retry is announced; its cause is said only when retrying does not help
            "retrying 1/1 in ",
        )
        .await,
        provider_fault(
            "connection cut mid-answer, then an answer",
            || vec![slow_words(10, 1).cut_after(3), oa::text("whole", None)],
            "",
            0,
            "retrying 1/3 in ",
        )
        .await,
    ]
}

/// Providers that answer wrongly: without end, with HTML, with errors pith cannot get past.
async fn bad_answer_faults() -> Vec<Row> {
    let html = "<!DOCTYPE html><html><head><title>Login</title></head></html>";
    vec![
        provider_fault(
            "endless answer",
            || {
                let chunk = json!({"content": "z".repeat(4000)});
                vec![MockResponse::endless(oa::frame(&oa::delta_chunk(
                    chunk, None,
                )))]
            },
            "",
            1,
            "passed 1 MiB in one step",
        )
        .await,
        provider_fault(
            "HTML page with status 200",
            || vec![MockResponse::raw(200, "text/html", html)],
            "",
            1,
            "with an HTML page (\"Login\")",
        )
        .await,
        provider_fault(
            "502 with an HTML page, four times",
            || {
                vec![
                    MockResponse::raw(
                        502,
                        "text/html",
                        "<html><title>502 Bad Gateway</title></html>"
                    );
                    4
                ]
            },
            "",
            1,
            "HTTP 502 server error: an HTML page (502 Bad Gateway) (still failing after 3 retries)",
        )
        .await,
        provider_fault(
            "429 with retry-after: 999999",
            || {
                vec![
                    MockResponse::status(429, oa::error_body("rate_limit", "slow down"))
                        .header("retry-after", "999999"),
                ]
            },
            "",
            1,
            "asks to wait 999999 s",
        )
        .await,
        provider_fault(
            "404 (wrong base_url)",
            || {
                vec![MockResponse::status(
                    404,
                    json!({"error": {"message": "no route"}}),
                )]
            },
            "",
            1,
            "HTTP 404 not found: no route (POST http://127.0.0.1:",
        )
        .await,
        provider_fault(
            "malformed event, four times",
            || vec![MockResponse::sse(vec!["data: {not json\n\n".into()]); 4],
            "",
            1,
            "{not json (still failing after 3 retries)",
        )
        .await,
    ]
}

/// The table RELIABILITY.md shows, and the total.
fn print_table(rows: &[Row], started: Instant) {
    println!("\n| fault | tries | survived | measured |\n|---|---|---|---|");
    for r in rows {
        println!(
            "| {} | {} | {} | {} |",
            r.fault, r.tries, r.survived, r.detail
        );
    }
    let total: usize = rows.iter().map(|r| r.tries).sum();
    let ok: usize = rows.iter().map(|r| r.survived).sum();
    println!(
        "\n{ok} of {total} tries survived, in {:.0} s.",
        started.elapsed().as_secs_f64()
    );
}
