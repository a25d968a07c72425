//! `edit`: exact string replacement with a unified diff of the change.

use std::path::PathBuf;

use serde::Deserialize;
use serde_json::{Value, json};

use super::write::{check_fresh, record_write};
use super::{Tool, ToolContext, ToolError, ToolMeta, ToolOutput, parse_input};
use pith_protocol::tool::EditMetadata;

pub struct Edit;

#[derive(Deserialize)]
struct Input {
    #[serde(alias = "path", alias = "filePath")]
    file_path: String,
    #[serde(alias = "oldString")]
    old_string: String,
    #[serde(alias = "newString")]
    new_string: String,
    #[serde(default, alias = "replaceAll")]
    replace_all: bool,
}

#[async_trait::async_trait]
impl Tool for Edit {
    fn name(&self) -> &'static str {
        pith_protocol::tool::Builtin::Edit.as_str()
    }

    fn description(&self) -> &'static str {
        include_str!("../../../prompts/tools/edit.md")
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "file_path": {"type": "string", "description": "Path of the file to edit (absolute or relative to the workspace)"},
                "old_string": {"type": "string", "description": "The exact text to replace"},
                "new_string": {"type": "string", "description": "The text to replace it with (must differ from old_string)"},
                "replace_all": {"type": "boolean", "description": "Replace every occurrence of old_string (default false)"}
            },
            "required": ["file_path", "old_string", "new_string"],
            "additionalProperties": false
        })
    }

    fn precheck(&self, input: &Value, ctx: &ToolContext) -> Result<(), ToolError> {
        let input: Input = parse_input("edit", input.clone())?;
        let checked = crate::open::peek(ctx, &input.file_path);
        let (path, shown) = check_file(&input, &checked, ctx)?;
        // an editor's buffer may differ from the disk: its text is checked when the edit runs
        if ctx.editor.as_ref().is_some_and(|e| e.reads()) {
            return Ok(());
        }
        let content = read_disk(ctx, &checked, &shown)?;
        check_content(&input, path, shown, content).map(|_| ())
    }

    async fn run(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let input: Input = parse_input("edit", input)?;
        let input = std::sync::Arc::new(input);
        // the path the permission check resolved: read and written without resolving it again
        let target = std::sync::Arc::new(crate::open::checked(ctx, &input.file_path));
        // an editor acts by path: no command of the workspace runs from its read to its write
        let section = super::editor::enter(ctx).await?;
        let (i, c, t) = (input.clone(), ctx.clone(), target.clone());
        let (path, shown) = blocking(move || check_file(&i, &t, &c)).await?;
        // the editor's text (an unsaved buffer included), else the disk's
        let content = match super::editor::read(ctx, &section, &target).await {
            Some(text) if text.len() as u64 > super::bounds::MAX_WHOLE_FILE => {
                return Err(tool_err!(
                    "Cannot edit {shown}: it is more than the {} this tool handles in one piece. Use bash for files this large.",
                    super::truncate::human_bytes(super::bounds::MAX_WHOLE_FILE as usize)
                ));
            }
            Some(text) => text,
            None => {
                let (c, t, s) = (ctx.clone(), target.clone(), shown.clone());
                blocking(move || read_disk(&c, &t, &s)).await?
            }
        };
        let checked = check_content(&input, path, shown, content)?;
        let updated = if input.replace_all {
            checked.content.replace(checked.old.as_str(), &checked.new)
        } else {
            checked
                .content
                .replacen(checked.old.as_str(), &checked.new, 1)
        };
        if super::editor::writes(ctx, &section) {
            // (checked again right before: the path still leads where it did)
            super::editor::write(ctx, &section, &target, &updated).await?;
        } else {
            let (c, t, s, u) = (
                ctx.clone(),
                target.clone(),
                checked.shown.clone(),
                updated.clone(),
            );
            blocking(move || {
                super::write::write_checked(&c, &t, u.as_bytes())
                    .map_err(|e| tool_err!("Cannot write {s}: {e}"))
            })
            .await?;
        }
        record_write(ctx, &checked.path);
        Ok(edited(&input, &checked, &updated))
    }
}

/// Runs blocking file work off the runtime's threads.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| tool_err!("edit: internal error: {e}"))?
}

