//! `pith update` and `pith --version` (issue 42 must 5), with a copy of the test-built binary as
//! the installed pith (`PITH_INSTALL_KIND=archive` makes the source build act as the release
//! archive's) and a local release host: a newer release replaces it, the same one does nothing,
//! a corrupt download or an unwritable directory leaves it untouched, and a package-manager
//! install is only told how to update.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use super::release_host::{Host, listing, target};

const PITH: &str = env!("CARGO_BIN_EXE_pith");
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// A directory holding `pith`: a hard link to the test-built binary where the file system allows
/// (the update renames over the link, never writes into it), else a copy.
struct Installed {
    dir: tempfile::TempDir,
}

impl Installed {
    fn new() -> Installed {
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("pith");
        if std::fs::hard_link(PITH, &exe).is_err() {
            std::fs::copy(PITH, &exe).unwrap();
        }
        Installed { dir }
    }

    fn exe(&self) -> PathBuf {
        self.dir.path().join("pith")
    }

    fn command(&self, host: &Host, kind: &str, args: &[&str]) -> Command {
        let mut cmd = Command::new(self.exe());
        cmd.args(args)
            .env("PITH_INSTALL_KIND", kind)
            .env("PITH_DOWNLOAD_BASE", &host.base)
            .env_remove("PITH_VERSION");
        cmd
    }

    fn update(&self, host: &Host, args: &[&str]) -> Output {
        let all = [&["update"][..], args].concat();
        self.command(host, "archive", &all).output().unwrap()
    }

    /// The first line of `pith --version`, from the installed binary.
    fn version(&self) -> String {
        version_of(&self.exe())
    }
}

fn version_of(exe: &Path) -> String {
    let out = Command::new(exe)
        .arg("--version")
        .env_remove("PITH_INSTALL_KIND")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.lines().next().unwrap_or_default().to_string()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_newer_release_replaces_the_binary_and_leaves_nothing_behind() {
    let host = Host::start().await;
    host.latest("99.0.0");
    host.release("99.0.0", "99.0.0", false);
    let pith = Installed::new();
    let before = std::fs::read(PITH).unwrap();

    let out = pith.update(&host, &["--check"]);
    assert!(out.status.success(), "stderr: {}", text(&out.stderr));
    assert!(text(&out.stdout).contains(&format!("pith {VERSION} -> 99.0.0")));
    assert_eq!(
        pith.version(),
        format!("pith {VERSION}"),
        "--check changes nothing"
    );

    let out = pith.update(&host, &[]);
    assert!(out.status.success(), "stderr: {}", text(&out.stderr));
    assert!(text(&out.stdout).contains("pith 99.0.0 installed at"));
    assert_eq!(pith.version(), "pith 99.0.0");
    assert_eq!(listing(pith.dir.path()), vec!["pith".to_string()]);
    // The binary it was a link to is untouched.
    assert_eq!(std::fs::read(PITH).unwrap(), before);
    let name = format!("pith-99.0.0-{}.tar.gz", target());
    assert!(
        host.requests()
            .contains(&format!("/download/v99.0.0/{name}.sha256"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_release_is_up_to_date_and_downloads_nothing() {
    let host = Host::start().await;
    host.latest(VERSION);
    let pith = Installed::new();
    let out = pith.update(&host, &[]);
    assert!(out.status.success(), "stderr: {}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("is up to date"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(
        host.requests(),
        vec!["/latest/download/VERSION".to_string()]
    );
    assert_eq!(pith.version(), format!("pith {VERSION}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_corrupt_or_lying_release_leaves_the_old_binary() {
    let host = Host::start().await;
    let pith = Installed::new();
    host.latest("99.0.0");
    host.release("99.0.0", "99.0.0", true);
    let out = pith.update(&host, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("checksum mismatch"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(pith.version(), format!("pith {VERSION}"));
    assert_eq!(listing(pith.dir.path()), vec!["pith".to_string()]);

    // An archive whose binary does not answer as the version it claims is not put in place.
    host.release("99.0.0", "98.0.0", false);
    let out = pith.update(&host, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("does not start"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(pith.version(), format!("pith {VERSION}"));
    assert_eq!(listing(pith.dir.path()), vec!["pith".to_string()]);
}

/// A directory the user may not write: as root, the update runs as `nobody` (setpriv).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_permission_to_write_is_one_error_and_no_change() {
    use std::os::unix::fs::PermissionsExt as _;
    let host = Host::start().await;
    host.latest("99.0.0");
    host.release("99.0.0", "99.0.0", false);
    let pith = Installed::new();
    let root = unsafe { libc::geteuid() } == 0;
    if root {
        // nobody must reach and run the binary, but not write beside it
        std::fs::remove_file(pith.exe()).unwrap();
        std::fs::copy(PITH, pith.exe()).unwrap();
    }
    let mode = std::fs::Permissions::from_mode(0o555);
    std::fs::set_permissions(pith.dir.path(), mode).unwrap();
    let mut cmd = if root {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(pith.exe());
        c
    } else {
        Command::new(pith.exe())
    };
    let out = cmd
        .arg("update")
        .env("PITH_INSTALL_KIND", "archive")
        .env("PITH_DOWNLOAD_BASE", &host.base)
        .env("HOME", "/nonexistent")
        .output()
        .unwrap();
    std::fs::set_permissions(pith.dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr: {stderr}");
    assert!(stderr.contains("cannot write to"), "{stderr}");
    assert!(stderr.contains("nothing was changed"), "{stderr}");
    assert_eq!(pith.version(), format!("pith {VERSION}"));
    assert_eq!(listing(pith.dir.path()), vec!["pith".to_string()]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_package_manager_install_is_told_how_to_update_and_version_says_how_it_came() {
    let host = Host::start().await;
    host.latest("99.0.0");
    let pith = Installed::new();
    for (kind, hint, describe) in [
        (
            "npm",
            "npm install -g pith-agent@latest",
            "npm package pith-agent",
        ),
        ("pip", "pipx upgrade pith-agent", "pip package pith-agent"),
        ("cargo", "cargo install --locked --path .", "cargo install"),
    ] {
        let out = pith.command(&host, kind, &["update"]).output().unwrap();
        assert!(out.status.success(), "{kind}: {}", text(&out.stderr));
        assert!(
            text(&out.stdout).contains(hint),
            "{kind}: {}",
            text(&out.stdout)
        );
        let out = pith.command(&host, kind, &["--version"]).output().unwrap();
        let version = text(&out.stdout);
        assert!(
            version.starts_with(&format!("pith {VERSION}\n")),
            "{version}"
        );
        assert!(
            version.contains(&format!("installed: {describe}")),
            "{version}"
        );
        assert!(version.contains(hint), "{version}");
    }
    assert!(host.requests().is_empty(), "{:?}", host.requests());
    let out = pith
        .command(&host, "archive", &["--version"])
        .output()
        .unwrap();
    let version = text(&out.stdout);
    assert!(version.contains("installed: release archive"), "{version}");
    assert!(version.contains(&format!("for {}", target())), "{version}");
    assert!(version.contains("update: pith update"), "{version}");
}
