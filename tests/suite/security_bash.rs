//! Commands that try to slip past the permission rules, run headless through the real binary
//! against the mock provider. Each one is an attack a hostile model or repository can make: the
//! file it tries to create must not exist afterwards, and what it tries to delete must survive.

use crate::support;

use std::path::Path;

use serde_json::json;
use support::MockServer;
use support::openai;
use support::pith::{PithEnv, last_tool_result, stderr};

/// The model calls `bash` with `command` once, then answers "done". Returns the environment (its
/// workspace holds whatever the command made) and the tool's result text as the model saw it.
async fn run_bash(rules: &str, command: &str, extra_args: &[&str]) -> (PithEnv, String) {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 128_000, 16_000, rules);
    std::fs::create_dir_all(env.path().join("victim")).unwrap();
    std::fs::write(env.path().join("victim/keep.txt"), "keep me").unwrap();
    let args = json!({ "command": command }).to_string();
    server.push(openai::tool_calls(&[("call_1", "bash", &args)], None));
    server.push(openai::text("done", None));
    let mut full = vec!["run"];
    full.extend_from_slice(extra_args);
    full.push("go");
    let out = env.run(&full).await;
    assert!(
        !stderr(&out).contains("panicked"),
        "pith panicked: {}",
        stderr(&out)
    );
    let result = last_tool_result(&server);
    (env, result)
}

const ALLOW_GIT_STATUS: &str = "[permission.bash]\n\"git status*\" = \"allow\"\n";
const ALLOW_GIT_STATUS_DENY_RM: &str =
    "[permission.bash]\n\"git status*\" = \"allow\"\n\"rm -rf*\" = \"deny\"\n";

fn assert_absent(ws: &Path, name: &str, result: &str) {
    assert!(
        !ws.join(name).exists(),
        "`{name}` was created: the hidden command ran. Tool result: {result}"
    );
}

fn assert_victim_survives(env: &PithEnv, result: &str) {
    assert!(
        env.path().join("victim/keep.txt").exists(),
        "the deny rule was walked around: victim/ was deleted. Tool result: {result}"
    );
}

#[tokio::test]
async fn a_comment_with_a_quote_does_not_hide_the_next_line() {
    let (env, result) = run_bash(ALLOW_GIT_STATUS, "git status # it's fine\ntouch p36", &[]).await;
    assert_absent(env.path(), "p36", &result);
    assert!(
        result.contains("touch p36"),
        "the refusal names the hidden command: {result}"
    );
}

#[tokio::test]
async fn a_comment_with_a_trailing_backslash_does_not_hide_the_next_line() {
    let (env, result) = run_bash(ALLOW_GIT_STATUS, "git status # \\\ntouch p36b", &[]).await;
    assert_absent(env.path(), "p36b", &result);
}

#[tokio::test]
async fn a_hidden_line_does_not_walk_past_a_deny_rule_with_yes() {
    let (env, result) = run_bash(
        ALLOW_GIT_STATUS_DENY_RM,
        "git status # it's fine\nrm -rf victim",
        &["--yes"],
    )
    .await;
    assert_victim_survives(&env, &result);
}

#[tokio::test]
async fn a_prompt_expansion_does_not_run_a_hidden_command() {
    let (env, result) = run_bash(
        ALLOW_GIT_STATUS,
        "git status ${x=\\$(touch p18)} ${x@P}",
        &[],
    )
    .await;
    assert_absent(env.path(), "p18", &result);
}

#[tokio::test]
async fn an_array_subscript_does_not_run_a_hidden_command() {
    let (env, result) = run_bash(
        ALLOW_GIT_STATUS,
        "git status ${y:=a[\\$(touch p37)]} ${z[y]}",
        &[],
    )
    .await;
    assert_absent(env.path(), "p37", &result);
}

#[tokio::test]
async fn expansions_that_can_run_code_are_not_approved_by_yes_when_a_deny_rule_could_match() {
    for command in [
        "git status ${x=\\$(rm -rf victim)} ${x@P}",
        "x=rm; $x -rf victim",
        "eval \"rm -rf victim\"",
        "bash -c 'rm -rf victim'",
        "echo $(rm -rf victim)",
    ] {
        let (env, result) = run_bash(ALLOW_GIT_STATUS_DENY_RM, command, &["--yes"]).await;
        assert_victim_survives(&env, &format!("{command}: {result}"));
    }
}

#[tokio::test]
async fn a_redirection_is_a_write_checked_like_the_write_tool() {
    let (env, result) = run_bash(ALLOW_GIT_STATUS, "git status > f.txt", &[]).await;
    assert_absent(env.path(), "f.txt", &result);

    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("appended.txt");
    let command = format!("git status >> {}", target.display());
    let (_env, result) = run_bash(ALLOW_GIT_STATUS, &command, &[]).await;
    assert!(!target.exists(), "wrote outside the workspace: {result}");
}

#[tokio::test]
async fn a_redirection_outside_the_workspace_obeys_external_directory_deny_even_with_yes() {
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("x.txt");
    let rules =
        "[permission]\nexternal_directory = \"deny\"\nbash = { \"git status*\" = \"allow\" }\n";
    let command = format!("git status > {}", target.display());
    let (_env, result) = run_bash(rules, &command, &["--yes"]).await;
    assert!(!target.exists(), "wrote outside the workspace: {result}");
}

#[tokio::test]
async fn deny_rules_match_the_command_however_it_is_written() {
    for command in [
        "rm -fr victim",
        "rm -r -f victim",
        "rm --recursive --force victim",
        "/bin/rm -rf victim",
        "\\rm -rf victim",
        "'rm' -rf victim",
        "command rm -rf victim",
        "env rm -rf victim",
        "FOO=1 rm -rf victim",
        "x=rm; $x -rf victim",
        "git status; rm -rf victim",
        "find . -name victim -exec rm -rf {} +",
    ] {
        let (env, result) = run_bash(ALLOW_GIT_STATUS_DENY_RM, command, &["--yes"]).await;
        assert_victim_survives(&env, &format!("{command}: {result}"));
    }
}
