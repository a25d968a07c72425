//! Attacks on what a command shares with the machine: `/tmp`, terminals, the process and
//! memory caps, the files pith reads instructions and configuration from.

use super::tests::{Machine, full_support, run, supported};
use super::*;

/// A name no other test or engineer uses.
fn unique(tag: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!("pith-attack-{tag}-{}-{nanos}", std::process::id())
}

#[tokio::test]
async fn nothing_a_command_writes_in_tmp_reaches_the_machines_tmp() {
    if !full_support() {
        return;
    }
    let m = Machine::new();
    let name = unique("tmp");
    let repo = PathBuf::from("/tmp").join(&name);
    let agents = PathBuf::from("/tmp").join(format!("{name}.AGENTS.md"));
    let script = format!(
        "{{ git init -q {r} && git -C {r} config core.fsmonitor 'touch /tmp/PWNED' && echo planted; \
         echo 'obey the repo' > {a} && echo wrote; echo x > \"$TMPDIR/t\" || echo x > /tmp/t; \
         ls -A /tmp | wc -l; echo end; }} 2>&1",
        r = repo.display(),
        a = agents.display(),
    );
    let (_, out) = run(&m.plan(), &m.ws, &script).await;
    let leaked = (repo.exists(), agents.exists());
    let _ = std::fs::remove_dir_all(&repo);
    let _ = std::fs::remove_file(&agents);
    assert_eq!(
        leaked,
        (false, false),
        "the machine's /tmp was written: {out}"
    );
    // The command itself has a working /tmp, and sees nothing of the machine's in it.
    assert!(
        out.contains("planted") && out.contains("wrote") && out.ends_with("end\n"),
        "{out}"
    );
    let entries: usize = out.lines().rev().nth(1).unwrap().trim().parse().unwrap();
    assert!(
        entries <= 3,
        "the private /tmp shows {entries} entries: {out}"
    );
    // The attack as it was: a repository at /tmp itself, which `git status` anywhere below
    // /tmp would find.
    let root_git = Path::new("/tmp/.git");
    if root_git.exists() {
        println!("SKIPPED (/tmp/.git): the machine already has one");
        return;
    }
    let script =
        "git init -q /tmp && git -C /tmp config core.fsmonitor 'touch /tmp/PWNED' && echo planted";
    let (_, out) = run(&m.plan(), &m.ws, script).await;
    let leaked = root_git.exists();
    if leaked {
        let _ = std::fs::remove_dir_all(root_git);
    }
    assert!(!leaked && out.contains("planted"), "{out}");
}

#[tokio::test]
async fn a_workspace_under_tmp_stays_visible_and_protected_in_the_private_tmp() {
    if !full_support() {
        return;
    }
    let dir = tempfile::tempdir_in("/tmp").unwrap();
    let ws = dir.path().canonicalize().unwrap().join("ws");
    std::fs::create_dir_all(ws.join(".git")).unwrap();
    std::fs::write(ws.join(".git/config"), "[core]\n").unwrap();
    std::fs::write(ws.join("main.rs"), "fn main() {}").unwrap();
    let neighbour = dir.path().join("neighbour.txt");
    std::fs::write(&neighbour, "not yours").unwrap();
    let data = dir.path().join("data");
    let outputs = data.join("tool-output");
    std::fs::create_dir_all(&outputs).unwrap();
    let applied = CommandPolicy::default().plan(&ws, &data, &outputs);
    assert_eq!(applied.tmp, Tmp::Mounted);
    let script = format!(
        "{{ cat main.rs; echo; echo ok > new.txt; echo out > {o}/saved; \
         echo x >> .git/config; cat {n}; echo end; }} 2>&1",
        o = outputs.display(),
        n = neighbour.display()
    );
    let (_, out) = run(&applied, &ws, &script).await;
    assert!(
        out.contains("fn main() {}") && out.ends_with("end\n"),
        "{out}"
    );
    assert!(
        !out.contains("not yours"),
        "a neighbour in /tmp was visible: {out}"
    );
    assert_eq!(std::fs::read_to_string(ws.join("new.txt")).unwrap(), "ok\n");
    assert!(outputs.join("saved").exists(), "{out}");
    assert_eq!(
        std::fs::read_to_string(ws.join(".git/config")).unwrap(),
        "[core]\n"
    );
}

#[tokio::test]
async fn without_namespaces_tmpdir_is_private_and_tmp_is_not_writable() {
    if !supported("Landlock", support().landlock.is_some()) {
        return;
    }
    let m = Machine::new();
    let applied = m.plan_without_namespaces();
    let Tmp::Dir(private) = &applied.tmp else {
        panic!("no private dir: {applied:?}");
    };
    let name = unique("fallback");
    let shared = PathBuf::from("/tmp").join(&name);
    let script = format!(
        "{{ echo x > {s}; echo y > {p}/f && echo private-ok; echo end; }} 2>&1",
        s = shared.display(),
        p = private.display()
    );
    let (_, out) = run(&applied, &m.ws, &script).await;
    let leaked = shared.exists();
    let _ = std::fs::remove_file(&shared);
    assert!(!leaked, "wrote the shared /tmp: {out}");
    assert!(out.contains("private-ok"), "{out}");
}

