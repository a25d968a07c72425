//! The everyday workflows: `@` file mentions, `!` commands, undo and redo, custom commands —
//! keys in, ops out, engine events in, screens out.

use crossterm::event::{Event as TermEvent, KeyCode};
use serde_json::json;

use pith_protocol::event::{Event, Op};
use pith_protocol::message::{PartKind, Role, ToolState, ToolTime};

use super::app::Msg;
use super::tests::*;

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("src/tui")).unwrap();
    for f in [
        "src/main.rs",
        "src/tui/app.rs",
        "src/tui/view.rs",
        "README.md",
    ] {
        std::fs::write(root.join(f), "x").unwrap();
    }
    dir
}

/// `@` opens the file picker; typing narrows it; enter writes the path into the prompt, which
/// is sent as typed (the engine attaches the file).
#[test]
fn at_opens_a_fuzzy_file_picker_and_enter_writes_the_path() {
    let ws = workspace();
    let (mut app, mut rx) = fresh();
    app.set_workspace(ws.path().to_path_buf());
    type_str(&mut app, "explain @");
    let screen = render(&mut app, 80, 24);
    assert!(screen.contains("attach a file"), "{screen}");
    assert!(
        screen.contains("README.md") && screen.contains("src/"),
        "{screen}"
    );
    type_str(&mut app, "tuiapp");
    let screen = render(&mut app, 80, 24).replace(&ws.path().display().to_string(), "[ws]");
    insta::assert_snapshot!(screen);
    key(&mut app, KeyCode::Enter);
    assert_eq!(app.composer().text(), "explain @src/tui/app.rs ");
    assert!(app.mention_popup().is_none(), "closed after the choice");
    // a directory stays open for its entries
    type_str(&mut app, "and @sr");
    key(&mut app, KeyCode::Enter);
    assert_eq!(app.composer().text(), "explain @src/tui/app.rs and @src/");
    let (_, items) = app.mention_popup().expect("still open");
    assert_eq!(items, ["src/main.rs", "src/tui/"]);
    key(&mut app, KeyCode::Esc);
    assert!(app.mention_popup().is_none());
    key(&mut app, KeyCode::Enter);
    assert_eq!(prompt_texts(&mut rx), ["explain @src/tui/app.rs and @src/"]);
}

/// A dropped image file (its path pasted) becomes a mention.
#[test]
fn a_pasted_image_path_is_attached() {
    let ws = workspace();
    std::fs::write(ws.path().join("shot.png"), "png").unwrap();
    let (mut app, _rx) = fresh();
    app.set_workspace(ws.path().to_path_buf());
    type_str(&mut app, "what is this? ");
    app.update(Msg::Term(TermEvent::Paste("shot.png".into())));
    assert_eq!(app.composer().text(), "what is this? @shot.png ");
}

fn attached(mid: &str, path: &str, lines: u64) -> pith_protocol::message::Part {
    part(
        mid,
        &format!("{mid}-read"),
        PartKind::Tool {
            call_id: format!("mention_{mid}"),
            tool: "read".into(),
            input: json!({ "file_path": path }),
            state: ToolState::Completed {
                output: "1\tfn main() {}".into(),
                title: path.into(),
                metadata: json!({"total_lines": lines, "lines_shown": lines}),
                time: ToolTime {
                    start: 0,
                    end: 5,
                    compacted: None,
                },
            },
        },
    )
}

/// The stored prompt shows what it attached as chips under the text.
#[test]
fn snapshot_a_prompt_with_attached_files() {
    let mut u = user("U1", "explain @src/main.rs and @README.md");
    u.parts.push(attached("U1", "src/main.rs", 120));
    let mut failed = attached("U1", "README.md", 0);
    failed.id = "U1-read2".into();
    if let PartKind::Tool { state, .. } = &mut failed.kind {
        *state = ToolState::Error {
            message: "Permission denied: the user's rules deny read".into(),
            start: None,
            end: None,
        };
    }
    u.parts.push(failed);
    let (mut app, _rx) = app_with(vec![u]);
    let screen = render(&mut app, 80, 24);
    assert!(screen.contains("◇ src/main.rs  120 lines"), "{screen}");
    assert!(screen.contains("✗ README.md  not attached"), "{screen}");
    insta::assert_snapshot!(screen);
    let _ = Role::User;
    let _ = Op::Undo;
    let _ = Event::info(String::new());
}
