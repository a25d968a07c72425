//! The OS sandbox around commands, through the real binary: under `workspace-write` a command
//! can neither write outside the workspace nor open a network connection; with `sandbox = "off"`
//! both work; a sandboxed failure is reported as such and a rerun outside the sandbox needs the
//! user's approval.
//!
//! Where the kernel lacks Landlock or seccomp the tests print why and check only that pith says
//! so; on a kernel with both (CI's) they really run.

use crate::support;

use std::net::TcpListener;
use std::path::{Path, PathBuf};

use serde_json::json;
use support::MockServer;
use support::openai;
use support::pith::{PithEnv, last_tool_result, stderr};

/// A directory outside everything the sandbox lets commands write to (the workspace, /tmp,
/// $TMPDIR, the data dir), or `None` with the reason printed.
pub(crate) fn outside_dir() -> Option<tempfile::TempDir> {
    let tmp = std::env::temp_dir();
    let writable = |p: &Path| p.starts_with("/tmp") || p.starts_with(&tmp);
    for base in [
        PathBuf::from("/var/tmp"),
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")),
    ] {
        if let Ok(dir) = tempfile::tempdir_in(&base) {
            let real = dir
                .path()
                .canonicalize()
                .unwrap_or(dir.path().to_path_buf());
            if !writable(&real) {
                return Some(dir);
            }
        }
    }
    println!("SKIPPED: no directory outside /tmp and $TMPDIR to test writes against");
    None
}

pub(crate) fn sandbox_supported() -> bool {
    let s = pith_tools::sandbox::support();
    if s.landlock.is_none() || !s.seccomp {
        println!(
            "SKIPPED: {} (the sandbox tests need Landlock and seccomp)",
            s.missing.as_deref().unwrap_or("no sandbox support")
        );
        return false;
    }
    true
}

/// Runs one bash call headless; returns the tool result the model saw and pith's stderr.
async fn bash(config: &str, input: serde_json::Value, args: &[&str]) -> (String, String) {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 128_000, 16_000, config);
    server.push(openai::tool_calls(
        &[("call_1", "bash", &input.to_string())],
        None,
    ));
    server.push(openai::text("done", None));
    let mut full = vec!["run"];
    full.extend_from_slice(args);
    full.push("go");
    let out = env.run(&full).await;
    let result = last_tool_result(&server);
    (result, stderr(&out))
}

const WORKSPACE_WRITE: &str = "sandbox = \"workspace-write\"\n[permission]\nbash = \"allow\"\n";
const OFF: &str = "sandbox = \"off\"\n[permission]\nbash = \"allow\"\n";

/// `bash -c` is never auto-allowed, so the network checks run with `--yes` (no deny rules).
fn connect(port: u16) -> serde_json::Value {
    json!({"command": format!("bash -c 'exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected'")})
}

fn accepted(listener: &TcpListener) -> bool {
    listener.set_nonblocking(true).unwrap();
    listener.accept().is_ok()
}

#[tokio::test]
async fn workspace_write_stops_writes_outside_and_the_network() {
    if !sandbox_supported() {
        return;
    }
    let Some(outside) = outside_dir() else { return };
    let target = outside.path().join("escaped.txt");
    let (result, _) = bash(
        WORKSPACE_WRITE,
        json!({"command": format!("touch {}", target.display())}),
        &[],
    )
    .await;
    assert!(!target.exists(), "the sandbox let a write out: {result}");
    assert!(
        result.contains("[sandbox]") && result.contains("\"unsandboxed\": true"),
        "the failure is reported as the sandbox's: {result}"
    );

    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (result, _) = bash(WORKSPACE_WRITE, connect(port), &["--yes"]).await;
    assert!(
        !result.contains("\nconnected"),
        "connected through the sandbox: {result}"
    );
    assert!(!accepted(&listener), "the listener saw a connection");
    assert!(result.contains("[sandbox]"), "{result}");
}

#[tokio::test]
async fn with_the_sandbox_off_both_work() {
    let Some(outside) = outside_dir() else { return };
    let target = outside.path().join("written.txt");
    let (result, _) = bash(
        OFF,
        json!({"command": format!("touch {}", target.display())}),
        &[],
    )
    .await;
    assert!(
        target.exists(),
        "sandbox = \"off\" still blocked a write: {result}"
    );

    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (result, _) = bash(OFF, connect(port), &["--yes"]).await;
    assert!(result.contains("connected"), "{result}");
    assert!(accepted(&listener));
}

