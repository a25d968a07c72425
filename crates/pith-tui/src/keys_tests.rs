//! Keys and colours as the user meets them: editing keys in the prompt, a `[keys]` rebinding
//! driving `App::update`, `/keys`, the light theme on screen and the `/theme` picker.

use std::collections::BTreeMap;

use crossterm::event::{Event as TermEvent, KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::Color;

use super::app::{App, Msg, Popup};
use super::keymap::Keymap;
use super::tests::*;
use super::theme::{self, theme};
use super::view;
use pith_config::ui::KeyList;
use pith_protocol::event::{Event, Op, PermissionReply, PermissionRequest, TurnEvent};
use pith_protocol::message::Role;

fn press(app: &mut App, code: KeyCode, mods: KeyModifiers) {
    app.update(Msg::Term(TermEvent::Key(KeyEvent::new(code, mods))));
}

fn keymap(entries: &[(&str, &[&str])]) -> Keymap {
    let config: BTreeMap<String, KeyList> = entries
        .iter()
        .map(|(a, k)| {
            (
                a.to_string(),
                KeyList(k.iter().map(|s| s.to_string()).collect()),
            )
        })
        .collect();
    Keymap::from_config(&config).unwrap()
}

fn buffer(app: &mut App, w: u16, h: u16) -> Buffer {
    let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
    term.draw(|f| view::draw(f, app)).unwrap();
    term.backend().buffer().clone()
}

/// The cell where `needle` starts on screen.
fn find(buf: &Buffer, needle: &str) -> (u16, u16) {
    for y in 0..buf.area.height {
        let row: String = (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect();
        if let Some(i) = row.find(needle) {
            let col = row[..i].chars().count() as u16;
            return (col, y);
        }
    }
    panic!("{needle:?} not on screen");
}

/// The screen with its colours: each row, then its runs of one foreground/background as
/// `fg/bg:"text"` (blank runs in the default colours left out).
fn styled(buf: &Buffer) -> String {
    let name = |c: Color| match c {
        Color::Rgb(r, g, b) => format!("#{r:02x}{g:02x}{b:02x}"),
        other => format!("{other:?}"),
    };
    let mut out = String::new();
    for y in 0..buf.area.height {
        let mut runs: Vec<((Color, Color), String)> = Vec::new();
        for x in 0..buf.area.width {
            let cell = &buf[(x, y)];
            let style = (cell.fg, cell.bg);
            match runs.last_mut() {
                Some((s, text)) if *s == style => text.push_str(cell.symbol()),
                _ => runs.push((style, cell.symbol().to_string())),
            }
        }
        let row: String = runs.iter().map(|(_, t)| t.as_str()).collect();
        out.push_str(row.trim_end());
        out.push('\n');
        for ((fg, bg), text) in runs {
            if (fg, bg) == (Color::Reset, Color::Reset) || text.trim().is_empty() {
                continue;
            }
            out.push_str(&format!(
                "    {}/{}: {:?}\n",
                name(fg),
                name(bg),
                text.trim()
            ));
        }
    }
    out
}

#[test]
fn shell_editing_keys_in_the_prompt() {
    let (mut app, _rx) = fresh();
    type_str(&mut app, "git commit amend wip");
    ctrl(&mut app, 'w');
    assert_eq!(app.composer().text(), "git commit amend ");
    press(&mut app, KeyCode::Backspace, KeyModifiers::ALT);
    assert_eq!(app.composer().text(), "git commit ");
    // ctrl+u deletes to the start of the line (ratatui-textarea's own ctrl+u would undo)
    for _ in 0..4 {
        key(&mut app, KeyCode::Left);
    }
    ctrl(&mut app, 'u');
    assert_eq!(app.composer().text(), "mit ");
    ctrl(&mut app, 'y');
    assert_eq!(
        app.composer().text(),
        "git commit ",
        "ctrl+y puts the deleted text back"
    );
    ctrl(&mut app, 'k');
    assert_eq!(app.composer().text(), "git com");
    // undo lives on ctrl+z, redo on ctrl+r
    ctrl(&mut app, 'z');
    assert_eq!(app.composer().text(), "git commit ");
    ctrl(&mut app, 'r');
    assert_eq!(app.composer().text(), "git com");
}

#[test]
fn the_permission_note_edits_with_the_same_keys() {
    let (mut app, mut rx) = fresh();
    ev(
        &mut app,
        Event::Turn(TurnEvent::PermissionAsked(PermissionRequest {
            id: "P1".into(),
            tool: "bash".into(),
            call_id: "c1".into(),
            title: "rm -rf /".into(),
            patterns: vec!["rm *".into()],
            agent: None,
        })),
    );
    read_question(&mut app);
    key(&mut app, KeyCode::Char('n'));
    type_str(&mut app, "no way, use trash");
    ctrl(&mut app, 'w');
    ctrl(&mut app, 'w');
    type_str(&mut app, "git clean");
    key(&mut app, KeyCode::Enter);
    let reply = ops(&mut rx).into_iter().find_map(|op| match op {
        Op::PermissionReply { reply, message, .. } => Some((reply, message)),
        _ => None,
    });
    assert_eq!(
        reply,
        Some((PermissionReply::Deny, Some("no way, git clean".into())))
    );
}

/// `[keys] submit = "ctrl+s"`, `newline = "enter"`: Enter now breaks the line and ctrl+s sends.
#[test]
fn a_rebinding_changes_what_keys_do() {
    let (mut app, mut rx) = fresh();
    app.set_keymap(keymap(&[("submit", &["ctrl+s"]), ("newline", &["enter"])]));
    type_str(&mut app, "one");
    key(&mut app, KeyCode::Enter);
    type_str(&mut app, "two");
    assert!(ops(&mut rx).is_empty(), "enter no longer sends");
    assert_eq!(app.composer().text(), "one\ntwo");
    ctrl(&mut app, 's');
    assert_eq!(prompt_texts(&mut rx), ["one\ntwo"]);

    // moving the delete-line keys away leaves ctrl+u doing nothing (never textarea's undo)
    let (mut app, _rx) = fresh();
    app.set_keymap(keymap(&[("kill_line_start", &["alt+u"])]));
    type_str(&mut app, "abc");
    ctrl(&mut app, 'u');
    assert_eq!(app.composer().text(), "abc");
    press(&mut app, KeyCode::Char('u'), KeyModifiers::ALT);
    assert_eq!(app.composer().text(), "");

    // permission answers follow the keymap too
    let (mut app, mut rx) = fresh();
    app.set_keymap(keymap(&[
        ("allow_once", &["o"]),
        ("deny_with_note", &["x"]),
    ]));
    ev(
        &mut app,
        Event::Turn(TurnEvent::PermissionAsked(PermissionRequest {
            id: "P1".into(),
            tool: "bash".into(),
            call_id: "c1".into(),
            title: "ls".into(),
            patterns: vec!["ls *".into()],
            agent: None,
        })),
    );
    read_question(&mut app);
    key(&mut app, KeyCode::Char('y'));
    assert!(ops(&mut rx).is_empty(), "y is no longer an answer");
    key(&mut app, KeyCode::Char('o'));
    assert!(matches!(
        ops(&mut rx).as_slice(),
        [Op::PermissionReply {
            reply: PermissionReply::Once,
            ..
        }]
    ));
}

#[test]
fn keys_lists_the_bindings_in_effect() {
    let (mut app, _rx) = fresh();
    app.set_keymap(keymap(&[("expand_all", &["f2"]), ("undo", &["ctrl+k"])]));
    type_str(&mut app, "/keys");
    key(&mut app, KeyCode::Enter);
    assert!(matches!(app.popup(), Some(Popup::Help(_))));
    let screen = render(&mut app, 100, 60);
    assert!(screen.contains("f2"), "{screen}");
    assert!(
        screen.contains("f2                      expand all tool output"),
        "{screen}"
    );
    assert!(
        screen.contains("f2 details"),
        "the prompt's hint follows: {screen}"
    );
    assert!(
        screen.contains("\"ctrl+k\" now does undo; kill_line_end no longer has it"),
        "{screen}"
    );
    insta::assert_snapshot!(render(&mut app, 100, 30));
}

#[test]
fn light_theme_on_screen() {
    theme::set_test_theme(Some(theme::light()));
    let mut msgs = conversation();
    let mut a = msg("M3", Role::Assistant);
    a.parts.push(text(
        "M3",
        "M3-t",
        "## Plan\n\n```rust\nfn main() {}\n```\n",
    ));
    msgs.push(a);
    let (mut app, _rx) = app_with(msgs);
    let buf = buffer(&mut app, 80, 40);
    let light = theme::light();
    let fg = |needle: &str| buf[find(&buf, needle)].fg;
    assert_eq!(fg("› Why does"), light.user, "the user prompt marker");
    assert_eq!(fg("● Test"), light.accent, "the answer bullet");
    assert_eq!(fg("Plan"), light.heading2);
    assert_eq!(fg("cargo test --lib"), light.muted, "a tool's command");
    // the status bar's context figure
    assert_eq!(fg("20k / 200k"), light.ok);
    // code is highlighted with a light syntect theme: `fn` is not base16-ocean.dark's purple
    let keyword = fg("fn main");
    assert_ne!(keyword, Color::Rgb(180, 142, 173));
    assert!(matches!(keyword, Color::Rgb(..)), "{keyword:?}");
    theme::set_test_theme(None);
    app.transcript_mut().restyle();
    let dark_buf = buffer(&mut app, 80, 40);
    assert_ne!(dark_buf[find(&dark_buf, "fn main")].fg, keyword);
    theme::set_test_theme(Some(light));
    app.transcript_mut().restyle();
    insta::assert_snapshot!(styled(&buffer(&mut app, 80, 30)));
    theme::set_test_theme(None);
}

#[test]
fn theme_picker_previews_keeps_and_puts_back() {
    theme::set_test_theme(None);
    let data = tempfile::tempdir().unwrap();
    let themes = data.path().join("themes");
    std::fs::create_dir_all(&themes).unwrap();
    std::fs::write(
        themes.join("sepia.toml"),
        "base = \"light\"\naccent = \"#704214\"\n",
    )
    .unwrap();
    let (mut app, _rx) = app_with(conversation());
    app.set_appearance(super::appearance::Appearance::start(
        None,
        Some(themes),
        data.path(),
    ));
    assert_eq!(app.appearance().theme, "dark");

    type_str(&mut app, "/theme");
    key(&mut app, KeyCode::Enter);
    insta::assert_snapshot!(render(&mut app, 80, 24));
    key(&mut app, KeyCode::Down);
    assert_eq!(theme(), theme::light(), "moving previews");
    key(&mut app, KeyCode::Down);
    assert_eq!(theme().accent, Color::Rgb(0x70, 0x42, 0x14));
    key(&mut app, KeyCode::Esc);
    assert!(app.popup().is_none());
    assert_eq!(theme(), theme::dark(), "esc puts the old theme back");

    type_str(&mut app, "/theme");
    key(&mut app, KeyCode::Enter);
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Enter);
    assert_eq!(theme(), theme::light());
    assert_eq!(app.appearance().theme, "light");
    // saved: the next start uses it
    let next = super::appearance::Appearance::start(None, None, data.path());
    assert_eq!(next.theme, "light");
    // a theme set in the config wins at start, and /theme says so
    let (mut app, _rx) = fresh();
    app.set_appearance(super::appearance::Appearance::start(
        Some(("dark".into(), "/home/u/.config/pith/config.toml".into())),
        None,
        data.path(),
    ));
    assert_eq!(app.appearance().theme, "dark");
    type_str(&mut app, "/theme light");
    key(&mut app, KeyCode::Enter);
    let screen = render(&mut app, 120, 20);
    assert!(
        screen.contains("config.toml sets theme = \"dark\", which wins at the next start"),
        "{screen}"
    );
    theme::set_test_theme(None);
}

#[test]
fn a_bad_theme_falls_back_to_dark_with_a_located_error() {
    let data = tempfile::tempdir().unwrap();
    let themes = data.path().join("themes");
    std::fs::create_dir_all(&themes).unwrap();
    std::fs::write(themes.join("broken.toml"), "accent = \"#1234\"\n").unwrap();
    let a = super::appearance::Appearance::start(
        Some(("broken".into(), "config.toml".into())),
        Some(themes.clone()),
        data.path(),
    );
    assert_eq!(a.theme, "dark");
    assert_eq!(theme(), theme::dark());
    let err = a.error.unwrap();
    assert_eq!(
        err,
        format!(
            "{}:1:10: accent: \"#1234\" is not a colour (a name, \"#rrggbb\" or 0-255); using the dark theme",
            themes.join("broken.toml").display()
        )
    );
    theme::set_test_theme(None);
}
