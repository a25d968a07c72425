//! A page of a text file, numbered `cat -n` style: the range asked for, within the output
//! limits, lines cut to [`MAX_LINE_CHARS`], the footer saying where the next page starts.

use std::io::BufRead;
use std::path::Path;

use pith_protocol::tool::ReadMetadata;

use super::{MAX_LINE_CHARS, lossy};
use crate::truncate::human_bytes;
use crate::{ToolContext, ToolError, ToolMeta, ToolOutput};

/// Numbers the lines the call asked for, within the output limits so the registry never has to
/// cut (and copy) a read; stops when the call is cancelled.
pub(super) fn read_page(
    reader: impl BufRead,
    shown: &str,
    offset: usize,
    limit: usize,
    size: u64,
    ctx: &ToolContext,
) -> Result<Page, ToolError> {
    let line_cap = ctx.output.max_lines.max(1);
    let stop = || ctx.cancel.is_cancelled();
    match number_lines(
        reader,
        offset,
        limit.min(line_cap),
        ctx.output.max_bytes,
        COUNT_LIMIT,
        &stop,
    ) {
        Ok(page) => Ok(page),
        Err(Stop::Io(e)) => Err(tool_err!("Cannot read {shown}: {e}")),
        Err(Stop::Cancelled) => Err(tool_err!(
            "read: stopped before the end of {shown} ({}): interrupted or over the time limit. Read a smaller part with offset and limit, or use bash (for example `sed -n '{offset},+{limit}p'`).",
            human_bytes(size as usize)
        )),
    }
}

/// The numbered lines of a non-empty page, with a footer saying where the next page starts or
/// that the file ended.
pub(super) fn page_output(
    page: Page,
    path: &Path,
    shown: String,
    offset: usize,
    limit: usize,
    line_cap: usize,
    size: u64,
) -> ToolOutput {
    let mut out = String::new();
    if page.invalid_utf8 {
        out.push_str("[This file is not valid UTF-8; invalid bytes are shown as \u{FFFD}. edit cannot change it.]\n");
    }
    out.push_str(&page.text);
    let last = offset + page.count - 1;
    if last < page.total {
        let why = if page.byte_capped || (page.count == line_cap && limit > line_cap) {
            " (output size limit reached)"
        } else {
            ""
        };
        let of = if page.total_exact {
            page.total.to_string()
        } else {
            format!("more than {} ({})", page.total, human_bytes(size as usize))
        };
        out.push_str(&format!(
            "\n(Showing lines {offset}-{last} of {of}{why}. Use offset={} to read more.)",
            last + 1
        ));
    } else {
        out.push_str(&format!("\n(End of file: {} lines)", page.total));
    }
    ToolOutput {
        title: shown,
        output: out,
        metadata: ReadMetadata::Lines {
            path: lossy(path),
            offset,
            lines_shown: page.count,
            total_lines: page.total,
            total_exact: page.total_exact,
            partial: last < page.total,
            invalid_utf8: page.invalid_utf8,
        }
        .into(),
        meta: ToolMeta::paged(),
    }
}

pub(super) struct Page {
    pub(super) text: String,
    pub(super) count: usize,
    pub(super) total: usize,
    /// `total` counts every line (false when counting stopped at [`COUNT_LIMIT`]).
    pub(super) total_exact: bool,
    pub(super) byte_capped: bool,
    pub(super) invalid_utf8: bool,
}

/// Bytes of one line kept to show it: [`MAX_LINE_CHARS`] characters of up to four bytes each.
const MAX_LINE_BYTES: usize = MAX_LINE_CHARS * 4 + 4;

/// Once the page is full, the rest of the file is read only to count its lines, and only this
/// far: the total of a larger file is given as "more than".
pub(super) const COUNT_LIMIT: u64 = 256 * 1024 * 1024;

/// Why reading stopped before the end.
#[derive(Debug)]
pub(super) enum Stop {
    Io(std::io::Error),
    /// Interrupted, or over the tool's time limit.
    Cancelled,
}

impl From<std::io::Error> for Stop {
    fn from(e: std::io::Error) -> Self {
        Stop::Io(e)
    }
}

/// One line being read: its first [`MAX_LINE_BYTES`] bytes, and its full size in characters.
#[derive(Default)]
struct Line {
    head: Vec<u8>,
    chars: usize,
    /// Bytes read of it.
    bytes: u64,
    started: bool,
    /// Reading stopped before its end (it passed the count limit).
    open_ended: bool,
}

impl Line {
    fn push(&mut self, bytes: &[u8]) {
        self.started = true;
        let room = MAX_LINE_BYTES.saturating_sub(self.head.len());
        self.head.extend_from_slice(&bytes[..room.min(bytes.len())]);
        self.bytes += bytes.len() as u64;
        // UTF-8 continuation bytes do not start a character.
        self.chars += bytes.iter().filter(|&&b| b & 0xC0 != 0x80).count();
    }
}

