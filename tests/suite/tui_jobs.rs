//! Background jobs in the real binary in tmux (README "Background jobs"): the scripted model
//! starts a dev server in the background and queries it with curl; `/ps` lists it, Delete stops
//! it and its processes are gone; a second job still running when the user quits ends with pith.

use crate::support;

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;
use support::faults::started_as;
use support::{MockServer, openai};

use super::tui_e2e::{open, quit};

fn until(what: &str, secs: u64, f: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while Instant::now() < deadline {
        if f() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("{what}: not within {secs} s");
}

/// Something listens on `port` (the dev server; `python3` may be a wrapper that renames it).
fn listening(port: u16) -> bool {
    std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
}

fn call(id: &str, tool: &str, args: serde_json::Value) -> support::MockResponse {
    openai::tool_calls(&[(id, tool, &args.to_string())], Some((2_000, 10)))
}

#[test]
fn a_dev_server_in_the_tui_is_listed_stopped_and_nothing_outlives_pith() {
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("SKIPPED: tmux is not installed (.ci/run installs it)");
        return;
    }
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let server = rt.block_on(MockServer::start());
    let id = pith_protocol::message::new_id();
    let (m1, m2) = (format!("pith-tui-srv-{id}"), format!("pith-tui-watch-{id}"));
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let serve = format!("exec -a {m1} python3 -u -m http.server {port} --bind 127.0.0.1");
    let curl = format!(
        "curl -sS --retry 20 --retry-connrefused --retry-delay 0 --max-time 20 http://127.0.0.1:{port}/hello.txt"
    );
    server.push(call(
        "c1",
        "bash",
        json!({"command": serve, "background": true}),
    ));
    server.push(call("c2", "bash", json!({"command": curl})));
    server.push(openai::text("The server answers.", Some((2_000, 10))));
    server.push(call(
        "c3",
        "bash",
        json!({"command": format!("exec -a {m2} sleep 600"), "background": true}),
    ));
    server.push(openai::text("The watcher runs.", Some((2_000, 10))));

    let data = tempfile::tempdir().expect("tempdir");
    let work = tempfile::tempdir().expect("tempdir");
    std::fs::write(work.path().join("hello.txt"), "hello from the workspace\n").unwrap();
    let config = data.path().join("pith.toml");
    std::fs::write(
        &config,
        format!(
            r#"model = "mock/mock-model"
sandbox_network = true

[jobs]
max = 4

[permission]
bash = "allow"

[provider.mock]
kind = "openai"
base_url = "{}"

[models."mock/mock-model"]
context = 32000
output = 4000
"#,
            server.openai_base_url()
        ),
    )
    .unwrap();
    let cmd = format!(
        "env PITH_DATA_DIR='{}' PITH_CONFIG='{}' HOME='{}' TERM=xterm-256color '{}'; echo \"EXIT=$?\"; sleep 60",
        data.path().display(),
        config.display(),
        work.path().display(),
        env!("CARGO_BIN_EXE_pith"),
    );
    let name = format!("pith-jobs-{}", std::process::id());
    let session = open(&name, work.path(), &cmd);
    let _ = Command::new("tmux")
        .args(["resize-window", "-t", &name, "-x", "140", "-y", "30"])
        .output();
    session.wait_for("the composer", 20, |s| s.contains("Ask pith anything"));

    session.type_text("start the dev server and try it");
    session.keys(&["Enter"]);
    let screen = session.wait_for("the answer", 40, |s| s.contains("The server answers."));
    assert!(screen.contains("hello from the workspace"), "{screen}");
    session.wait_for("the job counted", 10, |s| s.contains("⚙ 1 job"));
    assert!(listening(port), "the server runs");

    session.type_text("/ps");
    session.keys(&["Enter"]);
    // the picker's rows, not the slash popup's "/ps background jobs…" line typed a moment ago
    let screen = session.wait_for("the jobs", 30, |s| {
        s.contains("exec -a pith-tui-srv") && s.contains("running ·")
    });
    assert!(screen.contains("exec -a pith-tui-srv"), "{screen}");
    assert!(screen.contains("running ·"), "{screen}");
    session.keys(&["DC"]);
    session.wait_for("the job stopped", 15, |s| s.contains("killed ·"));
    until("the server ends", 10, || {
        !listening(port) && started_as(&m1).is_empty()
    });
    session.keys(&["Escape"]);
    session.wait_for("no job counted", 10, |s| !s.contains("⚙ 1 job"));

    // a second job, still running when the user quits
    session.type_text("start a watcher");
    session.keys(&["Enter"]);
    session.wait_for("the second answer", 40, |s| s.contains("The watcher runs."));
    until("the watcher runs", 10, || !started_as(&m2).is_empty());
    quit(&session);
    session.wait_for("pith to exit", 20, |s| s.contains("EXIT="));
    until("nothing pith started outlives it", 10, || {
        !listening(port) && started_as(&m2).is_empty()
    });
}
