//! Settings that do not apply say so: with `compaction.auto = false` (the engine reports no
//! auto-compact point) neither `/context` nor the gauge shows one; an effort the provider does
//! not take is said not sent and not claimed in the status bar.

use crossterm::event::KeyCode;

use crate::view::status;
use pith_protocol::event::{Breakdown, ContextEvent, ContextUsage, Event, SettingsEvent};

use super::tests::*;

fn breakdown() -> Breakdown {
    Breakdown {
        system: 3_100,
        tools: 8_200,
        summary: 0,
        messages: 150_000,
        tool_outputs: 20_000,
        pruned: 0,
        free: 0,
        reserved: 18_700,
        window: 200_000,
        last_compaction: None,
        subagents: Default::default(),
        pinned: 0,
        left: Default::default(),
        exact: true,
    }
}

#[test]
fn without_auto_compaction_neither_context_nor_the_gauge_shows_a_compact_point() {
    let (mut app, _rx) = fresh();
    let off = ContextUsage {
        usable: 0,
        ..usage(181_300)
    };
    ev(&mut app, Event::Context(ContextEvent::ContextUsage(off)));
    let line = status::status_line(&app.status_view(), 120).to_string();
    assert!(!line.contains('┃'), "{line}");
    type_str(&mut app, "/context");
    key(&mut app, KeyCode::Enter);
    ev(
        &mut app,
        Event::Context(ContextEvent::ContextBreakdown {
            breakdown: breakdown(),
            pins: Vec::new(),
            instructions: Vec::new(),
        }),
    );
    let screen = render(&mut app, 100, 30);
    assert!(!screen.contains("auto-compacts at"), "{screen}");
    assert!(screen.contains("auto-compaction off"), "{screen}");
    assert!(!screen.contains("auto-compact)"), "{screen}");
    insta::assert_snapshot!("context_without_auto_compaction", screen);
}

#[test]
fn an_effort_not_sent_is_said_and_not_claimed() {
    let (mut app, _rx) = fresh();
    type_str(&mut app, "/effort high");
    key(&mut app, KeyCode::Enter);
    // the engine's answer for a provider without `reasoning_effort = true`
    ev(
        &mut app,
        Event::info(
            "not sent: mock does not take a reasoning effort (set reasoning_effort = true in [provider.mock] if it does)",
        ),
    );
    ev(
        &mut app,
        Event::Settings(SettingsEvent::EffortChanged { effort: None }),
    );
    let line = status::status_line(&app.status_view(), 120).to_string();
    assert!(!line.contains("high"), "{line}");
    let screen = render(&mut app, 100, 24);
    assert!(
        screen.contains("not sent: mock does not take a reasoning effort"),
        "{screen}"
    );
}
