//! `read`: a file with line numbers, a directory's entries, or a clear refusal for binaries.

use std::fs::File;
use std::io::{BufRead, BufReader, Read as _};
use std::path::Path;

use serde::Deserialize;
use serde_json::{Value, json};

use super::path::{display_path, resolve};
use super::truncate::human_bytes;
use super::{Tool, ToolContext, ToolError, ToolMeta, ToolOutput, parse_input};
use pith_protocol::tool::{Marker, ReadMetadata};

pub const DEFAULT_LIMIT: usize = 2000;
pub const MAX_LINE_CHARS: usize = 2000;

pub struct Read;

#[derive(Deserialize)]
struct Input {
    #[serde(alias = "path", alias = "filePath")]
    file_path: String,
    #[serde(default)]
    offset: Option<i64>,
    #[serde(default)]
    limit: Option<i64>,
}

#[async_trait::async_trait]
impl Tool for Read {
    fn name(&self) -> &'static str {
        "read"
    }

    fn description(&self) -> &'static str {
        include_str!("../../../prompts/tools/read.md")
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "file_path": {"type": "string", "description": "Path of the file or directory to read (absolute or relative to the workspace)"},
                "offset": {"type": "integer", "description": "1-based line number to start reading at (default 1)"},
                "limit": {"type": "integer", "description": "Number of lines to read (default 2000)"}
            },
            "required": ["file_path"],
            "additionalProperties": false
        })
    }

    async fn run(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let input: Input = parse_input("read", input)?;
        let offset = match input.offset {
            None => 1,
            Some(o) if o >= 1 => o as usize,
            // Treat 0 as "from the start": models often count from zero.
            Some(0) => 1,
            Some(o) => {
                return Err(tool_err!(
                    "read: `offset` must be a line number of 1 or more, got {o}"
                ));
            }
        };
        let limit = match input.limit {
            None => DEFAULT_LIMIT,
            Some(l) if l >= 1 => l as usize,
            Some(l) => return Err(tool_err!("read: `limit` must be 1 or more, got {l}")),
        };
        let ctx2 = ctx.clone();
        let raw = input.file_path;
        let buffer = editor_text(&raw, ctx).await;
        tokio::task::spawn_blocking(move || read_sync(&raw, offset, limit, &ctx2, buffer))
            .await
            .map_err(|e| tool_err!("read: internal error: {e}"))?
    }
}

/// The editor's text of the file `raw` names (an unsaved buffer included), when an editor
/// reads for the session and the file is one this tool reads as text: a regular file on disk,
/// not an image or a known binary, no larger than [`super::bounds::MAX_WHOLE_FILE`]. `None`:
/// the disk is read (also when the editor fails, see `tools::editor`).
async fn editor_text(raw: &str, ctx: &ToolContext) -> Option<(std::path::PathBuf, String)> {
    if !ctx.editor.as_ref().is_some_and(|e| e.reads()) {
        return None;
    }
    let path = resolve(&ctx.workspace, raw).path;
    let meta = std::fs::metadata(&path).ok()?;
    if !meta.is_file()
        || meta.len() > super::bounds::MAX_WHOLE_FILE
        || image_mime(&path).is_some()
        || binary_extension(&path)
    {
        return None;
    }
    let text = super::editor::read(ctx, &path).await?;
    Some((path, text))
}

