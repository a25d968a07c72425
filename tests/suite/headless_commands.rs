//! `pith run` routes slash commands through the same table as the TUI: an unknown command or an
//! empty prompt is refused (exit 2) without a request to the model; a path is a prompt.

use crate::support;

use support::MockServer;
use support::openai;
use support::pith::{PithEnv, stderr, stdout};

fn user_texts(server: &MockServer) -> Vec<String> {
    let body = server.request_body(server.requests().len() - 1);
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(support::message_text)
        .collect()
}

#[tokio::test]
async fn an_unknown_command_is_refused_without_a_request() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 128_000, 16_000, "");
    let out = env.run(&["run", "/nosuchcmd foo"]).await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(stderr(&out), "pith: error: unknown command /nosuchcmd\n");
    assert_eq!(stdout(&out), "");
    let out = env.run(&["run", "/compcat", "now"]).await;
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "pith: error: unknown command /compcat (did you mean /compact?)\n"
    );
    // a TUI-only command is refused too
    let out = env.run(&["run", "/model", "x/y"]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("/model works in the TUI only"),
        "{}",
        stderr(&out)
    );
    assert!(server.requests().is_empty(), "nothing was sent");
    let list = env.run(&["sessions", "list"]).await;
    assert_eq!(stdout(&list).lines().count(), 1, "no session was created");
}

#[tokio::test]
async fn an_empty_prompt_is_refused_like_empty_stdin() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 128_000, 16_000, "");
    for args in [&["run", ""][..], &["run", "  ", "\t"][..]] {
        let out = env.run(args).await;
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert_eq!(stderr(&out), "pith: error: the prompt is empty\n");
    }
    let mut cmd = env.command(&["run", "-"]);
    cmd.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    {
        use tokio::io::AsyncWriteExt;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(b"  \n").await.unwrap();
    }
    let out = child.wait_with_output().await.unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "pith: error: the prompt read from stdin is empty\n"
    );
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn a_path_is_a_prompt_and_compact_is_a_command() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 128_000, 16_000, "");
    server.push(openai::text("it is a symlink", Some((1000, 5))));
    let out = env.run(&["run", "/usr/bin/foo is broken"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(user_texts(&server), ["/usr/bin/foo is broken"]);
    // `/compact` on a session with nothing to compact sends nothing either
    let out = env.run(&["-c", "run", "/compact"]).await;
    assert_ne!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        !stderr(&out).contains("unknown command"),
        "{}",
        stderr(&out)
    );
}

/// `pith run -c /context` answers as the editor front end does: a table of what fills the
/// context of the last session, with no request to the model (it was "TUI only").
#[tokio::test]
async fn run_context_prints_the_breakdown_table() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 128_000, 16_000, "");
    server.push(openai::text("hello there", Some((12_345, 5))));
    let out = env.run(&["run", "say hello"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = env.run(&["run", "-c", "/context"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.starts_with("Context: 12,350 of 128,000 tokens in use."),
        "{text}"
    );
    for row in [
        "| system prompt |",
        "| tool definitions |",
        "| messages |",
        "| free |",
    ] {
        assert!(text.contains(row), "{text}");
    }
    assert_eq!(server.requests().len(), 1, "no request for /context");
}

/// `pith config` shows the built-in permission rules under the user's (as comments, so the
/// output stays a config file): what is asked and allowed without a config.
#[tokio::test]
async fn config_shows_the_built_in_permission_defaults() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 128_000, 16_000, "");
    let out = env.run(&["config"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("# Built-in permission rules"), "{text}");
    for rule in [
        "#   bash: * = ask",
        "#   read: * = allow, *.env = ask, *.env.* = ask, *.env.example = allow",
        "#   webfetch: * = ask",
    ] {
        assert!(text.contains(rule), "{rule}\n{text}");
    }
}

/// `pith run -c "/pin …"` pins a line in the last session with no request to the model, and
/// prints the pins; `/context` shows their row and each pin; the next turn carries the pin
/// word for word; a refused pin is an error line and exit 1.
#[tokio::test]
async fn run_pin_pins_in_the_last_session_and_context_shows_it() {
    const PIN: &str = "the staging API listens on port 8443";
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 128_000, 16_000, "");
    server.push(openai::text("hello there", Some((12_345, 5))));
    let out = env.run(&["run", "say hello"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = env.run(&["run", "-c", &format!("/pin {PIN}")]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.starts_with("Pinned ("), "{text}");
    assert!(text.contains(&format!("1. {PIN} (")), "{text}");
    assert_eq!(server.requests().len(), 1, "no request for /pin");
    // a pin belongs to a session: a new one is not made for it
    let out = env.run(&["run", "/pin something"]).await;
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    assert!(stderr(&out).contains("pith run -c"), "{}", stderr(&out));

    let out = env.run(&["run", "-c", "/pin two\nlines"]).await;
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("pin refused: a pin is one line"),
        "{}",
        stderr(&out)
    );

    let out = env.run(&["run", "-c", "/context"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("| pinned by you (/pin) |"), "{text}");
    assert!(text.contains(&format!("1. {PIN} (")), "{text}");

    server.push(openai::text("ok", Some((12_400, 2))));
    let out = env.run(&["run", "-c", "and now?"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let body = server.request_body(server.requests().len() - 1).to_string();
    assert!(body.contains(&format!("1. {PIN}")), "{body}");
}
