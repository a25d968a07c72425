//! Helpers for fault-injection tests: waiting for the mock, signalling pith, watching processes,
//! a file-size limit standing in for a full disk. The two that run the built binary
//! (`run_sleepers`, `compactable_session`) are in `tests/support/pith.rs`.

use std::time::Duration;

use serde_json::json;

use super::mock::{MockResponse, MockServer};
use super::openai as oa;

/// Waits until the mock has received `n` requests; false after `secs` seconds.
pub async fn requests_reach(server: &MockServer, n: usize, secs: u64) -> bool {
    for _ in 0..secs * 100 {
        if server.requests().len() >= n {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    false
}

/// Waits until the mock has received `n` requests (panics after 20 s).
pub async fn wait_for_requests(server: &MockServer, n: usize) {
    assert!(
        requests_reach(server, n, 20).await,
        "the mock never received request {n}"
    );
}

/// Sends `sig` to a process (pith, or one a command left behind).
pub fn signal_pid(pid: i32, sig: i32) {
    // SAFETY: sending a signal to a process this test started.
    unsafe {
        libc::kill(pid, sig);
    }
}

/// Sends `sig` to a running child.
pub fn signal(child: &tokio::process::Child, sig: i32) {
    signal_pid(child.id().expect("running") as i32, sig);
}

/// Whether `pid` is a live process (a zombie waiting to be reaped counts as dead).
pub fn running(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z')),
        Err(_) => false,
    }
}

/// Makes every file the command writes stop growing at `bytes` (a full disk, for the writes
/// that pass it).
pub fn limit_file_size(cmd: &mut tokio::process::Command, bytes: u64) {
    // SAFETY: setrlimit in the child before exec.
    unsafe {
        cmd.pre_exec(move || {
            let rl = libc::rlimit {
                rlim_cur: bytes,
                rlim_max: bytes,
            };
            libc::setrlimit(libc::RLIMIT_FSIZE, &rl);
            Ok(())
        });
    }
}

/// A big answer: `chunks` chunks `[NN]yyyy…` of `size` 'y's each, `ms` apart.
pub fn big_answer(chunks: usize, size: usize, ms: u64) -> MockResponse {
    let frames: Vec<String> = (0..chunks)
        .map(|i| {
            oa::frame(&oa::delta_chunk(
                json!({"content": format!("[{i:02}]{}", "y".repeat(size))}),
                None,
            ))
        })
        .chain([
            oa::frame(&oa::delta_chunk(json!({}), Some("stop"))),
            oa::done(),
        ])
        .collect();
    MockResponse::sse(frames).delay_ms(ms)
}

/// A text answer of `n` words `wordN `, `ms` apart.
pub fn slow_words(n: usize, ms: u64) -> MockResponse {
    let mut frames: Vec<String> = (0..n)
        .map(|i| {
            oa::frame(&oa::delta_chunk(
                json!({"content": format!("word{i} ")}),
                None,
            ))
        })
        .collect();
    frames.push(oa::frame(&oa::delta_chunk(json!({}), Some("stop"))));
    frames.push(oa::done());
    MockResponse::sse(frames).delay_ms(ms)
}

/// The name [`sleepers`] gives its sleeps (their argv[0]); also in its shell's command line.
/// Commands may run in a PID namespace of their own, so their pids are found from outside by
/// this name, not by what `$!` says inside.
pub(crate) fn sleeper_marker(pids: &std::path::Path) -> String {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    std::hash::Hash::hash(&pids, &mut h);
    format!("pith-sleeper-{:x}", std::hash::Hasher::finish(&h))
}

/// A bash command that starts two background sleeps and waits; it writes an empty line to
/// `pids` once they started.
pub fn sleepers(pids: &std::path::Path) -> String {
    let sleep = format!("bash -c 'exec -a {} sleep 300'", sleeper_marker(pids));
    format!(
        "{sleep} & {sleep} & echo >> {p}; echo >> {p}; wait",
        p = pids.display()
    )
}

/// The processes whose argv[0] is `marker` (seen from outside any PID namespace): a command a
/// test started under a name of its own (`exec -a MARKER …`).
pub fn started_as(marker: &str) -> Vec<i32> {
    processes(|cmd| cmd.starts_with(marker.as_bytes()))
}

/// The running processes whose command line (`/proc/PID/cmdline`) passes `keep`.
fn processes(keep: impl Fn(&[u8]) -> bool) -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            keep(&cmd) && running(*pid)
        })
        .collect()
}

/// The processes whose command line holds `marker`.
fn marked(marker: &str) -> Vec<i32> {
    processes(|cmd| cmd.windows(marker.len()).any(|w| w == marker.as_bytes()))
}

/// The pids of [`sleepers`]' shell and its two sleeps, once all three run (panics after 20 s).
pub async fn sleeper_pids(pids: &std::path::Path) -> Vec<i32> {
    let marker = sleeper_marker(pids);
    for _ in 0..2000 {
        if std::fs::read_to_string(pids).is_ok_and(|t| t.ends_with("\n\n")) {
            let found = marked(&marker);
            if found.len() >= 3 {
                return found;
            }
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("{} never appeared", pids.display());
}

/// Waits until none of `pids` runs (false after 5 s); returns those still running.
pub async fn survivors(pids: &[i32]) -> Vec<i32> {
    let mut alive = pids.to_vec();
    for _ in 0..500 {
        alive.retain(|&p| running(p));
        if alive.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    alive
}