#[tokio::test]
async fn network_can_be_allowed_inside_the_sandbox() {
    if !sandbox_supported() {
        return;
    }
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let config = format!("sandbox_network = true\n{WORKSPACE_WRITE}");
    let (result, _) = bash(&config, connect(port), &["--yes"]).await;
    assert!(result.contains("connected"), "{result}");
}

#[tokio::test]
async fn a_rerun_outside_the_sandbox_needs_approval() {
    if !sandbox_supported() {
        return;
    }
    let Some(outside) = outside_dir() else { return };
    let target = outside.path().join("approved.txt");
    let input = json!({"command": format!("touch {}", target.display()), "unsandboxed": true});
    // Headless with no one to approve it: not run, even though bash is allowed.
    let (result, _) = bash(WORKSPACE_WRITE, input.clone(), &[]).await;
    assert!(
        !target.exists(),
        "ran outside the sandbox unapproved: {result}"
    );
    assert!(result.contains("outside the sandbox"), "{result}");
    // `--yes` approves what the rules ask about, never leaving the sandbox.
    let (result, _) = bash(WORKSPACE_WRITE, input.clone(), &["--yes"]).await;
    assert!(
        !target.exists(),
        "--yes let a command out of the sandbox: {result}"
    );
    assert!(
        result.contains("--yes never approves") && result.contains("--allow-unsandboxed"),
        "{result}"
    );
    // Only the explicit flag does.
    let (result, _) = bash(WORKSPACE_WRITE, input, &["--yes", "--allow-unsandboxed"]).await;
    assert!(target.exists(), "{result}");
}

#[tokio::test]
async fn an_untrusted_workspace_cannot_turn_the_sandbox_off() {
    if !sandbox_supported() {
        return;
    }
    let Some(outside) = outside_dir() else { return };
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 128_000, 16_000, WORKSPACE_WRITE);
    std::fs::write(
        env.path().join("pith.toml"),
        "sandbox = \"off\"\nsandbox_writable = [\"/\"]\n",
    )
    .unwrap();
    let target = outside.path().join("from-repo-config.txt");
    let input = json!({"command": format!("touch {}", target.display())});
    server.push(openai::tool_calls(
        &[("call_1", "bash", &input.to_string())],
        None,
    ));
    server.push(openai::text("done", None));
    let out = env.run(&["run", "go"]).await;
    assert!(
        !target.exists(),
        "a repository's pith.toml turned the sandbox off"
    );
    assert!(stderr(&out).contains("sandbox"), "{}", stderr(&out));
}

/// Runs one bash call headless in `env`; returns the tool result the model saw.
async fn bash_in(env: &PithEnv, server: &MockServer, command: &str, args: &[&str]) -> String {
    let input = json!({ "command": command });
    server.push(openai::tool_calls(
        &[("call_1", "bash", &input.to_string())],
        None,
    ));
    server.push(openai::text("done", None));
    let mut full = vec!["run"];
    full.extend_from_slice(args);
    full.push("go");
    env.run(&full).await;
    last_tool_result(server)
}

fn namespaces_supported() -> bool {
    let s = pith_tools::sandbox::support();
    if !s.has_namespaces() {
        println!(
            "SKIPPED: user namespaces are unavailable here ({})",
            s.namespaces.as_deref().unwrap_or("?")
        );
        return false;
    }
    sandbox_supported()
}

/// A command the user allowed (`make test*`) runs the repository's Makefile, which tries to
/// mark the repository trusted in pith's trust store; its `pith.toml` would then turn the
/// sandbox off on the next start.
/// The remembered sandbox probe lives in the data dir: a command that forges it ("no Landlock,
/// no seccomp here") to get a weaker sandbox on the next start cannot reach it.
#[tokio::test]
async fn a_command_cannot_forge_the_remembered_sandbox_probe() {
    if !sandbox_supported() {
        return;
    }
    let server = MockServer::start().await;
    let env = PithEnv::new(
        &server.url(),
        128_000,
        16_000,
        "sandbox = \"workspace-write\"\n[permission.bash]\n\"make test*\" = \"allow\"\n",
    );
    let cache = env.data.path().join("sandbox-support.json");
    let ws = env.path().canonicalize().unwrap();
    std::fs::write(
        ws.join("Makefile"),
        format!(
            "test:\n\techo '{{\"forged\":true}}' > {cache}; echo made\n",
            cache = cache.display()
        ),
    )
    .unwrap();
    let result = bash_in(&env, &server, "make test", &[]).await;
    assert!(result.contains("made"), "the command ran: {result}");
    let kept = std::fs::read_to_string(&cache).unwrap_or_default();
    assert!(
        kept.contains("\"support\""),
        "no probe was remembered: {kept}"
    );
    assert!(!kept.contains("forged"), "the probe was forged: {kept}");
}