/// What makes an edit fail before its file is read: the input, a missing file or a directory,
/// a file not read since it changed. The resolved path and the path as shown.
fn check_file(
    input: &Input,
    target: &crate::open::Checked,
    ctx: &ToolContext,
) -> Result<(PathBuf, String), ToolError> {
    if input.old_string == input.new_string {
        return Err(ToolError::Failed(
            "old_string and new_string are identical: there is nothing to change.".into(),
        ));
    }
    if input.old_string.is_empty() {
        return Err(ToolError::Failed("old_string is empty. Give the exact text to replace; to create a file or replace all of it, use write.".into()));
    }
    let path = target.path().to_path_buf();
    let shown = target.shown(&ctx.workspace);
    let meta = match crate::open::read(&ctx.workspace, target).and_then(|f| f.metadata()) {
        Ok(m) if m.is_dir() => return Err(tool_err!("Cannot edit {shown}: it is a directory")),
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(tool_err!(
                "File not found: {shown}. To create a new file use write."
            ));
        }
        Err(e) => return Err(tool_err!("Cannot edit {shown}: {e}")),
    };
    check_fresh(ctx, &path, &shown, "edit")?;
    // a FIFO or a device is refused before anything (the editor included) is asked for it
    super::bounds::refuse_special(&meta, &shown, "edit")?;
    Ok((path, shown))
}

/// The file's text from the disk, at the path the permission check resolved.
fn read_disk(
    ctx: &ToolContext,
    target: &crate::open::Checked,
    shown: &str,
) -> Result<String, ToolError> {
    let file = crate::open::read(&ctx.workspace, target)
        .map_err(|e| tool_err!("Cannot edit {shown}: {e}"))?;
    let meta = file
        .metadata()
        .map_err(|e| tool_err!("Cannot edit {shown}: {e}"))?;
    let bytes = super::bounds::read_whole_from(file, &meta, shown, "edit")?;
    String::from_utf8(bytes).map_err(|_| {
        tool_err!(
            "Cannot edit {shown}: it is not valid UTF-8 text. Use write to replace it, or bash."
        )
    })
}

/// What makes an edit of `content` fail: old_string missing or not unique. When it would go
/// through: old/new in the file's line endings and the number of matches.
fn check_content(
    input: &Input,
    path: PathBuf,
    shown: String,
    content: String,
) -> Result<Checked, ToolError> {
    // A CRLF file edited with LF text: match and write in the file's own line endings.
    let (old, new) = if content.contains("\r\n") && !input.old_string.contains('\r') {
        (
            input.old_string.replace('\n', "\r\n"),
            input.new_string.replace('\n', "\r\n"),
        )
    } else {
        (input.old_string.clone(), input.new_string.clone())
    };
    let count = content.matches(old.as_str()).count();
    if count == 0 {
        let trimmed = old.trim();
        let hint = if !trimmed.is_empty() && trimmed != old && content.contains(trimmed) {
            " It does match once leading/trailing whitespace is removed: copy the exact indentation from the file."
        } else {
            " It must match exactly, including whitespace and indentation, without read's line-number prefix; read the file again to copy the text."
        };
        return Err(tool_err!("old_string was not found in {shown}.{hint}"));
    }
    if count > 1 && !input.replace_all {
        return Err(tool_err!(
            "old_string appears {count} times in {shown}. Include more surrounding lines to make it unique, \
             or set replace_all to true to replace every occurrence."
        ));
    }
    Ok(Checked {
        path,
        shown,
        content,
        old,
        new,
        count,
    })
}

struct Checked {
    path: PathBuf,
    shown: String,
    content: String,
    old: String,
    new: String,
    count: usize,
}

/// The result of an edit that was written.
fn edited(input: &Input, checked: &Checked, updated: &str) -> ToolOutput {
    let Checked {
        path,
        shown,
        content,
        count,
        ..
    } = checked;
    let diff = unified_diff(content, updated, shown);
    let replaced = if input.replace_all { *count } else { 1 };
    let plural = if replaced == 1 {
        "occurrence"
    } else {
        "occurrences"
    };
    tracing::debug!(path = %path.display(), replaced, "edit");
    ToolOutput {
        title: shown.clone(),
        output: format!("Edited {shown}: replaced {replaced} {plural}.\n\n{diff}"),
        metadata: EditMetadata {
            path: path.to_string_lossy().into_owned(),
            replacements: replaced,
            diff,
        }
        .into(),
        meta: ToolMeta::default(),
    }
}

