use std::time::{Duration, Instant};

use serde_json::{Map, json};
use tokio_util::sync::CancellationToken;

use super::*;

fn hook(matcher: Option<&str>, command: &str, timeout: Option<u64>) -> HookConfig {
    HookConfig {
        matcher: matcher.map(str::to_string),
        command: command.to_string(),
        timeout,
        source: None,
    }
}

fn hooks_with(dir: &Path, set: impl FnOnce(&mut HooksConfig)) -> Hooks {
    let mut config = Config::default();
    set(&mut config.hooks);
    Hooks::new(&config, dir, &dir.join("data"))
}

async fn run(hooks: &Hooks, event: HookEvent, subject: Option<&str>) -> Outcome {
    let mut fields = Map::new();
    fields.insert("tool_name".into(), subject.unwrap_or("").into());
    fields.insert("tool_input".into(), json!({"command": "ls"}));
    hooks
        .run(event, subject, "ses_1", fields, &CancellationToken::new())
        .await
}

#[tokio::test]
async fn exit_2_blocks_with_stderr_and_stops_the_later_hooks() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("second-ran");
    let h = hooks_with(dir.path(), |c| {
        c.pre_tool_use
            .push(hook(Some("bash"), "echo 'no rm here' >&2; exit 2", None));
        c.pre_tool_use
            .push(hook(None, &format!("touch {}", marker.display()), None));
    });
    let out = run(&h, HookEvent::PreToolUse, Some("bash")).await;
    assert_eq!(out.block.as_deref(), Some("no rm here"));
    assert!(!marker.exists(), "a block stops the hooks after it");
    // the matcher leaves other tools alone
    let out = run(&h, HookEvent::PreToolUse, Some("read")).await;
    assert_eq!(out.block, None);
    assert!(marker.exists());
}

#[tokio::test]
async fn the_event_arrives_on_stdin_in_claude_codes_shape() {
    let dir = tempfile::tempdir().unwrap();
    let seen = dir.path().join("seen.json");
    let h = hooks_with(dir.path(), |c| {
        c.pre_tool_use
            .push(hook(None, &format!("cat > {}", seen.display()), None));
    });
    let out = run(&h, HookEvent::PreToolUse, Some("bash")).await;
    assert_eq!(out, Outcome::default());
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&seen).unwrap()).unwrap();
    assert_eq!(v["hook_event_name"], "PreToolUse");
    assert_eq!(v["session_id"], "ses_1");
    assert_eq!(v["tool_name"], "bash");
    assert_eq!(v["tool_input"]["command"], "ls");
    assert_eq!(v["cwd"], dir.path().to_string_lossy().as_ref());
    assert!(v.get("transcript_path").is_some());
}