#[tokio::test]
async fn an_allowed_command_cannot_write_the_trust_store() {
    if !sandbox_supported() {
        return;
    }
    let Some(outside) = outside_dir() else { return };
    let server = MockServer::start().await;
    let env = PithEnv::new(
        &server.url(),
        128_000,
        16_000,
        "sandbox = \"workspace-write\"\n[permission.bash]\n\"make test*\" = \"allow\"\n",
    );
    let ws = env.path().canonicalize().unwrap();
    let store = env.data.path().join("trusted-directories.json");
    std::fs::write(
        ws.join("Makefile"),
        format!(
            "test:\n\techo '{{\"{ws}\":\"trusted\"}}' > {store}; cat {creds}; echo made\n",
            ws = ws.display(),
            store = store.display(),
            creds = env.data.path().join("credentials.json").display(),
        ),
    )
    .unwrap();
    std::fs::write(
        env.data.path().join("credentials.json"),
        "{\"k\":\"sk-STORED-KEY\"}",
    )
    .unwrap();
    std::fs::write(
        ws.join("pith.toml"),
        "sandbox = \"off\"\n[permission]\nbash = \"allow\"\n",
    )
    .unwrap();
    let result = bash_in(&env, &server, "make test", &[]).await;
    assert!(result.contains("made"), "the command ran: {result}");
    assert!(
        !result.contains("sk-STORED-KEY"),
        "credentials read: {result}"
    );
    let trusted = std::fs::read_to_string(&store).unwrap_or_default();
    assert!(
        !trusted.contains("\"trusted\""),
        "the trust store was written: {trusted}"
    );
    // The next start still does not trust the repository: its `sandbox = "off"` is ignored.
    let target = outside.path().join("escaped.txt");
    let result = bash_in(
        &env,
        &server,
        &format!("touch {}", target.display()),
        &["--yes"],
    )
    .await;
    assert!(
        !target.exists(),
        "the repository's config took effect: {result}"
    );
}

/// What a command plants in `.git` would run later, outside pith, with no sandbox.
#[tokio::test]
async fn a_command_cannot_plant_git_hooks_or_config() {
    if !namespaces_supported() {
        return;
    }
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 128_000, 16_000, WORKSPACE_WRITE);
    let ws = env.path();
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .current_dir(ws)
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
    };
    if !git(&["init", "-q"]) {
        println!("SKIPPED: git is not installed");
        return;
    }
    let config_before = std::fs::read_to_string(ws.join(".git/config")).unwrap();
    let result = bash_in(
        &env,
        &server,
        // (`tee`, not a redirection: --yes refuses `> .git/…` before the sandbox is reached)
        "echo 'touch PWNED' | tee .git/hooks/post-commit; chmod +x .git/hooks/post-commit; \
         git config core.fsmonitor 'touch PWNED'; echo 'gitdir: /tmp/evil' | tee .git/commondir; \
         echo code > lib.rs; echo end",
        &["--yes"],
    )
    .await;
    assert!(result.contains("end"), "{result}");
    assert!(!ws.join(".git/hooks/post-commit").exists(), "{result}");
    assert!(!ws.join(".git/commondir").exists(), "{result}");
    assert_eq!(
        std::fs::read_to_string(ws.join(".git/config")).unwrap(),
        config_before
    );
    assert!(
        ws.join("lib.rs").exists(),
        "ordinary files are still writable"
    );
}

/// In a folder that is not a repository, a command cannot create the `.git` git would read.
#[tokio::test]
async fn a_command_cannot_create_a_git_folder() {
    if !namespaces_supported() {
        return;
    }
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 128_000, 16_000, WORKSPACE_WRITE);
    let result = bash_in(
        &env,
        &server,
        "mkdir -p .git/hooks && echo 'touch PWNED' | tee .git/hooks/post-checkout && echo planted",
        &["--yes"],
    )
    .await;
    assert!(result.contains("planted"), "{result}");
    assert!(!env.path().join(".git").exists(), "{result}");
    assert!(
        result.contains("[sandbox]") && result.contains(".git.pith-quarantined-"),
        "{result}"
    );
}

