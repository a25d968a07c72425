//! `write`: create or overwrite a file; overwriting needs a fresh read.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{Value, json};

use super::edit::unified_diff;
use super::path::{mtime_ms, resolve};
use super::{Tool, ToolContext, ToolError, ToolMeta, ToolOutput, parse_input};
use pith_protocol::tool::WriteMetadata;

pub struct Write;

#[derive(Deserialize)]
struct Input {
    #[serde(alias = "path", alias = "filePath")]
    file_path: String,
    content: String,
}

#[async_trait::async_trait]
impl Tool for Write {
    fn name(&self) -> &'static str {
        pith_protocol::tool::Builtin::Write.as_str()
    }

    fn description(&self) -> &'static str {
        include_str!("../../../prompts/tools/write.md")
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "file_path": {"type": "string", "description": "Path of the file to write (absolute or relative to the workspace)"},
                "content": {"type": "string", "description": "The complete new content of the file"}
            },
            "required": ["file_path", "content"],
            "additionalProperties": false
        })
    }

    fn precheck(&self, input: &Value, ctx: &ToolContext) -> Result<(), ToolError> {
        let input: Input = parse_input("write", input.clone())?;
        let resolved = resolve(&ctx.workspace, &input.file_path);
        let shown = resolved.display(&ctx.workspace);
        if resolved.path.is_dir() {
            return Err(tool_err!("Cannot write {shown}: it is a directory"));
        }
        check_fresh(ctx, &resolved.path, &shown, "write")
    }

    async fn run(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let input: Input = parse_input("write", input)?;
        let (raw, c) = (input.file_path.clone(), ctx.clone());
        // an editor acts by path: no command of the workspace runs until it has answered
        let section = super::editor::enter(ctx).await?;
        let mut target = blocking(move || prepare(&raw, &c)).await?;
        // (asked only for a file small enough to show what changed)
        if target.old.is_some()
            && let Some(text) = super::editor::read(ctx, &section, &target.checked).await
        {
            // the editor's buffer is what is replaced
            target.old = Some(text.into_bytes());
        }
        let content = input.content;
        if super::editor::writes(ctx, &section) {
            super::editor::write(ctx, &section, &target.checked, &content).await?;
            record_write(ctx, &target.path);
            Ok(written(target, &content))
        } else {
            let c = ctx.clone();
            blocking(move || {
                write_checked(&c, &target.checked, content.as_bytes())
                    .map_err(|e| tool_err!("Cannot write {}: {e}", target.shown))?;
                record_write(&c, &target.path);
                Ok(written(target, &content))
            })
            .await
        }
    }
}

/// Runs blocking file work off the runtime's threads.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| tool_err!("write: internal error: {e}"))?
}

/// Writes `content` to the path the permission check resolved, through the directory the
/// walk opened (`open::write`): never by resolving the path string again.
pub(crate) fn write_checked(
    ctx: &ToolContext,
    checked: &crate::open::Checked,
    content: &[u8],
) -> std::io::Result<()> {
    use std::io::Write as _;
    crate::open::write(&ctx.workspace, checked, true)?.write_all(content)
}

/// A file about to be written.
struct Target {
    /// The path as the permission check resolved it.
    checked: crate::open::Checked,
    path: PathBuf,
    shown: String,
    existed: bool,
    /// The old content when it is small enough to show what changed.
    old: Option<Vec<u8>>,
}

/// The checks before a write (a directory, a special file, an existing file not read since it
/// changed) and the old content, read from the path the permission check resolved.
fn prepare(raw: &str, ctx: &ToolContext) -> Result<Target, ToolError> {
    let checked = crate::open::checked(ctx, raw);
    let path = checked.path().to_path_buf();
    let shown = checked.shown(&ctx.workspace);
    let (existed, old) = match crate::open::read(&ctx.workspace, &checked) {
        Ok(file) => {
            let m = file
                .metadata()
                .map_err(|e| tool_err!("Cannot write {shown}: {e}"))?;
            if m.is_dir() {
                return Err(tool_err!("Cannot write {shown}: it is a directory"));
            }
            super::bounds::refuse_special(&m, &shown, "write")?;
            check_fresh(ctx, &path, &shown, "overwrite")?;
            let old = (m.len() <= super::bounds::MAX_WHOLE_FILE)
                .then(|| super::bounds::read_whole_from(file, &m, &shown, "write"))
                .transpose()?;
            (true, old)
        }
        // (a parent that is a file: said below, where the directories are made)
        Err(e)
            if e.kind() == std::io::ErrorKind::NotFound
                || e.raw_os_error() == Some(libc::ENOTDIR) =>
        {
            (false, None)
        }
        Err(e) => return Err(tool_err!("Cannot write {shown}: {e}")),
    };
    if let Some(parent) = path.parent() {
        crate::open::make_parents(&ctx.workspace, &checked)
            .map_err(|e| tool_err!("Cannot create the directory {}: {e}", parent.display()))?;
    }
    Ok(Target {
        checked,
        path,
        shown,
        existed,
        old,
    })
}

/// The result of a write that was made.
fn written(target: Target, content: &str) -> ToolOutput {
    let Target {
        checked: _,
        path,
        shown,
        existed,
        old,
    } = target;
    tracing::debug!(path = %path.display(), bytes = content.len(), "write");
    let lines = content.lines().count();
    let (output, diff) = match (existed, &old) {
        (false, _) => (
            format!("Created {shown} ({lines} lines, {} bytes).", content.len()),
            None,
        ),
        (true, old) => {
            let diff = old
                .as_deref()
                .and_then(|o| std::str::from_utf8(o).ok())
                .map(|o| unified_diff(o, content, &shown));
            (
                format!(
                    "Overwrote {shown} ({lines} lines, {} bytes).",
                    content.len()
                ),
                diff,
            )
        }
    };
    ToolOutput {
        title: shown,
        output,
        metadata: WriteMetadata {
            path: path.to_string_lossy().into_owned(),
            created: !existed,
            bytes: content.len(),
            diff,
        }
        .into(),
        meta: ToolMeta::default(),
    }
}

