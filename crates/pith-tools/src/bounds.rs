//! Bounds every file tool keeps: no special files (a FIFO or a terminal would make a read wait
//! forever), a size limit on what is read whole, and a time limit on every call that Ctrl-C
//! or the limit cuts short.

use std::fs::{File, FileType, Metadata};
use std::time::Duration;

use super::ToolError;

/// How long a file tool (everything but bash, which has its own timeout) may run.
pub(crate) const TOOL_TIME_LIMIT: Duration = Duration::from_secs(60);
/// The largest file `edit` reads whole (and `write` reads to show what it replaced).
pub(crate) const MAX_WHOLE_FILE: u64 = 8 * 1024 * 1024;

/// What kind of special file this is, or `None` for a regular file, a directory or a symlink.
pub(crate) fn special_kind(ft: &FileType) -> Option<&'static str> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            return Some("a named pipe (FIFO)");
        }
        if ft.is_char_device() {
            return Some("a character device");
        }
        if ft.is_block_device() {
            return Some("a block device");
        }
        if ft.is_socket() {
            return Some("a socket");
        }
    }
    let _ = ft;
    None
}

/// The refusal for a special file, naming the tool's verb ("read", "edit").
pub(crate) fn special_file_error(shown: &str, kind: &str, verb: &str) -> String {
    format!(
        "Cannot {verb} {shown}: it is {kind}, not a regular file; reading it could wait forever or never end. If you really need its data, use bash with a timeout (for example `timeout 5 head -c 4096 {shown}`)."
    )
}

/// Refuses a special file before anything opens it.
pub(crate) fn refuse_special(meta: &Metadata, shown: &str, verb: &str) -> Result<(), ToolError> {
    match special_kind(&meta.file_type()) {
        Some(kind) => Err(ToolError::Failed(special_file_error(shown, kind, verb))),
        None => Ok(()),
    }
}

/// Reads the whole of an opened regular file of at most [`MAX_WHOLE_FILE`] bytes.
pub(crate) fn read_whole_from(
    file: File,
    meta: &Metadata,
    shown: &str,
    verb: &str,
) -> Result<Vec<u8>, ToolError> {
    use std::io::Read;
    refuse_special(meta, shown, verb)?;
    if meta.len() > MAX_WHOLE_FILE {
        return Err(ToolError::Failed(too_large(shown, meta.len(), verb)));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    // `take` also bounds a file that grows while it is read.
    file.take(MAX_WHOLE_FILE + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| tool_err!("Cannot {verb} {shown}: {e}"))?;
    if bytes.len() as u64 > MAX_WHOLE_FILE {
        return Err(ToolError::Failed(too_large(
            shown,
            bytes.len() as u64,
            verb,
        )));
    }
    Ok(bytes)
}

fn too_large(shown: &str, size: u64, verb: &str) -> String {
    format!(
        "Cannot {verb} {shown}: it is {}, more than the {} this tool handles in one piece. Use bash (for example sed or a script) for files this large.",
        super::truncate::human_bytes(size as usize),
        super::truncate::human_bytes(MAX_WHOLE_FILE as usize)
    )
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    // Over a path, as the tests need; the tools open through `open/` and check what they opened
    // with `refuse_special` and `read_whole_from`.
    /// Opens a regular file for reading without ever blocking on it: the open does not wait for a
    /// FIFO's writer, and what was opened is checked again (the path may have changed since it was
    /// looked at). Returns the file and its metadata.
    fn open_regular(path: &Path, shown: &str, verb: &str) -> Result<(File, Metadata), ToolError> {
        let mut options = std::fs::OpenOptions::new();
        options.read(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
        }
        let file = options
            .open(path)
            .map_err(|e| tool_err!("Cannot {verb} {shown}: {e}"))?;
        let meta = file
            .metadata()
            .map_err(|e| tool_err!("Cannot {verb} {shown}: {e}"))?;
        refuse_special(&meta, shown, verb)?;
        Ok((file, meta))
    }

    /// Reads a whole regular file of at most [`MAX_WHOLE_FILE`] bytes.
    fn read_whole(path: &Path, shown: &str, verb: &str) -> Result<Vec<u8>, ToolError> {
        let (file, meta) = open_regular(path, shown, verb)?;
        read_whole_from(file, &meta, shown, verb)
    }

    #[cfg(unix)]
    #[test]
    fn fifos_devices_and_sockets_are_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo with a valid C string.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        // No writer: a blocking open would hang this test.
        let err = open_regular(&fifo, "pipe", "read").unwrap_err().to_string();
        assert!(err.contains("it is a named pipe (FIFO)"), "{err}");
        let err = read_whole(Path::new("/dev/null"), "/dev/null", "edit")
            .unwrap_err()
            .to_string();
        assert!(err.contains("a character device"), "{err}");
        let sock = dir.path().join("s");
        let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
        let err = open_regular(&sock, "s", "read").unwrap_err().to_string();
        assert!(
            err.contains("socket") || err.contains("No such device"),
            "{err}"
        );
    }

    #[test]
    fn whole_reads_are_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big");
        let f = File::create(&big).unwrap();
        f.set_len(MAX_WHOLE_FILE + 1).unwrap();
        let err = read_whole(&big, "big", "edit").unwrap_err().to_string();
        assert!(err.contains("Use bash"), "{err}");
        let small = dir.path().join("small");
        std::fs::write(&small, "hello").unwrap();
        assert_eq!(read_whole(&small, "small", "edit").unwrap(), b"hello");
    }
}
