//! Background jobs with the real binary and the scripted model (ARCHITECTURE.md §5.3): a dev
//! server started with `background: true` answers `curl` from a second command, is listed,
//! read, stopped and gone; `pith run` ends what it started and says so; a job dies with pith
//! even when pith is killed outright; an "ask" rule asks for a background command as for any.

use crate::support;

use std::time::Duration;

use serde_json::{Value, json};
use support::faults::{running, signal, started_as};
use support::openai as oa;
use support::pith::{PithEnv, of_type, stderr};
use support::{MockResponse, MockServer};

/// Background jobs on, and a network commands may use (a server must listen, `curl` reach it).
const JOBS: &str = "sandbox_network = true\n\n[jobs]\nmax = 4\n";

async fn until(what: &str, secs: u64, f: impl Fn() -> bool) {
    let start = std::time::Instant::now();
    while start.elapsed() < Duration::from_secs(secs) {
        if f() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{what}: not within {secs} s");
}

fn marker() -> String {
    format!("pith-job-e2e-{}", pith_protocol::message::new_id())
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The result of the last tool call request `i` carries.
fn result_in(server: &MockServer, i: usize) -> String {
    server.request_body(i)["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rfind(|m| m["role"] == "tool")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string()
}

fn call(id: &str, tool: &str, args: Value) -> MockResponse {
    oa::tool_calls(&[(id, tool, &args.to_string())], None)
}

/// The scripted model starts a dev server in the background, queries it with curl from a
/// second bash call, reads its log, stops it and queries again: the server answered, its log
/// holds the request, the list said it ran and then that it was killed, and nothing of it is
/// left.
#[tokio::test]
async fn a_dev_server_started_in_the_background_answers_curl_and_is_stopped() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 128_000, 16_000, JOBS);
    std::fs::write(env.path().join("hello.txt"), "hello from the workspace\n").unwrap();
    let (m, port) = (marker(), free_port());
    let serve = format!("exec -a {m} python3 -u -m http.server {port} --bind 127.0.0.1");
    let url = format!("http://127.0.0.1:{port}/hello.txt");
    // (the server may take a moment to listen: curl retries on refusal)
    let curl =
        format!("curl -sS --retry 20 --retry-connrefused --retry-delay 0 --max-time 20 {url}");
    server.push(call(
        "c1",
        "bash",
        json!({"command": serve, "background": true}),
    ));
    server.push(call("c2", "bash", json!({"command": curl})));
    server.push(call("c3", "job_output", json!({"id": 1})));
    server.push(call("c4", "job_kill", json!({"id": 1})));
    server.push(call(
        "c5",
        "bash",
        json!({"command": format!("curl -sS --max-time 5 {url} || echo refused")}),
    ));
    server.push(oa::text("the server worked", Some((100, 5))));
    let (out, events) = env.run_json(&["--yes", "start the dev server"]).await;
    assert!(out.status.success(), "{}", stderr(&out));

    let started = result_in(&server, 1);
    assert!(started.contains("Background job 1 started"), "{started}");
    assert!(result_in(&server, 2).contains("hello from the workspace"));
    let log = result_in(&server, 3);
    assert!(log.contains("GET /hello.txt"), "{log}");
    assert!(log.contains("[job 1 running for"), "{log}");
    assert!(!log.contains("Background job"), "only what is new");
    assert!(result_in(&server, 4).starts_with("Stopped job 1"));
    assert!(
        result_in(&server, 5).contains("refused"),
        "{}",
        result_in(&server, 5)
    );
    assert!(
        std::net::TcpStream::connect(("127.0.0.1", port)).is_err(),
        "the server outlived job_kill"
    );
    assert!(
        started_as(&m).is_empty(),
        "{:?} outlived job_kill",
        started_as(&m)
    );
    // the list as the front ends saw it: running, then killed
    let lists: Vec<&Value> = of_type(&events, "jobs");
    let states: Vec<&str> = lists
        .iter()
        .filter_map(|e| e["jobs"][0]["state"]["state"].as_str())
        .collect();
    assert_eq!(states.first(), Some(&"running"), "{lists:?}");
    assert_eq!(states.last(), Some(&"killed"), "{lists:?}");
    assert!(
        lists[0]["jobs"][0]["command"]
            .as_str()
            .unwrap()
            .contains(&m)
    );
    // killed by the model: nothing left for the run to end
    assert!(!stderr(&out).contains("background job"), "{}", stderr(&out));
}

/// `pith run` does not wait for what it started in the background: the turn ends, the job is
/// ended with the run, and stderr says which.
#[tokio::test]
async fn pith_run_ends_its_jobs_at_exit_and_says_so() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 128_000, 16_000, JOBS);
    let m = marker();
    let ticker =
        format!("bash -c 'exec -a {m} sleep 600' & while true; do echo tick; sleep 0.2; done");
    server.push(call(
        "c1",
        "bash",
        json!({"command": ticker, "background": true}),
    ));
    server.push(oa::text("started it", Some((100, 5))));
    let t = std::time::Instant::now();
    let out = env.run(&["run", "--yes", "start a watcher"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        t.elapsed() < Duration::from_secs(30),
        "it did not wait for the job"
    );
    let err = stderr(&out);
    assert!(
        err.contains("ended 1 background job: bash -c 'exec -a"),
        "{err}"
    );
    until("the job's processes end with the run", 10, || {
        started_as(&m).is_empty()
    })
    .await;
}

