use std::path::Path;
use std::process::Command;
use std::time::{Duration, SystemTime};

use super::*;

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

fn scan(ws: &Path, since: SystemTime) -> Vec<String> {
    let roots = [Root {
        path: ws.to_path_buf(),
        depth: None,
    }];
    neutralise(&roots, &[ws.join(".git")], since)
}

fn moved(dir: &Path, name: &str) -> bool {
    std::fs::read_dir(dir).unwrap().flatten().any(|e| {
        e.file_name()
            .to_string_lossy()
            .starts_with(&format!("{name}.pith-quarantined-"))
    })
}

/// Issue 37: a repository a command creates at any depth cannot carry what git runs.
#[test]
fn nested_repositories_a_command_made_are_disarmed() {
    let t = tempfile::tempdir().unwrap();
    let ws = t.path();
    let since = SystemTime::now();
    // A nested `.git` with fsmonitor, five folders down.
    let deep = ws.join("a/b/c/d/e");
    std::fs::create_dir_all(&deep).unwrap();
    git(&deep, &["init", "-q"]);
    git(&deep, &["config", "core.fsmonitor", "touch PWNED"]);
    // A bare repository with a hook.
    let bare = ws.join("vendor/thing.git");
    std::fs::create_dir_all(&bare).unwrap();
    git(&bare, &["init", "-q", "--bare"]);
    std::fs::write(bare.join("hooks/post-update"), "#!/bin/sh\ntouch PWNED\n").unwrap();
    // A `.git` file pointing elsewhere.
    std::fs::create_dir_all(ws.join("linked")).unwrap();
    std::fs::write(ws.join("linked/.git"), "gitdir: /somewhere/else\n").unwrap();
    // A plain clone-like repository is left alone.
    let plain = ws.join("plain");
    std::fs::create_dir_all(&plain).unwrap();
    git(&plain, &["init", "-q"]);
    git(
        &plain,
        &["remote", "add", "origin", "https://example.com/x.git"],
    );

    let notes = scan(ws, since);
    assert_eq!(notes.len(), 3, "{notes:?}");
    assert!(moved(&deep.join(".git"), "config"));
    assert!(!deep.join(".git/config").exists());
    assert!(moved(&bare, "hooks") && !bare.join("hooks").exists());
    assert!(
        bare.join("config").exists(),
        "a bare repository's plain config stays"
    );
    assert!(moved(&ws.join("linked"), ".git"));
    assert!(plain.join(".git/config").exists() && plain.join(".git/hooks").exists());
    // Nothing left to do the second time.
    assert!(scan(ws, since).is_empty());
}

/// Repositories that did not change during the call are not touched, whatever they hold.
#[test]
fn an_unchanged_repository_is_left_alone() {
    let t = tempfile::tempdir().unwrap();
    let ws = t.path();
    let sub = ws.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    git(&sub, &["init", "-q"]);
    git(&sub, &["config", "core.editor", "vim"]);
    let later = SystemTime::now() + Duration::from_secs(10);
    assert!(scan(ws, later).is_empty());
    assert!(sub.join(".git/config").exists());
}

/// A repository renamed into place whose config is older than the call is still checked
/// (the folder changed), and the workspace root itself as a bare repository too.
#[test]
fn a_repository_moved_into_place_or_at_the_root_is_checked() {
    let t = tempfile::tempdir().unwrap();
    let ws = t.path();
    let stash = ws.join("stash");
    std::fs::create_dir_all(stash.join("objects")).unwrap();
    std::fs::write(stash.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(stash.join("config"), "[core]\n\tpager = touch PWNED\n").unwrap();
    std::fs::create_dir_all(ws.join("x")).unwrap();
    std::fs::rename(&stash, ws.join("x/.git")).unwrap();
    let notes = scan(ws, SystemTime::now());
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(!ws.join("x/.git/config").exists());

    std::fs::create_dir_all(ws.join("objects")).unwrap();
    std::fs::write(ws.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(ws.join("config"), "[alias]\n\tst = !touch PWNED\n").unwrap();
    let notes = scan(ws, SystemTime::now());
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(!ws.join("config").exists());
}

/// The walk is bounded in depth for temporary roots.
#[test]
fn temporary_roots_are_walked_only_so_deep() {
    let t = tempfile::tempdir().unwrap();
    let ws = t.path();
    let shallow = ws.join("a");
    let deep = ws.join("a/b/c/d/e/f");
    for d in [&shallow, &deep] {
        std::fs::create_dir_all(d).unwrap();
        git(d, &["init", "-q"]);
        git(d, &["config", "core.fsmonitor", "touch PWNED"]);
    }
    let roots = [Root {
        path: ws.to_path_buf(),
        depth: Some(TEMP_DEPTH),
    }];
    let notes = neutralise(&roots, &[], SystemTime::now());
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(!shallow.join(".git/config").exists());
}
