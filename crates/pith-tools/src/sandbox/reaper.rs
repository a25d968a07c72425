//! Every process a command starts ends with the call, or when pith goes, however it goes.
//!
//! A command is started in a session of its own under a small **reaper**: the forked child
//! (still pith's code, before any exec) enters the sandbox's namespaces, forks the command's
//! process and then only waits:
//!
//! - with a PID namespace the command's process is the namespace's first; when it ends, or
//!   the reaper kills it, the kernel kills everything else in the namespace, `setsid` and
//!   double forks included;
//! - without one the reaper is a child subreaper (`PR_SET_CHILD_SUBREAPER`): whatever the
//!   command leaves behind is re-parented to it, and it kills its children until none is left.
//!
//! The reaper ends the tree when the command's process exits, on SIGUSR1 (the bash tool's
//! "stop now") and when pith dies: pith holds the write end of a pipe nothing writes to, every
//! reaper polls the read end, and the kernel closes the write end when pith dies, whatever
//! killed it. A stop is SIGKILL at once, to the namespace's first process or the command's
//! process group, never a SIGTERM a shell can outlive (a namespace's first process ignores
//! it; elsewhere a `trap` runs, or the shell goes on to its next statement). The reaper
//! ignores other signals, exits with the command's status (re-raising its signal) and, with
//! nothing of pith's open, holds neither the command's output pipe nor pith's files.
//!
//! Everything in the forked child is async-signal-safe: system calls on data prepared before
//! the fork, no allocation, no locks.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use super::Prepared;

/// The pipe whose write end dies with pith: (read end, write end). Both close-on-exec.
static DEATH_PIPE: OnceLock<Option<(OwnedFd, OwnedFd)>> = OnceLock::new();

fn death_pipe() -> Option<i32> {
    DEATH_PIPE
        .get_or_init(|| match io::pipe() {
            Ok((r, w)) => Some((OwnedFd::from(r), OwnedFd::from(w))),
            Err(e) => {
                tracing::warn!("cannot create the reaper pipe ({e}); commands may outlive pith");
                None
            }
        })
        .as_ref()
        .map(|(r, _)| r.as_raw_fd())
}

/// The signal that tells a reaper to end its command's tree now.
pub const STOP_SIGNAL: i32 = libc::SIGUSR1;

/// What runs in the forked child of a command: a new session, the sandbox (`prepared`), the
/// reaper. For `pre_exec` of a std or tokio `Command`.
pub(super) fn child_setup(
    prepared: Option<Prepared>,
) -> impl FnMut() -> io::Result<()> + Send + Sync + 'static {
    let death_fd = death_pipe();
    move || {
        // SAFETY: async-signal-safe system calls only (see the module comment).
        unsafe { setup(prepared.as_ref(), death_fd) }
    }
}

unsafe fn setup(prepared: Option<&Prepared>, death_fd: Option<i32>) -> io::Result<()> {
    unsafe {
        if libc::setsid() == -1 {
            return Err(io::Error::last_os_error());
        }
        // pith ignores SIGXFSZ for itself; commands get the usual behaviour back.
        libc::signal(libc::SIGXFSZ, libc::SIG_DFL);
        // No signal handled until each side has set up its own.
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::sigprocmask(libc::SIG_SETMASK, &all, &mut old);
        if let Some(p) = prepared {
            p.enter_outer()?;
        }
        let pidns = prepared.is_some_and(Prepared::pid_namespace);
        let pid = raw_fork();
        if pid < 0 {
            return Err(io::Error::last_os_error());
        }
        if pid == 0 {
            // The command's process: it dies with the reaper, and heads a process group of
            // its own, so that the reaper can kill all of it with one signal.
            #[cfg(target_os = "linux")]
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
            libc::setpgid(0, 0);
            libc::sigprocmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
            if let Some(p) = prepared {
                p.enter_inner()?;
            }
            return Ok(());
        }
        // (Also here: whichever of the two runs first, the group exists before the command
        // can be stopped.)
        libc::setpgid(pid, pid);
        reaper(pid, death_fd, pidns)
    }
}

#[cfg(target_os = "linux")]
unsafe fn raw_fork() -> libc::pid_t {
    // SAFETY: clone with only SIGCHLD and no new stack behaves as fork, without running the
    // atfork handlers (not safe in a child of a multi-threaded process).
    unsafe {
        libc::syscall(libc::SYS_clone, libc::SIGCHLD as libc::c_long, 0, 0, 0, 0) as libc::pid_t
    }
}