/// pith killed with SIGKILL (nothing of it runs to end anything) while a background job runs:
/// the job's processes die with it, as every command's do.
#[tokio::test]
async fn a_job_dies_with_pith_even_when_pith_is_killed() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 128_000, 16_000, JOBS);
    let m = marker();
    let job = format!("setsid bash -c 'exec -a {m} sleep 600' & exec -a {m} sleep 600");
    server.push(call(
        "c1",
        "bash",
        json!({"command": job, "background": true}),
    ));
    // the next answer never ends: pith is mid-turn, the job running, when it is killed
    server.push(MockResponse::sse(Vec::new()).hold_open());
    let child = env.spawn(&["run", "--yes", "start it and wait"]);
    until("the job runs", 30, || started_as(&m).len() >= 2).await;
    until("pith asks again", 30, || server.requests().len() >= 2).await;
    let pids = started_as(&m);
    signal(&child, libc::SIGKILL);
    let _ = child.wait_with_output().await;
    until("the job's processes die with pith", 10, || {
        pids.iter().all(|&p| !running(p))
    })
    .await;
}

/// Permission rules apply to a background command as to any: without `--yes` or a rule the
/// default "ask" refuses it headless, and nothing starts.
#[tokio::test]
async fn an_ask_rule_covers_a_background_command() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 128_000, 16_000, JOBS);
    let m = marker();
    server.push(call(
        "c1",
        "bash",
        json!({"command": format!("exec -a {m} sleep 600"), "background": true}),
    ));
    server.push(oa::text("could not", Some((100, 5))));
    let out = env.run(&["run", "start it"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let refused = result_in(&server, 1);
    assert!(!refused.contains("Background job"), "{refused}");
    assert!(started_as(&m).is_empty(), "nothing started");
    // and a deny rule holds under --yes
    let env = PithEnv::new(
        &server.url(),
        128_000,
        16_000,
        &format!("{JOBS}\n[permission.bash]\n\"exec *\" = \"deny\"\n"),
    );
    server.push(call(
        "c1",
        "bash",
        json!({"command": format!("exec -a {m} sleep 600"), "background": true}),
    ));
    server.push(oa::text("could not", Some((100, 5))));
    let out = env.run(&["run", "--yes", "start it"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(started_as(&m).is_empty(), "nothing started");
    let last = server.requests().len() - 1;
    assert!(!result_in(&server, last).contains("Background job"));
}

/// A job still running when the context is compacted is carried across it: the request after
/// the compaction names it (id, command, last line) so the model can still read or stop it.
#[tokio::test]
async fn a_running_job_is_carried_across_a_compaction() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 20_000, 4_000, JOBS);
    let m = marker();
    let ticker =
        format!("bash -c 'exec -a {m} sleep 600' & while true; do echo tick-{m}; sleep 0.2; done");
    // the step that starts it fills the window: pith compacts before the next step
    server.push(oa::tool_calls(
        &[(
            "c1",
            "bash",
            &json!({"command": ticker, "background": true}).to_string(),
        )],
        Some((15_000, 1_500)),
    ));
    server.push(oa::text(
        "The user asked for a watcher; it was started.",
        Some((9_000, 300)),
    ));
    server.push(oa::text("watching", Some((2_000, 5))));
    server.push(oa::text("still watching", Some((2_000, 5))));
    let out = env.run(&["run", "--yes", "start a watcher"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    // the step after the compaction starts from the summary and pith's own record
    let n = server.requests().len();
    let after = server.request_body(n - 1).to_string();
    assert!(
        !after.contains("\"c1\""),
        "the step that started it was compacted"
    );
    assert!(after.contains("Background jobs still running"), "{after}");
    assert!(after.contains("job 1: `bash -c 'exec -a"), "{after}");
    assert!(after.contains("last printed: tick-pith-job-e2e"), "{after}");
    until("the job's processes end with the run", 10, || {
        started_as(&m).is_empty()
    })
    .await;
}
