//! The Linux sandbox for one command: namespaces and mounts (`namespaces.rs`), Landlock
//! (`landlock.rs`), seccomp (`seccomp.rs`), limits and capabilities.
//!
//! Everything is built in the parent; between fork and exec the child only makes system
//! calls on that prepared data, which is safe in a forked child of a threaded process. The
//! child enters in two steps around the reaper's fork (`super::reaper`): the namespaces and
//! mounts first ([`Prepared::enter_outer`]), then, in the command's own process, `/proc`, the
//! process limit, no capabilities, `no_new_privs`, Landlock and seccomp
//! ([`Prepared::enter_inner`]).

mod cgroup;
mod landlock;
mod namespaces;
mod private_mounts;
mod seccomp;

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use seccompiler::{BpfProgram, TargetArch};

use super::{Applied, Support, Tmp};
use cgroup::Cgroup;
use namespaces::Namespaces;
use private_mounts::PrivateMounts;

pub(super) use cgroup::check as cgroup_check;

/// Processes a sandboxed command may have at once, beyond those its user already runs when
/// there is no user namespace to count them apart: a fork bomb stops there.
const MAX_PROCESSES: u64 = 4096;

pub(super) fn probe() -> Support {
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
    // The trials are independent, so their test processes run at the same time.
    let ns_applied = |proc: bool| Applied {
        namespaces: true,
        proc,
        ..Applied::default()
    };
    let landlock_trial = landlock_err.is_none().then(|| {
        start_trial(&Applied {
            confined_writes: true,
            ..Applied::default()
        })
    });
    let seccomp_trial = seccomp.then(|| {
        start_trial(&Applied {
            blocked_network: true,
            ..Applied::default()
        })
    });
    let ns_trials = [
        start_trial(&ns_applied(false)),
        start_trial(&ns_applied(true)),
    ];
    let landlock_err = landlock_err.or_else(|| landlock_trial.and_then(|t| finish_trial(t).err()));
    let seccomp_err = seccomp_trial.and_then(|t| finish_trial(t).err());
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
    let [plain, with_proc] = ns_trials.map(finish_trial);
    let namespaces = plain;
    let proc = namespaces.is_ok() && with_proc.is_ok();
    Support {
        landlock: (abi >= 1 && landlock_err.is_none()).then_some(abi as i32),
        seccomp,
        namespaces: namespaces.as_ref().err().map(|e| e.to_string()),
        proc,
        missing: (!missing.is_empty()).then(|| missing.join(" and ")),
    }
}

/// A started trial: its test process (`None`: no `/bin/true` here, which proves nothing either
/// way), or why it could not start.
type Trial = io::Result<Option<std::process::Child>>;

/// Starts `/bin/true` under `applied` (with the reaper); [`finish_trial`] says whether it ran:
/// an error means this part of the sandbox cannot be entered here.
fn start_trial(applied: &Applied) -> Trial {
    use std::os::unix::process::CommandExt;
    if !Path::new("/bin/true").exists() {
        return Ok(None);
    }
    let mut prepared = Prepared::new(applied)?;
    prepared.proc_must_mount = applied.proc;
    let mut cmd = std::process::Command::new("/bin/true");
    cmd.stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    // SAFETY: the setup makes only async-signal-safe system calls (see `super::reaper`).
    unsafe {
        cmd.pre_exec(super::reaper::child_setup(Some(prepared)));
    }
    cmd.spawn().map(Some)
}

