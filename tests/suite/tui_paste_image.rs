//! A screenshot pasted with Ctrl+V in the real binary in tmux (README "Use": Ctrl+V): a stub
//! `wl-paste` first on `PATH` serves a PNG, the composer shows its chip, and the model's request
//! carries the image, saved private under the data dir. `/paste-image` with only text on the
//! clipboard says so, and nothing is sent.

use crate::support;

use std::process::Command;

use support::{MockServer, openai};

use super::tui_e2e::{open, quit};

/// A 1×1 PNG.
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89\0\0\0\rIDATx\x9cc\xf8\xcf\xc0\xf0\x1f\0\x05\0\x01\xff\x89\x99=\x1d\0\0\0\0IEND\xaeB`\x82";

/// A `wl-paste` in `dir` that offers a PNG while `dir/image` exists, else text only.
fn stub_wl_paste(dir: &std::path::Path) {
    std::fs::write(dir.join("shot.png"), PNG).unwrap();
    let d = dir.display();
    let script = format!(
        "#!/bin/sh\ncase \"$*\" in\n  *--list-types*) if [ -e '{d}/image' ]; then echo image/png; fi; echo UTF8_STRING ;;\n  *image/png*) cat '{d}/shot.png' ;;\n  *) printf 'just words' ;;\nesac\n"
    );
    let path = dir.join("wl-paste");
    std::fs::write(&path, script).unwrap();
    let mut perms = std::fs::metadata(&path).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&path, perms).unwrap();
}

#[test]
fn ctrl_v_pastes_a_screenshot_that_reaches_the_model_in_tmux() {
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("SKIPPED: tmux is not installed (.ci/run installs it)");
        return;
    }
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let server = rt.block_on(MockServer::start());
    server.push(openai::text("A single pixel.", Some((2_000, 10))));
    let data = tempfile::tempdir().expect("tempdir");
    let work = tempfile::tempdir().expect("tempdir");
    let bin = tempfile::tempdir().expect("tempdir");
    stub_wl_paste(bin.path());
    let config = data.path().join("pith.toml");
    std::fs::write(
        &config,
        format!(
            "model = \"mock/mock-model\"\n\n[provider.mock]\nkind = \"openai\"\nbase_url = \"{}\"\n\n[models.\"mock/mock-model\"]\ncontext = 32000\noutput = 4000\nimages = true\n",
            server.openai_base_url()
        ),
    )
    .unwrap();
    let cmd = format!(
        "env -u DISPLAY WAYLAND_DISPLAY=wayland-stub PATH='{}':\"$PATH\" PITH_DATA_DIR='{}' PITH_CONFIG='{}' HOME='{}' TERM=xterm-256color '{}'; sleep 30",
        bin.path().display(),
        data.path().display(),
        config.display(),
        work.path().display(),
        env!("CARGO_BIN_EXE_pith"),
    );
    let name = format!("pith-paste-image-{}", std::process::id());
    let session = open(&name, work.path(), &cmd);
    session.wait_for("the composer", 20, |s| s.contains("Ask pith anything"));

    // only text on the clipboard: /paste-image says so
    session.type_text("/paste-image");
    session.wait_for("the slash popup", 10, |s| s.contains("attach the image on"));
    session.keys(&["Enter"]);
    session.wait_for("the refusal", 10, |s| {
        s.contains("the clipboard holds no image (it holds text)")
    });

    // a screenshot: ctrl+v makes it a chip
    std::fs::write(bin.path().join("image"), "").unwrap();
    session.type_text("what is in");
    session.keys(&["C-v"]);
    session.wait_for("the chip", 10, |s| {
        s.contains("what is in [image 1: 70 B png]")
    });
    session.type_text("?");
    session.keys(&["Enter"]);
    session.wait_for("the answer", 30, |s| s.contains("A single pixel."));

    let saved: Vec<_> = std::fs::read_dir(data.path().join("images"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(saved.len(), 1, "{saved:?}");
    assert_eq!(std::fs::read(&saved[0]).unwrap(), PNG);
    let mode = std::fs::metadata(&saved[0]).unwrap().permissions();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777,
        0o600
    );

    let body = server.request_body(0).to_string();
    // the PNG signature, base64-encoded, opens the image part
    assert!(
        body.contains("data:image/png;base64,iVBORw0KGgo"),
        "the request carries the image: {body}"
    );
    assert_eq!(server.requests().len(), 1, "the refusal sent nothing");
    quit(&session);
    drop(rt);
}
