//! Hooks (`[[hooks.EVENT]]`, issue 31): the user's commands before and after tool calls, when a
//! prompt is sent, when the session starts and when the agent would stop — blocking with exit 2
//! or a JSON decision, adding context, killed at their timeout, and never from a repository's
//! untrusted `pith.toml`.

use crate::support;

use pith_config::{HookConfig, PermissionSetting};
use pith_protocol::event::{Op, PermissionReply, TurnEnd};
use support::MockServer;
use support::engine::harness_with;
use support::openai;
use support::pith::{PithEnv, last_tool_result, of_type, stderr, stdout};

fn call(id: &str, tool: &str, args: &str) -> support::MockResponse {
    openai::tool_calls(&[(id, tool, args)], Some((1_000, 5)))
}

/// The text of every user message of request `i`, joined.
fn user_text(server: &MockServer, i: usize) -> String {
    let body = server.request_body(i);
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(support::message_text)
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn a_pre_tool_use_hook_that_exits_2_refuses_the_call_with_its_stderr() {
    let server = MockServer::start().await;
    let env = PithEnv::new(
        &server.url(),
        32_000,
        2_000,
        r#"[[hooks.pre_tool_use]]
matcher = "bash"
command = "echo 'policy: no commands that touch files' >&2; exit 2"
"#,
    );
    server.push_all([
        call("c1", "bash", r#"{"command":"touch blocked.txt"}"#),
        call("c2", "read", r#"{"file_path":"hello.txt"}"#),
        openai::text("ok", Some((1_200, 5))),
    ]);
    std::fs::write(env.path().join("hello.txt"), "hello\n").unwrap();
    let (out, _) = env.run_json(&["--yes", "make a file"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        !env.path().join("blocked.txt").exists(),
        "the hook did not block"
    );
    let reqs = server.requests();
    let first_result = reqs[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .map(support::message_text)
        .unwrap();
    assert!(
        first_result.contains("policy: no commands that touch files"),
        "{first_result}"
    );
    // the matcher leaves `read` alone
    assert!(last_tool_result(&server).contains("hello"));
}

#[tokio::test]
async fn a_post_tool_use_formatter_rewrites_the_file_the_agent_wrote() {
    let server = MockServer::start().await;
    let env = PithEnv::new(
        &server.url(),
        32_000,
        2_000,
        r#"[[hooks.post_tool_use]]
matcher = "edit|write"
command = "f=$(jq -r .tool_input.file_path); sed -i 's/  */ /g; s/ *$//' \"$f\""
"#,
    );
    server.push_all([
        call(
            "c1",
            "write",
            r#"{"file_path":"main.txt","content":"let   x  =   1;   \n"}"#,
        ),
        openai::text("written", Some((1_200, 5))),
    ]);
    let (out, _) = env.run_json(&["--yes", "write it"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(env.path().join("main.txt")).unwrap(),
        "let x = 1;\n"
    );
}

#[tokio::test]
async fn session_start_output_is_in_the_first_request_and_user_prompt_submit_adds_to_the_prompt() {
    let server = MockServer::start().await;
    let env = PithEnv::new(
        &server.url(),
        32_000,
        2_000,
        r#"[[hooks.session_start]]
matcher = "startup"
command = "echo \"branch: feature-x ($(jq -r .source))\""

[[hooks.user_prompt_submit]]
command = "echo \"{\\\"additionalContext\\\": \\\"the prompt was: $(jq -r .prompt)\\\"}\""
"#,
    );
    server.push(openai::text("hi", Some((1_000, 5))));
    let (out, _) = env.run_json(&["hello there"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let text = user_text(&server, 0);
    assert!(text.contains("branch: feature-x (startup)"), "{text}");
    assert!(text.contains("the prompt was: hello there"), "{text}");
    assert!(text.contains("hello there"));
    // and stays out of a second run's requests: the hook's words were for the first prompt
    // of its session (a resumed one says "resume", which this matcher leaves out)
    server.push(openai::text("again", Some((1_000, 5))));
    let (out, _) = env.run_json(&["--continue", "more"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let body = server.request_body(1).to_string();
    assert_eq!(body.matches("branch: feature-x").count(), 1, "{body}");
}

#[tokio::test]
async fn a_user_prompt_submit_hook_that_exits_2_refuses_the_prompt() {
    let server = MockServer::start().await;
    let env = PithEnv::new(
        &server.url(),
        32_000,
        2_000,
        r#"[[hooks.user_prompt_submit]]
command = "if jq -r .prompt | grep -q password; then echo 'no passwords in prompts' >&2; exit 2; fi"
"#,
    );
    server.push(openai::text("never", None));
    let (out, events) = env.run_json(&["my password is hunter2"]).await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(server.requests().is_empty(), "the model got the prompt");
    let refused = of_type(&events, "prompt_refused");
    assert_eq!(refused.len(), 1, "{events:?}");
    assert!(
        refused[0]["message"]
            .as_str()
            .unwrap()
            .contains("no passwords in prompts")
    );
    // in text mode the user reads the reason
    let out = env.run(&["run", "my password is hunter2"]).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("no passwords in prompts"),
        "{}",
        stderr(&out)
    );
    assert!(server.requests().is_empty());
    let export = env.export_latest_raw().await;
    assert!(!export.contains("hunter2"), "the refused prompt was stored");
}

#[tokio::test]
async fn hooks_of_an_untrusted_workspace_file_never_run_and_are_named() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 32_000, 2_000, "");
    std::fs::write(
        env.path().join("pith.toml"),
        r#"[[hooks.session_start]]
command = "touch pwned-start"

[[hooks.pre_tool_use]]
command = "touch pwned-tool"
"#,
    )
    .unwrap();
    server.push_all([
        call("c1", "read", r#"{"file_path":"pith.toml"}"#),
        openai::text("ok", Some((1_200, 5))),
    ]);
    let out = env.run(&["run", "look"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!env.path().join("pwned-start").exists());
    assert!(!env.path().join("pwned-tool").exists());
    let warning = stderr(&out);
    assert!(
        warning.contains("hooks.session_start") && warning.contains("hooks.pre_tool_use"),
        "{warning}"
    );
    // /hooks lists none of them
    let out = env.run(&["run", "/hooks"]).await;
    assert!(out.status.success());
    assert!(stdout(&out).contains("no hooks"), "{}", stdout(&out));
}

#[tokio::test]
async fn a_hook_past_its_timeout_is_killed_and_the_turn_goes_on() {
    let server = MockServer::start().await;
    let env = PithEnv::new(
        &server.url(),
        32_000,
        2_000,
        r#"[[hooks.pre_tool_use]]
command = "sleep 60"
timeout = 1
"#,
    );
    server.push_all([
        call("c1", "bash", r#"{"command":"touch after.txt"}"#),
        openai::text("done", Some((1_200, 5))),
    ]);
    let started = std::time::Instant::now();
    let (out, events) = env.run_json(&["--yes", "go"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    assert!(
        env.path().join("after.txt").exists(),
        "the call did not run"
    );
    let infos: Vec<String> = of_type(&events, "info")
        .iter()
        .map(|e| e["message"].as_str().unwrap_or("").to_string())
        .collect();
    assert!(
        infos
            .iter()
            .any(|m| m.contains("pre_tool_use hook") && m.contains("timeout of 1 s")),
        "{infos:?}"
    );
}

#[tokio::test]
async fn a_json_block_decision_refuses_the_call() {
    let server = MockServer::start().await;
    let env = PithEnv::new(
        &server.url(),
        32_000,
        2_000,
        r#"[[hooks.pre_tool_use]]
matcher = "Bash"
command = "echo '{\"decision\": \"block\", \"reason\": \"use make test instead\"}'"
"#,
    );
    server.push_all([
        call("c1", "bash", r#"{"command":"touch x.txt"}"#),
        openai::text("ok", Some((1_200, 5))),
    ]);
    let (out, _) = env.run_json(&["--yes", "test it"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!env.path().join("x.txt").exists());
    assert!(
        last_tool_result(&server).contains("use make test instead"),
        "{}",
        last_tool_result(&server)
    );
}

#[tokio::test]
async fn an_approval_skips_the_question_but_never_a_deny_rule() {
    let server = MockServer::start().await;
    let env = PithEnv::new(
        &server.url(),
        32_000,
        2_000,
        r#"[permission.bash]
"rm *" = "deny"

[[hooks.pre_tool_use]]
command = "echo '{\"decision\": \"approve\"}'"
"#,
    );
    std::fs::write(env.path().join("keep.txt"), "x").unwrap();
    server.push_all([
        call("c1", "write", r#"{"file_path":"new.txt","content":"hi"}"#),
        call("c2", "bash", r#"{"command":"rm keep.txt"}"#),
        openai::text("ok", Some((1_200, 5))),
    ]);
    // headless without --yes: the write would be refused for want of someone to ask
    let (out, _) = env.run_json(&["write and clean"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(env.path().join("new.txt")).unwrap(),
        "hi"
    );
    assert!(
        env.path().join("keep.txt").exists(),
        "the deny rule gave way"
    );
}

#[tokio::test]
async fn a_stop_hook_that_exits_2_sends_the_model_back_to_work_a_bounded_number_of_times() {
    let server = MockServer::start().await;
    let env = PithEnv::new(
        &server.url(),
        32_000,
        2_000,
        r#"[[hooks.stop]]
command = "if [ -f checked ]; then exit 0; fi; touch checked; echo 'run the tests before you stop' >&2; exit 2"
"#,
    );
    server.push_all([
        openai::text("done", Some((1_000, 5))),
        openai::text("tests pass, done", Some((1_200, 5))),
    ]);
    let (out, _) = env.run_json(&["fix it"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(server.requests().len(), 2);
    let text = user_text(&server, 1);
    assert!(text.contains("run the tests before you stop"), "{text}");

    // a hook that never lets go is obeyed only a few times
    let server = MockServer::start().await;
    let env = PithEnv::new(
        &server.url(),
        32_000,
        2_000,
        r#"[[hooks.stop]]
command = "echo 'not yet' >&2; exit 2"
"#,
    );
    for _ in 0..10 {
        server.push(openai::text("done", Some((1_000, 5))));
    }
    let (out, events) = env.run_json(&["fix it"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(server.requests().len(), 4, "1 + 3 times sent back");
    assert!(of_type(&events, "info").iter().any(|e| {
        e["message"]
            .as_str()
            .unwrap_or("")
            .contains("stopping anyway")
    }));
}

#[tokio::test]
async fn slash_hooks_lists_event_matcher_command_and_file() {
    let server = MockServer::start().await;
    let env = PithEnv::new(
        &server.url(),
        32_000,
        2_000,
        r#"[[hooks.post_tool_use]]
matcher = "edit|write"
command = "cargo fmt"
"#,
    );
    let out = env.run(&["run", "/hooks"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("post_tool_use [edit|write]: cargo fmt"),
        "{text}"
    );
    assert!(
        text.contains(&env.config.display().to_string()),
        "names the file: {text}"
    );
    assert!(server.requests().is_empty());
}

fn hook(matcher: Option<&str>, command: &str) -> HookConfig {
    HookConfig {
        matcher: matcher.map(str::to_string),
        command: command.to_string(),
        timeout: None,
        source: None,
    }
}

/// In the engine (as the TUI runs it): a question that waits runs the notification hooks, and a
/// post_tool_use hook's word reaches the model with the result.
#[tokio::test]
async fn notification_and_post_tool_use_hooks_in_the_engine() {
    let mut h = harness_with(
        vec![(
            "bash",
            PermissionSetting::Action(pith_config::PermissionAction::Ask),
        )],
        false,
        |c| {
            c.hooks
                .notification
                .push(hook(None, "jq -r .message > notified.txt"));
            c.hooks.post_tool_use.push(hook(
                Some("bash"),
                "echo '{\"additionalContext\": \"remember to run the linter\"}'",
            ));
        },
    )
    .await;
    h.server.push_all([
        call("c1", "bash", r#"{"command":"echo hi"}"#),
        openai::text("ok", Some((1_200, 5))),
    ]);
    h.send(Op::user_turn("say hi"));
    let asked = h.permission_asked().await;
    // the notification hook runs in the background while the question waits
    let notified = h.workspace.path().join("notified.txt");
    let mut said = String::new();
    for _ in 0..200 {
        said = std::fs::read_to_string(&notified).unwrap_or_default();
        if said.ends_with('\n') {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(said.contains("permission to use bash"), "{said}");
    h.send(Op::PermissionReply {
        id: asked.id,
        reply: PermissionReply::Once,
        message: None,
    });
    assert_eq!(h.turn_finished().await, TurnEnd::Stop);
    let results = h.tool_results(1);
    assert!(results[0].contains("hi"), "{results:?}");
    assert!(
        results[0].contains("remember to run the linter"),
        "{results:?}"
    );
}

/// `/compact`: the pre_compact hook reads the trigger and the focus; the post_compact hook runs
/// after it, and what it prints is stored with the summary: a later `pith run -c` sends it.
#[tokio::test]
async fn compaction_hooks_run_around_a_manual_compaction() {
    let server = MockServer::start().await;
    let env = PithEnv::new(
        &server.url(),
        20_000,
        4_000,
        r#"[[hooks.pre_compact]]
matcher = "manual"
command = "cat > pre-compact.json"

[[hooks.post_compact]]
command = "jq -r .trigger > post-compact.txt; echo 'Re-read docs/orders.md after a compaction.'"
"#,
    );
    let plan = "Step: copy the orders rows in batches and verify the checksums. ".repeat(200);
    server.push(openai::text(&plan, Some((5_000, 2_500))));
    let out = env
        .run(&["run", "We are migrating the orders table."])
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let summary = "## Goal\nMigrate orders.\n## Constraints & Preferences\nNone\n## Progress\nStarted.\n## Key Decisions\nNone\n## Next Steps\nNone\n## Critical Context\nNone\n## Relevant Files\nNone";
    server.push(openai::text(summary, Some((3_500, 200))));
    let (out, _) = env.run_json(&["-c", "/compact the orders schema"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let pre: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(env.path().join("pre-compact.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(pre["hook_event_name"], "PreCompact");
    assert_eq!(pre["trigger"], "manual");
    assert_eq!(pre["custom_instructions"], "the orders schema");
    let post = std::fs::read_to_string(env.path().join("post-compact.txt")).unwrap();
    assert_eq!(post.trim(), "manual");
    server.push(openai::text("ok", Some((1_500, 5))));
    assert!(env.run(&["run", "-c", "go on"]).await.status.success());
    let next = server.requests().last().unwrap().body.to_string();
    assert!(
        next.contains("Re-read docs/orders.md after a compaction."),
        "the post_compact context did not reach the next run: {next}"
    );
}

/// What a hook prints is the repository's or the user's text, never the terminal's: escape
/// sequences in a warning (exit 1), a refusal reason (exit 2) and the `/hooks` listing are
/// dropped before pith prints them.
#[tokio::test]
async fn escape_sequences_in_hook_output_never_reach_the_terminal() {
    let server = MockServer::start().await;
    let esc = r"printf '\033]0;pwned\007\033[2J\033[31m' >&2";
    let env = PithEnv::new(
        &server.url(),
        32_000,
        2_000,
        &format!(
            "[[hooks.session_start]]\ncommand = '''{esc}; exit 1'''\n\n[[hooks.user_prompt_submit]]\ncommand = '''{esc}; exit 2'''\n"
        ),
    );
    let out = env.run(&["run", "hello"]).await;
    assert!(!out.status.success(), "the prompt was refused");
    let listing = env.run(&["run", "/hooks"]).await;
    for o in [&out, &listing] {
        let all = format!("{}{}", stdout(o), stderr(o));
        assert!(!all.contains('\u{1b}') && !all.contains('\u{7}'), "{all:?}");
    }
    assert!(
        stderr(&out).contains("pwned") || stdout(&out).contains("pwned"),
        "the text itself is kept: {}",
        stderr(&out)
    );
}
