//! Memory and instruction files as the user sees them: `#TEXT` and `/remember` ask which file
//! in a small choice box (or go straight to the one named), `/memory` lists the files and opens
//! the chosen one in the editor, a subfolder's instructions are announced when loaded, and
//! `/context` shows each instruction file under the system prompt's row.

use crossterm::event::KeyCode;
use pith_protocol::event::{
    Breakdown, ContextEvent, Event, InstructionFile, InstructionOrigin, MemoryFile, MemoryScope,
    Op, SessionEvent,
};

use super::tests::*;
use crate::effects::Effect;

#[test]
fn hash_text_asks_which_file_then_sends_the_line() {
    let (mut app, mut rx) = fresh();
    type_str(&mut app, "# this repo uses pnpm, never npm");
    key(&mut app, KeyCode::Enter);
    // nothing is sent before the user chose, and the prompt is not sent as a prompt
    assert!(ops(&mut rx).is_empty());
    let screen = render(&mut app, 100, 16);
    assert!(
        screen.contains("remember \"this repo uses pnpm, never npm\" in which file?"),
        "{screen}"
    );
    insta::assert_snapshot!("remember_choice_100x16", screen);
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Enter);
    assert_eq!(
        ops(&mut rx),
        [Op::Remember {
            text: "this repo uses pnpm, never npm".into(),
            scope: MemoryScope::User,
        }]
    );
    // `/remember` alone asks too; enter takes the first: the project's
    type_str(&mut app, "/remember run tests with make check");
    key(&mut app, KeyCode::Enter);
    key(&mut app, KeyCode::Enter);
    assert_eq!(
        ops(&mut rx),
        [Op::Remember {
            text: "run tests with make check".into(),
            scope: MemoryScope::Project,
        }]
    );
    // esc: nothing remembered
    type_str(&mut app, "#forget me");
    key(&mut app, KeyCode::Enter);
    key(&mut app, KeyCode::Esc);
    assert!(ops(&mut rx).is_empty());
}

#[test]
fn remember_with_a_scope_goes_straight_there_and_without_text_says_how() {
    let (mut app, mut rx) = fresh();
    type_str(&mut app, "/remember --user tabs, not spaces");
    key(&mut app, KeyCode::Enter);
    assert_eq!(
        ops(&mut rx),
        [Op::Remember {
            text: "tabs, not spaces".into(),
            scope: MemoryScope::User,
        }]
    );
    type_str(&mut app, "/remember");
    key(&mut app, KeyCode::Enter);
    assert!(ops(&mut rx).is_empty());
    assert!(render(&mut app, 100, 20).contains("/remember TEXT adds a line"));
}

#[test]
fn memory_lists_the_files_and_opens_the_chosen_one_in_the_editor() {
    let (mut app, mut rx) = fresh();
    type_str(&mut app, "/memory");
    key(&mut app, KeyCode::Enter);
    assert_eq!(ops(&mut rx), [Op::ListMemory]);
    ev(
        &mut app,
        Event::Session(SessionEvent::MemoryFiles {
            files: vec![
                MemoryFile {
                    scope: MemoryScope::User,
                    path: "/home/u/.config/pith/AGENTS.md".into(),
                    exists: false,
                    bytes: 0,
                    tokens: 0,
                },
                MemoryFile {
                    scope: MemoryScope::Project,
                    path: "/w/AGENTS.md".into(),
                    exists: true,
                    bytes: 1_200,
                    tokens: 312,
                },
            ],
        }),
    );
    let screen = render(&mut app, 110, 14);
    assert!(screen.contains("missing · enter creates it"), "{screen}");
    assert!(screen.contains("312 tokens in every request"), "{screen}");
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Enter);
    assert_eq!(app.effects(), [Effect::EditFile("/w/AGENTS.md".into())]);
}

#[test]
fn a_loaded_subfolder_file_is_announced_and_shown_in_context() {
    let (mut app, _rx) = app_with(conversation());
    let nested = InstructionFile {
        path: "sub/AGENTS.md".into(),
        origin: InstructionOrigin::Nested,
        tokens: 312,
    };
    ev(
        &mut app,
        Event::Context(ContextEvent::InstructionsLoaded {
            file: nested.clone(),
        }),
    );
    let screen = render(&mut app, 100, 30);
    assert!(
        screen.contains("↳ loaded sub/AGENTS.md (312 tokens)"),
        "{screen}"
    );
    type_str(&mut app, "/context");
    key(&mut app, KeyCode::Enter);
    ev(
        &mut app,
        Event::Context(ContextEvent::ContextBreakdown {
            breakdown: Breakdown {
                system: 3_100,
                tools: 8_200,
                messages: 12_400,
                free: 156_300,
                reserved: 20_000,
                window: 200_000,
                exact: true,
                ..Breakdown::default()
            },
            pins: Vec::new(),
            instructions: vec![
                InstructionFile {
                    path: "/home/u/.config/pith/AGENTS.md".into(),
                    origin: InstructionOrigin::User,
                    tokens: 40,
                },
                nested,
            ],
        }),
    );
    let screen = render(&mut app, 100, 30);
    assert!(screen.contains("↳ sub/AGENTS.md (loaded)"), "{screen}");
    assert!(screen.contains("(yours)"), "{screen}");
}

#[test]
fn the_remember_tool_s_question_shows_the_line_and_the_file() {
    let (mut app, _rx) = app_with(conversation());
    ev(
        &mut app,
        Event::Turn(pith_protocol::event::TurnEvent::PermissionAsked(
            pith_protocol::event::PermissionRequest {
                id: "q1".into(),
                tool: "remember".into(),
                call_id: "m1".into(),
                title: "Remember in /home/u/.config/pith/AGENTS.md: - this repo uses pnpm".into(),
                patterns: Vec::new(),
                agent: None,
            },
        )),
    );
    let screen = render(&mut app, 100, 30);
    assert!(
        screen.contains("Remember in /home/u/.config/pith/AGENTS.md: - this repo uses pnpm"),
        "{screen}"
    );
    insta::assert_snapshot!("remember_question_100x30", screen);
}
