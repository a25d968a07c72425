//! An MCP server's form in the real binary in tmux: the scripted model calls a tool of the
//! eliciting server (the official Python SDK), the form opens over the transcript with the
//! server's defaults, the user edits a field and submits with Enter, and the server gets what
//! the user typed.

use crate::support;

use std::process::Command;

use support::{MockServer, mcp, openai};

use super::tui_e2e::{open, quit};

#[test]
fn a_servers_form_is_filled_in_and_submitted_in_the_tui() {
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("SKIPPED: tmux is not installed (.ci/run installs it)");
        return;
    }
    let Some(py) = mcp::python() else { return };
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let server = rt.block_on(MockServer::start());
    server.push(openai::tool_calls(
        &[("c1", "e_configure", "{}")],
        Some((2_000, 10)),
    ));
    server.push(openai::text("Deployed as asked.", Some((2_000, 10))));
    let data = tempfile::tempdir().expect("tempdir");
    let work = tempfile::tempdir().expect("tempdir");
    let config = write_config(&py, &server, data.path());
    let cmd = format!(
        "env PITH_DATA_DIR='{}' PITH_CONFIG='{}' HOME='{}' TERM=xterm-256color '{}'; echo \"EXIT=$?\"; sleep 60",
        data.path().display(),
        config.display(),
        work.path().display(),
        env!("CARGO_BIN_EXE_pith"),
    );
    let name = format!("pith-elicit-{}", std::process::id());
    let session = open(&name, work.path(), &cmd);
    let _ = Command::new("tmux")
        .args(["resize-window", "-t", &name, "-x", "110", "-y", "34"])
        .output();
    session.wait_for("the composer", 20, |s| s.contains("Ask pith anything"));
    session.wait_for("the server ready", 30, |s| !s.contains("mcp 0/1"));

    session.type_text("deploy staging");
    session.keys(&["Enter"]);
    let screen = session.wait_for("the form", 40, |s| s.contains("MCP server e asks"));
    assert!(
        screen.contains("How should staging be deployed?"),
        "{screen}"
    );
    assert!(
        screen.contains("[ v1"),
        "the default is filled in: {screen}"
    );
    // the name: "v1" becomes "rc2"; replicas: 2 becomes 5; notify: toggled off
    session.keys(&["BSpace", "BSpace"]);
    session.type_text("rc2");
    session.keys(&["Tab", "BSpace"]);
    session.type_text("5");
    session.keys(&["Tab", "Space", "Enter"]);
    session.wait_for("the answer", 40, |s| s.contains("Deployed as asked."));
    let screen = session.screen();
    assert!(
        screen.contains("answered MCP server e's question"),
        "{screen}"
    );
    let body = server.request_body(1);
    let result = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string();
    assert_eq!(
        result,
        r#"accept: {"env": "dev", "name": "rc2", "notify": false, "replicas": 5}"#
    );
    quit(&session);
    session.wait_for("pith to exit", 20, |s| s.contains("EXIT="));
}

/// The config: the mock model, the eliciting server as `e` with its tools allowed.
fn write_config(py: &str, server: &MockServer, dir: &std::path::Path) -> std::path::PathBuf {
    // an absolute path: the test's HOME hides pyenv's shims
    let out = Command::new(py)
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .unwrap();
    let py = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("crates/pith-test-support/mcp/elicit_server.py");
    let config = dir.join("pith.toml");
    std::fs::write(
        &config,
        format!(
            r#"model = "mock/mock-model"

[mcp.e]
command = {py:?}
args = [{script:?}]

[permission]
e = "allow"

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
    config
}
