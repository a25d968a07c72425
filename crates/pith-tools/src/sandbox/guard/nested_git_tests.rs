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
    // (Deeper than the shared temporary folder's walk, which other tests' calls make.)
    let ws = &t.path().join("w");
    std::fs::create_dir(ws).unwrap();
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

/// The walk is bounded in depth for temporary roots: a repository at the top is checked, one
/// deeper is not.
#[test]
fn temporary_roots_are_walked_only_so_deep() {
    let t = tempfile::tempdir().unwrap();
    let ws = &t.path().join("w");
    let shallow = ws.join("a");
    let deep = ws.join("b/c");
    std::fs::create_dir_all(&shallow).unwrap();
    std::fs::create_dir_all(&deep).unwrap();
    git(&shallow, &["init", "-q", "--bare"]);
    git(&shallow, &["config", "core.fsmonitor", "touch PWNED"]);
    git(&deep, &["init", "-q"]);
    git(&deep, &["config", "core.fsmonitor", "touch PWNED"]);
    let roots = [Root {
        path: ws.to_path_buf(),
        depth: Some(TEMP_DEPTH),
    }];
    let notes = neutralise(&roots, &[], SystemTime::now());
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(!shallow.join("config").exists());
    assert!(deep.join(".git/config").exists());
}

/// A walk that runs out of budget says so, and the next one, even from a later start, still
/// checks what the first did not reach.
#[test]
fn a_walk_that_runs_out_is_finished_by_the_next() {
    let t = tempfile::tempdir().unwrap();
    let ws = t.path();
    for i in 0..30 {
        std::fs::create_dir_all(ws.join(format!("d{i}"))).unwrap();
    }
    let repo = ws.join("d7/x");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q"]);
    git(&repo, &["config", "core.sshCommand", "touch PWNED"]);
    let roots = [Root {
        path: ws.to_path_buf(),
        depth: None,
    }];
    let notes = neutralise_within(&roots, &[], SystemTime::now(), 5);
    assert!(
        notes.iter().any(|n| n.contains("stopped looking")),
        "{notes:?}"
    );
    assert!(repo.join(".git/config").exists());
    let later = SystemTime::now() + Duration::from_secs(60);
    let notes = neutralise(&roots, &[], later);
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(!repo.join(".git/config").exists());
    // Finished: later walks count from their own start again.
    assert!(neutralise(&roots, &[], later).is_empty());
}

/// The cost of the walk on a checkout-sized tree (BENCHMARKS.md §12; `bash
/// bench/nested_git.sh`): `PITH_BENCH_FILES` files (default 100,000), 20 to a folder, five
/// folders deep, with 10 git repositories among them. Prints the median of 7 walks.
#[test]
#[ignore]
fn nested_git_walk_cost() {
    let files: usize = std::env::var("PITH_BENCH_FILES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(100_000);
    let t = tempfile::tempdir().unwrap();
    let ws = t.path();
    let mut dirs = 0;
    for i in 0..files / 20 {
        let dir = ws.join(format!("d{}/e{}/f{}/g{}", i % 10, i % 97, i % 13, i));
        std::fs::create_dir_all(&dir).unwrap();
        dirs += 1;
        for j in 0..20 {
            std::fs::write(dir.join(format!("file{j}.rs")), "").unwrap();
        }
        if i % (files / 200).max(1) == 0 {
            std::fs::create_dir_all(dir.join("repo/.git/objects")).unwrap();
            std::fs::write(dir.join("repo/.git/HEAD"), "ref: refs/heads/main\n").unwrap();
            std::fs::write(dir.join("repo/.git/config"), "[core]\n\tbare = false\n").unwrap();
        }
    }
    let roots = [Root {
        path: ws.to_path_buf(),
        depth: None,
    }];
    // Nothing changed since: the usual case, the whole tree walked, every repository checked.
    // Folders are kept between walks once their last change is 2 s old.
    std::thread::sleep(Duration::from_millis(2500));
    let later = SystemTime::now() + Duration::from_secs(60);
    let start = std::time::Instant::now();
    assert!(neutralise(&roots, &[], later).is_empty());
    let first = start.elapsed();
    let mut times = Vec::new();
    for _ in 0..7 {
        let start = std::time::Instant::now();
        let notes = neutralise(&roots, &[], later);
        times.push(start.elapsed());
        assert!(notes.is_empty(), "{notes:?}");
    }
    times.sort();
    println!(
        "nested_git walk: {files} files in {dirs} leaf folders: first walk {:.1} ms, later walks median {:.1} ms (min {:.1}, max {:.1})",
        first.as_secs_f64() * 1e3,
        times[3].as_secs_f64() * 1e3,
        times[0].as_secs_f64() * 1e3,
        times[6].as_secs_f64() * 1e3
    );
}
