//! dist/build.sh's packing and its glibc check (issue 42 must 1), cheaply: a tiny script stands
//! in for the binary (`PITH_DIST_BIN`) and a fake `objdump` says which glibc symbols it needs.
//! The real build (cargo zigbuild) and its real `objdump -T` run by hand: dist/check.sh.

use std::path::Path;
use std::process::{Command, Output};

use super::release_host::{listing, target, write_script};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// dist/build.sh packing `bin` into `out`, with an `objdump -T` that lists `glibc`.
fn build(dir: &Path, glibc: &str) -> Output {
    build_for(dir, glibc, None)
}

/// [`build`] with the release host the artefacts download from (`PITH_RELEASE_BASE`).
fn build_for(dir: &Path, glibc: &str, release_base: Option<&str>) -> Output {
    let shims = dir.join("shims");
    std::fs::create_dir_all(&shims).unwrap();
    write_script(
        &shims.join("objdump"),
        &format!(
            "echo '0000 DF *UND* 0000 GLIBC_2.2.5 memcpy'; echo '0000 DF *UND* 0000 {glibc} fn'"
        ),
    );
    let bin = dir.join("fake-pith");
    write_script(&bin, &format!("echo 'pith {VERSION}'"));
    let path = format!("{}:{}", shims.display(), std::env::var("PATH").unwrap());
    let mut cmd = Command::new("bash");
    cmd.arg(format!("{ROOT}/dist/build.sh"))
        .env("PITH_DIST_BIN", &bin)
        .env("PITH_DIST_OUT", dir.join("out"))
        .env_remove("TARGET")
        .env_remove("PITH_RELEASE_BASE")
        .env("PATH", path);
    if let Some(base) = release_base {
        cmd.env("PITH_RELEASE_BASE", base);
    }
    cmd.output().unwrap()
}

/// Published from another repository, the install script downloads from that repository's
/// releases and names it for a source build: nothing points at the project's default host.
#[test]
fn the_install_script_downloads_from_the_host_it_is_published_on() {
    let dir = tempfile::tempdir().unwrap();
    let base = "https://github.com/acme/pith-fork/releases";
    let out = build_for(dir.path(), "GLIBC_2.17", Some(base));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let script =
        std::fs::read_to_string(dir.path().join("out/latest/download/install.sh")).unwrap();
    assert!(
        script.contains(&format!("PITH_DOWNLOAD_BASE:-{base}}}")),
        "{script}"
    );
    assert!(
        script.contains("--git https://github.com/acme/pith-fork"),
        "{script}"
    );
    assert!(!script.contains("pith-dev/pith"), "{script}");
}

#[test]
fn the_release_host_layout_with_a_checksum_that_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let out = build(dir.path(), "GLIBC_2.17");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stderr: {stderr}");
    let host = dir.path().join("out");
    let latest = std::fs::read_to_string(host.join("latest/download/VERSION")).unwrap();
    assert_eq!(latest.trim(), VERSION);
    let rel = host.join(format!("download/v{VERSION}"));
    let name = format!("pith-{VERSION}-x86_64-unknown-linux-gnu");
    let files = listing(&rel);
    for want in [
        format!("{name}.tar.gz"),
        format!("{name}.tar.gz.sha256"),
        "install.sh".to_string(),
        format!("pith_agent-{VERSION}-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"),
    ] {
        assert!(files.contains(&want), "{want} in {files:?}");
    }
    if which("npm") {
        assert!(
            files.contains(&format!("pith-agent-{VERSION}.tgz")),
            "{files:?}"
        );
        assert!(
            files.contains(&format!("pith-agent-linux-x64-{VERSION}.tgz")),
            "{files:?}"
        );
    }
    let check = Command::new("sha256sum")
        .args(["-c", &format!("{name}.tar.gz.sha256")])
        .current_dir(&rel)
        .output()
        .unwrap();
    assert!(check.status.success(), "{check:?}");
    let list = Command::new("tar")
        .arg("-tzf")
        .arg(rel.join(format!("{name}.tar.gz")))
        .output()
        .unwrap();
    let mut entries: Vec<String> = String::from_utf8_lossy(&list.stdout)
        .lines()
        .filter(|l| !l.ends_with('/'))
        .map(String::from)
        .collect();
    entries.sort();
    assert_eq!(
        entries,
        ["LICENSE", "README.md", "pith"].map(|f| format!("{name}/{f}"))
    );
    let script = std::fs::read(format!("{ROOT}/install.sh")).unwrap();
    assert_eq!(
        std::fs::read(host.join("latest/download/install.sh")).unwrap(),
        script
    );
    // The wheel holds the binary where maturin's `bin` bindings put it.
    let wheel = rel.join(format!(
        "pith_agent-{VERSION}-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"
    ));
    let names = Command::new("python3")
        .args([
            "-c",
            "import sys, zipfile; print('\\n'.join(zipfile.ZipFile(sys.argv[1]).namelist()))",
        ])
        .arg(&wheel)
        .output()
        .unwrap();
    let names = String::from_utf8_lossy(&names.stdout);
    assert!(
        names.contains(&format!("pith_agent-{VERSION}.data/scripts/pith")),
        "{names}"
    );
    assert!(
        names.contains(&format!("pith_agent-{VERSION}.dist-info/RECORD")),
        "{names}"
    );
    assert_eq!(
        target(),
        format!("{}-unknown-linux-gnu", std::env::consts::ARCH)
    );
}

#[test]
fn a_binary_that_needs_a_newer_glibc_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = build(dir.path(), "GLIBC_2.34");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("needs glibc 2.34, newer than 2.17"),
        "{stderr}"
    );
    assert!(!dir.path().join(format!("out/download/v{VERSION}")).exists());
}

fn which(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .is_ok_and(|o| o.status.success())
}
