//! How this pith was installed, for `pith --version` and `pith update`: a release archive
//! (install.sh, or unpacked by hand) updates itself; npm, pip and cargo installs are updated the
//! way they were made.

use std::path::{Path, PathBuf};

/// What the build says about itself: `release` for the binary of the release archives (built by
/// dist/build.sh and the release workflow with `PITH_PORTABLE=1`), `source` for any other build.
const BUILD_KIND: &str = env!("PITH_BUILD_KIND");

/// The npm package (its launcher sets `PITH_INSTALL_KIND=npm`) and the pip distribution.
pub const NPM_PACKAGE: &str = "pith-agent";
pub const PIP_PACKAGE: &str = "pith-agent";

/// How pith came to be where it runs from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InstallKind {
    /// A release archive: install.sh, `pith update`, or unpacked by hand.
    Archive,
    /// `npm i -g pith-agent`: the launcher of the npm package started this binary.
    Npm,
    /// `pip install` / `pipx install` / `uv tool install pith-agent`.
    Pip,
    /// `cargo install` (the binary is in cargo's `bin` directory).
    Cargo,
    /// Built from a clone and run from its `target` directory (or copied elsewhere).
    Source,
}

impl InstallKind {
    /// The kind of the running binary. `PITH_INSTALL_KIND` (archive, npm, pip, cargo, source)
    /// says it outright: the npm launcher sets it, and the tests use it.
    pub fn detect(exe: &Path) -> InstallKind {
        let told = std::env::var("PITH_INSTALL_KIND").ok();
        if let Some(kind) = told.as_deref().and_then(InstallKind::parse) {
            return kind;
        }
        if BUILD_KIND != "release" {
            return if in_cargo_bin(exe) {
                InstallKind::Cargo
            } else {
                InstallKind::Source
            };
        }
        if exe.components().any(|c| c.as_os_str() == "node_modules") {
            InstallKind::Npm
        } else if in_python_prefix(exe) {
            InstallKind::Pip
        } else {
            InstallKind::Archive
        }
    }

    fn parse(name: &str) -> Option<InstallKind> {
        Some(match name {
            "archive" => InstallKind::Archive,
            "npm" => InstallKind::Npm,
            "pip" => InstallKind::Pip,
            "cargo" => InstallKind::Cargo,
            "source" => InstallKind::Source,
            _ => return None,
        })
    }

    /// How the kind reads in `pith --version`.
    pub fn describe(self) -> &'static str {
        match self {
            InstallKind::Archive => "release archive (install.sh)",
            InstallKind::Npm => "npm package pith-agent",
            InstallKind::Pip => "pip package pith-agent",
            InstallKind::Cargo => "cargo install (built from source)",
            InstallKind::Source => "built from source",
        }
    }

    /// The command that updates this install (`None`: `pith update` does it).
    pub fn update_hint(self) -> Option<&'static str> {
        match self {
            InstallKind::Archive => None,
            InstallKind::Npm => Some("npm install -g pith-agent@latest"),
            InstallKind::Pip => Some(
                "pipx upgrade pith-agent, uv tool upgrade pith-agent or pip install -U pith-agent (the way it was installed)",
            ),
            InstallKind::Cargo => Some(
                "git pull in the clone, then cargo install --locked --path . (or cargo install --locked --git URL)",
            ),
            InstallKind::Source => Some("git pull in the clone, then build again"),
        }
    }
}

/// The running binary, with symbolic links resolved (npm's and pip's `bin` entries are links or
/// launchers; install.sh installs a plain file).
pub fn current_exe() -> std::io::Result<PathBuf> {
    let exe = std::env::current_exe()?;
    Ok(std::fs::canonicalize(&exe).unwrap_or(exe))
}

/// `$CARGO_HOME/bin/pith` (cargo keeps `.crates.toml` or `.crates2.json` in `$CARGO_HOME`).
fn in_cargo_bin(exe: &Path) -> bool {
    let Some(home) = exe
        .parent()
        .filter(|d| d.ends_with("bin"))
        .and_then(Path::parent)
    else {
        return false;
    };
    home.join(".crates.toml").exists() || home.join(".crates2.json").exists()
}

/// `PREFIX/bin/pith` of a Python prefix or virtual environment that holds pith's dist-info
/// (`PREFIX/lib/pythonX.Y/site-packages/pith_agent-*.dist-info`), or `PREFIX/Scripts` on Windows.
fn in_python_prefix(exe: &Path) -> bool {
    let Some(prefix) = exe.parent().and_then(Path::parent) else {
        return false;
    };
    if prefix.join("pyvenv.cfg").exists() {
        return true;
    }
    let lib = prefix.join("lib");
    let Ok(pythons) = std::fs::read_dir(&lib) else {
        return false;
    };
    pythons.flatten().any(|python| {
        let site = python.path().join("site-packages");
        std::fs::read_dir(site).is_ok_and(|entries| {
            entries.flatten().any(|e| {
                let name = e.file_name();
                let name = name.to_string_lossy();
                name.starts_with("pith_agent-") && name.ends_with(".dist-info")
            })
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pip_prefix_is_found_by_its_dist_info() {
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("bin/pith");
        assert!(!in_python_prefix(&exe));
        let site = dir.path().join("lib/python3.11/site-packages");
        std::fs::create_dir_all(site.join("other-1.0.dist-info")).unwrap();
        assert!(!in_python_prefix(&exe), "another package's dist-info");
        std::fs::create_dir_all(site.join("pith_agent-0.1.0.dist-info")).unwrap();
        assert!(in_python_prefix(&exe));
    }

    #[test]
    fn cargo_bin_is_found_by_cargo_s_own_files() {
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("bin/pith");
        assert!(!in_cargo_bin(&exe));
        std::fs::write(dir.path().join(".crates.toml"), "").unwrap();
        assert!(in_cargo_bin(&exe));
        assert!(!in_cargo_bin(&dir.path().join("target/release/pith")));
    }

    #[test]
    fn only_an_archive_install_updates_itself() {
        assert_eq!(InstallKind::Archive.update_hint(), None);
        for kind in [
            InstallKind::Npm,
            InstallKind::Pip,
            InstallKind::Cargo,
            InstallKind::Source,
        ] {
            assert!(kind.update_hint().is_some(), "{kind:?}");
        }
        assert_eq!(InstallKind::parse("npm"), Some(InstallKind::Npm));
        assert_eq!(InstallKind::parse("brew"), None);
    }
}
