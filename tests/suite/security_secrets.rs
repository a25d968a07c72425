//! Secrets stay out of tools, errors, logs, the store and exports: run headless through the real
//! binary against the mock provider.

use crate::support;

use serde_json::json;
use support::openai;
use support::pith::{MODEL, PithEnv, last_tool_result, stderr};
use support::{MockResponse, MockServer};

const KEY_VAR: &str = "PITH_TEST_MOCK_API_KEY";
const KEY: &str = "sk-test-leak-5f2c9a71d3";
const HEADER_SECRET: &str = "hdr-secret-8e41b0c7aa";

/// A config whose mock provider reads its key from `KEY_VAR` and sends a secret header.
fn env_with_secrets(server: &MockServer, extra: &str) -> PithEnv {
    let env = PithEnv::new(&server.url(), 128_000, 16_000, "");
    let text = format!(
        r#"model = "{MODEL}"
{extra}

[provider.mock]
kind = "openai"
base_url = "{}/v1"
api_key_env = "{KEY_VAR}"
max_retries = 0
headers = {{ "X-Api-Token" = "{HEADER_SECRET}", "X-Client" = "pith-tests" }}

[models."{MODEL}"]
context = 128000
output = 16000
"#,
        server.url()
    );
    std::fs::write(&env.config, text).unwrap();
    env
}

async fn run(env: &PithEnv, extra_env: &[(&str, &str)], args: &[&str]) -> std::process::Output {
    let mut cmd = env.command(args);
    cmd.env(KEY_VAR, KEY).env("PITH_LOG", "debug");
    for (k, v) in extra_env {
        cmd.env(k, v);
    }
    tokio::time::timeout(std::time::Duration::from_secs(60), cmd.output())
        .await
        .expect("pith finished")
        .expect("pith ran")
}

fn logs(env: &PithEnv) -> String {
    std::fs::read_to_string(env.data.path().join("logs/pith.log")).unwrap_or_default()
}

#[tokio::test]
async fn commands_do_not_inherit_secret_variables() {
    let server = MockServer::start().await;
    let env = env_with_secrets(
        &server,
        "env_allow = [\"PITH_TEST_ALLOWED_TOKEN\"]\n[permission]\nbash = \"allow\"",
    );
    let args = json!({"command": "env | sort"}).to_string();
    server.push(openai::tool_calls(&[("call_1", "bash", &args)], None));
    server.push(openai::text("done", None));
    let out = run(
        &env,
        &[
            ("OTHER_SERVICE_TOKEN", "tok-other-3b1e"),
            ("SOME_API_KEY", "key-other-77aa"),
            ("DEPLOY_SECRET", "sec-other-9d0c"),
            ("PITH_TEST_ALLOWED_TOKEN", "allowed-by-name-42"),
            ("PITH_TEST_PLAIN", "plain-value-1"),
        ],
        &["run", "go"],
    )
    .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let result = last_tool_result(&server);
    assert!(result.contains("plain-value-1"), "env ran: {result}");
    for leaked in [KEY, "tok-other-3b1e", "key-other-77aa", "sec-other-9d0c"] {
        assert!(
            !result.contains(leaked),
            "the command saw a secret variable ({leaked}): {result}"
        );
    }
    assert!(
        result.contains("allowed-by-name-42"),
        "a variable allowed by name in env_allow is passed: {result}"
    );
    let export = env.export_latest().await.to_string();
    assert!(!export.contains(KEY), "the key reached the store");
}

