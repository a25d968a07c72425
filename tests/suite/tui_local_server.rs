//! Issue 37: with nothing configured and no key, the TUI finds a local model server by probing
//! and names it in a question before anything but the probe reaches it; the answer is kept per
//! server. Real binary in tmux, a listener on llama.cpp's port (skipped when it is taken).

use std::io::{Read, Write};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::tui_e2e::{open, quit, status_line};

/// A llama.cpp look-alike on 127.0.0.1:8080 that names one model and records each request line.
fn listener() -> Option<Arc<Mutex<Vec<String>>>> {
    let listener = std::net::TcpListener::bind("127.0.0.1:8080").ok()?;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            let mut buf = [0u8; 8192];
            let n = conn.read(&mut buf).unwrap_or(0);
            let head = String::from_utf8_lossy(&buf[..n]);
            let line = head.lines().next().unwrap_or("").to_string();
            log.lock().unwrap().push(line);
            let body = r#"{"object":"list","data":[{"id":"listener-model","object":"model"}]}"#;
            let reply = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = conn.write_all(reply.as_bytes());
        }
    });
    Some(seen)
}

#[test]
fn a_probed_local_server_is_named_and_confirmed_once_before_it_is_used() {
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("SKIPPED: tmux is not installed (.ci/run installs it)");
        return;
    }
    let Some(seen) = listener() else {
        eprintln!("SKIPPED: 127.0.0.1:8080 is taken");
        return;
    };
    let data = tempfile::tempdir().expect("tempdir");
    let home = tempfile::tempdir().expect("tempdir");
    let work = tempfile::tempdir().expect("tempdir");
    let bin = env!("CARGO_BIN_EXE_pith");
    // A clean environment: no config, no key.
    let start = |name: &str| {
        let cmd = format!(
            "env -i PATH=\"$PATH\" PITH_DATA_DIR='{}' HOME='{}' XDG_CONFIG_HOME='{}/.config' TERM=xterm-256color '{}'; \
             echo \"EXIT=$?\"; sleep 60",
            data.path().display(),
            home.path().display(),
            home.path().display(),
            bin
        );
        open(name, work.path(), &cmd)
    };
    let session = start(&format!("pith-e2e-local-{}", std::process::id()));
    let screen = session.wait_for("the local server question", 20, |s| {
        s.contains("Use the local model server")
    });
    assert!(screen.contains("http://127.0.0.1:8080"), "{screen}");
    assert!(screen.contains("llamacpp/listener-model"), "{screen}");
    let before: Vec<String> = seen.lock().unwrap().clone();
    assert!(
        before.iter().all(|l| l.starts_with("GET /v1/models")),
        "only the probe before the answer: {before:?}"
    );
    std::thread::sleep(Duration::from_millis(600));
    session.keys(&["y"]);
    session.wait_for("the status bar", 20, |s| {
        status_line(s).contains("listener-model") && status_line(s).contains("idle")
    });
    quit(&session);
    session.wait_for("pith to exit", 10, |s| s.contains("EXIT=130"));
    let kept = std::fs::read_to_string(data.path().join("local-servers.json")).unwrap();
    assert!(kept.contains("http://127.0.0.1:8080"), "{kept}");

    // Confirmed once: the next start uses it without asking.
    let again = start(&format!("pith-e2e-local2-{}", std::process::id()));
    drop(session);
    let screen = again.wait_for("the status bar", 20, |s| {
        status_line(s).contains("idle") || s.contains("Use the local model server")
    });
    assert!(
        !screen.contains("Use the local model server"),
        "asked twice: {screen}"
    );
    quit(&again);
    again.wait_for("pith to exit", 10, |s| s.contains("EXIT=130"));
}
