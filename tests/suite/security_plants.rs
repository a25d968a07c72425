//! The red-team round after issue 37: files that run code later, written by the file tools with
//! no one asking — outside the workspace under `--yes`, bypass or a hook's approval; a `$HOME`
//! workspace's dotfiles; a git directory planted file by file without any `.git` name. Each
//! test is an attack that got through before.

use crate::support;

use support::MockServer;
use support::pith::{PithEnv, stderr};

use super::security_policy::{queue_writes_of as queue_writes, results};

const HOOK_APPROVES: &str =
    "[[hooks.pre_tool_use]]\ncommand = \"echo '{\\\"decision\\\": \\\"approve\\\"}'\"\n";

#[tokio::test]
async fn yes_bypass_and_a_hook_do_not_write_outside_the_workspace() {
    let outside = tempfile::tempdir().unwrap();
    // a new file: no read is needed first, so only the write's own question stands
    let target = outside.path().join("config");
    let planted = target.to_string_lossy().into_owned();
    for (extra, args) in [
        ("", &["run", "--yes", "plant"][..]),
        ("", &["run", "--permission-mode", "bypass", "plant"][..]),
        (
            "",
            &["run", "--permission-mode", "accept-edits", "plant"][..],
        ),
        (HOOK_APPROVES, &["run", "plant"][..]),
    ] {
        let server = MockServer::start().await;
        let env = PithEnv::new(&server.url(), 128_000, 8_000, extra);
        queue_writes(
            &server,
            &[(planted.clone(), "ProxyCommand touch /tmp/pwned\n")],
        );
        let out = env.run(args).await;
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        assert!(!target.exists(), "{args:?}: written");
        let seen = results(&server);
        assert_eq!(seen.len(), 1, "{args:?}: {seen:?}");
        assert!(
            seen[0].contains("outside the workspace"),
            "{args:?}: {seen:?}"
        );
    }
}

#[tokio::test]
async fn an_allow_rule_of_the_user_s_own_still_writes_outside() {
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("notes.txt");
    let server = MockServer::start().await;
    let env = PithEnv::new(
        &server.url(),
        128_000,
        8_000,
        "[permission]\nexternal_directory = \"allow\"\n",
    );
    queue_writes(
        &server,
        &[(target.to_string_lossy().into_owned(), "hello\n")],
    );
    let out = env.run(&["run", "--yes", "note"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "hello\n");
}

#[tokio::test]
async fn yes_does_not_plant_home_dotfiles_when_the_workspace_is_home() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 128_000, 8_000, "");
    let plants = [
        "~/.bash_aliases",
        "~/.ssh/config",
        "~/.ssh/authorized_keys",
        "~/.local/bin/git",
        "~/.local/lib/python3.12/site-packages/usercustomize.py",
        "~/.vimrc",
        "~/.config/nvim/init.lua",
        "~/.cargo/config.toml",
    ];
    let writes: Vec<(String, &str)> = plants.iter().map(|p| (p.to_string(), "pwn\n")).collect();
    queue_writes(&server, &writes);
    let out = env
        .command(&["run", "--yes", "settle in"])
        .env("HOME", env.path())
        .output()
        .await
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    for p in plants {
        let path = env.path().join(p.trim_start_matches("~/"));
        assert!(!path.exists(), "{p} was written");
    }
    let seen = results(&server);
    assert_eq!(seen.len(), plants.len(), "{seen:?}");
    for r in seen {
        assert!(r.contains("protected"), "{r}");
    }
}

#[tokio::test]
async fn accept_edits_does_not_plant_a_bare_repository() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 128_000, 8_000, "");
    let config = "[core]\n\tbare = false\n\tworktree = ..\n\tfsmonitor = touch /tmp/pwned\n";
    let writes = [
        ("sub/HEAD".to_string(), "ref: refs/heads/m\n"),
        ("sub/refs/heads/m".to_string(), ""),
        ("sub/objects/info/x".to_string(), ""),
        ("sub/config".to_string(), config),
    ];
    queue_writes(&server, &writes);
    let out = env
        .run(&["run", "--permission-mode", "accept-edits", "plant"])
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let git = std::process::Command::new("git")
        .args(["-C", "sub", "config", "core.fsmonitor"])
        .current_dir(env.path())
        .env("GIT_CEILING_DIRECTORIES", env.path())
        .output()
        .unwrap();
    let fsmonitor = String::from_utf8_lossy(&git.stdout);
    assert_eq!(fsmonitor.trim(), "", "the plant is a repository git obeys");
    let seen = results(&server);
    assert!(seen.iter().any(|r| r.contains("protected")), "{seen:?}");
}
