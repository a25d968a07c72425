//! What pith itself reads and sends to the provider, against a hostile workspace: the
//! configured `instructions` file swapped for a symlink to a key (read again when the system
//! prompt is rebuilt). `@` mentions that lead out are in `engine_user_tools`; the walk up for
//! `AGENTS.md` (no `/tmp`, nothing above `$HOME`) is tested in
//! `crates/pith-engine/src/instructions/tests.rs`.

use crate::support;

use pith_protocol::event::{Event, Op, SettingsEvent};
use support::engine::{MODEL, harness_with};
use support::openai;

#[tokio::test]
async fn a_configured_instruction_file_swapped_for_a_link_to_a_key_is_not_sent() {
    let outside = tempfile::tempdir().unwrap();
    let key = outside.path().join("id_rsa");
    std::fs::write(&key, "PRIVATE KEY 0xfeedface\n").unwrap();
    let mut h = harness_with(vec![], false, |c| {
        c.instructions = vec!["docs/rules.md".into(), "docs/style.md".into()];
    })
    .await;
    let ws = h.workspace.path().to_path_buf();
    std::fs::create_dir_all(ws.join("docs")).unwrap();
    std::fs::write(ws.join("docs/style.md"), "Answer in haiku 31337.\n").unwrap();
    std::os::unix::fs::symlink(&key, ws.join("docs/rules.md")).unwrap();
    // a rebuild of the system prompt (a model switch) reads the files again
    h.send(Op::SetModel {
        model: MODEL.into(),
    });
    h.until("the switch", |e| {
        matches!(e, Event::Settings(SettingsEvent::ModelChanged { .. }))
    })
    .await;
    h.server.push(openai::text("ok", Some((1000, 5))));
    h.send(Op::user_turn("hi"));
    h.turn_finished().await;
    let body = h.server.request_body(0).to_string();
    assert!(body.contains("Answer in haiku 31337."), "{body}");
    assert!(
        !body.contains("PRIVATE KEY"),
        "the key reached the system prompt"
    );
}