#[cfg(not(target_os = "linux"))]
unsafe fn raw_fork() -> libc::pid_t {
    // SAFETY: fork in a single-threaded child.
    unsafe { libc::fork() }
}

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_stop(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

extern "C" fn on_other(_: libc::c_int) {}

unsafe fn handle(sig: libc::c_int, handler: extern "C" fn(libc::c_int)) {
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = handler as usize;
        libc::sigemptyset(&mut sa.sa_mask);
        // No SA_RESTART: a signal wakes the poll below.
        libc::sigaction(sig, &sa, std::ptr::null_mut());
    }
}

/// The reaper's whole life. Never returns.
unsafe fn reaper(child: libc::pid_t, death_fd: Option<i32>, pidns: bool) -> ! {
    unsafe {
        close_all_but(death_fd.unwrap_or(-1));
        #[cfg(target_os = "linux")]
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
        handle(STOP_SIGNAL, on_stop);
        for sig in [
            libc::SIGTERM,
            libc::SIGINT,
            libc::SIGHUP,
            libc::SIGQUIT,
            libc::SIGPIPE,
            libc::SIGCHLD,
        ] {
            handle(sig, on_other);
        }
        // Signals stay blocked but while the reaper sleeps in `ppoll`, which unblocks them
        // atomically: a stop that comes between the check and the sleep wakes it at once.
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        let mut status: Option<libc::c_int> = None;
        loop {
            reap(child, &mut status, libc::WNOHANG);
            if status.is_some() {
                break;
            }
            if STOP.load(Ordering::SeqCst) {
                break;
            }
            let mut pfd = libc::pollfd {
                fd: death_fd.unwrap_or(-1),
                events: libc::POLLIN,
                revents: 0,
            };
            // Readable (end-of-file) or hung up: pith is gone.
            if sleep(&mut pfd, &none) > 0 && pfd.revents != 0 {
                break;
            }
        }
        end_tree(child, pidns, &mut status);
        exit_like(status)
    }
}

/// Waits up to a second for `pfd`, letting signals in (`open`) only while it waits.
#[cfg(target_os = "linux")]
unsafe fn sleep(pfd: &mut libc::pollfd, open: &libc::sigset_t) -> libc::c_int {
    let second = libc::timespec {
        tv_sec: 1,
        tv_nsec: 0,
    };
    // SAFETY: ppoll on one live pollfd, a live timespec and a live signal set.
    unsafe { libc::ppoll(pfd, 1, &second, open) }
}

/// Elsewhere (no `ppoll`; no sandbox either) a stop just before the wait waits a second.
#[cfg(not(target_os = "linux"))]
unsafe fn sleep(pfd: &mut libc::pollfd, open: &libc::sigset_t) -> libc::c_int {
    // SAFETY: sigprocmask and poll on live data.
    unsafe {
        let mut blocked: libc::sigset_t = std::mem::zeroed();
        libc::sigprocmask(libc::SIG_SETMASK, open, &mut blocked);
        let r = libc::poll(pfd, 1, 1000);
        libc::sigprocmask(libc::SIG_SETMASK, &blocked, std::ptr::null_mut());
        r
    }
}

/// Reaps children without blocking (or with, per `flags`); records `child`'s status.
unsafe fn reap(child: libc::pid_t, status: &mut Option<libc::c_int>, flags: libc::c_int) -> bool {
    let mut reaped = false;
    loop {
        let mut st = 0;
        // SAFETY: waitpid with a live out-pointer.
        let r = unsafe { libc::waitpid(-1, &mut st, flags) };
        if r <= 0 {
            return reaped;
        }
        reaped = true;
        if r == child {
            *status = Some(st);
        }
        if flags & libc::WNOHANG == 0 {
            return reaped;
        }
    }
}

/// Kills everything the command left, SIGKILL first (a shell handed SIGTERM goes on to its
/// next statement or runs its trap): the PID namespace with its first process, or else the
/// command's process group at once and then each child of the reaper (everything orphaned
/// below it comes to it) until there is none.
unsafe fn end_tree(child: libc::pid_t, pidns: bool, status: &mut Option<libc::c_int>) {
    unsafe {
        libc::kill(-child, libc::SIGKILL);
        if status.is_none() {
            libc::kill(child, libc::SIGKILL);
        }
        loop {
            if !pidns {
                kill_children(libc::getpid());
            }
            let mut st = 0;
            let r = libc::waitpid(-1, &mut st, 0);
            if r == child {
                *status = Some(st);
            }
            if r < 0 {
                if io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                return; // ECHILD: nothing is left
            }
        }
    }
}

