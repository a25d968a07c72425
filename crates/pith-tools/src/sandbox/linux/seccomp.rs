//! The seccomp filters of a sandboxed command with the network off.
//!
//! `socket` fails for every family, Unix sockets included: a Unix socket reaches whatever
//! listens on a path outside (a D-Bus session, `docker.sock`, an ssh-agent) or on an abstract
//! name. `socketpair` still makes connected Unix pairs (which reach nothing outside), and
//! `io_uring_setup` fails (io_uring could open sockets without these calls). On x86-64 a
//! second filter fails every x32 system call, which the first (keyed by x86-64 numbers) would
//! not see.

use std::collections::BTreeMap;
use std::io;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

fn err(e: impl std::fmt::Display) -> io::Error {
    io::Error::other(format!("cannot build the network filter: {e}"))
}

/// The filters to install, in order.
pub(super) fn network_filters() -> io::Result<Vec<BpfProgram>> {
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
    rules.insert(libc::SYS_socket, Vec::new());
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
    let mut out = vec![program.map_err(err)?];
    if let Some(x32) = x32_filter() {
        out.push(x32);
    }
    Ok(out)
}

/// Fails every x32 system call (numbers with bit 30 set, same audit arch as x86-64) with EPERM.
#[cfg(target_arch = "x86_64")]
fn x32_filter() -> Option<BpfProgram> {
    use libc::{BPF_ABS, BPF_JEQ, BPF_JGE, BPF_JMP, BPF_K, BPF_LD, BPF_RET, BPF_W};
    const AUDIT_ARCH_X86_64: u32 = 0xc000_003e;
    const X32_SYSCALL_BIT: u32 = 0x4000_0000;
    let stmt = |code: u32, k: u32| seccompiler::sock_filter {
        code: code as u16,
        jt: 0,
        jf: 0,
        k,
    };
    let jump = |code: u32, k: u32, jt: u8, jf: u8| seccompiler::sock_filter {
        code: code as u16,
        jt,
        jf,
        k,
    };
    Some(vec![
        // seccomp_data.arch (offset 4): another architecture is the other filter's business.
        stmt(BPF_LD | BPF_W | BPF_ABS, 4),
        jump(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 3),
        // seccomp_data.nr (offset 0)
        stmt(BPF_LD | BPF_W | BPF_ABS, 0),
        jump(BPF_JMP | BPF_JGE | BPF_K, X32_SYSCALL_BIT, 0, 1),
        stmt(
            BPF_RET | BPF_K,
            libc::SECCOMP_RET_ERRNO | libc::EPERM as u32,
        ),
        stmt(BPF_RET | BPF_K, libc::SECCOMP_RET_ALLOW),
    ])
}

#[cfg(not(target_arch = "x86_64"))]
fn x32_filter() -> Option<BpfProgram> {
    None
}
