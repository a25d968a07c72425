//! A job's output: written to a file under the tool-output folder as it arrives (known secrets
//! scrubbed, a line at a time), bounded: past [`MAX_FILE`] the file starts over, so it keeps
//! the newest output. A read returns what came since the last one, at most [`MAX_READ`] of it
//! (the newest), and says what it skipped.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// The most the log file holds before it starts over.
pub(crate) const MAX_FILE: u64 = 4 * 1024 * 1024;
/// The most one read returns (the registry's truncation then cuts it to the output limits).
pub(crate) const MAX_READ: u64 = 256 * 1024;
/// A line longer than this is written without waiting for its end.
const MAX_PENDING: usize = 8 * 1024;
/// The last line as lists show it, at most (characters).
const LAST_LINE: usize = 200;

pub(crate) struct JobLog {
    path: PathBuf,
    /// `None`: it could not be created (the output is then only counted).
    file: Option<File>,
    /// Bytes written since the job started (the file holds `base..total`).
    total: u64,
    base: u64,
    /// Read up to here.
    read: u64,
    /// The end of a line not yet written.
    pending: Vec<u8>,
    /// The last line that was not blank, and the line being written.
    last: String,
    current: String,
}

/// What a read returns.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct NewOutput {
    pub(crate) text: String,
    /// Bytes that came since the last read but are not in `text` (too many, or the log
    /// started over).
    pub(crate) skipped: u64,
}

impl JobLog {
    pub(crate) fn new(path: PathBuf) -> JobLog {
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let file = File::options()
            .create_new(true)
            .read(true)
            .write(true)
            .open(&path)
            .map_err(|e| tracing::warn!(path = %path.display(), "cannot create a job's log: {e}"))
            .ok();
        JobLog {
            path,
            file,
            total: 0,
            base: 0,
            read: 0,
            pending: Vec::new(),
            last: String::new(),
            current: String::new(),
        }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Bytes the job printed (counted as they are written to the log).
    pub(crate) fn total(&self) -> u64 {
        self.total + self.pending.len() as u64
    }

    pub(crate) fn push(&mut self, chunk: &[u8]) {
        self.pending.extend_from_slice(chunk);
        let cut = match self.pending.iter().rposition(|&b| b == b'\n') {
            Some(i) => i + 1,
            None if self.pending.len() > MAX_PENDING => self.pending.len(),
            None => return,
        };
        let whole: Vec<u8> = self.pending.drain(..cut).collect();
        self.write(&whole);
    }

    /// Writes what waits for the end of its line.
    pub(crate) fn flush(&mut self) {
        if !self.pending.is_empty() {
            let rest = std::mem::take(&mut self.pending);
            self.write(&rest);
        }
    }

    fn write(&mut self, bytes: &[u8]) {
        let text = String::from_utf8_lossy(bytes);
        let text = pith_secrets::scrub(&text);
        self.see_lines(&text);
        let bytes = text.as_bytes();
        let len = bytes.len() as u64;
        if self.total - self.base + len > MAX_FILE {
            // start over: the newest output is what is read
            if let Some(f) = &self.file {
                let _ = f.set_len(0);
            }
            self.base = self.total;
        }
        if let Some(f) = &self.file
            && let Err(e) = f.write_all_at(bytes, self.total - self.base)
        {
            tracing::warn!(path = %self.path.display(), "cannot write a job's log: {e}");
            self.file = None;
        }
        self.total += len;
    }

    fn see_lines(&mut self, text: &str) {
        for (i, piece) in text.split('\n').enumerate() {
            if i > 0 {
                if !self.current.trim().is_empty() {
                    self.last = std::mem::take(&mut self.current);
                }
                self.current.clear();
            }
            if self.current.chars().count() < LAST_LINE * 2 {
                self.current.push_str(piece);
            }
        }
    }

    /// The last line that is not blank, on one line and bounded.
    pub(crate) fn last_line(&self) -> String {
        let waiting = String::from_utf8_lossy(&self.pending);
        let line = [waiting.as_ref(), &self.current, &self.last]
            .into_iter()
            .find(|l| !l.trim().is_empty())
            .unwrap_or_default();
        pith_protocol::text::one_line_max(line.trim(), LAST_LINE)
    }

    /// What came since the last read (a line still unfinished included), the newest
    /// [`MAX_READ`] of it at most.
    pub(crate) fn read_new(&mut self) -> NewOutput {
        self.flush();
        // (what the file no longer holds, and what is past the bound, is skipped)
        let from = self
            .read
            .max(self.base)
            .max(self.total.saturating_sub(MAX_READ));
        let mut skipped = from - self.read;
        self.read = self.total;
        let len = (self.total - from) as usize;
        let mut buf = vec![0u8; len];
        let ok = self
            .file
            .as_ref()
            .is_some_and(|f| f.read_exact_at(&mut buf, from - self.base).is_ok());
        if !ok {
            return NewOutput {
                text: String::new(),
                skipped: skipped + len as u64,
            };
        }
        let mut text = String::from_utf8_lossy(&buf).into_owned();
        if skipped > 0 {
            // the cut may fall inside a line: start at the next one
            if let Some(i) = text.find('\n') {
                skipped += (i + 1) as u64;
                text.drain(..=i);
            }
        }
        NewOutput { text, skipped }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log() -> (tempfile::TempDir, JobLog) {
        let dir = tempfile::tempdir().unwrap();
        let log = JobLog::new(dir.path().join("job.log"));
        (dir, log)
    }

    #[test]
    fn a_read_returns_only_what_is_new() {
        let (_d, mut log) = log();
        log.push(b"one\ntw");
        // (a line still unfinished is the last: a prompt, a progress line)
        assert_eq!(log.last_line(), "tw");
        let first = log.read_new();
        assert_eq!(first.text, "one\ntw");
        log.push(b"o\nthree\n");
        assert_eq!(log.read_new().text, "o\nthree\n");
        assert_eq!(log.read_new(), NewOutput::default());
        assert_eq!(log.last_line(), "three");
        let on_disk = std::fs::read_to_string(log.path()).unwrap();
        assert_eq!(on_disk, "one\ntwo\nthree\n");
    }

    #[test]
    fn a_flood_is_read_as_its_newest_part_and_the_file_stays_bounded() {
        let (_d, mut log) = log();
        let line = format!("{}\n", "x".repeat(99));
        for _ in 0..(MAX_FILE as usize / 100 + 5_000) {
            log.push(line.as_bytes());
        }
        log.push(b"the end\n");
        let size = std::fs::metadata(log.path()).unwrap().len();
        assert!(size <= MAX_FILE, "{size}");
        let new = log.read_new();
        assert!(new.text.len() as u64 <= MAX_READ);
        assert!(new.text.ends_with("the end\n"));
        assert!(new.text.starts_with('x'), "starts on a whole line");
        assert_eq!(new.skipped + new.text.len() as u64, log.total());
        assert_eq!(log.last_line(), "the end");
    }

    #[test]
    fn a_line_without_end_is_written_past_its_bound() {
        let (_d, mut log) = log();
        log.push(&vec![b'y'; MAX_PENDING + 1]);
        assert_eq!(log.total(), MAX_PENDING as u64 + 1);
        assert_eq!(
            std::fs::metadata(log.path()).unwrap().len(),
            MAX_PENDING as u64 + 1
        );
        assert!(log.last_line().chars().count() <= LAST_LINE + 1);
    }
}
