//! Files as an editor holds them (ARCHITECTURE.md §7.1): a front end that keeps the user's
//! open buffers (an ACP client) gives the engine an [`EditorFiles`], and `read`, `write` and
//! `edit` read and write text through it. Only the storage changes: the tools resolve the
//! path, and the permission rules, workspace bounds, sandbox and trust gates decide, exactly as
//! for the disk. Without one (`ToolContext::editor` is `None`) the tools use the disk.
//!
//! The policy is here, not in the front end: every call is bounded by [`EDITOR_TIMEOUT`] and by
//! the call's cancellation; a read that fails falls back to the disk; a write that fails is the
//! tool's error (what the editor was asked to write never lands on the disk instead).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex};
use std::time::Duration;

use tokio::sync::{OwnedRwLockReadGuard, OwnedRwLockWriteGuard, RwLock};

use super::{ToolContext, ToolError};
use crate::open::{Checked, Identity};

/// How long one request to the editor may take.
pub(crate) const EDITOR_TIMEOUT: Duration = Duration::from_secs(30);

/// Why the editor did not read or write a file. The `Display` text is one line for the log or
/// the model.
#[derive(Debug, thiserror::Error)]
pub enum EditorError {
    /// The editor answered with an error (its message).
    #[error("{0}")]
    Refused(String),
    /// The editor's answer is not what the request calls for.
    #[error("an answer pith cannot read: {0}")]
    Unreadable(#[source] serde_json::Error),
}

/// Reads and writes text through the front end's editor. Paths are absolute and resolved.
#[async_trait::async_trait]
pub trait EditorFiles: Send + Sync {
    /// The editor answers reads ([`read_text`](Self::read_text)).
    fn reads(&self) -> bool;
    /// The editor takes writes ([`write_text`](Self::write_text)).
    fn writes(&self) -> bool;
    /// The text of `path` as the editor has it (an unsaved buffer included).
    async fn read_text(&self, path: &Path) -> Result<String, EditorError>;
    /// Makes `content` the text of `path` in the editor (which saves it as it does).
    async fn write_text(&self, path: &Path, content: &str) -> Result<(), EditorError>;
}

/// The workspace's editor section: every command of the workspace holds it shared for its
/// whole run (`bash`), an editor file call holds it alone. The editor acts by path, so while
/// it answers nothing may flip a directory to a link; since every process of a foreground
/// command ends with its call, no command runs then. A background job (`crate::jobs`) holds
/// the section only while it starts; while one runs, file calls use the disk (whose race-free
/// opens hold against a path flipped under them) instead of the editor.
fn section_lock(workspace: &Path) -> Arc<RwLock<()>> {
    static SECTIONS: LazyLock<Mutex<HashMap<PathBuf, Arc<RwLock<()>>>>> =
        LazyLock::new(Default::default);
    let mut all = SECTIONS.lock().unwrap_or_else(|e| e.into_inner());
    all.entry(workspace.to_path_buf()).or_default().clone()
}

/// Background jobs running per workspace (their trees not yet gone).
static BACKGROUND: LazyLock<Mutex<HashMap<PathBuf, usize>>> = LazyLock::new(Default::default);

fn background_running(workspace: &Path) -> bool {
    let all = BACKGROUND.lock().unwrap_or_else(|e| e.into_inner());
    all.get(workspace).is_some_and(|n| *n > 0)
}

/// A background job's mark on its workspace, from before it starts (taken while its command
/// holds the section) until its whole tree is gone (dropped): meanwhile editor file calls of
/// the workspace use the disk.
pub(crate) struct BackgroundHold(PathBuf);

impl BackgroundHold {
    /// Taken while `_turn` (the starting command's share of the section) is held, so no
    /// editor file call is in flight.
    pub(crate) fn take(workspace: &Path, _turn: &OwnedRwLockReadGuard<()>) -> BackgroundHold {
        let mut all = BACKGROUND.lock().unwrap_or_else(|e| e.into_inner());
        *all.entry(workspace.to_path_buf()).or_default() += 1;
        BackgroundHold(workspace.to_path_buf())
    }
}

impl Drop for BackgroundHold {
    fn drop(&mut self) {
        let mut all = BACKGROUND.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = all.get_mut(&self.0) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                all.remove(&self.0);
            }
        }
    }
}

/// A command's share of the editor section, held for its whole run: it waits while an
/// editor file call is in flight (or the call is interrupted).
pub(crate) async fn command_turn(ctx: &ToolContext) -> Result<OwnedRwLockReadGuard<()>, ToolError> {
    let lock = section_lock(&ctx.workspace);
    tokio::select! {
        g = lock.read_owned() => Ok(g),
        _ = ctx.cancel.cancelled() => Err(ToolError::Interrupted),
    }
}