/// The wider rule (issue 37): database passwords, `*_KEY`, personal access tokens, `AWS_*`
/// and a URL carrying credentials do not reach a command; `env_allow` still lets one through.
#[tokio::test]
async fn commands_do_not_inherit_passwords_tokens_or_credential_urls() {
    let server = MockServer::start().await;
    let env = env_with_secrets(
        &server,
        "env_allow = [\"AWS_REGION\"]\n[permission]\nbash = \"allow\"",
    );
    let args = json!({"command": "env | sort"}).to_string();
    server.push(openai::tool_calls(&[("call_1", "bash", &args)], None));
    server.push(openai::text("done", None));
    let leaks = [
        ("PGPASSWORD", "pgpw-7c1d"),
        ("OPENAI_KEY", "oak-2e9f"),
        ("GH_PAT", "ghpat-55ab"),
        ("MYSQL_PWD", "mypwd-0c3e"),
        ("AWS_ACCESS_KEY_ID", "AKIA-9f8e"),
        ("DATABASE_URL", "postgres://u:dburlpw-41@h/db"),
    ];
    let mut vars: Vec<(&str, &str)> = leaks.to_vec();
    vars.extend([
        ("AWS_REGION", "region-by-allow-3"),
        ("PITH_TEST_PLAIN", "plain-value-1"),
    ]);
    let out = run(&env, &vars, &["run", "go"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let result = last_tool_result(&server);
    assert!(result.contains("plain-value-1"), "env ran: {result}");
    assert!(
        result.contains("region-by-allow-3"),
        "env_allow holds: {result}"
    );
    for (name, value) in leaks {
        assert!(!result.contains(value), "the command saw {name}: {result}");
    }
}

#[tokio::test]
async fn a_secret_printed_by_a_tool_is_scrubbed_before_the_model_store_and_export() {
    let server = MockServer::start().await;
    let env = env_with_secrets(&server, "[permission]\nbash = \"allow\"");
    // The command prints the key and the header value without naming them.
    let command = format!(
        "printf '%s-%s %s\\n' sk-test leak-5f2c9a71d3 hdr-secret-8e41b0c7aa; cat /nonexistent/{}",
        "x"
    );
    let args = json!({ "command": command }).to_string();
    server.push(openai::tool_calls(&[("call_1", "bash", &args)], None));
    server.push(openai::text("done", None));
    let out = run(&env, &[], &["run", "go"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let result = last_tool_result(&server);
    assert!(
        !result.contains(KEY) && !result.contains(HEADER_SECRET),
        "{result}"
    );
    assert!(result.contains("[REDACTED]"), "{result}");
    for format in ["json", "md"] {
        let export = env.export_latest().await;
        let id = export["session"]["id"].as_str().unwrap().to_string();
        let out = env
            .run(&["sessions", "export", &id, "--format", format])
            .await;
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            !text.contains(KEY) && !text.contains(HEADER_SECRET),
            "{format} export holds a secret"
        );
    }
    let log = logs(&env);
    assert!(!log.contains(KEY) && !log.contains(HEADER_SECRET), "{log}");
}

#[tokio::test]
async fn secret_header_values_are_scrubbed_from_errors_logs_store_and_exports() {
    let server = MockServer::start().await;
    let env = env_with_secrets(&server, "");
    // A server that echoes the credentials it was sent.
    server.push(MockResponse::status(
        401,
        json!({"error": {"message": format!("bad token {HEADER_SECRET} for key {KEY}"), "type": "invalid_request_error"}}),
    ));
    // JSON, for the session's id: a session no model answered in is not listed
    let out = run(&env, &[], &["run", "--format", "json", "hello"]).await;
    let err = format!("{}{}", stderr(&out), String::from_utf8_lossy(&out.stdout));
    let session_id = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|e| e["type"] == "session_loaded")
        .and_then(|e| e["session"]["id"].as_str().map(String::from))
        .expect("a session_loaded event");
    assert!(!out.status.success());
    assert!(err.contains("bad token"), "the error is reported: {err}");
    assert!(
        !err.contains(HEADER_SECRET) && !err.contains(KEY),
        "the error message holds a secret: {err}"
    );
    let log = logs(&env);
    assert!(
        !log.contains(HEADER_SECRET) && !log.contains(KEY),
        "the log holds a secret"
    );
    let export = env
        .run(&["sessions", "export", &session_id, "--format", "json"])
        .await;
    let export = String::from_utf8_lossy(&export.stdout).to_string();
    assert!(export.contains("hello"), "{export}");
    assert!(
        !export.contains(HEADER_SECRET) && !export.contains(KEY),
        "the store holds a secret: {export}"
    );
    // The header itself was sent.
    let sent = &server.requests()[0];
    assert_eq!(sent.header("x-api-token"), Some(HEADER_SECRET));
}

/// The key leaves pith's environment at start: what `/proc/<pith>/environ` shows (the block the
/// process was started with, which unsetting a variable does not change) holds neither the key
/// variable nor any other secret-named one, and the key still reaches the provider.
#[tokio::test]
async fn pith_keeps_no_key_in_its_environment() {
    let server = MockServer::start().await;
    let env = env_with_secrets(&server, "");
    server.push(openai::text("late", None).first_delay_ms(4000));
    let mut cmd = env.command(&["run", "hi"]);
    cmd.env(KEY_VAR, KEY)
        .env("OTHER_SERVICE_TOKEN", "tok-other-3b1e")
        .env("PITH_TEST_PLAIN", "plain-value-1");
    let child = cmd.spawn().unwrap();
    let pid = child.id().unwrap();
    support::faults::wait_for_requests(&server, 1).await;
    match std::fs::read(format!("/proc/{pid}/environ")) {
        Ok(block) => {
            let block = String::from_utf8_lossy(&block);
            assert!(
                block.contains("plain-value-1"),
                "read the real block: {block}"
            );
            for leaked in [KEY, KEY_VAR, "tok-other-3b1e"] {
                assert!(!block.contains(leaked), "{leaked} in pith's environ");
            }
        }
        // Not root: the process is non-dumpable, so its environ is closed to us. Also fine.
        Err(e) => assert_eq!(e.kind(), std::io::ErrorKind::PermissionDenied, "{e}"),
    }
    let out = child.wait_with_output().await.unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        server.requests()[0].secret("authorization"),
        Some(format!("Bearer {KEY}").as_str()),
        "the key still reaches the provider"
    );
}

/// A command that can see pith's process (the sandbox off: no PID namespace of its own) reads
/// every ancestor's environ reversed, which the scrubber cannot recognise: the key is not there.
#[tokio::test]
async fn a_command_cannot_read_the_key_from_pith_environ() {
    let server = MockServer::start().await;
    let env = env_with_secrets(&server, "sandbox = \"off\"\n[permission]\nbash = \"allow\"");
    let script = "p=$$; while [ \"$p\" -gt 1 ]; do echo \"== $p\"; tr '\\0' '\\n' < /proc/$p/environ | rev; p=$(awk '{print $4}' /proc/$p/stat); done";
    let args = json!({ "command": script }).to_string();
    server.push(openai::tool_calls(&[("call_1", "bash", &args)], None));
    server.push(openai::text("done", None));
    let out = run(
        &env,
        &[("PITH_TEST_PLAIN", "plain-value-1")],
        &["run", "--yes", "go"],
    )
    .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let result = last_tool_result(&server);
    let reversed: String = KEY.chars().rev().collect();
    assert!(
        result.contains("1-eulav-nialp=NIALP_TSET_HTIP"),
        "the script read the environ blocks: {result}"
    );
    assert!(
        !result.contains(&reversed) && !result.contains(KEY),
        "the key was read from an ancestor's environ: {result}"
    );
}
