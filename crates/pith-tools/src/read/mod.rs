//! `read`: a file with line numbers, a directory's entries, or a clear refusal for binaries.

use std::fs::File;
use std::io::{BufReader, Read as _};
use std::path::Path;

use serde::Deserialize;
use serde_json::{Value, json};

use super::truncate::human_bytes;
use super::{Tool, ToolContext, ToolError, ToolMeta, ToolOutput, parse_input};
use pith_protocol::tool::ReadMetadata;

mod binary;
mod dir;
mod lines;
mod not_found;

pub(crate) use binary::image_mime;
pub(crate) use binary::looks_binary;
use binary::{binary_extension, image_output};
use dir::read_dir;
use lines::{page_output, read_page};
use not_found::not_found;

pub(crate) const DEFAULT_LIMIT: usize = 2000;
pub(crate) const MAX_LINE_CHARS: usize = 2000;

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
        pith_protocol::tool::Builtin::Read.as_str()
    }

    fn description(&self) -> &'static str {
        include_str!("../../../../prompts/tools/read.md")
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
/// the disk is read (also when the editor fails, see `tools::editor`). The editor reads by path:
/// it is asked only while the path still opens, without a symlink, as the file the check saw.
async fn editor_text(raw: &str, ctx: &ToolContext) -> Option<(std::path::PathBuf, String)> {
    if !ctx.editor.as_ref().is_some_and(|e| e.reads()) {
        return None;
    }
    let checked = crate::open::peek(ctx, raw);
    let path = checked.path().to_path_buf();
    let meta = crate::open::read(&ctx.workspace, &checked)
        .ok()?
        .metadata()
        .ok()?;
    if !meta.is_file()
        || meta.len() > super::bounds::MAX_WHOLE_FILE
        || image_mime(&path).is_some()
        || binary_extension(&path)
    {
        return None;
    }
    // (no command of the workspace runs while the editor reads: nothing flips the path)
    let section = super::editor::enter(ctx).await.ok()?;
    let text = super::editor::read(ctx, &section, &checked).await?;
    crate::open::read(&ctx.workspace, &checked).ok()?;
    Some((path, text))
}

/// Reads `raw` from the disk, or its text from `buffer` (the editor's, for that path) after
/// the same checks. The path is the one the permission check resolved, opened without
/// resolving it again (`open`).
fn read_sync(
    raw: &str,
    offset: usize,
    limit: usize,
    ctx: &ToolContext,
    buffer: Option<(std::path::PathBuf, String)>,
) -> Result<ToolOutput, ToolError> {
    let ws = &ctx.workspace;
    let checked = crate::open::checked(ctx, raw);
    let path = checked.path();
    // the path resolved the same way when the editor was asked
    let buffer = buffer.and_then(|(p, text)| (p == *path).then_some(text));
    let shown = checked.shown(ws);
    let file = match crate::open::read(ws, &checked) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(ToolError::Failed(not_found(path, &shown, ws)));
        }
        Err(e) => return Err(tool_err!("Cannot read {shown}: {e}")),
    };
    let meta = file
        .metadata()
        .map_err(|e| tool_err!("Cannot read {shown}: {e}"))?;
    if meta.is_dir() {
        let line_cap = ctx.output.max_lines.max(1);
        // listed through the opened directory, not its name
        let listed = crate::open::fd_path(&file).unwrap_or_else(|| path.to_path_buf());
        return read_dir(&listed, path, &shown, offset, limit.min(line_cap));
    }
    // A FIFO, a terminal or a socket would make the read wait forever: refused.
    super::bounds::refuse_special(&meta, &shown, "read")?;
    let size = buffer.as_ref().map_or(meta.len(), |t| t.len() as u64);
    if let Some(mime) = image_mime(path) {
        return Ok(image_output(path, shown, mime, size));
    }
    let (sample, rest) = open_text(file, &shown, buffer)?;
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

/// The first 8 KiB of the text (to tell a binary) and a reader of the rest: from the editor's
/// `buffer` when there is one, else from the file on disk.
fn open_text(
    mut file: File,
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
            let mut sample = vec![0u8; 8192];
            let n = read_full(&mut file, &mut sample)
                .map_err(|e| tool_err!("Cannot read {shown}: {e}"))?;
            sample.truncate(n);
            (sample, Box::new(file))
        }
    })
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

#[cfg(test)]
mod tests;