/// An editor file call's hold on the editor section (nothing when no editor serves the call),
/// and whether the editor may serve it (no background job of the workspace runs).
pub(crate) struct Section(#[allow(dead_code)] Option<OwnedRwLockWriteGuard<()>>, bool);

/// Enters the editor section when an editor serves this call: waits until no command of the
/// workspace runs (or the call is interrupted), and keeps any from starting until dropped.
/// With a background job running the call is the disk's (see [`section_lock`]).
pub(crate) async fn enter(ctx: &ToolContext) -> Result<Section, ToolError> {
    if ctx.editor.is_none() {
        return Ok(Section(None, false));
    }
    let lock = section_lock(&ctx.workspace);
    let held = tokio::select! {
        g = lock.write_owned() => g,
        _ = ctx.cancel.cancelled() => return Err(ToolError::Interrupted),
    };
    // (A job starts only under a shared hold, so none starts while this one is held.)
    let editor = !background_running(&ctx.workspace);
    Ok(Section(Some(held), editor))
}

/// Whether `c` still names what the permission check saw, with no link on the way (no parent
/// flipped to a symlink, the file not replaced). Called inside the section, right before the
/// editor is asked: nothing can change it between this look and the editor's act.
fn unchanged(c: &Checked) -> bool {
    let path = c.path();
    let parent_real = path.parent().is_none_or(|d| {
        std::fs::canonicalize(d)
            .ok()
            .is_some_and(|real| real.as_path() == d)
    });
    parent_real && Identity::at(path) == c.seen
}

/// The editor's text of the checked path, when an editor reads for this call; `None` when
/// there is none, it failed (logged) or the path changed since the check: the caller reads the
/// disk (which refuses a changed path).
pub(crate) async fn read(ctx: &ToolContext, section: &Section, c: &Checked) -> Option<String> {
    let editor = ctx.editor.as_ref().filter(|e| section.1 && e.reads())?;
    if !unchanged(c) {
        return None;
    }
    let path = c.path();
    let answer = tokio::select! {
        r = tokio::time::timeout(EDITOR_TIMEOUT, editor.read_text(path)) => r,
        _ = ctx.cancel.cancelled() => return None,
    };
    match answer {
        Ok(Ok(text)) => Some(text),
        Ok(Err(e)) => {
            tracing::warn!(path = %path.display(), "the editor's read failed, reading the disk: {e}");
            None
        }
        Err(_) => {
            tracing::warn!(path = %path.display(), "the editor did not answer a read within {} s, reading the disk", EDITOR_TIMEOUT.as_secs());
            None
        }
    }
}

/// Whether writes of this call go to the editor.
pub(crate) fn writes(ctx: &ToolContext, section: &Section) -> bool {
    section.1 && ctx.editor.as_ref().is_some_and(|e| e.writes())
}

/// Writes `content` through the editor (the caller checked [`writes`]). A failure is the
/// tool's error, never a write to the disk instead.
pub(crate) async fn write(
    ctx: &ToolContext,
    _section: &Section,
    c: &Checked,
    content: &str,
) -> Result<(), ToolError> {
    let shown = c.shown(&ctx.workspace);
    let Some(editor) = ctx.editor.as_ref().filter(|e| e.writes()) else {
        return Err(tool_err!(
            "Cannot write {shown}: no editor takes writes (internal error)"
        ));
    };
    if !unchanged(c) {
        return Err(tool_err!(
            "Cannot write {shown}: it changed after the permission check (replaced, or a link swapped in on the way); nothing was written. Check it and call again"
        ));
    }
    let path = c.path();
    let answer = tokio::select! {
        r = tokio::time::timeout(EDITOR_TIMEOUT, editor.write_text(path, content)) => r,
        _ = ctx.cancel.cancelled() => return Err(ToolError::Interrupted),
    };
    match answer {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(tool_err!(
            "Cannot write {shown}: the editor refused the write ({e}). Nothing was written."
        )),
        Err(_) => Err(tool_err!(
            "Cannot write {shown}: the editor did not confirm the write within {} s; the file may not have changed. Read it again before retrying.",
            EDITOR_TIMEOUT.as_secs()
        )),
    }
}

#[cfg(test)]
pub(crate) mod testing {
    use std::collections::HashMap;
    use std::path::{Path, PathBuf};
    use std::sync::{Arc, Mutex};

    use tokio::sync::Notify;

    use super::{EditorError, EditorFiles};

    /// An editor holding buffers in memory; every write is recorded. A path without a buffer
    /// fails to read (`reads` may still be on); `fail_writes` makes every write fail.
    #[derive(Default)]
    pub(crate) struct Buffers {
        pub reads: bool,
        pub writes: bool,
        pub(crate) fail_writes: bool,
        pub hang: bool,
        pub buffers: Mutex<HashMap<PathBuf, String>>,
        pub written: Mutex<Vec<(PathBuf, String)>>,
        /// Run on the next read (a parallel sub-agent acting while the editor answers).
        pub(crate) on_read: Mutex<Option<Box<dyn FnOnce() + Send>>>,
        /// A write says it began (the first) and waits for the second before it lands.
        pub gate: Option<(Arc<Notify>, Arc<Notify>)>,
    }

    impl Buffers {
        pub(crate) fn with(reads: bool, writes: bool) -> Buffers {
            Buffers {
                reads,
                writes,
                ..Buffers::default()
            }
        }

        pub(crate) fn open(&self, path: &Path, text: &str) {
            self.buffers
                .lock()
                .unwrap()
                .insert(path.to_path_buf(), text.to_string());
        }

        pub(crate) fn written(&self) -> Vec<(PathBuf, String)> {
            self.written.lock().unwrap().clone()
        }
    }

    #[async_trait::async_trait]
    impl EditorFiles for Buffers {
        fn reads(&self) -> bool {
            self.reads
        }
        fn writes(&self) -> bool {
            self.writes
        }
        async fn read_text(&self, path: &Path) -> Result<String, EditorError> {
            if self.hang {
                std::future::pending::<()>().await;
            }
            let hook = self.on_read.lock().unwrap().take();
            if let Some(hook) = hook {
                hook();
            }
            self.buffers
                .lock()
                .unwrap()
                .get(path)
                .cloned()
                .ok_or_else(|| EditorError::Refused("no such buffer".into()))
        }
        async fn write_text(&self, path: &Path, content: &str) -> Result<(), EditorError> {
            if self.hang {
                std::future::pending::<()>().await;
            }
            if let Some((began, release)) = &self.gate {
                began.notify_one();
                release.notified().await;
            }
            if self.fail_writes {
                return Err(EditorError::Refused("read-only buffer".into()));
            }
            self.written
                .lock()
                .unwrap()
                .push((path.to_path_buf(), content.to_string()));
            self.open(path, content);
            Ok(())
        }
    }
}

#[cfg(test)]
#[path = "editor_races.rs"]
mod races;

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::testing::Buffers;
    use crate::Tool;
    use crate::edit::Edit;
    use crate::read::Read;
    use crate::testutil::Ws;
    use crate::write::Write;

    fn with_editor(editor: Buffers) -> (Ws, Arc<Buffers>) {
        let mut ws = Ws::new();
        let editor = Arc::new(editor);
        ws.ctx.editor = Some(editor.clone());
        (ws, editor)
    }

    #[tokio::test]
    async fn reads_see_the_buffer_and_fall_back_to_the_disk() {
        let (ws, editor) = with_editor(Buffers::with(true, false));
        let p = ws.write("a.txt", "on disk\n");
        editor.open(&p, "in the buffer\nunsaved\n");
        let out = Read
            .run(json!({"file_path": "a.txt"}), &ws.ctx)
            .await
            .unwrap();
        assert!(out.output.contains("in the buffer"), "{}", out.output);
        assert!(
            out.output.contains("(End of file: 2 lines)"),
            "{}",
            out.output
        );
        assert!(!out.output.contains("on disk"), "{}", out.output);
        // no buffer: the editor's read fails and the disk is read
        ws.write("b.txt", "only on disk\n");
        let out = Read
            .run(json!({"file_path": "b.txt"}), &ws.ctx)
            .await
            .unwrap();
        assert!(out.output.contains("only on disk"), "{}", out.output);
        // a directory is never asked of the editor
        std::fs::create_dir_all(ws.path("d")).unwrap();
        Read.run(json!({"file_path": "d"}), &ws.ctx).await.unwrap();
        // a binary buffer is refused as a binary file is
        editor.open(&p, "a\0b");
        let err = Read
            .run(json!({"file_path": "a.txt"}), &ws.ctx)
            .await
            .unwrap_err();
        assert!(err.to_string().contains("binary"), "{err}");
    }

    #[tokio::test(start_paused = true)]
    async fn an_editor_that_never_answers_a_read_costs_the_bound_then_the_disk() {
        let (ws, editor) = with_editor(Buffers {
            hang: true,
            ..Buffers::with(true, true)
        });
        let p = ws.write("a.txt", "on disk\n");
        editor.open(&p, "buffer");
        let start = tokio::time::Instant::now();
        let out = Read
            .run(json!({"file_path": "a.txt"}), &ws.ctx)
            .await
            .unwrap();
        assert!(out.output.contains("on disk"), "{}", out.output);
        assert!(start.elapsed() >= super::EDITOR_TIMEOUT);
        // a write that is never confirmed is an error, and the disk is left alone
        let err = Write
            .run(json!({"file_path": "a.txt", "content": "new\n"}), &ws.ctx)
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("did not confirm the write"), "{err}");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "on disk\n");
    }

    #[tokio::test]
    async fn writes_go_to_the_editor_and_never_to_the_disk() {
        let (ws, editor) = with_editor(Buffers::with(true, true));
        let p = ws.write("a.txt", "on disk\n");
        editor.open(&p, "buffer v1\n");
        // the checks stay: an existing file not read is refused before the editor is asked
        let err = Write
            .run(json!({"file_path": "a.txt", "content": "x\n"}), &ws.ctx)
            .await
            .unwrap_err();
        assert!(err.to_string().contains("has not been read"), "{err}");
        assert!(editor.written().is_empty());
        Read.run(json!({"file_path": "a.txt"}), &ws.ctx)
            .await
            .unwrap();
        let out = Write
            .run(
                json!({"file_path": "a.txt", "content": "buffer v2\n"}),
                &ws.ctx,
            )
            .await
            .unwrap();
        assert_eq!(editor.written(), [(p.clone(), "buffer v2\n".to_string())]);
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "on disk\n");
        // the diff is against what the editor had
        let diff = out.metadata["diff"].as_str().unwrap();
        assert!(diff.contains("-buffer v1\n+buffer v2\n"), "{diff}");
        // a new file, in a new directory: the directory is made, the file is the editor's
        let out = Write
            .run(json!({"file_path": "new/b.txt", "content": "b\n"}), &ws.ctx)
            .await
            .unwrap();
        assert!(
            out.output.starts_with("Created new/b.txt"),
            "{}",
            out.output
        );
        assert!(ws.path("new").is_dir());
        assert!(!ws.path("new/b.txt").exists());
        assert_eq!(editor.written().len(), 2);
    }

    #[tokio::test]
    async fn a_refused_write_is_an_error_and_the_disk_stays() {
        let (ws, editor) = with_editor(Buffers {
            fail_writes: true,
            ..Buffers::with(false, true)
        });
        let p = ws.write("a.txt", "a\n");
        Read.run(json!({"file_path": "a.txt"}), &ws.ctx)
            .await
            .unwrap();
        let err = Edit
            .run(
                json!({"file_path": "a.txt", "old_string": "a", "new_string": "b"}),
                &ws.ctx,
            )
            .await
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("the editor refused the write (read-only buffer)"),
            "{err}"
        );
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "a\n");
        let err = Write
            .run(json!({"file_path": "c.txt", "content": "c"}), &ws.ctx)
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("Nothing was written"), "{err}");
        assert!(!ws.path("c.txt").exists());
        assert!(editor.written().is_empty());
    }

    #[tokio::test]
    async fn edits_read_the_buffer_and_write_through_the_editor() {
        let (ws, editor) = with_editor(Buffers::with(true, true));
        let p = ws.write("f.rs", "fn disk() {}\n");
        editor.open(&p, "fn buffer() {}\nfn unsaved() {}\n");
        Read.run(json!({"file_path": "f.rs"}), &ws.ctx)
            .await
            .unwrap();
        let input = json!({"file_path": "f.rs", "old_string": "fn unsaved() {}", "new_string": "fn saved() {}"});
        // the text is only in the buffer: the precheck leaves it to the run
        Edit.precheck(&input, &ws.ctx).unwrap();
        let out = Edit.run(input, &ws.ctx).await.unwrap();
        assert_eq!(
            editor.written(),
            [(p.clone(), "fn buffer() {}\nfn saved() {}\n".to_string())]
        );
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "fn disk() {}\n");
        assert!(out.output.contains("+fn saved() {}"), "{}", out.output);
        // what is only on disk is not found in the buffer
        let err = Edit
            .run(
                json!({"file_path": "f.rs", "old_string": "fn disk() {}", "new_string": "x"}),
                &ws.ctx,
            )
            .await
            .unwrap_err();
        assert!(
            err.to_string().starts_with("old_string was not found"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn without_an_editor_the_disk_as_before() {
        let ws = Ws::new();
        let p = ws.write("a.txt", "a\n");
        Read.run(json!({"file_path": "a.txt"}), &ws.ctx)
            .await
            .unwrap();
        Edit.run(
            json!({"file_path": "a.txt", "old_string": "a", "new_string": "b"}),
            &ws.ctx,
        )
        .await
        .unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "b\n");
    }
}
