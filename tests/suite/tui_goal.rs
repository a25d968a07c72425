//! A long `/goal` in the real TUI, in tmux (ARCHITECTURE.md §5.2): typed in the composer, it runs
//! twenty-two turns against the scripted model, each checked by the model, and the status bar
//! ends on `✓ goal met`; `/goal` then says where it stands.

use crate::support;

use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::tui_e2e::{open, quit, status_line, write_config};
use support::{MockServer, openai};

#[test]
fn a_long_goal_runs_until_the_model_says_met_in_tmux() {
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("SKIPPED: tmux is not installed (.ci/run installs it)");
        return;
    }
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let server = rt.block_on(MockServer::start());
    let data = tempfile::tempdir().expect("tempdir");
    let work = tempfile::tempdir().expect("tempdir");
    let checks = Arc::new(AtomicUsize::new(0));
    let n = checks.clone();
    server.respond_with(move |body| {
        let last = body["messages"].as_array().unwrap().last().unwrap();
        if support::message_text(last).contains("pith checks whether the user's goal is met") {
            let k = n.fetch_add(1, Ordering::SeqCst) + 1;
            let answer = if k >= 22 {
                "MET: every part is written".to_string()
            } else {
                format!("CONTINUE: part {} is next", k + 1)
            };
            return openai::text(&answer, Some((2_000, 10)));
        }
        openai::text("Wrote the next part.", Some((2_000, 10)))
    });
    let config = write_config(data.path(), &server.openai_base_url());
    let cmd = format!(
        "env PITH_DATA_DIR='{}' PITH_CONFIG='{}' HOME='{}' TERM=xterm-256color '{}'; sleep 30",
        data.path().display(),
        config.display(),
        work.path().display(),
        env!("CARGO_BIN_EXE_pith")
    );
    let session = open(
        &format!("pith-e2e-goal-{}", std::process::id()),
        work.path(),
        &cmd,
    );
    session.wait_for("the status bar", 40, |s| status_line(s).contains("idle"));
    session.type_text("/goal write all parts --budget 30 turns");
    session.keys(&["Enter"]);
    let screen = session.wait_for("the goal met", 60, |s| {
        status_line(s).contains("✓ goal met") && status_line(s).contains("idle")
    });
    assert_eq!(checks.load(Ordering::SeqCst), 22, "{screen}");
    assert!(screen.contains("goal check (model): met"), "{screen}");
    session.type_text("/goal");
    session.keys(&["Enter"]);
    session.wait_for("/goal's answer", 30, |s| {
        s.contains("goal (met, turn 22 of 30)")
    });
    quit(&session);
    drop(rt);
}