/// Refuses to change an existing file the session has not read, or that changed on disk since.
pub(crate) fn check_fresh(
    ctx: &ToolContext,
    path: &Path,
    shown: &str,
    verb: &str,
) -> Result<(), ToolError> {
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(());
    };
    let current = mtime_ms(&meta);
    let recorded = ctx
        .state
        .read_files
        .lock()
        .ok()
        .and_then(|rf| rf.get(path).copied());
    match recorded {
        None => Err(tool_err!(
            "{shown} already exists and has not been read in this session. Read it first, then {verb} it."
        )),
        Some(t) if t != current => Err(tool_err!(
            "{shown} has changed on disk since it was last read. Read it again before you {verb} it."
        )),
        Some(_) => Ok(()),
    }
}

/// Records the file's new modification time as seen by the session.
pub(crate) fn record_write(ctx: &ToolContext, path: &Path) {
    if let Ok(meta) = std::fs::metadata(path)
        && let Ok(mut rf) = ctx.state.read_files.lock()
    {
        rf.insert(path.to_path_buf(), mtime_ms(&meta));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::Read;
    use crate::testutil::Ws;

    async fn write(ws: &Ws, input: Value) -> Result<ToolOutput, ToolError> {
        Write.run(input, &ws.ctx).await
    }

    /// A call that names a file twice (`file_path` and an alias) could show the user one path in
    /// the permission question and write another: the tool refuses it, and nothing is written.
    #[tokio::test]
    async fn a_call_naming_two_paths_writes_nothing() {
        let ws = Ws::new();
        let outside = tempfile::tempdir().unwrap();
        let far = outside.path().join("planted.txt");
        let far = far.to_str().unwrap();
        for (a, b) in [
            ("file_path", "path"),
            ("path", "filePath"),
            ("filePath", "file_path"),
        ] {
            let input = json!({a: "shown.txt", b: far, "content": "x"});
            assert!(write(&ws, input).await.is_err(), "{a} + {b} was accepted");
            let input = json!({a: far, b: "shown.txt", "content": "x"});
            assert!(write(&ws, input).await.is_err(), "{b} + {a} was accepted");
        }
        assert!(!ws.path("shown.txt").exists());
        assert!(!std::path::Path::new(far).exists());
    }

    #[tokio::test]
    async fn creates_file_and_parents() {
        let ws = Ws::new();
        let out = write(&ws, json!({"file_path": "a/b/c.txt", "content": "x\ny\n"}))
            .await
            .unwrap();
        assert_eq!(
            std::fs::read_to_string(ws.path("a/b/c.txt")).unwrap(),
            "x\ny\n"
        );
        assert_eq!(out.output, "Created a/b/c.txt (2 lines, 4 bytes).");
        assert_eq!(out.metadata["created"], true);
        // The session wrote it, so it may overwrite it again without a read.
        write(&ws, json!({"file_path": "a/b/c.txt", "content": "z\n"}))
            .await
            .unwrap();
        assert_eq!(
            std::fs::read_to_string(ws.path("a/b/c.txt")).unwrap(),
            "z\n"
        );
    }

    #[tokio::test]
    async fn refuses_overwrite_without_read() {
        let ws = Ws::new();
        ws.write("f.txt", "original\n");
        let err = write(&ws, json!({"file_path": "f.txt", "content": "new"}))
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("has not been read"), "{err}");
        assert_eq!(
            std::fs::read_to_string(ws.path("f.txt")).unwrap(),
            "original\n"
        );

        Read.run(json!({"file_path": "f.txt"}), &ws.ctx)
            .await
            .unwrap();
        let out = write(&ws, json!({"file_path": "f.txt", "content": "new\n"}))
            .await
            .unwrap();
        assert!(out.output.starts_with("Overwrote f.txt"));
        assert!(
            out.metadata["diff"]
                .as_str()
                .unwrap()
                .contains("-original\n+new\n")
        );
    }

    #[tokio::test]
    async fn refuses_overwrite_after_external_change() {
        let ws = Ws::new();
        let p = ws.write("f.txt", "v1\n");
        Read.run(json!({"file_path": "f.txt"}), &ws.ctx)
            .await
            .unwrap();
        std::fs::write(&p, "v2 from someone else\n").unwrap();
        let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
        std::fs::File::options()
            .write(true)
            .open(&p)
            .unwrap()
            .set_modified(later)
            .unwrap();
        let err = write(&ws, json!({"file_path": "f.txt", "content": "mine"}))
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("changed on disk"), "{err}");
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            "v2 from someone else\n"
        );
    }

    #[tokio::test]
    async fn bad_input() {
        let ws = Ws::new();
        std::fs::create_dir_all(ws.path("dir")).unwrap();
        let err = write(&ws, json!({"file_path": "dir", "content": ""}))
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("is a directory"), "{err}");
        let err = write(&ws, json!({"file_path": "x"}))
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("missing field `content`"), "{err}");
        // A parent that is a file.
        ws.write("file", "");
        let err = write(&ws, json!({"file_path": "file/child.txt", "content": ""}))
            .await
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("Cannot create the directory"), "{err}");
    }
}
