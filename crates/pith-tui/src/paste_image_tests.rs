//! Ctrl+V, Alt+V and `/paste-image` against stub clipboard tools: the image becomes a chip
//! that sends its `@path`, text pastes as text, and every refusal is one line.

use std::sync::Arc;

use crossterm::event::{Event as TermEvent, KeyCode, KeyEvent, KeyModifiers};

use super::app::{App, Msg};
use super::clipboard_image::tests::Stubs;
use super::clipboard_image::{ClipEnv, ImageInput};
use super::tests::*;

/// An app whose clipboard is `env` (the stubs'), saving images under `data`, its model taking
/// images when `images`.
fn app(
    env: ClipEnv,
    data: &std::path::Path,
    images: bool,
) -> (
    App,
    tokio::sync::mpsc::UnboundedReceiver<pith_protocol::event::Submission>,
) {
    let mut init = init(Vec::new());
    init.images = ImageInput {
        dir: Some(pith_config::images::dir(data)),
        takes_images: Arc::new(move |_| images),
        env: Arc::new(move || env.clone()),
    };
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    (App::new(init, tx), rx)
}

fn alt(app: &mut App, c: char) {
    app.update(Msg::Term(TermEvent::Key(KeyEvent::new(
        KeyCode::Char(c),
        KeyModifiers::ALT,
    ))));
}

fn saved(data: &std::path::Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(pith_config::images::dir(data))
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default()
}

#[test]
fn ctrl_v_attaches_the_clipboard_image_as_a_chip() {
    let s = Stubs::new();
    s.wl_paste("image/png\\ntext/plain\\n");
    let data = tempfile::tempdir().unwrap();
    let (mut app, mut rx) = app(s.wayland(), data.path(), true);
    type_str(&mut app, "what is wrong here?");
    ctrl(&mut app, 'v');
    app.finish_clipboard_read();
    assert_eq!(
        app.composer().text(),
        "what is wrong here? [image 1: 70 B png] "
    );
    insta::assert_snapshot!(render(&mut app, 80, 12));
    let files = saved(data.path());
    assert_eq!(files.len(), 1);
    key(&mut app, KeyCode::Enter);
    assert_eq!(
        prompt_texts(&mut rx),
        [format!("what is wrong here? @{} ", files[0].display())],
        "sent as the image's mention, as a dropped image path is"
    );
}

#[test]
fn alt_v_works_too_and_text_pastes_as_text() {
    let s = Stubs::new();
    s.wl_paste("UTF8_STRING\\n");
    let data = tempfile::tempdir().unwrap();
    let (mut app, _rx) = app(s.wayland(), data.path(), true);
    alt(&mut app, 'v');
    app.finish_clipboard_read();
    assert_eq!(app.composer().text(), "hello");
    assert!(saved(data.path()).is_empty());
}

#[test]
fn paste_image_with_no_image_says_so() {
    let s = Stubs::new();
    s.wl_paste("UTF8_STRING\\n");
    let data = tempfile::tempdir().unwrap();
    let (mut app, _rx) = app(s.wayland(), data.path(), true);
    type_str(&mut app, "/paste-image");
    key(&mut app, KeyCode::Enter);
    app.finish_clipboard_read();
    assert_eq!(app.composer().text(), "", "the text is not pasted");
    let screen = render(&mut app, 80, 12);
    assert!(
        screen.contains("the clipboard holds no image (it holds text)"),
        "{screen}"
    );
}

#[test]
fn no_clipboard_tool_is_one_line_naming_what_to_install() {
    let s = Stubs::new();
    let data = tempfile::tempdir().unwrap();
    let (mut app, _rx) = app(s.wayland(), data.path(), true);
    ctrl(&mut app, 'v');
    app.finish_clipboard_read();
    let screen = render(&mut app, 100, 12);
    assert!(
        screen.contains("no clipboard tool: install wl-clipboard"),
        "{screen}"
    );
}

#[test]
fn a_model_without_images_is_refused_before_anything_is_read_or_saved() {
    let s = Stubs::new();
    s.wl_paste("image/png\\n");
    let data = tempfile::tempdir().unwrap();
    let (mut app, _rx) = app(s.wayland(), data.path(), false);
    type_str(&mut app, "/paste-image");
    key(&mut app, KeyCode::Enter);
    app.finish_clipboard_read();
    let screen = render(&mut app, 120, 12);
    assert!(
        screen.contains("anthropic/claude-sonnet-4-5 does not take images: not attached"),
        "{screen}"
    );
    assert!(
        !s.path("wl-paste.args").exists(),
        "the clipboard was not read"
    );
    // the key reads it (it may hold text), and refuses the image unsaved
    ctrl(&mut app, 'v');
    app.finish_clipboard_read();
    assert_eq!(app.composer().text(), "");
    assert!(saved(data.path()).is_empty());
}

#[test]
fn with_no_model_yet_an_image_is_refused_by_name() {
    let s = Stubs::new();
    s.wl_paste("image/png\\n");
    let data = tempfile::tempdir().unwrap();
    let mut init = init(Vec::new());
    init.model = "(no model)".into();
    init.images = ImageInput {
        dir: Some(pith_config::images::dir(data.path())),
        takes_images: Arc::new(|_| false),
        env: Arc::new({
            let env = s.wayland();
            move || env.clone()
        }),
    };
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let mut app = App::new(init, tx);
    ctrl(&mut app, 'v');
    app.finish_clipboard_read();
    let screen = render(&mut app, 100, 12);
    assert!(
        screen.contains("no model is set up: an image cannot be attached"),
        "{screen}"
    );
    assert!(saved(data.path()).is_empty());
}
