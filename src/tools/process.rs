//! No orphans: a command runs in a process group of its own, watched by a small watchdog process
//! that kills the whole group when pith goes away, however it goes (a normal exit, a panic,
//! SIGTERM, SIGHUP or `kill -9`).
//!
//! How the watchdog knows: pith holds the write end of a pipe that nothing ever writes to; every
//! watchdog waits on its read end. When pith dies the kernel closes the write end and every
//! watchdog sees end-of-file at once, kills its group and exits. (A parent-death signal would
//! only reach the shell, not what the shell started, and fires when the spawning *thread* ends.)
//! A watchdog whose group has emptied (the command and everything it left behind are gone)
//! exits by itself within a second.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::OnceLock;

/// The pipe whose write end dies with pith: (read end, write end). Both close-on-exec.
static DEATH_PIPE: OnceLock<Option<(OwnedFd, OwnedFd)>> = OnceLock::new();

fn death_pipe() -> Option<i32> {
    DEATH_PIPE
        .get_or_init(|| match io::pipe() {
            // std's pipe is close-on-exec: commands never inherit it.
            Ok((r, w)) => Some((OwnedFd::from(r), OwnedFd::from(w))),
            Err(e) => {
                tracing::warn!("cannot create the watchdog pipe ({e}); commands may outlive pith");
                None
            }
        })
        .as_ref()
        .map(|(r, _)| r.as_raw_fd())
}

/// Makes `cmd` start in a new session (its own process group, no controlling terminal, so it
/// cannot read the TUI's keyboard) and under a watchdog that kills the group when pith dies.
pub fn isolate(cmd: &mut tokio::process::Command) {
    let death_fd = death_pipe();
    // SAFETY: the closure runs in the child between fork and exec and only makes
    // async-signal-safe calls (setsid, fork, and in the watchdog poll, kill, close, _exit).
    unsafe {
        cmd.pre_exec(move || {
            if libc::setsid() == -1 {
                return Err(io::Error::last_os_error());
            }
            // pith ignores SIGXFSZ for itself; commands get the usual behaviour back.
            libc::signal(libc::SIGXFSZ, libc::SIG_DFL);
            if let Some(fd) = death_fd {
                start_watchdog(fd, libc::getpid());
            }
            Ok(())
        });
    }
}

/// Forks the watchdog of process group `pgid` (the caller's). Without it the command still runs.
///
/// # Safety
/// Called only in a freshly forked child before exec.
unsafe fn start_watchdog(death_fd: i32, pgid: libc::pid_t) {
    // SAFETY: plain fork (as a raw syscall on Linux, so no atfork handlers run in a child of a
    // multi-threaded process).
    let pid = unsafe { raw_fork() };
    if pid == 0 {
        // SAFETY: we are the new single-threaded watchdog.
        unsafe { watchdog(death_fd, pgid) }
    }
}

#[cfg(target_os = "linux")]
unsafe fn raw_fork() -> libc::pid_t {
    // SAFETY: clone with only SIGCHLD and no new stack behaves as fork.
    unsafe {
        libc::syscall(libc::SYS_clone, libc::SIGCHLD as libc::c_long, 0, 0, 0, 0) as libc::pid_t
    }
}

#[cfg(not(target_os = "linux"))]
unsafe fn raw_fork() -> libc::pid_t {
    // SAFETY: fork in a single-threaded child.
    unsafe { libc::fork() }
}

/// The watchdog's whole life: wait for pith's end or its group's, kill the group if pith went.
///
/// # Safety
/// Async-signal-safe calls only; never returns.
unsafe fn watchdog(death_fd: i32, pgid: libc::pid_t) -> ! {
    unsafe {
        // Out of the command's group and away from any terminal.
        libc::setsid();
        for sig in [
            libc::SIGINT,
            libc::SIGQUIT,
            libc::SIGHUP,
            libc::SIGTERM,
            libc::SIGPIPE,
        ] {
            libc::signal(sig, libc::SIG_IGN);
        }
        // Hold nothing of pith's: above all not the pipe's write end (or the end-of-file would
        // never come), nor the session lock or the database.
        close_all_but(death_fd);
        loop {
            let mut pfd = libc::pollfd {
                fd: death_fd,
                events: libc::POLLIN,
                revents: 0,
            };
            let r = libc::poll(&mut pfd, 1, 1000);
            if r > 0 {
                // Readable means end-of-file: pith is gone.
                libc::kill(-pgid, libc::SIGKILL);
                libc::_exit(0);
            }
            if r == 0 && libc::kill(-pgid, 0) == -1 {
                // The group is empty: nothing left to guard.
                libc::_exit(0);
            }
        }
    }
}

/// Closes every file descriptor except `keep`.
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
