use super::*;

/// Runs `script` with `sh -c` under `applied` in `dir`; returns (exit success, output).
pub(super) async fn run(applied: &Applied, dir: &Path, script: &str) -> (bool, String) {
    let mut cmd = tokio::process::Command::new("/bin/sh");
    cmd.arg("-c").arg(script).current_dir(dir);
    let prepared = if applied.sandboxed() || applied.namespaces {
        prepare(applied).expect("sandbox prepared")
    } else {
        None
    };
    // SAFETY: as in `apply`.
    unsafe {
        cmd.pre_exec(reaper::child_setup(prepared));
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
pub(super) fn supported(what: &str, ok: bool) -> bool {
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
fn a_kernel_without_namespaces_or_scopes_is_named_once() {
    let policy = CommandPolicy::default();
    let no_ns = Support {
        landlock: Some(5),
        seccomp: true,
        namespaces: Some("unshare: Operation not permitted".into()),
        ..Support::default()
    };
    let w = policy.warning_for(&no_ns).unwrap();
    assert!(!w.contains('\n'), "{w}");
    for part in [
        "user namespaces",
        "Operation not permitted",
        ".git",
        "signalling",
        "ABI 5",
    ] {
        assert!(w.contains(part), "{part} not in {w}");
    }
    let no_proc = Support {
        landlock: Some(7),
        seccomp: true,
        proc: false,
        ..Support::default()
    };
    assert!(policy.warning_for(&no_proc).unwrap().contains("/proc"));
    let off = CommandPolicy {
        mode: SandboxMode::Off,
        ..CommandPolicy::default()
    };
    assert_eq!(off.warning_for(&no_ns), None);
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
    let hiding = Applied {
        confined_writes: true,
        hidden: vec![Hidden {
            path: PathBuf::from("/home/u/.ssh"),
            dir: true,
            reveal: Vec::new(),
        }],
        ..Applied::default()
    };
    assert!(hiding.likely_denied("cat: /home/u/.ssh/id_rsa: No such file or directory"));
    assert!(hiding.denial_note().contains("/home/u/.ssh"));
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
        ..Support::default()
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
        ..Support::default()
    };
    assert!(
        policy
            .warning_for(&writes_only)
            .unwrap()
            .contains("writes are not confined")
    );
    let full = Support {
        landlock: Some(6),
        seccomp: true,
        proc: true,
        ..Support::default()
    };
    assert_eq!(policy.warning_for(&full), None);
    let with_network = CommandPolicy {
        network: true,
        ..CommandPolicy::default()
    };
    assert_eq!(
        with_network.warning_for(&Support {
            landlock: Some(6),
            proc: true,
            ..Support::default()
        }),
        None
    );
}

/// A home with secrets, pith's data and config dirs and a git workspace, all in a temp dir.
pub(super) struct Machine {
    _dir: tempfile::TempDir,
    pub(super) home: PathBuf,
    pub(super) data: PathBuf,
    pub(super) outputs: PathBuf,
    pub(super) ws: PathBuf,
    pub(super) policy: CommandPolicy,
}

impl Machine {
    /// Made outside /tmp and $TMPDIR (both writable in the sandbox) where possible.
    pub(super) fn new() -> Machine {
        let tmp = std::env::temp_dir();
        let outside = [
            PathBuf::from("/var/tmp"),
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target"),
        ]
        .into_iter()
        .find_map(|base| {
            let dir = tempfile::tempdir_in(base).ok()?;
            let real = dir.path().canonicalize().ok()?;
            (!real.starts_with("/tmp") && !real.starts_with(&tmp)).then_some(dir)
        });
        let dir = outside.unwrap_or_else(|| tempfile::tempdir().unwrap());
        let root = dir.path().canonicalize().unwrap();
        let home = root.join("home");
        let data = home.join(".local/share/pith");
        let outputs = data.join("tool-output");
        let config = home.join(".config/pith");
        let ws = home.join("src/project");
        for d in [
            &outputs,
            &config,
            &home.join(".ssh"),
            &ws.join(".git/hooks"),
        ] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(home.join(".ssh/id_ed25519"), "PRIVATE-KEY-BYTES").unwrap();
        std::fs::write(data.join("credentials.json"), "{\"openai\":\"sk-stored\"}").unwrap();
        std::fs::write(data.join("trusted-directories.json"), "{}").unwrap();
        std::fs::write(config.join("config.toml"), "model = \"a/b\"").unwrap();
        std::fs::write(ws.join(".git/config"), "[core]\n").unwrap();
        std::fs::write(ws.join("pith.toml"), "").unwrap();
        let policy = CommandPolicy {
            state: StatePaths {
                home: Some(home.clone()),
                config_dir: Some(config),
                extra: Vec::new(),
            },
            ..CommandPolicy::default()
        };
        Machine {
            _dir: dir,
            home,
            data,
            outputs,
            ws,
            policy,
        }
    }

    pub(super) fn plan(&self) -> Applied {
        self.policy.plan(&self.ws, &self.data, &self.outputs)
    }

    /// The plan as it is on a system without user namespaces.
    pub(super) fn plan_without_namespaces(&self) -> Applied {
        let s = Support {
            namespaces: Some("test".into()),
            proc: false,
            ..support().clone()
        };
        self.policy
            .plan_for(&s, &self.ws, &self.data, &self.outputs)
    }
}

pub(super) fn full_support() -> bool {
    supported("Landlock", support().landlock.is_some())
        && supported("seccomp", support().seccomp)
        && supported(
            "user namespaces",
            support().has_namespaces() && support().proc,
        )
}

#[tokio::test]
async fn pith_state_and_secrets_cannot_be_read_or_written() {
    if !supported("Landlock", support().landlock.is_some()) {
        return;
    }
    let m = Machine::new();
    let mut plans = vec![("without namespaces", m.plan_without_namespaces())];
    if support().has_namespaces() {
        plans.push(("with namespaces", m.plan()));
    }
    for (how, applied) in plans {
        let script = format!(
            "{{ cat {h}/.ssh/id_ed25519; cat {d}/credentials.json; ls {d} | sed 's/^/LS:/'; \
             echo '{{\"{w}\":\"trusted\"}}' > {d}/trusted-directories.json; \
             echo hi > {o}/saved.txt && cat {o}/saved.txt; cat {h}/.config/pith/config.toml; echo end; }} 2>&1",
            h = m.home.display(),
            d = m.data.display(),
            o = m.outputs.display(),
            w = m.ws.display(),
        );
        let (_, out) = run(&applied, &m.ws, &script).await;
        for secret in [
            "PRIVATE-KEY-BYTES",
            "sk-stored",
            "LS:credentials.json",
            "\"a/b\"",
        ] {
            assert!(!out.contains(secret), "{how}: {secret} leaked: {out}");
        }
        assert!(
            out.contains("hi\n") && out.ends_with("end\n"),
            "{how}: {out}"
        );
        assert_eq!(
            std::fs::read_to_string(m.data.join("trusted-directories.json")).unwrap(),
            "{}",
            "{how}: the trust store was written"
        );
        assert!(m.outputs.join("saved.txt").exists(), "{how}");
        std::fs::remove_file(m.outputs.join("saved.txt")).unwrap();
    }
}

#[tokio::test]
async fn what_git_and_pith_run_is_read_only() {
    if !full_support() {
        return;
    }
    let m = Machine::new();
    let applied = m.plan();
    assert!(
        applied.protected.contains(&m.ws.join(".git")),
        "{applied:?}"
    );
    // One string per line of source (`concat!`): a string continued with `\` left the line
    // counters reading its `{` as the start of a block.
    let script = concat!(
        "{ echo x > .git/hooks/post-commit; printf '[core]\\n\\tfsmonitor = touch PWNED\\n' >> .git/config; ",
        "echo 'sandbox = \"off\"' > pith.toml; rm -rf .git; mv .git gone; echo ok > main.rs; echo end; } 2>&1"
    );
    let (_, out) = run(&applied, &m.ws, script).await;
    assert!(out.ends_with("end\n"), "{out}");
    assert!(!m.ws.join(".git/hooks/post-commit").exists(), "{out}");
    assert_eq!(
        std::fs::read_to_string(m.ws.join(".git/config"))
            .ok()
            .as_deref(),
        Some("[core]\n"),
        "{out}"
    );
    assert_eq!(std::fs::read_to_string(m.ws.join("pith.toml")).unwrap(), "");
    assert_eq!(
        std::fs::read_to_string(m.ws.join("main.rs")).unwrap(),
        "ok\n"
    );
    assert!(applied.likely_denied(&out), "{out}");
}

#[tokio::test]
async fn metadata_outside_cannot_change() {
    if !full_support() {
        return;
    }
    use std::os::unix::fs::MetadataExt;
    let m = Machine::new();
    if m.home.starts_with("/tmp") || m.home.starts_with(std::env::temp_dir()) {
        println!("SKIPPED: no folder outside the writable /tmp to test against");
        return;
    }
    let file = m.home.join("notes.txt");
    std::fs::write(&file, "mine").unwrap();
    let before = std::fs::metadata(&file).unwrap();
    let script = format!(
        "chmod 777 {f}; touch -d 2001-01-01 {f}; ln {f} {ws}/link; echo end",
        f = file.display(),
        ws = m.ws.display()
    );
    let (_, out) = run(&m.plan(), &m.ws, &script).await;
    assert!(out.contains("end"), "{out}");
    let after = std::fs::metadata(&file).unwrap();
    assert_eq!(before.mode(), after.mode(), "{out}");
    assert_eq!(before.mtime(), after.mtime(), "{out}");
    assert_eq!(after.nlink(), 1, "{out}");
}

#[tokio::test]
async fn no_unix_sockets_or_signals_reach_outside() {
    if !full_support() {
        return;
    }
    let m = Machine::new();
    let path = m.home.join("agent.sock");
    let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
    listener.set_nonblocking(true).unwrap();
    let mut outside = std::process::Command::new("sleep")
        .arg("60")
        .spawn()
        .unwrap();
    let applied = m.plan();
    let script = format!(
        "python3 -c \"import socket; s=socket.socket(socket.AF_UNIX); s.connect('{}'); print('CONNECTED')\"; \
         python3 -c \"import socket; s=socket.socket(socket.AF_UNIX); s.connect('\\0pith-test'); print('CONNECTED')\"; \
         kill -9 {pid}; kill -STOP {pid}; echo end",
        path.display(),
        pid = outside.id()
    );
    let (_, out) = run(&applied, &m.ws, &script).await;
    assert!(!out.contains("CONNECTED"), "{out}");
    assert!(
        listener.accept().is_err(),
        "the outside socket saw a connection"
    );
    assert!(
        outside.try_wait().unwrap().is_none(),
        "a process outside was killed: {out}"
    );
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", outside.id())).unwrap();
    assert!(!stat.contains(") T "), "a process outside was stopped");
    outside.kill().unwrap();
    let _ = outside.wait();
}

#[tokio::test]
async fn proc_shows_nothing_of_pith() {
    if !full_support() {
        return;
    }
    let m = Machine::new();
    let me = std::process::id();
    let script = format!(
        "{{ cat /proc/{me}/environ; cat /proc/$PPID/environ; ls /proc | grep -c '^[0-9]'; echo end; }} 2>&1"
    );
    // SAFETY: a test-only variable set before the command starts.
    let marker = "PITH_TEST_MARKER_VALUE_42";
    unsafe { std::env::set_var("PITH_TEST_SEEN", marker) };
    let (_, out) = run(&m.plan(), &m.ws, &script).await;
    assert!(!out.contains(marker), "{out}");
    let count: u32 = out
        .lines()
        .rev()
        .nth(1)
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or(999);
    assert!(count < 10, "the command sees {count} processes: {out}");
}

#[tokio::test]
async fn the_process_limit_is_set() {
    if !full_support() {
        return;
    }
    let m = Machine::new();
    let (_, out) = run(&m.plan(), &m.ws, "grep 'Max processes' /proc/self/limits").await;
    assert!(out.contains(" 4096 "), "{out}");
}

#[test]
fn print_support_for_the_log() {
    println!("{:?}", support());
}