fn finish_trial(trial: Trial) -> io::Result<()> {
    let Some(mut child) = trial? else {
        return Ok(());
    };
    let status = child.wait()?;
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
    ns: Option<Namespaces>,
    ruleset: Option<OwnedFd>,
    filters: Vec<BpfProgram>,
    nproc: Option<libc::rlim_t>,
    /// The cgroup the command runs in (its caps), joined before its process is forked.
    cgroup: Option<Cgroup>,
    /// Landlock rules for folders mounted in the child (its private `/tmp`, `/dev/shm`, its
    /// own terminals), which the parent cannot open: (path, access).
    late_rules: Vec<(&'static std::ffi::CStr, u64)>,
    /// The probe's trial: a `/proc` that cannot be mounted is an error, not a weaker sandbox.
    proc_must_mount: bool,
}

impl Prepared {
    pub fn new(applied: &Applied) -> io::Result<Prepared> {
        let private_tmp = applied.tmp == Tmp::Mounted;
        // Read-only: nothing of the machine's, at most the command's own /tmp (gone after it).
        let writable: Vec<PathBuf> = if applied.read_only {
            applied
                .writable
                .iter()
                .filter(|p| own_tmp(private_tmp, p))
                .cloned()
                .collect()
        } else {
            applied.writable.clone()
        };
        let writable = writable.as_slice();
        let ns = if applied.namespaces {
            Some(namespaces(applied, writable, private_tmp)?)
        } else {
            None
        };
        let ruleset = if applied.confined_writes {
            // Mounts hide what they cover; without them Landlock must leave it out.
            let hidden: &[_] = if applied.namespaces {
                &[]
            } else {
                &applied.hidden
            };
            let grants = landlock::grants(writable, hidden);
            Some(landlock::ruleset(&grants, applied.scoped)?)
        } else {
            None
        };
        let filters = if applied.blocked_network {
            seccomp::network_filters()?
        } else {
            Vec::new()
        };
        let cap = applied.limits.processes.unwrap_or(MAX_PROCESSES);
        let nproc = applied.sandboxed().then(|| {
            if applied.namespaces {
                cap
            } else {
                tasks_now().saturating_add(cap)
            }
        });
        let mut late_rules = Vec::new();
        if ruleset.is_some() && applied.namespaces {
            late_rules.push((c"/dev/pts", landlock::kernel_access(true)));
            if private_tmp {
                let all = landlock::kernel_access(false);
                late_rules.extend([(c"/tmp", all), (c"/dev/shm", all)]);
            }
        }
        Ok(Prepared {
            ns,
            ruleset,
            filters,
            nproc,
            cgroup: cgroup_for(applied),
            late_rules,
            proc_must_mount: false,
        })
    }

    /// Whether the command runs as the first process of a PID namespace of its own.
    pub(crate) fn pid_namespace(&self) -> bool {
        self.ns.is_some()
    }

    /// In the forked child, before the command's process is forked: the cgroup, namespaces
    /// and mounts, the Landlock rules for what was mounted.
    pub(crate) fn enter_outer(&self) -> io::Result<()> {
        if let Some(cg) = &self.cgroup {
            cg.join()?;
        }
        if let Some(ns) = &self.ns {
            ns.enter()?;
        }
        if let Some(fd) = &self.ruleset {
            for (path, access) in &self.late_rules {
                // SAFETY: system calls on a static path and an open ruleset.
                unsafe { landlock::add_rule(fd.as_raw_fd(), path, *access)? };
            }
        }
        Ok(())
    }

    /// In the command's own process, before exec. Async-signal-safe: no allocation, no locks.
    pub(crate) fn enter_inner(&self) -> io::Result<()> {
        // SAFETY: plain system calls on memory owned by `self`, which outlives them.
        unsafe {
            if let Some(ns) = &self.ns
                && let Err(e) = ns.mount_proc()
                && self.proc_must_mount
            {
                return Err(e);
            }
            if let Some(n) = self.nproc {
                let lim = libc::rlimit {
                    rlim_cur: n,
                    rlim_max: n,
                };
                libc::setrlimit(libc::RLIMIT_NPROC, &lim);
            }
            drop_capabilities()?;
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            if let Some(fd) = &self.ruleset
                && libc::syscall(libc::SYS_landlock_restrict_self, fd.as_raw_fd(), 0u32) != 0
            {
                return Err(io::Error::last_os_error());
            }
            for filter in &self.filters {
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

/// `/tmp` or `/dev/shm` when they are the command's own (a private tmpfs).
fn own_tmp(private_tmp: bool, p: &Path) -> bool {
    private_tmp && (p == Path::new("/tmp") || p == Path::new("/dev/shm"))
}

/// The namespaces and mounts for `applied`, with `writable` the folders left writable.
fn namespaces(
    applied: &Applied,
    writable: &[PathBuf],
    private_tmp: bool,
) -> io::Result<Namespaces> {
    let mut needed = vec![applied.workspace.clone()];
    needed.extend(applied.writable.iter().cloned());
    needed.extend(applied.protected.iter().cloned());
    let private = PrivateMounts::new(private_tmp, applied.limits.tmp_size, &needed, true)?;
    // What is bound back into a private /tmp lies beneath it, which is writable: each such
    // folder that is not writable itself (the workspace in read-only mode, a gitdir) is made
    // read-only again.
    let mut read_only = applied.protected.clone();
    if private_tmp {
        read_only.extend(private_mounts::kept_paths(&needed).into_iter().filter(|p| {
            !writable
                .iter()
                .any(|w| !own_tmp(private_tmp, w) && p.starts_with(w))
        }));
    }
    Namespaces::new(
        &read_only,
        &applied.hidden,
        applied.confined_writes.then_some(writable),
        (!applied.blocked_network, applied.proc),
        private,
    )
}

/// The cgroup for `applied`'s caps: a process cap for root (which `RLIMIT_NPROC` spares) and a
/// memory cap when configured. `None` when there is none to make or it cannot be made (said
/// once at start: [`super::CommandPolicy::unavailable_warning`]).
fn cgroup_for(applied: &Applied) -> Option<Cgroup> {
    if !applied.sandboxed() {
        return None;
    }
    // SAFETY: geteuid cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    let pids = applied
        .limits
        .processes
        .filter(|_| root)
        .map(|n| n.saturating_add(1)); // the reaper
    if pids.is_none() && applied.limits.memory.is_none() {
        return None;
    }
    Cgroup::new(pids, applied.limits.memory)
        .map_err(|e| tracing::debug!("no cgroup for the command's caps: {e}"))
        .ok()
}

/// The tasks running on the machine now (`/proc/loadavg`'s "running/total"): without a user
/// namespace the process limit counts all of the user's, so the cap is set above them.
fn tasks_now() -> u64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| {
            let field = s.split_whitespace().nth(3)?;
            field.split('/').nth(1)?.parse().ok()
        })
        .unwrap_or(32_768)
}

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: libc::c_int,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// Drops every capability for good: a command needs none, and in a user namespace pith's
/// process holds them all (with them a command could undo the mounts). `SECBIT_NOROOT` keeps
/// an exec as root from getting them back.
unsafe fn drop_capabilities() -> io::Result<()> {
    const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;
    const SECBIT_NOROOT: libc::c_ulong = 1;
    const SECBIT_NOROOT_LOCKED: libc::c_ulong = 2;
    unsafe {
        // Each of these needs CAP_SETPCAP, which an ordinary user's process lacks and does not
        // need to lose: their failure leaves nothing to drop.
        for cap in 0..64 {
            libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0);
        }
        libc::prctl(
            libc::PR_SET_SECUREBITS,
            SECBIT_NOROOT | SECBIT_NOROOT_LOCKED,
            0,
            0,
            0,
        );
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        );
        let header = CapHeader {
            version: LINUX_CAPABILITY_VERSION_3,
            pid: 0,
        };
        let data = [CapData {
            effective: 0,
            permitted: 0,
            inheritable: 0,
        }; 2];
        if libc::syscall(libc::SYS_capset, &header, data.as_ptr()) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}