/// A unified diff with three lines of context and `a/`, `b/` headers.
pub(crate) fn unified_diff(old: &str, new: &str, name: &str) -> String {
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{name}"), &format!("b/{name}"))
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::Read;
    use crate::testutil::Ws;

    async fn edit(ws: &Ws, input: Value) -> Result<ToolOutput, ToolError> {
        Edit.run(input, &ws.ctx).await
    }

    async fn read(ws: &Ws, rel: &str) {
        Read.run(json!({"file_path": rel}), &ws.ctx).await.unwrap();
    }

    #[tokio::test]
    async fn replaces_once_with_diff() {
        let ws = Ws::new();
        let p = ws.write("src/lib.rs", "fn a() {}\nfn b() {}\nfn c() {}\n");
        read(&ws, "src/lib.rs").await;
        let out = edit(&ws, json!({"file_path": "src/lib.rs", "old_string": "fn b() {}", "new_string": "fn b() { todo!() }"}))
            .await
            .unwrap();
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            "fn a() {}\nfn b() { todo!() }\nfn c() {}\n"
        );
        let expected_diff = "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1,3 +1,3 @@\n fn a() {}\n-fn b() {}\n+fn b() { todo!() }\n fn c() {}\n";
        assert_eq!(out.metadata["diff"], expected_diff);
        assert_eq!(
            out.output,
            format!("Edited src/lib.rs: replaced 1 occurrence.\n\n{expected_diff}")
        );
        // A second edit works without another read: the session's own write is recorded.
        edit(
            &ws,
            json!({"file_path": "src/lib.rs", "old_string": "fn c() {}", "new_string": ""}),
        )
        .await
        .unwrap();
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            "fn a() {}\nfn b() { todo!() }\n\n"
        );
    }

    #[tokio::test]
    async fn not_unique_says_how_many_and_replace_all_works() {
        let ws = Ws::new();
        let p = ws.write("f.txt", "x = 1\nx = 1\nx = 1\n");
        read(&ws, "f.txt").await;
        let err = edit(
            &ws,
            json!({"file_path": "f.txt", "old_string": "x = 1", "new_string": "x = 2"}),
        )
        .await
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("appears 3 times") && err.contains("replace_all"),
            "{err}"
        );
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            "x = 1\nx = 1\nx = 1\n"
        );
        let out = edit(&ws, json!({"file_path": "f.txt", "old_string": "x = 1", "new_string": "x = 2", "replace_all": true}))
            .await
            .unwrap();
        assert!(
            out.output
                .starts_with("Edited f.txt: replaced 3 occurrences.")
        );
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            "x = 2\nx = 2\nx = 2\n"
        );
        assert_eq!(out.metadata["replacements"], 3);
    }

    #[tokio::test]
    async fn missing_identical_and_whitespace_errors() {
        let ws = Ws::new();
        ws.write("f.py", "def f():\n    return 1\n");
        read(&ws, "f.py").await;
        let err = edit(
            &ws,
            json!({"file_path": "f.py", "old_string": "return 2", "new_string": "return 3"}),
        )
        .await
        .unwrap_err()
        .to_string();
        assert!(err.starts_with("old_string was not found in f.py"), "{err}");
        let err = edit(
            &ws,
            json!({"file_path": "f.py", "old_string": "return 1\n  ", "new_string": "x"}),
        )
        .await
        .unwrap_err()
        .to_string();
        assert!(err.contains("leading/trailing whitespace"), "{err}");
        let err = edit(
            &ws,
            json!({"file_path": "f.py", "old_string": "a", "new_string": "a"}),
        )
        .await
        .unwrap_err()
        .to_string();
        assert!(err.contains("identical"), "{err}");
        let err = edit(
            &ws,
            json!({"file_path": "f.py", "old_string": "", "new_string": "a"}),
        )
        .await
        .unwrap_err()
        .to_string();
        assert!(err.contains("use write"), "{err}");
        let err = edit(
            &ws,
            json!({"file_path": "nope.py", "old_string": "a", "new_string": "b"}),
        )
        .await
        .unwrap_err()
        .to_string();
        assert!(err.starts_with("File not found: nope.py"), "{err}");
        let err = edit(&ws, json!({"file_path": "f.py", "old_string": "a"}))
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("missing field `new_string`"), "{err}");
    }

    #[tokio::test]
    async fn requires_prior_read() {
        let ws = Ws::new();
        let p = ws.write("f.txt", "a\n");
        let err = edit(
            &ws,
            json!({"file_path": "f.txt", "old_string": "a", "new_string": "b"}),
        )
        .await
        .unwrap_err()
        .to_string();
        assert!(err.contains("has not been read"), "{err}");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "a\n");
    }

    #[tokio::test]
    async fn not_utf8_refused() {
        let ws = Ws::new();
        let p = ws.write("l1.txt", b"caf\xe9\n");
        read(&ws, "l1.txt").await;
        let err = edit(
            &ws,
            json!({"file_path": "l1.txt", "old_string": "caf", "new_string": "tea"}),
        )
        .await
        .unwrap_err()
        .to_string();
        assert!(err.contains("not valid UTF-8"), "{err}");
        assert_eq!(std::fs::read(&p).unwrap(), b"caf\xe9\n");
    }

    #[tokio::test]
    async fn crlf_files_keep_their_line_endings() {
        let ws = Ws::new();
        let p = ws.write("w.txt", "one\r\ntwo\r\nthree\r\n");
        read(&ws, "w.txt").await;
        edit(
            &ws,
            json!({"file_path": "w.txt", "old_string": "one\ntwo", "new_string": "1\n2"}),
        )
        .await
        .unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "1\r\n2\r\nthree\r\n");
    }
}
