//! `/pin` as the user sees it: `/pin` and `/unpin` send their ops, the pins listed in the
//! transcript, `/context`'s pinned row with each pin and its cost, and the status bar's notice
//! that a compaction is coming (and how to steer it) until it happened.

use crossterm::event::KeyCode;
use pith_protocol::event::{
    Breakdown, CompactionNotice, ContextEvent, ContextUsage, Event, Op, Pin, SessionEvent,
};

use super::tests::*;

fn pins() -> Vec<Pin> {
    vec![
        Pin {
            text: "PIN-7731: the staging API listens on port 8443, never 8080".into(),
            tokens: 19,
        },
        Pin {
            text: "Never edit files under vendor/.".into(),
            tokens: 9,
        },
    ]
}

#[test]
fn pin_and_unpin_send_their_ops_and_a_bad_unpin_says_how() {
    let (mut app, mut rx) = fresh();
    type_str(&mut app, "/pin the port is 8443");
    key(&mut app, KeyCode::Enter);
    type_str(&mut app, "/pin");
    key(&mut app, KeyCode::Enter);
    type_str(&mut app, "/unpin 2");
    key(&mut app, KeyCode::Enter);
    type_str(&mut app, "/unpin all");
    key(&mut app, KeyCode::Enter);
    assert_eq!(
        ops(&mut rx),
        [
            Op::Pin {
                text: Some("the port is 8443".into())
            },
            Op::Pin { text: None },
            Op::Unpin { number: Some(2) },
            Op::Unpin { number: None },
        ]
    );
    type_str(&mut app, "/unpin");
    key(&mut app, KeyCode::Enter);
    assert!(ops(&mut rx).is_empty());
    assert!(render(&mut app, 100, 20).contains("/unpin all every pin"));
}

#[test]
fn the_pins_are_listed_numbered_word_for_word_with_their_cost() {
    let (mut app, _rx) = fresh();
    ev(
        &mut app,
        Event::Session(SessionEvent::PinsChanged {
            pins: pins(),
            budget: 900,
        }),
    );
    let screen = render(&mut app, 100, 20);
    assert!(
        screen.contains("pinned (28 tokens in every request"),
        "{screen}"
    );
    assert!(
        screen
            .contains("1. PIN-7731: the staging API listens on port 8443, never 8080 (19 tokens)"),
        "{screen}"
    );
    assert!(
        screen.contains("2. Never edit files under vendor/. (9 tokens)"),
        "{screen}"
    );
}

#[test]
fn context_shows_the_pinned_row_and_each_pin() {
    let (mut app, _rx) = app_with(conversation());
    type_str(&mut app, "/context");
    key(&mut app, KeyCode::Enter);
    ev(
        &mut app,
        Event::Context(ContextEvent::ContextBreakdown {
            breakdown: Breakdown {
                system: 3_100,
                pinned: 40,
                tools: 8_200,
                messages: 12_400,
                free: 156_260,
                reserved: 20_000,
                window: 200_000,
                exact: true,
                ..Breakdown::default()
            },
            pins: pins(),
            instructions: Vec::new(),
        }),
    );
    let screen = render(&mut app, 100, 30);
    // the rows add up: 3,100 + 40 + 8,200 + 12,400
    assert!(screen.contains("23.7k / 200k tokens in use"), "{screen}");
    assert!(screen.contains("pinned by you (/pin)"), "{screen}");
    assert!(
        screen.contains("1. PIN-7731: the staging API li…"),
        "{screen}"
    );
    insta::assert_snapshot!("context_with_pins_100x30", screen);
}

#[test]
fn the_status_bar_says_a_compaction_is_coming_until_it_happened() {
    let (mut app, _rx) = fresh();
    ev(
        &mut app,
        Event::Context(ContextEvent::ContextUsage(ContextUsage {
            used: 12_000,
            usable: 18_000,
            window: 20_000,
            percent: 60.0,
            ..ContextUsage::default()
        })),
    );
    ev(
        &mut app,
        Event::Context(ContextEvent::CompactionAhead {
            notice: Some(CompactionNotice::Writing),
        }),
    );
    let screen = render(&mut app, 140, 12);
    assert!(
        screen.contains("summary being written · /compact FOCUS or /pin to steer"),
        "{screen}"
    );
    insta::assert_snapshot!("status_bar_summary_being_written_140x12", screen);
    ev(
        &mut app,
        Event::Context(ContextEvent::CompactionAhead {
            notice: Some(CompactionNotice::Soon),
        }),
    );
    let screen = render(&mut app, 140, 12);
    assert!(
        screen.contains("compaction soon · /compact FOCUS or /pin to steer"),
        "{screen}"
    );
    ev(
        &mut app,
        Event::Context(ContextEvent::CompactionAhead {
            notice: Some(CompactionNotice::Ready),
        }),
    );
    let screen = render(&mut app, 140, 12);
    assert!(
        screen.contains("summary written ahead · /compact FOCUS to write another"),
        "{screen}"
    );
    ev(
        &mut app,
        Event::Context(ContextEvent::CompactionFinished {
            summary_message_id: "S".into(),
            before: 18_000,
            after: 6_000,
            model_calls: 1,
            cost: Default::default(),
            kept: Default::default(),
            left: Default::default(),
        }),
    );
    let screen = render(&mut app, 140, 12);
    assert!(!screen.contains("to steer"), "{screen}");
    // a narrow bar cuts the notice first
    ev(
        &mut app,
        Event::Context(ContextEvent::CompactionAhead {
            notice: Some(CompactionNotice::Soon),
        }),
    );
    let screen = render(&mut app, 60, 12);
    assert!(screen.contains("idle"), "{screen}");
}