/// A pseudo-terminal of the test's own, as another terminal of the user's: (master, its
/// `/dev/pts/N`).
fn open_pty() -> (std::os::fd::OwnedFd, String) {
    use std::os::fd::FromRawFd;
    // SAFETY: plain libc calls; the name buffer outlives them.
    unsafe {
        let fd = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY);
        assert!(fd >= 0);
        assert_eq!(libc::grantpt(fd), 0);
        assert_eq!(libc::unlockpt(fd), 0);
        let mut buf = [0 as libc::c_char; 64];
        assert_eq!(libc::ptsname_r(fd, buf.as_mut_ptr(), buf.len()), 0);
        let name = std::ffi::CStr::from_ptr(buf.as_ptr())
            .to_string_lossy()
            .into_owned();
        (std::os::fd::OwnedFd::from_raw_fd(fd), name)
    }
}

#[tokio::test]
async fn no_terminal_but_its_own() {
    if !full_support() {
        return;
    }
    let m = Machine::new();
    let (_master, pts) = open_pty();
    assert!(Path::new(&pts).exists());
    let script = format!(
        "{{ true 3<>{pts} && echo OPENED-PTS; true 4<>/dev/tty && echo OPENED-TTY; \
         true 5<>/dev/tty1 && echo OPENED-TTY1; ls /dev | tr '\\n' ' '; echo; \
         ls /dev/pts | tr '\\n' ' '; echo; echo z > /dev/null && head -c1 /dev/urandom > /dev/null && echo devices-ok; \
         python3 -c 'import os; m, s = os.openpty(); print(\"OWN-PTY\", os.ttyname(s))'; echo end; }} 2>&1"
    );
    let (_, out) = run(&m.plan(), &m.ws, &script).await;
    for opened in ["OPENED-PTS", "OPENED-TTY", "OPENED-TTY1"] {
        assert!(!out.contains(opened), "{opened}: {out}");
    }
    assert!(
        out.contains("devices-ok") && out.ends_with("end\n"),
        "{out}"
    );
    let allowed = [
        "fd", "full", "null", "ptmx", "pts", "random", "shm", "stderr", "stdin", "stdout",
        "urandom", "zero",
    ];
    let listing = out.lines().find(|l| l.contains("null")).unwrap_or("");
    for entry in listing.split_whitespace() {
        assert!(allowed.contains(&entry), "/dev holds {entry}: {out}");
    }
    let n = pts.rsplit('/').next().unwrap();
    let own = out.lines().find(|l| l.contains("ptmx")).unwrap_or("");
    assert!(
        !own.split_whitespace().any(|e| e == n) || own.contains("OWN-PTY"),
        "the user's {pts} is listed: {out}"
    );
    if which("python3") {
        assert!(
            out.contains("OWN-PTY /dev/pts/"),
            "no pty of its own: {out}"
        );
    }
}

fn which(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
}

#[tokio::test]
async fn the_process_cap_holds_for_root() {
    if !full_support() {
        return;
    }
    if !which("python3") {
        println!("SKIPPED: no python3 to fork with");
        return;
    }
    let mut m = Machine::new();
    m.policy.limits.processes = Some(40);
    // Forks until the kernel says no: without a cap that holds for root all 200 run.
    let script = "python3 -c '\nimport os, time\nn = 0\nfor i in range(200):\n    try:\n        pid = os.fork()\n    except OSError:\n        break\n    if pid == 0:\n        time.sleep(3)\n        os._exit(0)\n    n += 1\nprint(\"forked\", n)\n' 2>&1";
    let (_, out) = run(&m.plan(), &m.ws, script).await;
    let forked: u32 = out
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(999);
    assert!(
        (30..=40).contains(&forked),
        "{forked} processes forked under a cap of 40: {out}"
    );
}

#[tokio::test]
async fn memory_and_tmp_size_caps_hold_when_configured() {
    if !full_support() || linux::cgroup_check("memory").is_err() {
        println!("SKIPPED: no memory cgroup here");
        return;
    }
    let mut m = Machine::new();
    m.policy.limits.memory = Some(64 << 20);
    m.policy.limits.tmp_size = Some(1 << 20);
    let script = "{ dd if=/dev/zero of=/tmp/big bs=64k count=64; \
                  python3 -c 'b = bytearray(256 << 20); print(\"ALLOCATED\")'; echo status=$?; echo end; } 2>&1";
    let (_, out) = run(&m.plan(), &m.ws, script).await;
    assert!(
        out.contains("No space left"),
        "the /tmp cap did not hold: {out}"
    );
    if which("python3") {
        assert!(
            !out.contains("ALLOCATED"),
            "the memory cap did not hold: {out}"
        );
    }
}