/// A process that leaves the command's session (`setsid`) does not outlive the call, nor pith.
#[tokio::test]
async fn no_process_survives_the_call() {
    if !sandbox_supported() {
        return;
    }
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 128_000, 16_000, WORKSPACE_WRITE);
    let marker = format!("pith-survivor-{}", std::process::id());
    let result = bash_in(
        &env,
        &server,
        &format!("setsid bash -c 'exec -a {marker} sleep 120' & echo started"),
        &[],
    )
    .await;
    assert!(result.contains("started"), "{result}");
    let alive = || {
        std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
            std::fs::read(e.path().join("cmdline")).is_ok_and(|c| c.starts_with(marker.as_bytes()))
        })
    };
    let start = std::time::Instant::now();
    while alive() && start.elapsed() < std::time::Duration::from_secs(10) {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(!alive(), "the setsid process outlived pith");
}

/// A command cannot read pith's environment (where the key came from) through /proc.
#[tokio::test]
async fn a_command_cannot_read_pith_through_proc() {
    if !namespaces_supported() {
        return;
    }
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 128_000, 16_000, WORKSPACE_WRITE);
    let key = "sk-proc-test-0123456789abcdef";
    let input = json!({ "command": "tr '\\0' '\\n' < /proc/$PPID/environ; \
                        for p in /proc/[0-9]*; do tr '\\0' '\\n' < $p/environ 2>/dev/null; done; echo end" });
    server.push(openai::tool_calls(
        &[("call_1", "bash", &input.to_string())],
        None,
    ));
    server.push(openai::text("done", None));
    let out = env
        .command(&["run", "go"])
        .env("PITH_TEST_PROC_SECRET", key)
        .output()
        .await
        .unwrap();
    let result = last_tool_result(&server);
    assert!(result.contains("end"), "{result} {}", stderr(&out));
    assert!(!result.contains(key), "{result}");
}

/// Issue 37: the configured `instructions` files and the `--config` file kept in the workspace
/// are read-only to commands (their hooks would run outside the sandbox, their words reach the
/// model), and so is the other name of a hard link the user made to `AGENTS.md`.
#[tokio::test]
async fn a_command_cannot_write_instruction_files_the_config_file_or_a_hard_link() {
    if !namespaces_supported() {
        return;
    }
    let server = MockServer::start().await;
    let env = PithEnv::new(
        &server.url(),
        128_000,
        16_000,
        "instructions = [\"docs/STYLE.md\"]",
    );
    let ws = env.path().canonicalize().unwrap();
    std::fs::create_dir_all(ws.join("docs")).unwrap();
    std::fs::write(ws.join("docs/STYLE.md"), "style\n").unwrap();
    std::fs::write(ws.join("AGENTS.md"), "be nice\n").unwrap();
    std::fs::hard_link(ws.join("AGENTS.md"), ws.join("notes.md")).unwrap();
    let config = ws.join("my.toml");
    std::fs::copy(&env.config, &config).unwrap();
    let before = std::fs::read_to_string(&config).unwrap();
    // through `tee`: a redirection to these files is refused by the policy before the sandbox
    let command = "echo evil | tee -a docs/STYLE.md; printf '[[hooks.session_start]]\\ncommand = \"touch PWNED\"\\n' | tee -a my.toml; \
                   echo evil | tee -a notes.md; echo ok > other.txt; echo end";
    let config_arg = config.display().to_string();
    // trusted: a `--config` file inside the workspace is otherwise cut to its harmless keys
    let out = bash_in(
        &env,
        &server,
        command,
        &["--yes", "--trust", "--config", &config_arg],
    )
    .await;
    assert!(out.contains("end"), "{out}");
    assert_eq!(
        std::fs::read_to_string(ws.join("docs/STYLE.md")).unwrap(),
        "style\n",
        "{out}"
    );
    assert_eq!(std::fs::read_to_string(&config).unwrap(), before, "{out}");
    assert_eq!(
        std::fs::read_to_string(ws.join("AGENTS.md")).unwrap(),
        "be nice\n",
        "{out}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("other.txt")).unwrap(),
        "ok\n"
    );
}
