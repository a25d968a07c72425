//! `pith run` and the printing commands write no terminal control sequences, whatever the model,
//! a tool, a path or a hostile workspace config puts in the text: run through the real binary.

use crate::support;

use serde_json::{Value, json};
use support::MockServer;
use support::openai;
use support::pith::{PithEnv, stderr, stdout};

/// OSC 52 (set the clipboard), OSC 0 (set the title), clear screen, a C1 CSI, a bell, a CR
/// overwrite and DEL.
const HOSTILE: &str =
    "\u{1b}]52;c;SGVsbG8=\u{7}\u{1b}]0;pwned\u{7}\u{1b}[2J\u{9b}31m\r\u{7f}\u{85}\u{8}";

/// The bytes no output of pith may carry: every C0 control but newline and tab, DEL, C1.
fn assert_clean(what: &str, text: &str) {
    for c in text.chars() {
        let bad = (c.is_control() && c != '\n' && c != '\t') || c == '\u{7f}';
        assert!(!bad, "{what} carries control {c:?}: {text:?}");
    }
}

/// Text whose escape sequences are split across deltas: an ESC ends one piece and `]52;…` starts
/// the next.
fn split_escape_text(before: &str, after: &str) -> support::MockResponse {
    let pieces = [
        before.to_string(),
        "\u{1b}".to_string(),
        "]52;c;SGVsbG8=\u{7}".to_string(),
        HOSTILE.to_string(),
        "\u{1b}".to_string(),
        "[2J".to_string(),
        after.to_string(),
    ];
    let mut chunks = vec![openai::delta_chunk(
        json!({"role": "assistant", "content": ""}),
        None,
    )];
    for p in pieces {
        chunks.push(openai::delta_chunk(json!({ "content": p }), None));
    }
    chunks.push(openai::delta_chunk(json!({}), Some("stop")));
    openai::chunks(chunks)
}

/// A turn whose first step calls tools with hostile names, commands and paths, and whose answer
/// is hostile text.
fn hostile_turn(server: &MockServer) {
    let bash = json!({ "command": format!("echo hi{HOSTILE} > /dev/null") }).to_string();
    let read = json!({ "file_path": format!("x{HOSTILE}.txt") }).to_string();
    server.push(openai::text_and_tool_calls(
        &format!("let me look{HOSTILE}\n"),
        &[
            ("call_1", "bash", &bash),
            ("call_2", "read", &read),
            ("call_3", "no\u{1b}]0;t\u{7}tool", "{}"),
        ],
        Some((1000, 10)),
    ));
    server.push(split_escape_text("visible ", " answer"));
}

#[tokio::test]
async fn text_output_carries_no_control_sequences() {
    let server = MockServer::start().await;
    server.allow_invalid();
    let env = PithEnv::new(&server.url(), 128_000, 16_000, "");
    hostile_turn(&server);
    let out = env.run(&["run", "look around"]).await;
    let (o, e) = (stdout(&out), stderr(&out));
    assert_clean("stdout", &o);
    assert_clean("stderr", &e);
    assert!(o.contains("visible"), "{o:?}");
    assert!(o.contains("answer"), "{o:?}");
    assert!(e.contains("· read x.txt"), "the call is still shown: {e:?}");
    assert!(
        e.contains("echo hi"),
        "the refused command is still named: {e:?}"
    );
}

#[tokio::test]
async fn json_output_escapes_del_and_c1_and_keeps_the_text() {
    let server = MockServer::start().await;
    server.allow_invalid();
    let env = PithEnv::new(&server.url(), 128_000, 16_000, "");
    hostile_turn(&server);
    let (out, events) = env.run_json(&["look around"]).await;
    assert_clean("json stdout", &stdout(&out));
    assert_clean("stderr", &stderr(&out));
    // the events still carry the text as the model wrote it: only the escaping changed
    let text: String = events
        .iter()
        .filter(|e| e["type"] == "text_delta")
        .map(|e| e["delta"].as_str().unwrap_or("").to_string())
        .collect();
    assert!(text.contains(HOSTILE), "{text:?}");
    assert!(stdout(&out).contains("\\u009b"), "C1 escaped as \\u009b");
    assert!(stdout(&out).contains("\\u007f"), "DEL escaped as \\u007f");
}

/// A cloned repository's `pith.toml` with an escape in an `[mcp."…"]` key (a bad name): what pith
/// says of it (before any trust decision: the key is ignored, named in a warning) must not set
/// the clipboard.
#[tokio::test]
async fn a_hostile_workspace_config_error_is_printed_clean() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 128_000, 16_000, "");
    std::fs::write(
        env.path().join("pith.toml"),
        "[mcp.\"\\u001b]52;c;SGVsbG8=\\u0007x\\u009b2J\"]\ncommand = \"x\"\n",
    )
    .unwrap();
    server.push(openai::text("hello", None));
    for args in [&["run", "hi"][..], &["config"][..], &["mcp", "list"][..]] {
        let out = env.run(args).await;
        assert_clean(&format!("stdout of {args:?}"), &stdout(&out));
        assert_clean(&format!("stderr of {args:?}"), &stderr(&out));
        // said once per directory: by the first command
        if args[0] == "run" {
            assert!(stderr(&out).contains("pith.toml"), "{}", stderr(&out));
        }
    }
}

/// A session whose title and history hold escapes: `sessions list` and `export --format md` print
/// them clean, the JSON export escapes DEL and C1.
#[tokio::test]
async fn sessions_list_and_export_print_clean() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 128_000, 16_000, "");
    server.push(openai::text(&format!("answer{HOSTILE}"), Some((1000, 5))));
    let prompt = format!("title{HOSTILE}");
    let out = env.run(&["run", &prompt]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let list = env.run(&["sessions", "list"]).await;
    assert_clean("sessions list", &stdout(&list));
    let id = stdout(&list)
        .lines()
        .nth(1)
        .and_then(|l| l.split_whitespace().next())
        .unwrap()
        .to_string();
    let md = env
        .run(&["sessions", "export", &id, "--format", "md"])
        .await;
    assert!(md.status.success(), "{}", stderr(&md));
    assert_clean("export md", &stdout(&md));
    assert!(stdout(&md).contains("answer"));
    let js = env.run(&["sessions", "export", &id]).await;
    assert_clean("export json", &stdout(&js));
    let v: Value = serde_json::from_slice(&js.stdout).unwrap();
    assert!(
        v.to_string().contains('\u{9b}'),
        "the data is kept, escaped"
    );
}

/// A start-up warning is said once per directory, as the README promises, in one style
/// (`pith: warning: …`): the unknown-model warning used to repeat on every run, unprefixed.
#[tokio::test]
async fn the_unknown_model_warning_is_said_once_per_directory() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 128_000, 16_000, "");
    for _ in 0..3 {
        server.push(openai::text("ok", Some((100, 2))));
    }
    let first = env.run(&["run", "-m", "mock/mystery-7b", "hi"]).await;
    assert!(first.status.success(), "{}", stderr(&first));
    assert!(
        stderr(&first).contains("pith: warning: unknown model \"mock/mystery-7b\""),
        "{}",
        stderr(&first)
    );
    let second = env.run(&["run", "-m", "mock/mystery-7b", "hi"]).await;
    assert!(second.status.success(), "{}", stderr(&second));
    assert!(
        !stderr(&second).contains("unknown model"),
        "said again: {}",
        stderr(&second)
    );
}
