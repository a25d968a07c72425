//! The Landlock ruleset: read everywhere, write in the writable roots, nothing in the hidden
//! paths; and (ABI 6+) no abstract Unix sockets or signals outside the sandbox.
//!
//! Landlock only grants, and a grant covers everything below a folder. Where hidden paths
//! cannot be covered by mounts (no user namespaces), a grant whose folder holds a hidden path
//! is split into grants on the folder's entries, down to the hidden path, which gets none
//! ([`split`]). The folders on the way lose the right to have entries made in them.

use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreatedAttr, Scope,
};

use super::super::paths::Hidden;

/// The newest Landlock ABI this code asks for; older kernels get what they support.
const ABI_WANTED: ABI = ABI::V6;
/// Device files commands may write to even in a read-only sandbox.
const WRITABLE_DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/tty",
    "/dev/random",
    "/dev/urandom",
];

fn landlock_err(e: impl std::fmt::Display) -> io::Error {
    io::Error::other(format!("cannot set up the Landlock sandbox: {e}"))
}

/// One grant: everything below `path` gets `access`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Grant {
    pub path: PathBuf,
    pub access: BitFlags<AccessFs>,
}

/// The grants for `writable` roots (full access) and reading everywhere, with `hidden` paths
/// carved out of them by [`split`] (`hidden` is empty when mounts cover them).
pub(super) fn grants(writable: &[PathBuf], hidden: &[Hidden]) -> Vec<Grant> {
    let all = AccessFs::from_all(ABI_WANTED);
    let read = AccessFs::from_read(ABI_WANTED) | AccessFs::IoctlDev;
    let mut base = vec![Grant {
        path: PathBuf::from("/"),
        access: read,
    }];
    base.extend(writable.iter().map(|p| Grant {
        path: p.clone(),
        access: all,
    }));
    let denied: Vec<&Path> = hidden.iter().map(|h| h.path.as_path()).collect();
    let mut out = Vec::new();
    for g in base {
        split(g, &denied, &mut out);
    }
    for h in hidden {
        out.extend(h.reveal.iter().map(|r| Grant {
            path: r.clone(),
            access: all,
        }));
    }
    out
}

/// Adds `grant` to `out`, or, when a `denied` path lies below its folder, grants on the
/// folder's entries instead (recursing towards the denied path, skipping it). Symbolic links
/// get no grant of their own: their targets are covered where they live.
pub(super) fn split(grant: Grant, denied: &[&Path], out: &mut Vec<Grant>) {
    if denied.iter().any(|d| grant.path.starts_with(d)) {
        return;
    }
    if !denied.iter().any(|d| d.starts_with(&grant.path)) {
        out.push(grant);
        return;
    }
    let Ok(entries) = std::fs::read_dir(&grant.path) else {
        return;
    };
    for entry in entries.flatten() {
        let Ok(ft) = entry.file_type() else { continue };
        if ft.is_symlink() {
            continue;
        }
        let access = if ft.is_dir() {
            grant.access
        } else {
            grant.access & AccessFs::from_file(ABI_WANTED)
        };
        split(
            Grant {
                path: entry.path(),
                access,
            },
            denied,
            out,
        );
    }
}

/// Builds the ruleset: `grants`, the writable devices and, with `scoped`, the scopes.
pub(super) fn ruleset(grants: &[Grant], scoped: bool) -> io::Result<OwnedFd> {
    let all = AccessFs::from_all(ABI_WANTED);
    let file_write = AccessFs::from_file(ABI_WANTED);
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(all)
        .map_err(landlock_err)?;
    if scoped {
        ruleset = ruleset
            .scope(Scope::AbstractUnixSocket | Scope::Signal)
            .map_err(landlock_err)?;
    }
    let mut created = ruleset.create().map_err(landlock_err)?;
    for g in grants {
        // A path that vanished since it was listed needs no rule.
        if let Ok(fd) = PathFd::new(&g.path) {
            created = created
                .add_rule(PathBeneath::new(fd, g.access))
                .map_err(landlock_err)?;
        }
    }
    for dev in WRITABLE_DEVICES {
        if Path::new(dev).exists()
            && let Ok(fd) = PathFd::new(dev)
        {
            created = created
                .add_rule(PathBeneath::new(fd, file_write))
                .map_err(landlock_err)?;
        }
    }
    let fd: Option<OwnedFd> = created.into();
    fd.ok_or_else(|| landlock_err("the kernel refused the ruleset"))
}

