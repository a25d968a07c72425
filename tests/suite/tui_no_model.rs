//! Issue 38: with no model (the first-run key dialog skipped), `/model` starts the session at
//! once — the next prompt reaches the chosen model — and remembers the model as the default in
//! the global config file, its comments kept. Real binary in tmux against the mock.

use std::process::Command;
use std::time::Duration;

use super::tui_e2e::{open, quit, status_line};
use crate::support::{MockServer, openai};

#[test]
fn slash_model_from_the_no_model_state_switches_and_is_remembered() {
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("SKIPPED: tmux is not installed (.ci/run installs it)");
        return;
    }
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let server = rt.block_on(MockServer::start());
    server.push(openai::text("Hello from the chosen model.", Some((900, 8))));
    let data = tempfile::tempdir().expect("tempdir");
    let home = tempfile::tempdir().expect("tempdir");
    let work = tempfile::tempdir().expect("tempdir");
    let global = home.path().join(".config/pith");
    std::fs::create_dir_all(&global).unwrap();
    let config = global.join("config.toml");
    // a keyless local provider, and no model
    std::fs::write(
        &config,
        format!(
            "# my own settings\n[provider.mock]\nkind = \"openai\"\nbase_url = \"{}\" # the local one\n\n[models.\"mock/mock-model\"]\ncontext = 32000\noutput = 4000\n",
            server.openai_base_url()
        ),
    )
    .unwrap();
    let bin = env!("CARGO_BIN_EXE_pith");
    let cmd = format!(
        "env -i PATH=\"$PATH\" PITH_DATA_DIR='{}' HOME='{}' XDG_CONFIG_HOME='{}/.config' TERM=xterm-256color '{}'; \
         echo \"EXIT=$?\"; sleep 60",
        data.path().display(),
        home.path().display(),
        home.path().display(),
        bin
    );
    let session = open(
        &format!("pith-e2e-nomodel-{}", std::process::id()),
        work.path(),
        &cmd,
    );
    let screen = session.wait_for("the first-run question", 20, |s| {
        s.contains("paste an API key") || s.contains("Use the local model server")
    });
    std::thread::sleep(Duration::from_millis(600));
    if screen.contains("Use the local model server") {
        // another test's look-alike server on :8080: not this one
        session.keys(&["n"]);
        session.wait_for("the key dialog", 20, |s| s.contains("paste an API key"));
        std::thread::sleep(Duration::from_millis(600));
    }
    session.keys(&["Escape"]);
    session.wait_for("the TUI without a model", 20, |s| {
        status_line(s).contains("no model")
    });
    session.type_text("/model mock/mock-model");
    std::thread::sleep(Duration::from_millis(300));
    session.keys(&["Enter"]);
    let screen = session.wait_for("the switch", 20, |s| {
        s.contains("remembered as the default") || s.contains("cannot use")
    });
    assert!(!screen.contains("restart pith"), "{screen}");
    session.wait_for("the status bar", 20, |s| {
        status_line(s).contains("mock-model")
    });
    session.type_text("hi");
    std::thread::sleep(Duration::from_millis(300));
    session.keys(&["Enter"]);
    session.wait_for("the answer", 30, |s| {
        s.contains("Hello from the chosen model.")
    });
    assert_eq!(server.requests().len(), 1);
    assert_eq!(server.request_body(0)["model"], "mock-model");
    let written = std::fs::read_to_string(&config).unwrap();
    assert!(
        written.starts_with("model = \"mock/mock-model\"\n# my own settings\n"),
        "{written}"
    );
    assert!(written.contains("# the local one"), "{written}");
    quit(&session);
    session.wait_for("pith to exit", 10, |s| s.contains("EXIT="));
}
