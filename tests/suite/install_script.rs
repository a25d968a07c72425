//! install.sh (issue 42 must 3) against a local release host serving fake archives: it installs
//! the verified binary, and a corrupt, missing or cut-short download, or an unknown platform,
//! fails with one line on stderr and leaves what was installed before untouched.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use super::release_host::{Host, Serve, listing, target, write_script};

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/install.sh");

struct Machine {
    _dir: tempfile::TempDir,
    home: PathBuf,
    bin: PathBuf,
    /// Put first on PATH (a fake `uname`).
    shims: PathBuf,
}

impl Machine {
    fn new() -> Machine {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let shims = dir.path().join("shims");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&shims).unwrap();
        Machine {
            bin: home.join(".local/bin"),
            home,
            shims,
            _dir: dir,
        }
    }

    /// `sh install.sh` with an empty HOME and the default install directory.
    fn install(&self, host: &Host, env: &[(&str, &str)]) -> Output {
        let path = format!(
            "{}:{}",
            self.shims.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut cmd = Command::new("sh");
        cmd.arg(SCRIPT)
            .env_remove("PITH_INSTALL_DIR")
            .env_remove("PITH_VERSION")
            .env("HOME", &self.home)
            .env("PATH", path)
            .env("PITH_DOWNLOAD_BASE", &host.base);
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.output().unwrap()
    }

    fn installed_version(&self) -> String {
        let out = Command::new(self.bin.join("pith"))
            .arg("--version")
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }
}

fn err(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Fails with exactly one line, naming `what`, and no temporary file left beside the binary.
fn fails_with_one_line(out: &Output, what: &str, bin: &Path) {
    let stderr = err(out);
    assert_eq!(out.status.code(), Some(1), "stderr: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert!(stderr.starts_with("pith install: error: "), "{stderr}");
    assert!(stderr.contains(what), "{what:?} in {stderr}");
    if bin.exists() {
        assert_eq!(
            listing(bin),
            vec!["pith".to_string()],
            "leftovers in {}",
            bin.display()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn installs_the_latest_release_into_local_bin_and_says_how_to_reach_it() {
    let host = Host::start().await;
    host.latest("2.0.0");
    host.release("2.0.0", "2.0.0", false);
    let m = Machine::new();
    let out = m.install(&host, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "stderr: {}", err(&out));
    assert_eq!(m.installed_version(), "pith 2.0.0");
    assert_eq!(listing(&m.bin), vec!["pith".to_string()]);
    assert!(stdout.contains("is not on your PATH"), "{stdout}");
    assert!(stdout.contains(&format!("export PATH=\"{}:$PATH\"", m.bin.display())));
    // The archive of this machine's platform was asked for, after the latest version.
    let requests = host.requests();
    assert_eq!(requests[0], "/latest/download/VERSION");
    assert!(requests.contains(&format!("/download/v2.0.0/pith-2.0.0-{}.tar.gz", target())));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pinned_version_goes_to_the_install_dir_given() {
    let host = Host::start().await;
    host.latest("2.0.0");
    host.release("1.5.0", "1.5.0", false);
    let m = Machine::new();
    let dir = m.home.join("tools");
    let out = m.install(
        &host,
        &[
            ("PITH_VERSION", "v1.5.0"),
            ("PITH_INSTALL_DIR", dir.to_str().unwrap()),
        ],
    );
    assert!(out.status.success(), "stderr: {}", err(&out));
    let got = Command::new(dir.join("pith"))
        .arg("--version")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&got.stdout).trim(), "pith 1.5.0");
    assert!(!host.requests().iter().any(|r| r.contains("VERSION")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_corrupt_missing_or_cut_short_download_leaves_the_old_pith() {
    let host = Host::start().await;
    let m = Machine::new();
    host.latest("1.0.0");
    host.release("1.0.0", "1.0.0", false);
    assert!(m.install(&host, &[]).status.success());

    host.latest("2.0.0");
    host.release("2.0.0", "2.0.0", true);
    let out = m.install(&host, &[]);
    fails_with_one_line(&out, "checksum mismatch", &m.bin);
    assert_eq!(m.installed_version(), "pith 1.0.0");

    let name = format!("pith-3.0.0-{}.tar.gz", target());
    host.latest("3.0.0");
    let out = m.install(&host, &[]);
    fails_with_one_line(
        &out,
        &format!("cannot download {}/download/v3.0.0/{name}", host.base),
        &m.bin,
    );
    assert_eq!(m.installed_version(), "pith 1.0.0");

    let archive = host.release("3.0.0", "3.0.0", false);
    host.put(
        &format!("/download/v3.0.0/{name}"),
        Serve::CutShort(archive),
    );
    let out = m.install(&host, &[]);
    fails_with_one_line(&out, "cannot download", &m.bin);
    assert_eq!(m.installed_version(), "pith 1.0.0");

    // No release host at all.
    let out = m.install(&host, &[("PITH_DOWNLOAD_BASE", "http://127.0.0.1:9")]);
    fails_with_one_line(&out, "is the release host reachable?", &m.bin);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_platform_is_one_line_and_no_request() {
    let host = Host::start().await;
    host.latest("1.0.0");
    let m = Machine::new();
    for (os, arch) in [("Linux", "riscv64"), ("FreeBSD", "x86_64")] {
        write_script(
            &m.shims.join("uname"),
            &format!("case \"$1\" in -s) echo {os};; -m) echo {arch};; esac"),
        );
        let out = m.install(&host, &[]);
        fails_with_one_line(
            &out,
            &format!("no prebuilt pith for {os} on {arch}"),
            &m.bin,
        );
        assert!(!m.bin.exists());
    }
    assert!(host.requests().is_empty());
}
