//! One policy at every door (issue 37), through the real binary: writing a protected path
//! (`.git` at any depth, `pith.toml`, the shell's start-up files when the workspace is `$HOME`)
//! is never approved by accept-edits, an allow rule, `--yes`, bypass or a hook; pith's own
//! state (trust store, sandbox-support cache, credentials) is refused to every tool; the
//! hard-link question is never auto-approved. Each test is an attack that got through before.

use crate::support;

use serde_json::{Value, json};
use support::MockServer;
use support::openai;
use support::pith::{PithEnv, last_tool_result, stderr};

/// The planted files that would run outside the sandbox later.
const PLANTS: &[&str] = &[
    ".git/config",
    ".git/hooks/post-commit",
    "sub/pith.toml",
    "a/b/.git/config",
];

const FSMONITOR: &str = "[core]\n\tfsmonitor = touch /tmp/pwned\n";

/// Queues, per path, a step that reads it (as a model must before overwriting a file) and
/// writes it (call `cN`) with an fsmonitor config, then "done".
fn queue_writes(server: &MockServer, paths: &[String]) {
    let writes: Vec<(String, &str)> = paths.iter().map(|p| (p.clone(), FSMONITOR)).collect();
    queue_writes_of(server, &writes);
}

/// Queues one step per `(path, content)` that reads it and writes it (call `cN`), then "done".
pub(super) fn queue_writes_of(server: &MockServer, writes: &[(String, &str)]) {
    for (i, (p, content)) in writes.iter().enumerate() {
        let read = json!({"file_path": p}).to_string();
        let write = json!({"file_path": p, "content": content}).to_string();
        let (r, c) = (format!("r{i}"), format!("c{i}"));
        server.push(openai::tool_calls(
            &[(&r, "read", &read), (&c, "write", &write)],
            None,
        ));
    }
    server.push(openai::text("done", None));
}

/// The results of the calls `cN` the model saw in the last request, in order.
pub(super) fn results(server: &MockServer) -> Vec<String> {
    let body = server.requests().last().unwrap().body.clone();
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .filter(|m| {
            m["tool_call_id"]
                .as_str()
                .is_some_and(|id| id.starts_with('c'))
        })
        .filter_map(|m| m["content"].as_str().map(str::to_string))
        .collect()
}

/// A workspace where the planted paths' folders exist (a repository with a nested one).
fn repo(env: &PithEnv) {
    for d in [".git/hooks", "sub", "a/b/.git"] {
        std::fs::create_dir_all(env.path().join(d)).unwrap();
    }
    std::fs::write(env.path().join(".git/config"), "[core]\n").unwrap();
}

fn assert_untouched(env: &PithEnv) {
    for p in PLANTS {
        let text = std::fs::read_to_string(env.path().join(p)).unwrap_or_default();
        assert!(!text.contains("fsmonitor"), "{p} was written: {text:?}");
    }
}

fn plants() -> Vec<String> {
    PLANTS.iter().map(|p| p.to_string()).collect()
}

#[tokio::test]
async fn accept_edits_does_not_write_git_or_pith_toml() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 128_000, 8_000, "");
    repo(&env);
    queue_writes(&server, &plants());
    let out = env
        .run(&["run", "--permission-mode", "accept-edits", "plant"])
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_untouched(&env);
    let seen = results(&server);
    assert_eq!(seen.len(), PLANTS.len(), "{seen:?}");
    for r in &seen {
        assert!(r.contains("is protected"), "{r}");
    }
}