/// Reads `raw` from the disk, or its text from `buffer` (the editor's, for that path) after
/// the same checks.
fn read_sync(
    raw: &str,
    offset: usize,
    limit: usize,
    ctx: &ToolContext,
    buffer: Option<(std::path::PathBuf, String)>,
) -> Result<ToolOutput, ToolError> {
    let ws = &ctx.workspace;
    let resolved = resolve(ws, raw);
    let path = &resolved.path;
    // the path resolved the same way when the editor was asked
    let buffer = buffer.and_then(|(p, text)| (p == *path).then_some(text));
    let shown = resolved.display(ws);
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(ToolError::Failed(not_found(path, &shown, ws)));
        }
        Err(e) => return Err(tool_err!("Cannot read {shown}: {e}")),
    };
    if meta.is_dir() {
        let line_cap = ctx.output.max_lines.max(1);
        return read_dir(path, &shown, offset, limit.min(line_cap));
    }
    // A FIFO, a terminal or a socket would make the read wait forever: refused before opening.
    super::bounds::refuse_special(&meta, &shown, "read")?;
    let size = buffer.as_ref().map_or(meta.len(), |t| t.len() as u64);
    if let Some(mime) = image_mime(path) {
        return Ok(image_output(path, shown, mime, size));
    }
    let (sample, rest) = open_text(path, &shown, buffer)?;
    if binary_extension(path) || looks_binary(&sample) {
        return Err(tool_err!(
            "Cannot read {shown}: it is a binary file ({}). Use bash with a suitable tool \
             (for example `file`, `xxd {shown} | head`, `unzip -l`) to inspect it.",
            human_bytes(size as usize)
        ));
    }
    let reader = BufReader::with_capacity(64 * 1024, std::io::Cursor::new(sample).chain(rest));
    let page = read_page(reader, &shown, offset, limit, size, ctx)?;

    // Remember what the session has seen, for write/edit.
    super::write::record_write(ctx, path);

    if page.total == 0 {
        return Ok(ToolOutput {
            title: shown.clone(),
            output: format!("(File {shown} is empty.)"),
            metadata: ReadMetadata::empty(lossy(path)).into(),
            meta: ToolMeta::default(),
        });
    }
    if offset > page.total {
        return Err(tool_err!(
            "read: offset {offset} is past the end of {shown}, which has {} lines",
            page.total
        ));
    }
    let line_cap = ctx.output.max_lines.max(1);
    Ok(page_output(
        page, path, shown, offset, limit, line_cap, size,
    ))
}

