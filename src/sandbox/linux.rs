//! Landlock (writes) and seccomp-bpf (network) for one child process.
//!
//! Everything is built in the parent; between fork and exec the child only makes three system
//! calls on that prepared data, which is safe in a forked child of a threaded process.

use std::collections::BTreeMap;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;

use landlock::{
    ABI, Access, AccessFs, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreatedAttr,
};
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

use super::{Applied, Support};

/// The newest Landlock ABI this code asks for; older kernels get what they support.
const ABI_WANTED: ABI = ABI::V5;
/// Device files commands may write to even in a read-only sandbox.
const WRITABLE_DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/tty",
    "/dev/random",
    "/dev/urandom",
];

pub fn probe() -> Support {
    // SAFETY: with a null attribute, size 0 and the VERSION flag the call only returns the ABI.
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            1u32, // LANDLOCK_CREATE_RULESET_VERSION
        )
    };
    let landlock_err = (abi < 1).then(io::Error::last_os_error);
    // SAFETY: PR_GET_SECCOMP has no arguments and no effect.
    let seccomp = unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) } >= 0
        && TargetArch::try_from(std::env::consts::ARCH).is_ok();
    let mut missing = Vec::new();
    // A kernel can offer a feature that a container's own filter then refuses: try each once.
    let landlock_err = landlock_err.or_else(|| {
        trial(&Applied {
            confined_writes: true,
            ..Applied::default()
        })
        .err()
    });
    let seccomp_err = if seccomp {
        trial(&Applied {
            blocked_network: true,
            ..Applied::default()
        })
        .err()
    } else {
        None
    };
    if let Some(e) = &seccomp_err {
        missing.push(format!("installing a seccomp filter failed ({e})"));
    }
    let seccomp = seccomp && seccomp_err.is_none();
    if let Some(e) = &landlock_err {
        let why = match e.raw_os_error() {
            Some(libc::ENOSYS) => "the kernel has no Landlock support".to_string(),
            Some(libc::EOPNOTSUPP) => "Landlock is disabled in this kernel".to_string(),
            _ => format!("Landlock is unavailable ({e})"),
        };
        missing.push(why);
    }
    if !seccomp && seccomp_err.is_none() {
        missing.push("seccomp filters are unavailable".to_string());
    }
    Support {
        landlock: (abi >= 1 && landlock_err.is_none()).then_some(abi as i32),
        seccomp,
        missing: (!missing.is_empty()).then(|| missing.join(" and ")),
    }
}

/// Starts `/bin/true` under `applied`: an error means the sandbox cannot be entered here. A
/// system without `/bin/true` proves nothing either way.
fn trial(applied: &Applied) -> io::Result<()> {
    use std::os::unix::process::CommandExt;
    if !Path::new("/bin/true").exists() {
        return Ok(());
    }
    let prepared = Prepared::new(applied)?;
    let mut cmd = std::process::Command::new("/bin/true");
    // SAFETY: `enter` makes only async-signal-safe system calls (see `Prepared::enter`).
    unsafe {
        cmd.pre_exec(move || prepared.enter());
    }
    let status = cmd.status()?;
    if status.success() {
        Ok(())
    } else {
        Err(io::Error::other(format!(
            "a sandboxed test process failed: {status}"
        )))
    }
}

/// The sandbox for one command, ready to enter.
pub struct Prepared {
    ruleset: Option<OwnedFd>,
    filter: Option<BpfProgram>,
}

impl Prepared {
    pub fn new(applied: &Applied) -> io::Result<Prepared> {
        let ruleset = if applied.confined_writes {
            Some(ruleset(&applied.writable)?)
        } else {
            None
        };
        let filter = if applied.blocked_network {
            Some(network_filter()?)
        } else {
            None
        };
        Ok(Prepared { ruleset, filter })
    }

    /// Confines the calling (child) process. Async-signal-safe: no allocation, no locks.
    pub fn enter(&self) -> io::Result<()> {
        // SAFETY: plain system calls on memory owned by `self`, which outlives them.
        unsafe {
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            if let Some(fd) = &self.ruleset
                && libc::syscall(libc::SYS_landlock_restrict_self, fd.as_raw_fd(), 0u32) != 0
            {
                return Err(io::Error::last_os_error());
            }
            if let Some(filter) = &self.filter {
                let prog = libc::sock_fprog {
                    len: filter.len() as u16,
                    filter: filter.as_ptr() as *mut libc::sock_filter,
                };
                if libc::syscall(
                    libc::SYS_seccomp,
                    libc::SECCOMP_SET_MODE_FILTER,
                    0u32,
                    &prog as *const libc::sock_fprog,
                ) != 0
                {
                    return Err(io::Error::last_os_error());
                }
            }
        }
        Ok(())
    }
}

fn landlock_err(e: impl std::fmt::Display) -> io::Error {
    io::Error::other(format!("cannot set up the Landlock sandbox: {e}"))
}

/// Reads anywhere; writes only below `writable` and to a few device files.
fn ruleset(writable: &[std::path::PathBuf]) -> io::Result<OwnedFd> {
    let all = AccessFs::from_all(ABI_WANTED);
    let read = AccessFs::from_read(ABI_WANTED) | AccessFs::IoctlDev;
    let file_write = AccessFs::from_file(ABI_WANTED);
    let mut created = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(all)
        .map_err(landlock_err)?
        .create()
        .map_err(landlock_err)?
        .add_rule(PathBeneath::new(
            PathFd::new("/").map_err(landlock_err)?,
            read,
        ))
        .map_err(landlock_err)?;
    for dir in writable {
        if let Ok(fd) = PathFd::new(dir) {
            created = created
                .add_rule(PathBeneath::new(fd, all))
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

fn err(e: impl std::fmt::Display) -> io::Error {
    io::Error::other(format!("cannot build the network filter: {e}"))
}

/// Fails `socket` and `socketpair` for every family but Unix sockets, and `io_uring_setup`
/// (which could open sockets without those calls), with EPERM.
fn network_filter() -> io::Result<BpfProgram> {
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(err)?;
    let not_unix = SeccompRule::new(vec![
        SeccompCondition::new(
            0,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Ne,
            libc::AF_UNIX as u64,
        )
        .map_err(err)?,
    ])
    .map_err(err)?;
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    rules.insert(libc::SYS_socket, vec![not_unix.clone()]);
    rules.insert(libc::SYS_socketpair, vec![not_unix]);
    rules.insert(libc::SYS_io_uring_setup, Vec::new());
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(err)?;
    let program: Result<BpfProgram, _> = filter.try_into();
    program.map_err(err)
}
