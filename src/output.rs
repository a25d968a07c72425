//! The output boundary of the command-line front ends (`pith run`, `pith config`, `pith
//! sessions`, …): everything they write to stdout or stderr goes through [`Clean`], which drops
//! terminal control sequences (`text::ControlFilter`), so text from a model, a tool, a file name
//! or a hostile config cannot set the clipboard, the title or clear the screen. The macros
//! [`out!`](crate::out), [`outln!`](crate::outln) and [`errln!`](crate::errln) replace `print!`,
//! `println!` and `eprintln!` there (clippy's `print_stdout`/`print_stderr` lints keep it so);
//! [`error`] and [`warning`] are the one way faults are worded: `pith: error: …`,
//! `pith: warning: …`.

use std::fmt;
use std::io::{self, Write};

use pith_protocol::text::ControlFilter;
pub use pith_protocol::text::{escape_json_controls, strip_controls};

/// A writer that passes on text without control sequences, keeping its place in a sequence and
/// in a UTF-8 character cut between two writes. Bytes that are not UTF-8 become U+FFFD.
pub struct Clean<W: Write> {
    inner: W,
    filter: ControlFilter,
    /// the start of a UTF-8 character cut by the end of the last write
    partial: Vec<u8>,
}

impl<W: Write> Clean<W> {
    pub fn new(inner: W) -> Clean<W> {
        Clean {
            inner,
            filter: ControlFilter::new(),
            partial: Vec::new(),
        }
    }

    /// The clean text of `self.partial` plus `buf`; an incomplete last character stays behind.
    fn decode(&mut self, buf: &[u8]) -> String {
        self.partial.extend_from_slice(buf);
        let mut text = String::with_capacity(self.partial.len());
        loop {
            let (valid, bad) = match std::str::from_utf8(&self.partial) {
                Ok(s) => (s.len(), None),
                Err(e) => (e.valid_up_to(), Some(e.error_len())),
            };
            let good = std::str::from_utf8(&self.partial[..valid]).unwrap_or_default();
            self.filter.clean_into(good, &mut text);
            match bad {
                None => {
                    self.partial.clear();
                    break;
                }
                // cut by the end of this write: wait for the rest
                Some(None) => {
                    self.partial.drain(..valid);
                    break;
                }
                Some(Some(n)) => {
                    text.push('\u{fffd}');
                    self.partial.drain(..valid + n);
                }
            }
        }
        text
    }
}

impl<W: Write> Write for Clean<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let text = self.decode(buf);
        self.inner.write_all(text.as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Stdout, cleaned (locked for as long as it is held).
pub fn stdout() -> Clean<io::StdoutLock<'static>> {
    Clean::new(io::stdout().lock())
}

/// Stderr, cleaned.
pub fn stderr() -> Clean<io::StderrLock<'static>> {
    Clean::new(io::stderr().lock())
}

/// Writes to stdout, cleaned. A failed write (a closed pipe) is ignored, not a panic.
pub fn print_out(args: fmt::Arguments<'_>) {
    let mut out = stdout();
    let _ = out.write_fmt(args);
    let _ = out.flush();
}

/// Writes to stderr, cleaned (a question before an answer is read).
pub fn print_err(args: fmt::Arguments<'_>) {
    let mut err = stderr();
    let _ = err.write_fmt(args);
    let _ = err.flush();
}

/// Writes one line to stderr, cleaned.
pub fn print_err_line(args: fmt::Arguments<'_>) {
    let mut err = stderr();
    let _ = err.write_fmt(format_args!("{args}\n"));
}

/// `pith: error: MESSAGE` on stderr.
pub fn error(message: impl fmt::Display) {
    print_err_line(format_args!("pith: error: {message}"));
}

/// `pith: warning: MESSAGE` on stderr.
pub fn warning(message: impl fmt::Display) {
    print_err_line(format_args!("pith: warning: {message}"));
}

/// `print!` through [`Clean`].
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => { $crate::output::print_out(format_args!($($arg)*)) };
}

/// `println!` through [`Clean`].
#[macro_export]
macro_rules! outln {
    () => { $crate::output::print_out(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::output::print_out(format_args!("{}\n", format_args!($($arg)*))) };
}

/// `eprintln!` through [`Clean`].
#[macro_export]
macro_rules! errln {
    ($($arg:tt)*) => { $crate::output::print_err_line(format_args!($($arg)*)) };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn through(pieces: &[&[u8]]) -> String {
        let mut w = Clean::new(Vec::new());
        for p in pieces {
            w.write_all(p).unwrap();
        }
        String::from_utf8(w.inner).unwrap()
    }

    #[test]
    fn writes_are_cleaned_across_their_boundaries() {
        assert_eq!(through(&[b"a\x1b", b"]52;c;SGk=\x07b"]), "ab");
        assert_eq!(through(&[b"tab\there\r\n"]), "tab\there\n");
        // U+009B (CSI) is C2 9B in UTF-8: cut between its two bytes, still dropped
        assert_eq!(through(&[b"x\xc2", b"\x9b2Jy"]), "xy");
        // é cut in two
        assert_eq!(through(&[b"caf\xc3", b"\xa9"]), "café");
        assert_eq!(through(&[b"bad\xff byte"]), "bad\u{fffd} byte");
    }

    #[test]
    fn formatted_output_is_cleaned() {
        let mut w = Clean::new(Vec::new());
        let name = "ev\u{1b}]0;t\u{7}il";
        write!(w, "name {name}").unwrap();
        assert_eq!(String::from_utf8(w.inner).unwrap(), "name evil");
    }
}