#[tokio::test]
async fn json_answers_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let h = hooks_with(dir.path(), |c| {
        c.pre_tool_use.push(hook(
            Some("bash"),
            r#"echo '{"decision":"block","reason":"use the test runner"}'"#,
            None,
        ));
        c.pre_tool_use
            .push(hook(Some("read"), r#"echo '{"decision":"approve"}'"#, None));
        c.pre_tool_use.push(hook(
            Some("grep"),
            r#"echo '{"hookSpecificOutput":{"permissionDecision":"deny","permissionDecisionReason":"not grep"}}'"#,
            None,
        ));
        c.user_prompt_submit.push(hook(
            None,
            r#"echo '{"hookSpecificOutput":{"additionalContext":"branch main"}}'"#,
            None,
        ));
    });
    let out = run(&h, HookEvent::PreToolUse, Some("bash")).await;
    assert_eq!(out.block.as_deref(), Some("use the test runner"));
    let out = run(&h, HookEvent::PreToolUse, Some("read")).await;
    assert!(out.approve && out.block.is_none());
    let out = run(&h, HookEvent::PreToolUse, Some("grep")).await;
    assert_eq!(out.block.as_deref(), Some("not grep"));
    let out = run(&h, HookEvent::UserPromptSubmit, None).await;
    assert_eq!(out.context, ["branch main"]);
}

#[tokio::test]
async fn plain_stdout_is_context_only_where_the_event_has_some() {
    let dir = tempfile::tempdir().unwrap();
    let h = hooks_with(dir.path(), |c| {
        c.session_start
            .push(hook(None, "echo 'on branch main'", None));
        c.pre_tool_use.push(hook(None, "echo chatter", None));
    });
    let out = run(&h, HookEvent::SessionStart, Some("startup")).await;
    assert_eq!(out.context, ["on branch main"]);
    let out = run(&h, HookEvent::PreToolUse, Some("bash")).await;
    assert!(out.context.is_empty());
}

#[tokio::test]
async fn other_codes_warn_and_go_on() {
    let dir = tempfile::tempdir().unwrap();
    let h = hooks_with(dir.path(), |c| {
        c.stop
            .push(hook(None, "echo 'lint broke' >&2; exit 1", None));
        c.stop.push(hook(None, "echo '{}'", None));
    });
    let out = run(&h, HookEvent::Stop, None).await;
    assert_eq!(out.block, None);
    assert_eq!(out.warnings.len(), 1, "{:?}", out.warnings);
    assert!(
        out.warnings[0].contains("exited with 1") && out.warnings[0].contains("lint broke"),
        "{:?}",
        out.warnings
    );
}

#[tokio::test]
async fn a_hook_past_its_timeout_is_killed_with_its_children() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let h = hooks_with(dir.path(), |c| {
        c.pre_tool_use.push(hook(
            None,
            &format!("sleep 30 & echo $! > {}; wait", pid_file.display()),
            Some(1),
        ));
    });
    let started = Instant::now();
    let out = run(&h, HookEvent::PreToolUse, Some("bash")).await;
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(out.block, None, "a slow hook does not block");
    assert!(
        out.warnings.iter().any(|w| w.contains("timeout of 1 s")),
        "{:?}",
        out.warnings
    );
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // the background `sleep` went with it (allow a moment for the kernel to reap it)
    let mut alive = true;
    for _ in 0..50 {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        if status.is_empty() || status.contains("State:\tZ") {
            alive = false;
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(!alive, "the hook's child survived its timeout");
}

#[tokio::test]
async fn output_is_capped_and_a_hook_that_ignores_stdin_does_not_block() {
    let dir = tempfile::tempdir().unwrap();
    let h = hooks_with(dir.path(), |c| {
        c.session_start
            .push(hook(None, "head -c 200000 /dev/zero | tr '\\0' x", None));
    });
    let mut fields = Map::new();
    fields.insert("big".into(), "y".repeat(300_000).into());
    let out = h
        .run(
            HookEvent::SessionStart,
            Some("startup"),
            "s",
            fields,
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(out.context.len(), 1);
    assert_eq!(out.context[0].len(), MAX_OUTPUT);
}

#[tokio::test]
async fn an_interrupt_stops_a_running_hook() {
    let dir = tempfile::tempdir().unwrap();
    let h = hooks_with(dir.path(), |c| {
        c.stop.push(hook(None, "sleep 30", None));
    });
    let cancel = CancellationToken::new();
    let c2 = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        c2.cancel();
    });
    let started = Instant::now();
    let out = h.run(HookEvent::Stop, None, "s", Map::new(), &cancel).await;
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(out, Outcome::default());
}

#[test]
fn the_listing_names_event_matcher_command_and_file() {
    let mut c = HooksConfig::default();
    assert!(listing(&c)[0].contains("no hooks"));
    let mut h = hook(Some("edit|write"), "cargo fmt", Some(20));
    h.source = Some(PathBuf::from("/home/u/.config/pith/config.toml"));
    c.post_tool_use.push(h);
    c.stop.push(hook(None, "./check.sh", None));
    let lines = listing(&c);
    assert_eq!(
        lines,
        [
            "post_tool_use [edit|write]: cargo fmt (timeout 20 s) — from /home/u/.config/pith/config.toml",
            "stop: ./check.sh",
        ]
    );
}
