//! One writer per session: an advisory lock (`flock`) on `<data dir>/locks/<session id>.lock`,
//! held for as long as an engine works on the session. The kernel drops it when the process
//! ends however it ends (`kill -9` included), so a stale lock never blocks anyone; the file
//! holds the owner's pid for the message a second pith shows.

use std::fs::File;
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

/// The lock on one session. Dropping it releases the session.
#[derive(Debug)]
pub struct SessionLock {
    file: File,
    session_id: String,
}

/// Why a session could not be locked.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another process writes to the session.
    #[error(
        "session {session_id} is open in another pith{}; two cannot write to one session at once. Wait for it to finish or close it, or start a new session (without -c / --session)",
        pid.map(|p| format!(" (pid {p})")).unwrap_or_default()
    )]
    Busy {
        session_id: String,
        pid: Option<u32>,
    },
    #[error("cannot lock session {session_id} ({}): {source}", path.display())]
    Io {
        session_id: String,
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Where the lock files live.
pub(crate) fn lock_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("locks")
}

fn lock_path(data_dir: &Path, session_id: &str) -> PathBuf {
    // Session ids are ULIDs; anything else is reduced to a safe file name.
    let safe: String = session_id
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    lock_dir(data_dir).join(format!("{safe}.lock"))
}

impl SessionLock {
    /// Takes the session for this process, or says who has it. Never waits.
    pub fn acquire(data_dir: &Path, session_id: &str) -> Result<SessionLock, LockError> {
        let path = lock_path(data_dir, session_id);
        let io = |source| LockError::Io {
            session_id: session_id.to_string(),
            path: path.clone(),
            source,
        };
        std::fs::create_dir_all(lock_dir(data_dir)).map_err(io)?;
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io)?;
        if !try_lock(&file).map_err(io)? {
            let mut text = String::new();
            let _ = file.read_to_string(&mut text);
            return Err(LockError::Busy {
                session_id: session_id.to_string(),
                pid: text.trim().parse().ok(),
            });
        }
        // Ours now: say who holds it (best effort; the lock itself is what counts).
        let _ = file.set_len(0);
        let _ = file.rewind();
        let _ = write!(file, "{}", std::process::id());
        let _ = file.flush();
        Ok(SessionLock {
            file,
            session_id: session_id.to_string(),
        })
    }

    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// Whether some process holds the session now (for readers that want to repair what a crash
    /// left only when no one writes).
    pub(crate) fn is_held(data_dir: &Path, session_id: &str) -> bool {
        matches!(
            SessionLock::acquire(data_dir, session_id),
            Err(LockError::Busy { .. })
        )
    }
}

impl Drop for SessionLock {
    fn drop(&mut self) {
        // Clear the pid so a reader sees no owner, then release the lock explicitly: closing
        // the file is not enough while a child forked by another thread of this process still
        // holds a copy of the descriptor (until its exec closes it), and unlocking through any
        // descriptor of the open file releases it for all of them.
        let _ = self.file.set_len(0);
        unlock(&self.file);
    }
}

/// `flock(LOCK_UN)` on the open file (best effort: closing it releases the lock too).
#[cfg(unix)]
fn unlock(file: &File) {
    use std::os::fd::AsRawFd;
    // SAFETY: flock on a file descriptor we own; no memory is passed.
    unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_UN) };
}

#[cfg(not(unix))]
fn unlock(_file: &File) {}

/// `flock(LOCK_EX | LOCK_NB)`: true when taken, false when another open file holds it.
#[cfg(unix)]
fn try_lock(file: &File) -> std::io::Result<bool> {
    use std::os::fd::AsRawFd;
    loop {
        // SAFETY: flock on a file descriptor we own; no memory is passed.
        let r = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if r == 0 {
            return Ok(true);
        }
        let e = std::io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EWOULDBLOCK) => return Ok(false),
            Some(libc::EINTR) => continue,
            _ => return Err(e),
        }
    }
}

#[cfg(not(unix))]
fn try_lock(_file: &File) -> std::io::Result<bool> {
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_writer_is_refused_with_the_owner_and_a_dropped_lock_frees_it() {
        let dir = tempfile::tempdir().unwrap();
        let first = SessionLock::acquire(dir.path(), "ses_A").unwrap();
        assert_eq!(first.session_id(), "ses_A");
        // A separate open of the same file conflicts even within one process.
        let err = SessionLock::acquire(dir.path(), "ses_A").unwrap_err();
        let msg = err.to_string();
        assert!(
            matches!(err, LockError::Busy { pid: Some(p), .. } if p == std::process::id()),
            "{msg}"
        );
        assert!(
            msg.contains("session ses_A is open in another pith (pid"),
            "{msg}"
        );
        assert!(!msg.contains('\n'));
        assert!(SessionLock::is_held(dir.path(), "ses_A"));
        // Other sessions are free.
        let _other = SessionLock::acquire(dir.path(), "ses_B").unwrap();
        drop(first);
        assert!(!SessionLock::is_held(dir.path(), "ses_A"));
        let _again = SessionLock::acquire(dir.path(), "ses_A").unwrap();
    }

    /// A child forked by another thread shares the lock's open file until it execs (flock
    /// belongs to the open file): dropping the lock frees the session at once all the same.
    #[cfg(unix)]
    #[test]
    fn a_dropped_lock_is_free_while_a_forked_child_has_not_exec_d_yet() {
        use std::os::unix::process::CommandExt;
        let dir = tempfile::tempdir().unwrap();
        let lock = SessionLock::acquire(dir.path(), "ses_F").unwrap();
        let child = std::thread::spawn(move || {
            let mut cmd = std::process::Command::new("true");
            // SAFETY: the closure only sleeps (async-signal-safe enough for a test child).
            unsafe {
                cmd.pre_exec(|| {
                    std::thread::sleep(std::time::Duration::from_millis(1500));
                    Ok(())
                });
            }
            let mut c = cmd.spawn().unwrap();
            c.wait().unwrap();
        });
        // the child is forked (it holds a copy of every descriptor) and sleeps before its exec
        std::thread::sleep(std::time::Duration::from_millis(300));
        drop(lock);
        let again = SessionLock::acquire(dir.path(), "ses_F");
        assert!(again.is_ok(), "{:?}", again.err());
        child.join().unwrap();
    }

    #[test]
    fn odd_ids_stay_inside_the_lock_dir() {
        let dir = tempfile::tempdir().unwrap();
        let p = lock_path(dir.path(), "../../etc/passwd");
        assert_eq!(p.parent().unwrap(), lock_dir(dir.path()));
    }
}
