//! Memory in the real binary in tmux (README "Instructions and memory"): `#TEXT` asks which
//! file in its choice box and the user's file gets the line; `/memory` lists the files and
//! opens the chosen one in `$VISUAL`, whose edit the next request carries.

use crate::support;

use std::process::Command;

use super::tui_e2e::{open, quit, write_config};
use support::{MockServer, openai};

#[test]
fn hash_text_and_memory_in_tmux() {
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("SKIPPED: tmux is not installed (.ci/run installs it)");
        return;
    }
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let server = rt.block_on(MockServer::start());
    server.push(openai::text("Noted.", Some((1_000, 5))));
    let data = tempfile::tempdir().expect("tempdir");
    let work = tempfile::tempdir().expect("tempdir");
    let home = tempfile::tempdir().expect("tempdir");
    let config = write_config(data.path(), &server.openai_base_url());
    // the "editor": appends a line to the file it is given
    let editor = data.path().join("ed.sh");
    std::fs::write(&editor, "#!/bin/sh\necho '- EDITED-IN-EDITOR' >> \"$1\"\n").unwrap();
    Command::new("chmod")
        .arg("755")
        .arg(&editor)
        .status()
        .unwrap();
    let cmd = format!(
        "env PITH_DATA_DIR='{}' PITH_CONFIG='{}' HOME='{}' XDG_CONFIG_HOME='{}/.config' \
         VISUAL='{}' TERM=xterm-256color '{}'; echo \"EXIT=$?\"; sleep 60",
        data.path().display(),
        config.display(),
        home.path().display(),
        home.path().display(),
        editor.display(),
        env!("CARGO_BIN_EXE_pith"),
    );
    let session = open(
        &format!("pith-memory-{}", std::process::id()),
        work.path(),
        &cmd,
    );
    session.wait_for("the composer", 40, |s| s.contains("Ask pith anything"));
    session.type_text("#this repo uses pnpm");
    session.keys(&["Enter"]);
    session.wait_for("the choice box", 30, |s| s.contains("in which file?"));
    session.keys(&["Down"]);
    session.keys(&["Enter"]);
    let user = home.path().join(".config/pith/AGENTS.md");
    session.wait_for("the line written", 30, |s| s.contains("remembered in"));
    assert_eq!(
        std::fs::read_to_string(&user).unwrap(),
        "## Memory\n\n- this repo uses pnpm\n"
    );
    session.type_text("/memory");
    session.keys(&["Enter"]);
    // the picker's title, not the slash popup's "/memory the memory files…" line
    session.wait_for("the memory files", 30, |s| {
        s.contains("memory files · enter opens one")
    });
    // the user's file is listed first
    session.keys(&["Enter"]);
    session.wait_for("the editor's end", 30, |s| {
        s.contains("the next request carries it")
    });
    assert!(
        std::fs::read_to_string(&user)
            .unwrap()
            .ends_with("- EDITED-IN-EDITOR\n")
    );
    session.type_text("hello");
    session.keys(&["Enter"]);
    session.wait_for("the answer", 40, |s| s.contains("Noted."));
    let system = support::message_text(&server.request_body(0)["messages"][0]);
    assert!(system.contains("- this repo uses pnpm"), "{system}");
    assert!(system.contains("- EDITED-IN-EDITOR"), "{system}");
    quit(&session);
}
