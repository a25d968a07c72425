//! Interrupts in the real TUI, in tmux (issue 37 item 8).

use crate::support;

use std::process::Command;
use std::time::Duration;

use super::engine_interrupt::{command_gone, stopped_command};
use super::tui_e2e::{open, quit, status_line, write_config};
use support::{MockServer, openai};

/// Issue 37 item 8: Esc while a command runs (`touch started; sleep 3; touch after`) stops the
/// whole command at once: `after` is never created (read once nothing of the command can run
/// any more, see [`stopped_command`]).
#[test]
fn esc_during_a_command_stops_it_before_its_next_statement_in_tmux() {
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("SKIPPED: tmux is not installed (.ci/run installs it)");
        return;
    }
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let server = rt.block_on(MockServer::start());
    let data = tempfile::tempdir().expect("tempdir");
    let work = tempfile::tempdir().expect("tempdir");
    server.push(openai::tool_calls(
        &[("call_slow", "bash", stopped_command(work.path()))],
        Some((2_000, 20)),
    ));
    let config = write_config(data.path(), &server.openai_base_url());
    let mut toml = std::fs::read_to_string(&config).expect("config");
    toml.push_str("\n[permission]\nbash = \"allow\"\n");
    std::fs::write(&config, toml).expect("config");
    let cmd = format!(
        "env PITH_DATA_DIR='{}' PITH_CONFIG='{}' HOME='{}' TERM=xterm-256color '{}'; sleep 30",
        data.path().display(),
        config.display(),
        work.path().display(),
        env!("CARGO_BIN_EXE_pith")
    );
    let session = open(
        &format!("pith-e2e-esc-{}", std::process::id()),
        work.path(),
        &cmd,
    );
    session.wait_for("the status bar", 20, |s| status_line(s).contains("idle"));
    session.type_text("wait a little");
    session.keys(&["Enter"]);
    let started = work.path().join("started");
    let begun = std::time::Instant::now();
    while !started.exists() && begun.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(started.exists(), "the command never started");
    let stopped = std::time::Instant::now();
    session.keys(&["Escape"]);
    session.wait_for("the turn to stop", 10, |s| status_line(s).contains("idle"));
    while !command_gone(work.path()) && stopped.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(command_gone(work.path()), "the command still runs");
    assert!(
        !work.path().join("after").exists(),
        "the statement after the interrupted one ran"
    );
    quit(&session);
    drop(rt);
}