#[tokio::test]
async fn configured_instruction_files_the_config_file_and_hard_links_are_read_only() {
    if !full_support() {
        return;
    }
    let mut m = Machine::new();
    std::fs::create_dir_all(m.ws.join("docs")).unwrap();
    std::fs::write(m.ws.join("docs/STYLE.md"), "style").unwrap();
    std::fs::write(m.ws.join("my-config.toml"), "").unwrap();
    std::fs::write(m.ws.join("AGENTS.md"), "be nice").unwrap();
    // The user's own hard link to AGENTS.md, somewhere in the workspace.
    std::fs::create_dir_all(m.ws.join("notes")).unwrap();
    std::fs::hard_link(m.ws.join("AGENTS.md"), m.ws.join("notes/agents-copy.md")).unwrap();
    m.policy.protect = vec![PathBuf::from("docs/STYLE.md"), m.ws.join("my-config.toml")];
    let script = "{ echo evil >> docs/STYLE.md; echo '[[hooks.session_start]]' >> my-config.toml; \
                  echo evil >> notes/agents-copy.md; echo ok > other.md; echo end; } 2>&1";
    let (_, out) = run(&m.plan(), &m.ws, script).await;
    assert!(out.ends_with("end\n"), "{out}");
    let read = |p: &str| std::fs::read_to_string(m.ws.join(p)).unwrap();
    assert_eq!(read("docs/STYLE.md"), "style", "{out}");
    assert_eq!(read("my-config.toml"), "", "{out}");
    assert_eq!(read("AGENTS.md"), "be nice", "{out}");
    assert_eq!(read("other.md"), "ok\n");
}

#[tokio::test]
async fn read_only_writes_nothing_but_its_own_tmp() {
    if !full_support() {
        return;
    }
    let mut m = Machine::new();
    m.policy = m.policy.read_only();
    let name = unique("ro");
    let script = format!(
        "{{ echo x > /tmp/{name} && cat /tmp/{name} && echo tmp-ok; echo y > made.txt; \
         echo z > {o}/saved.txt; echo end; }} 2>&1",
        o = m.outputs.display()
    );
    let (_, out) = run(&m.plan(), &m.ws, &script).await;
    let leaked = Path::new("/tmp").join(&name).exists();
    let _ = std::fs::remove_file(Path::new("/tmp").join(&name));
    assert!(!leaked, "{out}");
    assert!(out.contains("tmp-ok") && out.ends_with("end\n"), "{out}");
    assert!(!m.ws.join("made.txt").exists(), "{out}");
    assert!(!m.outputs.join("saved.txt").exists(), "{out}");
}

#[test]
fn the_config_names_the_files_commands_may_not_change_and_the_caps() {
    let config = Config {
        instructions: vec![
            PathBuf::from("docs/STYLE.md"),
            PathBuf::from("/etc/team.md"),
        ],
        config_file: Some(PathBuf::from("/work/ws/my.toml")),
        sandbox_max_processes: 64,
        sandbox_memory_max: Some(1 << 30),
        ..Config::default()
    };
    let policy = CommandPolicy::from_config(&config);
    for p in ["docs/STYLE.md", "/etc/team.md", "/work/ws/my.toml"] {
        assert!(
            policy.protect.contains(&PathBuf::from(p)),
            "{p}: {policy:?}"
        );
    }
    assert_eq!(policy.limits.processes, Some(64));
    assert_eq!(policy.limits.memory, Some(1 << 30));
    assert_eq!(policy.limits.tmp_size, None);
    // Plan mode's policy: read-only, or still off.
    assert_eq!(policy.read_only().mode, SandboxMode::ReadOnly);
    let off = CommandPolicy {
        mode: SandboxMode::Off,
        ..CommandPolicy::default()
    };
    assert_eq!(off.read_only().mode, SandboxMode::Off);
}

/// The skills folders pith reads (`.claude/skills`, `.agents/skills`; `.pith/skills` is under
/// `.pith`) are the model's instructions at the next start: a command cannot change a skill that
/// is there or add one beside it (a folder that did not exist is the guard's: its tests).
#[tokio::test]
async fn a_command_cannot_change_a_skill_or_add_one() {
    if !full_support() {
        return;
    }
    let m = Machine::new();
    std::fs::create_dir_all(m.ws.join(".claude/skills/deploy")).unwrap();
    std::fs::write(
        m.ws.join(".claude/skills/deploy/SKILL.md"),
        "---\nname: deploy\n---\nok",
    )
    .unwrap();
    let script = "{ echo evil >> .claude/skills/deploy/SKILL.md; \
                  mkdir -p .claude/skills/evil && echo planted > .claude/skills/evil/SKILL.md; \
                  echo end; } 2>&1";
    let (_, out) = run(&m.plan(), &m.ws, script).await;
    assert!(out.ends_with("end\n"), "{out}");
    let read = |p: &str| std::fs::read_to_string(m.ws.join(p)).ok();
    assert_eq!(
        read(".claude/skills/deploy/SKILL.md").as_deref(),
        Some("---\nname: deploy\n---\nok"),
        "{out}"
    );
    assert_eq!(read(".claude/skills/evil/SKILL.md"), None, "{out}");
}
