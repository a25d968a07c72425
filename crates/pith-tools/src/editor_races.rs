//! The ACP editor as a race door: the editor reads and writes by path, so nothing may flip a
//! path while an editor file call is in flight (no command of the workspace runs), and the
//! path is checked again, inside that section, right before the editor is asked.

use std::collections::BTreeMap;
use std::os::unix::fs::symlink;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::Notify;

use super::testing::Buffers;
use crate::bash::Bash;
use crate::edit::Edit;
use crate::read::Read;
use crate::testutil::Ws;
use crate::write::Write;
use crate::{Permissions, Tool};

fn with_editor(editor: Buffers) -> (Ws, Arc<Buffers>) {
    let mut ws = Ws::new();
    let editor = Arc::new(editor);
    ws.ctx.editor = Some(editor.clone());
    (ws, editor)
}

fn check(ws: &Ws, tool: &str, input: &Value) {
    let mut p = Permissions::new(&BTreeMap::new());
    let _ = p.check(tool, input, &ws.ctx);
}

async fn wait_for(what: impl Fn() -> bool, within: Duration) -> bool {
    let end = tokio::time::Instant::now() + within;
    while tokio::time::Instant::now() < end {
        if what() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    what()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_command_of_the_workspace_runs_while_the_editor_writes() {
    let (began, release) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
    let mut buffers = Buffers::with(false, true);
    buffers.gate = Some((began.clone(), release.clone()));
    let (ws, editor) = with_editor(buffers);
    let ctx = ws.ctx.clone();
    let write = tokio::spawn(async move {
        Write
            .run(json!({"file_path": "a.txt", "content": "x"}), &ctx)
            .await
    });
    began.notified().await;
    // a parallel sub-agent's command, while the editor has not answered
    let mut other = ws.ctx.clone();
    other.call_id = "call_bash".into();
    other.editor = None;
    let bash = tokio::spawn(async move {
        Bash::default()
            .run(json!({"command": "touch ran"}), &other)
            .await
    });
    let ran = ws.path("ran");
    let ran_during = wait_for(|| ran.exists(), Duration::from_secs(3)).await;
    release.notify_one();
    write.await.unwrap().unwrap();
    bash.await.unwrap().unwrap();
    assert!(!ran_during, "a command ran while the editor wrote");
    assert!(ran.exists(), "the command ran after the editor's write");
    assert_eq!(editor.written().len(), 1);
}

#[tokio::test]
async fn a_parent_flipped_to_a_link_while_the_editor_reads_is_not_written() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("f"), "alias ls=ls\n").unwrap();
    for tool in ["edit", "write"] {
        let (ws, editor) = with_editor(Buffers::with(true, true));
        let f = ws.write("d/f", "alias ls=ls\n");
        editor.open(&f, "alias ls=ls\n");
        Read.run(json!({"file_path": "d/f"}), &ws.ctx)
            .await
            .unwrap();
        let input = match tool {
            "edit" => {
                json!({"file_path": "d/f", "old_string": "ls=ls", "new_string": "ls='curl x|sh'"})
            }
            _ => json!({"file_path": "d/f", "content": "curl x|sh\n"}),
        };
        check(&ws, tool, &input);
        // while the editor answers the read, `d` becomes a link out of the workspace
        let (d, target) = (ws.path("d"), outside.path().to_path_buf());
        *editor.on_read.lock().unwrap() = Some(Box::new(move || {
            std::fs::remove_dir_all(&d).unwrap();
            symlink(&target, &d).unwrap();
        }));
        let out = match tool {
            "edit" => Edit.run(input, &ws.ctx).await,
            _ => Write.run(input, &ws.ctx).await,
        };
        assert!(
            editor.written().is_empty(),
            "{tool}: the editor was asked to write through the link: {out:?}"
        );
        assert!(out.is_err(), "{tool}: {out:?}");
    }
}
