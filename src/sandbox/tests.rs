use super::*;

/// Runs `script` with `sh -c` under `applied` in `dir`; returns (exit success, output).
async fn run(applied: &Applied, dir: &Path, script: &str) -> (bool, String) {
    let mut cmd = tokio::process::Command::new("/bin/sh");
    cmd.arg("-c").arg(script).current_dir(dir);
    if applied.sandboxed() {
        install(&mut cmd, applied).expect("sandbox prepared");
    }
    let out = cmd.output().await.expect("sh runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// Whether the kernel supports what a test needs; prints the reason when it does not.
fn supported(what: &str, ok: bool) -> bool {
    if !ok {
        println!(
            "SKIPPED ({what}): {}",
            support().missing.as_deref().unwrap_or("not supported here")
        );
    }
    ok
}

#[tokio::test]
async fn writes_are_confined_to_the_writable_roots() {
    if !supported("Landlock", support().landlock.is_some()) {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let applied = Applied {
        confined_writes: true,
        writable: vec![ws.path().to_path_buf()],
        ..Applied::default()
    };
    let (ok, out) = run(
        &applied,
        ws.path(),
        "echo in > inside.txt && mkdir -p d/e && echo x > d/e/f",
    )
    .await;
    assert!(ok, "writing in the workspace works: {out}");
    let target = outside.path().join("escaped.txt");
    let (ok, out) = run(
        &applied,
        ws.path(),
        &format!("echo out > {}", target.display()),
    )
    .await;
    assert!(!ok && !target.exists(), "wrote outside: {out}");
    assert!(applied.likely_denied(&out), "{out}");
    // Reading outside still works, and so does /dev/null.
    std::fs::write(outside.path().join("r.txt"), "readable").unwrap();
    let (ok, out) = run(
        &applied,
        ws.path(),
        &format!(
            "cat {} && echo gone > /dev/null",
            outside.path().join("r.txt").display()
        ),
    )
    .await;
    assert!(ok && out.contains("readable"), "{out}");
    // Children inherit the sandbox.
    let (ok, _) = run(
        &applied,
        ws.path(),
        &format!(
            "sh -c 'touch {}'",
            outside.path().join("child.txt").display()
        ),
    )
    .await;
    assert!(!ok && !outside.path().join("child.txt").exists());
}

#[tokio::test]
async fn read_only_allows_no_writes() {
    if !supported("Landlock", support().landlock.is_some()) {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let applied = Applied {
        confined_writes: true,
        read_only: true,
        ..Applied::default()
    };
    let (ok, out) = run(&applied, ws.path(), "echo x > f.txt").await;
    assert!(!ok && !ws.path().join("f.txt").exists(), "{out}");
    let (ok, out) = run(&applied, ws.path(), "ls / > /dev/null && echo fine").await;
    assert!(ok, "{out}");
}

#[tokio::test]
async fn the_network_is_blocked_but_unix_sockets_work() {
    if !supported("seccomp", support().seccomp) {
        return;
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let ws = tempfile::tempdir().unwrap();
    let applied = Applied {
        blocked_network: true,
        ..Applied::default()
    };
    let connect = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected");
    let script = format!("bash -c '{connect}'");
    let (ok, out) = run(&Applied::default(), ws.path(), &script).await;
    assert!(
        ok && out.contains("connected"),
        "without the sandbox: {out}"
    );
    let (ok, out) = run(&applied, ws.path(), &script).await;
    assert!(
        !ok && !out.contains("connected"),
        "connected through the sandbox: {out}"
    );
    assert!(applied.likely_denied(&out), "{out}");
    // Pipes still work.
    let (ok, out) = run(&applied, ws.path(), "echo piped | cat").await;
    assert!(ok && out.contains("piped"), "{out}");
}

#[test]
fn the_description_says_what_the_sandbox_allows() {
    let policy = CommandPolicy {
        mode: SandboxMode::WorkspaceWrite,
        writable: vec![PathBuf::from("/opt/cache")],
        ..CommandPolicy::default()
    };
    let text = policy.describe();
    if !policy.active() {
        println!("SKIPPED: no sandbox support here, so no description");
        assert!(text.is_empty());
        return;
    }
    assert!(text.contains("unsandboxed"), "{text}");
    if policy.confines_writes() {
        assert!(
            text.contains("the workspace") && text.contains("/opt/cache"),
            "{text}"
        );
    }
    if policy.blocks_network() {
        assert!(text.contains("cannot reach the network"), "{text}");
    }
    let off = CommandPolicy {
        mode: SandboxMode::Off,
        ..CommandPolicy::default()
    };
    assert_eq!(off.describe(), "");
    assert_eq!(off.unavailable_warning(), None);
}

#[test]
fn denial_detection_needs_a_sandbox_and_a_telling_message() {
    let applied = Applied {
        confined_writes: true,
        blocked_network: true,
        writable: vec![PathBuf::from("/w")],
        ..Applied::default()
    };
    assert!(applied.likely_denied("touch: cannot touch '/etc/x': Permission denied"));
    assert!(applied.likely_denied("curl: (6) Could not resolve host: example.com"));
    assert!(!applied.likely_denied("error[E0308]: mismatched types"));
    assert!(!Applied::default().likely_denied("Permission denied"));
    let note = applied.denial_note();
    assert!(note.contains("/w") && note.contains("no network") && note.contains("unsandboxed"));
}

#[test]
fn a_kernel_without_support_is_named_in_one_warning() {
    let policy = CommandPolicy::default();
    let none = Support {
        landlock: None,
        seccomp: false,
        missing: Some(
            "the kernel has no Landlock support and seccomp filters are unavailable".into(),
        ),
    };
    let w = policy.warning_for(&none).unwrap();
    assert!(!w.contains('\n'));
    assert!(
        w.contains("without a sandbox") && w.contains("no Landlock"),
        "{w}"
    );
    let writes_only = Support {
        landlock: None,
        seccomp: true,
        missing: Some("the kernel has no Landlock support".into()),
    };
    assert!(
        policy
            .warning_for(&writes_only)
            .unwrap()
            .contains("writes are not confined")
    );
    let full = Support {
        landlock: Some(5),
        seccomp: true,
        missing: None,
    };
    assert_eq!(policy.warning_for(&full), None);
    let with_network = CommandPolicy {
        network: true,
        ..CommandPolicy::default()
    };
    assert_eq!(
        with_network.warning_for(&Support {
            landlock: Some(1),
            seccomp: false,
            missing: None
        }),
        None
    );
}
