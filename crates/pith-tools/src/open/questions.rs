//! A symlink that leads out of the workspace, or into a hidden path, is followed only after a
//! question that names its target.

use std::collections::BTreeMap;
use std::os::unix::fs::symlink;

use serde_json::json;

use crate::testutil::Ws;
use crate::{Decision, Permissions};

fn title(ws: &Ws, tool: &str, raw: &str) -> Option<String> {
    let mut p = Permissions::new(&BTreeMap::new());
    let input = json!({"file_path": raw, "content": "x", "old_string": "a", "new_string": "b"});
    match p.check(tool, &input, &ws.ctx) {
        Decision::Ask(r) => Some(r.title),
        _ => None,
    }
}

#[test]
fn a_link_out_of_the_workspace_asks_naming_its_target() {
    let ws = Ws::new();
    let key = ws.root().join("id_rsa");
    std::fs::write(&key, "k").unwrap();
    symlink(&key, ws.path("f")).unwrap();
    for tool in ["read", "write", "edit"] {
        let t = title(&ws, tool, "f").unwrap_or_else(|| panic!("{tool} did not ask"));
        assert!(t.starts_with(&*key.to_string_lossy()), "{t}");
        assert!(t.contains("through the symlink f"), "{t}");
    }
    // a path named outside directly says so, without a link
    let t = title(&ws, "read", &key.to_string_lossy()).unwrap();
    assert_eq!(t, format!("{} (outside the workspace)", key.display()));
}

#[test]
fn a_link_into_a_hidden_path_inside_the_workspace_asks() {
    // pith started in a folder that holds its data dir (as `$HOME` holds `~/.ssh`)
    let mut ws = Ws::new();
    let data = ws.path(".local-pith");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(data.join("trusted-directories.json"), "{}").unwrap();
    ws.ctx.data_dir = data;
    symlink(".local-pith/trusted-directories.json", ws.path("notes")).unwrap();
    let t = title(&ws, "read", "notes").expect("read through a link into the data dir asks");
    assert!(t.contains(".local-pith/trusted-directories.json"), "{t}");
    assert!(t.contains("through the symlink notes"), "{t}");
    // a plain file of the workspace does not
    ws.write("plain.txt", "x");
    assert_eq!(title(&ws, "read", "plain.txt"), None);
}