/// The access bits this kernel's Landlock handles out of what pith asks for: all of them, or
/// (`files_only`) those that apply to files. For rules added in the child.
pub(super) fn kernel_access(files_only: bool) -> u64 {
    // SAFETY: with a null attribute, size 0 and the VERSION flag the call only returns the ABI.
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            1u32,
        )
    };
    let abi = ABI::from(abi as i32);
    let access = if files_only {
        AccessFs::from_file(abi) & AccessFs::from_file(ABI_WANTED)
    } else {
        AccessFs::from_all(abi) & AccessFs::from_all(ABI_WANTED)
    };
    access.bits()
}

/// `struct landlock_path_beneath_attr` (packed).
#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// Adds a rule for `path` (as this mount namespace shows it) to the ruleset `ruleset`: for a
/// folder mounted in the child (its private `/tmp`), which the parent could not open.
/// Async-signal-safe.
pub(super) unsafe fn add_rule(ruleset: i32, path: &std::ffi::CStr, access: u64) -> io::Result<()> {
    // SAFETY: open/landlock_add_rule/close on a NUL-terminated path and a live struct.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let attr = PathBeneathAttr {
            allowed_access: access,
            parent_fd: fd,
        };
        let r = libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset,
            1u32, // LANDLOCK_RULE_PATH_BENEATH
            &attr as *const PathBeneathAttr,
            0u32,
        );
        let err = io::Error::last_os_error();
        libc::close(fd);
        if r != 0 {
            return Err(err);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_grant_is_split_around_a_hidden_path() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().canonicalize().unwrap();
        let home = root.join("home");
        for d in [
            "home/.ssh",
            "home/.config/pith",
            "home/.config/git",
            "home/src",
        ] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        std::fs::write(home.join(".bashrc"), "").unwrap();
        std::os::unix::fs::symlink(home.join(".ssh"), home.join("link-to-ssh")).unwrap();
        let read = AccessFs::from_read(ABI_WANTED);
        let denied = [home.join(".ssh"), home.join(".config/pith")];
        let denied: Vec<&Path> = denied.iter().map(PathBuf::as_path).collect();
        let mut out = Vec::new();
        split(
            Grant {
                path: home.clone(),
                access: read,
            },
            &denied,
            &mut out,
        );
        let paths: Vec<&Path> = out.iter().map(|g| g.path.as_path()).collect();
        for p in [".bashrc", ".config/git", "src"] {
            assert!(paths.contains(&home.join(p).as_path()), "{p} in {paths:?}");
        }
        for p in ["", ".ssh", ".config", ".config/pith", "link-to-ssh"] {
            assert!(!paths.contains(&home.join(p).as_path()), "{p} in {paths:?}");
        }
        let bashrc = out.iter().find(|g| g.path.ends_with(".bashrc")).unwrap();
        assert_eq!(bashrc.access, read & AccessFs::from_file(ABI_WANTED));
    }

    #[test]
    fn grants_outside_the_hidden_paths_are_kept_whole() {
        let all = AccessFs::from_all(ABI_WANTED);
        let g = grants(
            &[PathBuf::from("/nonexistent/ws")],
            &[Hidden {
                path: PathBuf::from("/nonexistent/data"),
                dir: true,
                reveal: vec![PathBuf::from("/nonexistent/data/tool-output")],
            }],
        );
        assert!(g.contains(&Grant {
            path: PathBuf::from("/nonexistent/ws"),
            access: all
        }));
        assert!(g.contains(&Grant {
            path: PathBuf::from("/nonexistent/data/tool-output"),
            access: all
        }));
        // "/" was split (it holds the hidden path) into its entries.
        assert!(!g.iter().any(|g| g.path == Path::new("/")), "{g:?}");
        assert!(g.iter().any(|g| g.path == Path::new("/usr")), "{g:?}");
    }
}