#[tokio::test]
async fn an_allow_rule_and_yes_do_not_write_git_or_pith_toml() {
    let server = MockServer::start().await;
    let env = PithEnv::new(
        &server.url(),
        128_000,
        8_000,
        "[permission]\nwrite = \"allow\"\nedit = \"allow\"\n",
    );
    repo(&env);
    queue_writes(&server, &plants());
    let out = env.run(&["run", "plant"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_untouched(&env);
    queue_writes(&server, &plants());
    let out = env.run(&["run", "--yes", "plant"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_untouched(&env);
    for r in results(&server) {
        assert!(r.contains("--yes") && r.contains("protected"), "{r}");
    }
    // bypass is --yes
    queue_writes(&server, &plants());
    let out = env
        .run(&["run", "--permission-mode", "bypass", "plant"])
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_untouched(&env);
}

#[tokio::test]
async fn yes_does_not_write_pith_s_own_state() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 128_000, 8_000, "");
    let data = env.data.path().canonicalize().unwrap();
    let trust = data.join("trusted-directories.json");
    let support = data.join("sandbox-support.json");
    let trusted = json!({ env.path().canonicalize().unwrap().to_str().unwrap(): true });
    for (i, (path, content)) in [
        (&trust, trusted.to_string()),
        (&support, r#"{"landlock":null,"seccomp":false}"#.to_string()),
    ]
    .iter()
    .enumerate()
    {
        let read = json!({"file_path": path}).to_string();
        let write = json!({"file_path": path, "content": content}).to_string();
        let (r, c) = (format!("r{i}"), format!("c{i}"));
        server.push(openai::tool_calls(
            &[(&r, "read", &read), (&c, "write", &write)],
            None,
        ));
    }
    server.push(openai::text("done", None));
    let out = env.run(&["run", "--yes", "own the next start"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let after = std::fs::read_to_string(&trust).unwrap_or_default();
    assert!(
        !after.contains("true"),
        "the trust store was written: {after}"
    );
    let cache = std::fs::read_to_string(&support).unwrap_or_default();
    assert!(
        !cache.contains(r#""landlock":null"#),
        "the sandbox cache was written: {cache}"
    );
    let seen = results(&server);
    assert!(seen[0].contains("pith's own state"), "{seen:?}");
    // the cache exists (pith wrote it at start), and its read was refused
    assert!(
        seen[1].contains("pith's own state") || seen[1].contains("has not been read"),
        "{seen:?}"
    );
}

#[tokio::test]
async fn yes_does_not_write_bashrc_when_the_workspace_is_home() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 128_000, 8_000, "");
    std::fs::write(env.path().join(".bashrc"), "# mine\n").unwrap();
    queue_writes(&server, &["~/.bashrc".to_string(), ".profile".to_string()]);
    let out = env
        .command(&["run", "--yes", "settle in"])
        .env("HOME", env.path())
        .output()
        .await
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(env.path().join(".bashrc")).unwrap(),
        "# mine\n"
    );
    assert!(!env.path().join(".profile").exists());
    for r in results(&server) {
        assert!(r.contains("start-up file"), "{r}");
    }
    assert!(
        stderr(&out).contains("home folder"),
        "no warning: {}",
        stderr(&out)
    );
}

#[tokio::test]
async fn a_hook_s_approval_does_not_write_git_config() {
    let server = MockServer::start().await;
    let env = PithEnv::new(
        &server.url(),
        128_000,
        8_000,
        "[[hooks.pre_tool_use]]\ncommand = \"echo '{\\\"decision\\\": \\\"approve\\\"}'\"\n",
    );
    repo(&env);
    queue_writes(&server, &plants());
    let out = env.run(&["run", "plant"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_untouched(&env);
    for r in results(&server) {
        assert!(r.contains("protected"), "{r}");
    }
}

#[tokio::test]
async fn accept_edits_does_not_write_through_a_hard_link() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 128_000, 8_000, "");
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("authorized_keys");
    std::fs::write(&target, "ssh-ed25519 mine\n").unwrap();
    std::fs::hard_link(&target, env.path().join("keys.txt")).unwrap();
    queue_writes(&server, &["keys.txt".to_string()]);
    let out = env
        .run(&["run", "--permission-mode", "accept-edits", "edit"])
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "ssh-ed25519 mine\n"
    );
    assert!(
        results(&server)[0].contains("hard link"),
        "{:?}",
        results(&server)
    );
}

#[tokio::test]
async fn read_and_grep_of_the_stored_credentials_are_refused_even_with_yes() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 128_000, 8_000, "");
    let data = env.data.path().canonicalize().unwrap();
    let creds = data.join("credentials.json");
    std::fs::write(&creds, r#"{"mock":{"key":"sk-stored-secret-123"}}"#).unwrap();
    let calls: Vec<(&str, Value)> = vec![
        ("read", json!({"file_path": creds})),
        ("grep", json!({"pattern": "sk-", "path": data})),
        ("grep", json!({"pattern": "sk-", "path": creds})),
    ];
    for (i, (tool, args)) in calls.iter().enumerate() {
        server.push(openai::tool_calls(
            &[(&format!("c{i}"), tool, &args.to_string())],
            None,
        ));
    }
    server.push(openai::text("done", None));
    let out = env.run(&["run", "--yes", "find the key"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let bodies: String = server
        .requests()
        .iter()
        .map(|r| r.body.to_string())
        .collect();
    assert!(
        !bodies.contains("stored-secret"),
        "the key reached the model"
    );
    for r in results(&server) {
        assert!(r.contains("pith's own state"), "{r}");
    }
}

/// An editor in accept-edits mode: the model's write to `.git/config` is put to the user (who
/// refuses it) instead of reaching the editor's `fs/write_text_file`.
#[tokio::test]
async fn acp_accept_edits_asks_before_fs_write_text_file_to_git_config() {
    use super::acp::{Client, abs, env, prompt};
    let server = MockServer::start().await;
    let env = env(&server);
    repo(&env);
    let mut c = Client::start(&env);
    c.initialize_with(json!({"fs": {"readTextFile": true, "writeTextFile": true}}))
        .await;
    let sid = c.new_session(&env).await;
    c.call(
        "session/set_mode",
        json!({"sessionId": sid, "modeId": "accept-edits"}),
    )
    .await;
    queue_writes(
        &server,
        &[".git/config".to_string(), "notes.md".to_string()],
    );
    let id = c.send("session/prompt", prompt(&sid, "plant")).await;
    let r = c.wait(id, &|_| "reject").await;
    assert_eq!(r["result"]["stopReason"], "end_turn", "{r}");
    let written: Vec<&str> = c
        .client_calls
        .iter()
        .filter(|(m, _)| m == "fs/write_text_file")
        .filter_map(|(_, p)| p["path"].as_str())
        .collect();
    // the ordinary file went through without a question, `.git/config` did not
    assert_eq!(written, [abs(&env, "notes.md")], "{:?}", c.client_calls);
    let asked: Vec<&str> = c
        .asked
        .iter()
        .map(|q| q["toolCall"]["toolCallId"].as_str().unwrap())
        .collect();
    assert_eq!(asked, ["c0"], "{:?}", c.asked);
}

/// A `--config` file kept in the workspace is protected like `pith.toml`: the write tool asks
/// (refused under `--yes`), and a command cannot append a hook to it (read-only in the sandbox).
#[tokio::test]
async fn a_config_file_in_the_workspace_is_protected_like_pith_toml() {
    let server = MockServer::start().await;
    let env = PithEnv::new(
        &server.url(),
        128_000,
        8_000,
        "sandbox = \"workspace-write\"\n",
    );
    let dev = env.path().join("dev.toml");
    let text = std::fs::read_to_string(&env.config).unwrap();
    std::fs::write(&dev, &text).unwrap();
    let read = json!({"file_path": "dev.toml"}).to_string();
    let write = json!({"file_path": "dev.toml", "content": FSMONITOR}).to_string();
    let hook = "echo '[[hooks.session_start]]' | tee -a dev.toml; echo end";
    let bash = json!({ "command": hook }).to_string();
    server.push_all([
        openai::tool_calls(&[("r0", "read", &read), ("c0", "write", &write)], None),
        openai::tool_calls(&[("b1", "bash", &bash)], None),
        openai::text("done", None),
    ]);
    let out = env
        // trusted: a `--config` file inside the workspace is otherwise cut to its harmless keys
        .command(&["run", "--yes", "--trust", "--config", "dev.toml", "plant"])
        .output()
        .await
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        results(&server)[0].contains("--config file"),
        "{:?}",
        results(&server)
    );
    let ran = last_tool_result(&server);
    assert!(ran.contains("end"), "the command did not run: {ran}");
    let after = std::fs::read_to_string(&dev).unwrap();
    if pith_tools::sandbox::support().has_namespaces() {
        assert_eq!(after, text, "a command appended to the --config file");
    } else {
        println!("SKIPPED (the command part): user namespaces are unavailable here");
        assert!(!after.contains("fsmonitor"));
    }
}

/// An `@`-mention of pith's stored credentials attaches nothing of them.
#[tokio::test]
async fn a_mention_of_the_stored_credentials_attaches_nothing() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 128_000, 8_000, "");
    let data = env.data.path().canonicalize().unwrap();
    let creds = data.join("credentials.json");
    std::fs::write(&creds, r#"{"mock":{"key":"sk-stored-secret-456"}}"#).unwrap();
    server.push(openai::text("done", None));
    let prompt = format!("summarise @{}", creds.display());
    let out = env.run(&["run", "--yes", &prompt]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let body = server.requests()[0].body.to_string();
    assert!(!body.contains("stored-secret"), "the key reached the model");
    assert!(body.contains("pith's own state"), "{body}");
}

/// The TUI's engine in accept-edits mode, with writes allowed by a rule: the write of
/// `.git/config` is put to the user (naming why) instead of running; an "always" answer grants
/// nothing, so the next write of it asks again.
#[tokio::test]
async fn the_tui_engine_asks_for_git_config_in_accept_edits_and_always_grants_nothing() {
    use pith_config::{PermissionAction, PermissionSetting};
    use pith_protocol::event::{Op, PermissionMode, PermissionReply};
    let mut h = support::engine::harness_with(
        vec![("write", PermissionSetting::Action(PermissionAction::Allow))],
        false,
        |c| c.permission_mode = PermissionMode::AcceptEdits,
    )
    .await;
    std::fs::create_dir_all(h.workspace.path().join(".git")).unwrap();
    let write = |id: &str| {
        let args = json!({"file_path": ".git/config", "content": FSMONITOR}).to_string();
        openai::tool_calls(&[(id, "write", &args)], None)
    };
    h.server
        .push_all([write("c1"), write("c2"), openai::text("done", None)]);
    h.send(Op::user_turn("plant"));
    let first = h.permission_asked().await;
    assert_eq!(first.tool, "write");
    assert!(first.title.contains("protected"), "{}", first.title);
    assert!(first.patterns.is_empty(), "{:?}", first.patterns);
    h.send(Op::PermissionReply {
        id: first.id,
        reply: PermissionReply::Always,
        message: None,
    });
    let second = h.permission_asked().await;
    assert_eq!(second.call_id, "c2");
    h.send(Op::PermissionReply {
        id: second.id,
        reply: PermissionReply::Deny,
        message: None,
    });
    h.turn_finished().await;
    // the first was the user's own approval: written once
    let text = std::fs::read_to_string(h.workspace.path().join(".git/config")).unwrap();
    assert_eq!(text, FSMONITOR);
}