/// Sends SIGKILL to every process whose parent is `parent`, found in `/proc`.
#[cfg(target_os = "linux")]
unsafe fn kill_children(parent: libc::pid_t) {
    unsafe {
        let dir = libc::open(
            c"/proc".as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
        );
        if dir < 0 {
            return;
        }
        let mut buf = [0u8; 4096];
        loop {
            let n = libc::syscall(libc::SYS_getdents64, dir, buf.as_mut_ptr(), buf.len());
            if n <= 0 {
                break;
            }
            let mut off = 0usize;
            while off < n as usize {
                // struct linux_dirent64 { u64 ino; i64 off; u16 reclen; u8 type; char name[] }
                let reclen = u16::from_ne_bytes([buf[off + 16], buf[off + 17]]) as usize;
                let name = &buf[off + 19..off + reclen];
                if let Some(pid) = parse_pid(name)
                    && parent_of(dir, name) == Some(parent)
                {
                    libc::kill(pid, libc::SIGKILL);
                }
                off += reclen;
            }
        }
        libc::close(dir);
    }
}

#[cfg(not(target_os = "linux"))]
unsafe fn kill_children(_parent: libc::pid_t) {}

/// The number a `/proc` entry name (NUL-terminated) spells, if it is one.
fn parse_pid(name: &[u8]) -> Option<libc::pid_t> {
    let mut pid: libc::pid_t = 0;
    let mut digits = 0;
    for &b in name {
        if b == 0 {
            break;
        }
        if !b.is_ascii_digit() || digits >= 9 {
            return None;
        }
        pid = pid * 10 + (b - b'0') as libc::pid_t;
        digits += 1;
    }
    (digits > 0).then_some(pid)
}

/// The parent pid in `/proc/<name>/stat` (the field after the `)` that ends the command name).
#[cfg(target_os = "linux")]
unsafe fn parent_of(proc_dir: i32, name: &[u8]) -> Option<libc::pid_t> {
    let mut path = [0u8; 32];
    let len = name.iter().position(|&b| b == 0)?;
    if len + 6 > path.len() {
        return None;
    }
    path[..len].copy_from_slice(&name[..len]);
    path[len..len + 5].copy_from_slice(b"/stat");
    let mut buf = [0u8; 512];
    // SAFETY: openat/read/close on a NUL-terminated path and a live buffer.
    let n = unsafe {
        let fd = libc::openat(
            proc_dir,
            path.as_ptr().cast(),
            libc::O_RDONLY | libc::O_CLOEXEC,
        );
        if fd < 0 {
            return None;
        }
        let n = libc::read(fd, buf.as_mut_ptr().cast(), buf.len());
        libc::close(fd);
        n
    };
    if n <= 0 {
        return None;
    }
    parse_ppid(&buf[..n as usize])
}

/// `pid (comm) S ppid …` → ppid. The command name may hold spaces and parentheses: the last
/// `)` ends it.
fn parse_ppid(stat: &[u8]) -> Option<libc::pid_t> {
    let close = stat.iter().rposition(|&b| b == b')')?;
    let rest = stat.get(close + 2..)?; // ") "
    let mut fields = rest.split(|&b| b == b' ');
    fields.next()?; // state
    let ppid = fields.next()?;
    parse_pid(ppid)
}

/// Exits as the command did: its exit code, or its signal re-raised.
unsafe fn exit_like(status: Option<libc::c_int>) -> ! {
    unsafe {
        match status {
            Some(st) if libc::WIFEXITED(st) => libc::_exit(libc::WEXITSTATUS(st)),
            Some(st) if libc::WIFSIGNALED(st) => {
                let sig = libc::WTERMSIG(st);
                libc::signal(sig, libc::SIG_DFL);
                let mut set: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut set);
                libc::sigaddset(&mut set, sig);
                libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
                libc::kill(libc::getpid(), sig);
                libc::_exit(128 + sig)
            }
            _ => libc::_exit(255),
        }
    }
}

/// Closes every file descriptor except `keep` (-1: none).
unsafe fn close_all_but(keep: i32) {
    #[cfg(target_os = "linux")]
    unsafe {
        let below = if keep > 0 {
            libc::syscall(libc::SYS_close_range, 0u32, (keep - 1) as u32, 0u32)
        } else {
            0
        };
        let above = libc::syscall(libc::SYS_close_range, (keep + 1) as u32, u32::MAX, 0u32);
        if below == 0 && above == 0 {
            return;
        }
    }
    unsafe {
        let mut max = libc::sysconf(libc::_SC_OPEN_MAX);
        if !(0..=65_536).contains(&max) {
            max = 65_536;
        }
        for fd in 0..max as i32 {
            if fd != keep {
                libc::close(fd);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_stat_gives_the_parent_even_with_an_odd_command_name() {
        assert_eq!(parse_ppid(b"42 (sleep) S 7 42 42 0"), Some(7));
        assert_eq!(parse_ppid(b"42 (a) b (c)) R 1234 1 1"), Some(1234));
        assert_eq!(parse_ppid(b"42 (x"), None);
        assert_eq!(parse_pid(b"123\0\0"), Some(123));
        assert_eq!(parse_pid(b"self\0"), None);
        assert_eq!(parse_pid(b"\0"), None);
    }
}