/// The path as stored in a read's metadata.
fn lossy(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// What the model is told of an image: its kind and size (its pixels are not text).
fn image_output(path: &Path, shown: String, mime: &str, size: u64) -> ToolOutput {
    ToolOutput {
        title: shown.clone(),
        output: format!(
            "{shown} is an image ({mime}, {}). Its pixels cannot be shown as text.",
            human_bytes(size as usize)
        ),
        metadata: ReadMetadata::Image {
            path: lossy(path),
            mime: mime.to_string(),
            size,
            image: Marker,
        }
        .into(),
        meta: ToolMeta::default(),
    }
}

/// The first 8 KiB of the text (to tell a binary) and a reader of the rest: from the editor's
/// `buffer` when there is one, else from the file on disk.
fn open_text(
    path: &Path,
    shown: &str,
    buffer: Option<String>,
) -> Result<(Vec<u8>, Box<dyn std::io::Read>), ToolError> {
    Ok(match buffer {
        Some(text) => {
            let bytes = text.into_bytes();
            let n = bytes.len().min(8192);
            let sample = bytes[..n].to_vec();
            let mut rest = std::io::Cursor::new(bytes);
            rest.set_position(n as u64);
            (sample, Box::new(rest))
        }
        None => {
            let (mut file, _) = super::bounds::open_regular(path, shown, "read")?;
            let mut sample = vec![0u8; 8192];
            let n = read_full(&mut file, &mut sample)
                .map_err(|e| tool_err!("Cannot read {shown}: {e}"))?;
            sample.truncate(n);
            (sample, Box::new(file))
        }
    })
}

/// Numbers the lines the call asked for, within the output limits so the registry never has to
/// cut (and copy) a read; stops when the call is cancelled.
fn read_page(
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
fn page_output(
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

struct Page {
    text: String,
    count: usize,
    total: usize,
    /// `total` counts every line (false when counting stopped at [`COUNT_LIMIT`]).
    total_exact: bool,
    byte_capped: bool,
    invalid_utf8: bool,
}

/// Bytes of one line kept to show it: [`MAX_LINE_CHARS`] characters of up to four bytes each.
const MAX_LINE_BYTES: usize = MAX_LINE_CHARS * 4 + 4;
/// Once the page is full, the rest of the file is read only to count its lines, and only this
/// far: the total of a larger file is given as "more than".
const COUNT_LIMIT: u64 = 256 * 1024 * 1024;

/// Why reading stopped before the end.
#[derive(Debug)]
enum Stop {
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
fn number_lines(
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

fn read_full(file: &mut File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match file.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

fn read_dir(
    path: &Path,
    shown: &str,
    offset: usize,
    limit: usize,
) -> Result<ToolOutput, ToolError> {
    let entries = std::fs::read_dir(path).map_err(|e| tool_err!("Cannot list {shown}: {e}"))?;
    let mut names: Vec<String> = entries
        .flatten()
        .map(|e| {
            let mut name = e.file_name().to_string_lossy().into_owned();
            if e.file_type().map(|t| t.is_dir()).unwrap_or(false) || e.path().is_dir() {
                name.push('/');
            }
            name
        })
        .collect();
    names.sort();
    let total = names.len();
    let page: Vec<&String> = names.iter().skip(offset - 1).take(limit).collect();
    let mut out = format!("{shown} is a directory with {total} entries:\n");
    for n in &page {
        out.push_str(n);
        out.push('\n');
    }
    if offset - 1 + page.len() < total {
        out.push_str(&format!(
            "(Showing entries {offset}-{} of {total}. Use offset={} to see more.)\n",
            offset - 1 + page.len(),
            offset + page.len()
        ));
    }
    Ok(ToolOutput {
        title: shown.to_string(),
        output: out,
        metadata: ReadMetadata::Directory {
            path: lossy(path),
            directory: Marker,
            entries: total,
        }
        .into(),
        meta: ToolMeta::paged(),
    })
}

/// "File not found", with similarly named files from the same directory.
fn not_found(path: &Path, shown: &str, workspace: &Path) -> String {
    let mut msg = format!("File not found: {shown}");
    let Some(parent) = path.parent() else {
        return msg;
    };
    let Some(wanted) = path.file_name().map(|n| n.to_string_lossy().to_lowercase()) else {
        return msg;
    };
    let Ok(entries) = std::fs::read_dir(parent) else {
        msg.push_str(&format!(
            " (the directory {} does not exist either)",
            display_path(parent, workspace)
        ));
        return msg;
    };
    let wanted_stem = wanted.split('.').next().unwrap_or(&wanted).to_string();
    let mut candidates: Vec<(usize, String)> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let lower = name.to_lowercase();
            let stem = lower.split('.').next().unwrap_or(&lower).to_string();
            let dist = levenshtein(&lower, &wanted);
            let similar = dist <= 2
                || (!wanted_stem.is_empty() && stem == wanted_stem)
                || (wanted.len() >= 3 && lower.contains(&wanted))
                || (lower.len() >= 3 && wanted.contains(&lower));
            similar.then(|| (dist, display_path(&e.path(), workspace)))
        })
        .collect();
    candidates.sort();
    if !candidates.is_empty() {
        let list: Vec<String> = candidates.into_iter().take(5).map(|(_, p)| p).collect();
        msg.push_str(&format!(". Did you mean: {}?", list.join(", ")));
    }
    msg
}

fn levenshtein(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

fn extension(path: &Path) -> String {
    path.extension()
        .map(|e| e.to_string_lossy().to_lowercase())
        .unwrap_or_default()
}

pub fn image_mime(path: &Path) -> Option<&'static str> {
    Some(match extension(path).as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "bmp" => "image/bmp",
        "ico" => "image/x-icon",
        "tif" | "tiff" => "image/tiff",
        "avif" => "image/avif",
        "heic" => "image/heic",
        _ => return None,
    })
}

fn binary_extension(path: &Path) -> bool {
    matches!(
        extension(path).as_str(),
        "zip"
            | "gz"
            | "tgz"
            | "tar"
            | "bz2"
            | "xz"
            | "zst"
            | "7z"
            | "rar"
            | "exe"
            | "dll"
            | "so"
            | "dylib"
            | "o"
            | "a"
            | "lib"
            | "class"
            | "jar"
            | "war"
            | "wasm"
            | "pyc"
            | "pyo"
            | "bin"
            | "sqlite"
            | "db"
            | "woff"
            | "woff2"
            | "ttf"
            | "otf"
            | "eot"
            | "mp3"
            | "mp4"
            | "mov"
            | "avi"
            | "mkv"
            | "wav"
            | "flac"
            | "ogg"
            | "pdf"
            | "doc"
            | "docx"
            | "xls"
            | "xlsx"
            | "ppt"
            | "pptx"
            | "iso"
            | "dmg"
            | "deb"
            | "rpm"
            | "rlib"
            | "pdb"
    )
}

/// A NUL byte, or many control characters, in the first block means binary. Bytes ≥ 0x80 do
/// not count: text in a legacy encoding is still text.
pub fn looks_binary(sample: &[u8]) -> bool {
    if sample.is_empty() {
        return false;
    }
    if sample.contains(&0) {
        return true;
    }
    let control = sample
        .iter()
        .filter(|&&b| b < 0x20 && !matches!(b, b'\n' | b'\r' | b'\t' | 0x0c | 0x1b | 0x08))
        .count();
    control * 10 > sample.len()
}

#[cfg(test)]
#[path = "read_tests.rs"]
mod tests;
