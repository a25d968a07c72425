//! Putting a downloaded archive's binary in place of the running one, atomically: the new
//! binary is unpacked beside the old one, must answer `--version` with the version it claims,
//! is renamed over the old one (a hard link keeps the old one), must answer again from its final
//! place, and only then is the old one removed; any failure puts the old one back.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, bail};

/// A directory beside the binary, removed when dropped (unless the update finished with it).
struct Staging(PathBuf);

impl Drop for Staging {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Replaces `exe` with the `pith` inside `archive` (a `.tar.gz` of `pith-VERSION-TARGET/pith`).
pub(super) fn replace(exe: &Path, archive: &[u8], version: &str) -> anyhow::Result<()> {
    let dir = exe
        .parent()
        .context("the running binary has no directory")?;
    let staging = Staging(dir.join(format!(".pith-update-{}", std::process::id())));
    std::fs::create_dir(&staging.0).map_err(|e| {
        anyhow::anyhow!(
            "cannot write to {} ({e}); nothing was changed. Run `pith update` as a user who may write there, or install again with install.sh and PITH_INSTALL_DIR",
            dir.display()
        )
    })?;
    let new = unpack(&staging.0, archive)?;
    answers_version(&new, version).context("the downloaded binary does not start")?;
    let old = dir.join(format!(".pith-old-{}", std::process::id()));
    std::fs::hard_link(exe, &old)
        .with_context(|| format!("cannot keep the old binary as {}", old.display()))?;
    if let Err(e) = std::fs::rename(&new, exe) {
        let _ = std::fs::remove_file(&old);
        return Err(e).with_context(|| format!("cannot replace {}", exe.display()));
    }
    if let Err(e) = answers_version(exe, version) {
        std::fs::rename(&old, exe)
            .context("the new binary failed and the old one could not be put back")?;
        return Err(e.context("the new binary failed in place; the old one is back"));
    }
    let _ = std::fs::remove_file(&old);
    Ok(())
}

/// Unpacks the archive with the system's `tar` and returns the path of its `pith`.
fn unpack(staging: &Path, archive: &[u8]) -> anyhow::Result<PathBuf> {
    let file = staging.join("pith.tar.gz");
    std::fs::write(&file, archive).with_context(|| format!("cannot write {}", file.display()))?;
    let out = Command::new("tar")
        .arg("-xzf")
        .arg(&file)
        .arg("-C")
        .arg(staging)
        .output()
        .context("cannot run tar")?;
    if !out.status.success() {
        bail!(
            "cannot unpack the archive: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let found = std::fs::read_dir(staging)?
        .flatten()
        .map(|e| e.path().join("pith"))
        .find(|p| p.is_file());
    found.context("the archive holds no pith-VERSION-TARGET/pith")
}

/// Runs `binary --version` and checks that it names `version`.
fn answers_version(binary: &Path, version: &str) -> anyhow::Result<()> {
    let out = Command::new(binary)
        .arg("--version")
        .env_remove("PITH_INSTALL_KIND")
        .output()
        .with_context(|| format!("cannot run {} --version", binary.display()))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let first = text.lines().next().unwrap_or_default();
    if !out.status.success() || first.split_whitespace().nth(1) != Some(version) {
        bail!(
            "{} --version answered {:?} (exit {}), not pith {version}",
            binary.display(),
            first,
            out.status.code().unwrap_or(-1)
        );
    }
    Ok(())
}