/// Numbers lines `offset..offset+limit` (1-based) `cat -n` style, stopping early when the text
/// would pass `max_bytes`; counts the lines of the input (up to [`COUNT_LIMIT`] past the page).
/// Memory stays bounded whatever the input: a line is kept only to its first
/// [`MAX_LINE_BYTES`]. `stop` is asked between reads (Ctrl-C, the time limit).
pub(super) fn number_lines(
    mut reader: impl BufRead,
    offset: usize,
    limit: usize,
    max_bytes: usize,
    count_limit: u64,
    stop: &dyn Fn() -> bool,
) -> Result<Page, Stop> {
    let mut numbering = Numbering {
        page: Page {
            text: String::new(),
            count: 0,
            total: 0,
            total_exact: true,
            byte_capped: false,
            invalid_utf8: false,
        },
        line: Line::default(),
        counted_past_page: 0,
        offset,
        limit,
        budget: max_bytes.saturating_sub(512).max(1024),
        count_limit,
    };
    loop {
        if stop() {
            return Err(Stop::Cancelled);
        }
        let buf = match reader.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.into()),
        };
        if buf.is_empty() {
            numbering.end();
            break;
        }
        let (used, go_on) = numbering.take(buf);
        reader.consume(used);
        if !go_on {
            break;
        }
    }
    Ok(numbering.page)
}

/// The state of [`number_lines`] between reads.
struct Numbering {
    page: Page,
    /// The line being read.
    line: Line,
    /// Bytes read only to count lines, once the page was full.
    counted_past_page: u64,
    offset: usize,
    limit: usize,
    /// Bytes of text the page may hold.
    budget: usize,
    count_limit: u64,
}

impl Numbering {
    /// The input ended: a last line without a newline is counted (and shown if wanted).
    fn end(&mut self) {
        if self.line.started {
            self.page.total += 1;
            if self.page.total >= self.offset
                && self.page.count < self.limit
                && !self.page.byte_capped
            {
                show_line(&mut self.page, &self.line, self.budget);
            }
        }
    }

    /// Takes what it can of `buf` (not empty): returns the bytes used, and whether to read on.
    fn take(&mut self, buf: &[u8]) -> (usize, bool) {
        let len = buf.len();
        if self.page.count >= self.limit || self.page.byte_capped {
            return (len, self.count_only(buf));
        }
        let wanted = self.page.total + 1 >= self.offset;
        match buf.iter().position(|&b| b == b'\n') {
            Some(nl) => {
                if wanted {
                    self.line.push(&buf[..nl]);
                }
                self.page.total += 1;
                let done = std::mem::take(&mut self.line);
                if wanted {
                    show_line(&mut self.page, &done, self.budget);
                }
                (nl + 1, true)
            }
            None => {
                if wanted {
                    self.line.push(buf);
                } else {
                    self.line.started = true;
                }
                if wanted && self.line.bytes > self.count_limit {
                    // One line of gigabytes: show its start, say it goes on, stop reading.
                    self.page.total += 1;
                    self.line.open_ended = true;
                    show_line(&mut self.page, &self.line, self.budget);
                    self.page.total_exact = false;
                    return (len, false);
                }
                (len, true)
            }
        }
    }

    /// The page is full: counts the lines of `buf` only; false once past the count limit.
    fn count_only(&mut self, buf: &[u8]) -> bool {
        let len = buf.len();
        self.page.total += buf.iter().filter(|&&b| b == b'\n').count();
        self.line.started = buf[len - 1] != b'\n';
        self.counted_past_page += len as u64;
        if self.counted_past_page > self.count_limit {
            self.page.total_exact = false;
            return false;
        }
        true
    }
}

/// Adds a finished line (number `page.total`) to the page, cut to [`MAX_LINE_CHARS`].
fn show_line(page: &mut Page, line: &Line, budget: usize) {
    let lineno = page.total;
    let mut bytes = &line.head[..];
    if bytes.ends_with(b"\r") {
        bytes = &bytes[..bytes.len() - 1];
    }
    let text = match std::str::from_utf8(bytes) {
        Ok(s) => std::borrow::Cow::Borrowed(s),
        // A head cut inside a character is not invalid UTF-8: only count real damage.
        Err(e) if e.error_len().is_none() && line.head.len() >= MAX_LINE_BYTES => {
            std::borrow::Cow::Borrowed(std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or(""))
        }
        Err(_) => {
            page.invalid_utf8 = true;
            String::from_utf8_lossy(bytes)
        }
    };
    // A head of MAX_LINE_BYTES holds more than MAX_LINE_CHARS characters, so a line that was
    // cut in reading is cut here too.
    let shown = match text.char_indices().nth(MAX_LINE_CHARS) {
        None => text,
        Some((idx, _)) => std::borrow::Cow::Owned(format!(
            "{}… [line cut: {}{} characters]",
            &text[..idx],
            if line.open_ended { "more than " } else { "" },
            line.chars
        )),
    };
    let entry = format!("{lineno:>6}\t{shown}\n");
    if page.count > 0 && page.text.len() + entry.len() > budget {
        page.byte_capped = true;
        return;
    }
    page.text.push_str(&entry);
    page.count += 1;
}
