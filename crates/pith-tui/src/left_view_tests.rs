//! What left the view, on screen: the divider's one line (wide and narrow), the list `ctrl+l`
//! opens, one item in full, `/context`'s section, and the continue line as pith's note.

use crossterm::event::KeyCode;
use pith_protocol::carried::{Kept, LeftCounts, LeftItem, LeftKind};
use pith_protocol::event::{Breakdown, ContextEvent, Event, Op, OutputEvent, SessionEvent};
use pith_protocol::message::{LeftView, Message, PartKind, Role};

use super::tests::*;

fn item(id: &str, kind: LeftKind, label: &str, tokens: u64) -> LeftItem {
    LeftItem {
        id: id.into(),
        kind,
        label: label.into(),
        tokens,
    }
}

/// `compacted_history` whose compaction records what left the view (newest first).
fn with_left() -> Vec<Message> {
    let mut msgs = compacted_history();
    let c = msgs
        .iter_mut()
        .flat_map(|m| m.parts.iter_mut())
        .find_map(|p| match &mut p.kind {
            PartKind::Compaction(c) => Some(c),
            _ => None,
        })
        .expect("a compaction part");
    c.carried.user_messages = vec!["Why does `cargo test` fail?".into()];
    c.carried.left_view = Some(LeftView {
        counts: LeftCounts {
            user_messages: 1,
            replies: 1,
            tool_outputs: 2,
            pastes: 1,
        },
        items: vec![
            item(
                "call_9",
                LeftKind::ToolOutput,
                "bash cargo test --lib",
                2_400,
            ),
            item(
                "msg_A7",
                LeftKind::Reply,
                "The failing test is `b`: it expects 2",
                120,
            ),
            item("paste:M1:0", LeftKind::Paste, "a log of 40 lines", 900),
            item("call_3", LeftKind::ToolOutput, "read src/b.rs", 300),
            item(
                "msg_U1",
                LeftKind::UserMessage,
                "Why does `cargo test` fail?",
                12,
            ),
        ],
        ..LeftView::default()
    });
    msgs
}

fn finished(kept: Kept, left: LeftCounts) -> Event {
    Event::Context(ContextEvent::CompactionFinished {
        summary_message_id: "M4".into(),
        before: 41_200,
        after: 9_800,
        model_calls: 1,
        cost: Default::default(),
        kept,
        left,
    })
}

fn live_compaction() -> (
    crate::App,
    tokio::sync::mpsc::UnboundedReceiver<pith_protocol::event::Submission>,
) {
    let (mut app, rx) = fresh();
    for m in compacted_history() {
        ev(&mut app, Event::Output(OutputEvent::Message { message: m }));
    }
    let kept = Kept {
        user_messages: 14,
        todos: 3,
        anchors: 23,
        ..Kept::default()
    };
    let left = LeftCounts {
        user_messages: 0,
        replies: 12,
        tool_outputs: 31,
        pastes: 6,
    };
    ev(&mut app, finished(kept, left));
    (app, rx)
}

fn divider_line(screen: &str) -> String {
    screen
        .lines()
        .find(|l| l.contains('⟳'))
        .expect("a divider")
        .trim_matches('"')
        .trim_matches('─')
        .trim()
        .to_string()
}

#[test]
fn the_divider_says_what_was_kept_and_what_left() {
    let (mut app, _rx) = live_compaction();
    let wide = render(&mut app, 150, 24);
    assert_eq!(
        divider_line(&wide),
        "⟳ compacted 41.2k → 9.8k · kept: your 14 messages, todo, 23 anchors · left: 31 tool outputs, 6 pastes, 12 replies · /compact · ctrl+l list"
    );
    insta::assert_snapshot!("left_divider_wide_150x24", wide);
    // narrow: whole pieces dropped, the key to the list kept, nothing cut mid-item
    let narrow = render(&mut app, 70, 24);
    assert_eq!(
        divider_line(&narrow),
        "⟳ compacted 41.2k → 9.8k · left: 31 tool outputs · ctrl+l list"
    );
    insta::assert_snapshot!("left_divider_narrow_70x24", narrow);
}

#[test]
fn a_resumed_session_s_divider_reads_the_stored_record() {
    let (mut app, _rx) = app_with(with_left());
    let screen = render(&mut app, 120, 24);
    assert_eq!(
        divider_line(&screen),
        "⟳ compacted · kept: your 1 message · left: 1 of your messages, 2 tool outputs, 1 paste, 1 reply · ctrl+l list"
    );
}

#[test]
fn ctrl_l_lists_what_left_and_enter_shows_one_in_full() {
    let (mut app, mut rx) = app_with(with_left());
    ctrl(&mut app, 'l');
    let list = render(&mut app, 100, 24);
    // grouped by kind, newest first in each group
    let order: Vec<usize> = [
        "your message · Why does",
        "reply · The failing test",
        "tool output · bash cargo test",
        "tool output · read src/b.rs",
        "paste · a log of 40 lines",
    ]
    .iter()
    .map(|s| {
        list.find(s)
            .unwrap_or_else(|| panic!("{s} missing: {list}"))
    })
    .collect();
    assert!(order.is_sorted(), "{list}");
    assert!(list.contains("call_9 · 2.4k tokens"), "{list}");
    insta::assert_snapshot!("left_list_100x24", list);

    // down to the newest tool output, enter: it is asked for by its recall id
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Enter);
    assert_eq!(
        ops(&mut rx),
        vec![Op::Recall {
            session_id: "S1".into(),
            id: "call_9".into()
        }]
    );
    assert!(render(&mut app, 100, 24).contains("bringing it back…"));
    let output: String = (1..=60)
        .map(|i| format!("test t{i} ... ok\n"))
        .collect::<String>()
        + "\u{1b}[31mtest b ... FAILED\u{1b}[0m\n";
    ev(
        &mut app,
        Event::Session(SessionEvent::Recalled {
            id: "call_9".into(),
            found: true,
            kind: "bash".into(),
            text: output,
        }),
    );
    let full = render(&mut app, 100, 24);
    assert!(
        full.contains("call_9 · bash · tool output · bash cargo test"),
        "{full}"
    );
    assert!(full.contains("test t1 ... ok"), "{full}");
    assert!(full.contains("of 61"), "{full}");
    insta::assert_snapshot!("left_item_in_full_100x24", full);
    // it scrolls to its end, sanitised
    key(&mut app, KeyCode::End);
    let end = render(&mut app, 100, 24);
    assert!(end.contains("test b ... FAILED"), "{end}");
    assert!(!end.contains("[31m"), "escape codes shown raw: {end}");
    assert!(!end.contains("test t1 ... ok "), "{end}");
    // esc: back to the list; esc again: closed
    key(&mut app, KeyCode::Esc);
    assert!(render(&mut app, 100, 24).contains("what left the view"));
    key(&mut app, KeyCode::Esc);
    assert!(!render(&mut app, 100, 24).contains("what left the view"));
}

#[test]
fn an_id_the_session_does_not_hold_says_so() {
    let (mut app, mut rx) = app_with(with_left());
    ctrl(&mut app, 'l');
    key(&mut app, KeyCode::Enter);
    assert_eq!(ops(&mut rx).len(), 1);
    // an answer for another item does not fill this one
    ev(
        &mut app,
        Event::Session(SessionEvent::Recalled {
            id: "other".into(),
            found: true,
            kind: "bash".into(),
            text: "not this".into(),
        }),
    );
    assert!(!render(&mut app, 100, 24).contains("not this"));
    ev(
        &mut app,
        Event::Session(SessionEvent::Recalled {
            id: "msg_U1".into(),
            found: false,
            kind: String::new(),
            text: String::new(),
        }),
    );
    let screen = render(&mut app, 100, 24);
    assert!(
        screen.contains("nothing under msg_U1 to recall in this session"),
        "{screen}"
    );
}

#[test]
fn with_no_compaction_ctrl_l_says_there_is_nothing() {
    let (mut app, mut rx) = app_with(conversation());
    ctrl(&mut app, 'l');
    assert!(ops(&mut rx).is_empty());
    let screen = render(&mut app, 100, 30);
    assert!(
        screen.contains("nothing has left the view: no compaction in this session yet"),
        "{screen}"
    );
}

#[test]
fn context_has_a_left_the_view_section() {
    let (mut app, _rx) = app_with(conversation());
    type_str(&mut app, "/context");
    key(&mut app, KeyCode::Enter);
    let b = Breakdown {
        system: 3_100,
        tools: 8_200,
        summary: 2_000,
        messages: 12_400,
        tool_outputs: 16_300,
        free: 138_000,
        reserved: 20_000,
        window: 200_000,
        left: LeftCounts {
            user_messages: 2,
            replies: 12,
            tool_outputs: 31,
            pastes: 6,
        },
        exact: true,
        ..Breakdown::default()
    };
    ev(
        &mut app,
        Event::Context(ContextEvent::ContextBreakdown {
            breakdown: b,
            pins: Vec::new(),
            instructions: Vec::new(),
        }),
    );
    let screen = render(&mut app, 100, 32);
    assert!(
        screen.contains("left the view · ctrl+l lists them, recall brings any back"),
        "{screen}"
    );
    assert!(
        screen.contains("2 of your messages · 31 tool outputs · 6 pastes · 12 replies"),
        "{screen}"
    );
    insta::assert_snapshot!("context_left_section_100x32", screen);
}

#[test]
fn the_continue_line_is_pith_s_not_the_user_s() {
    let (mut app, _rx) = fresh();
    for m in compacted_history() {
        ev(&mut app, Event::Output(OutputEvent::Message { message: m }));
    }
    let mut cont = msg("M5", Role::User);
    cont.parts.push(part(
        "M5",
        "M5-t",
        PartKind::Text {
            text: pith_protocol::compaction_note::CONTINUE_MESSAGE.into(),
            synthetic: true,
        },
    ));
    ev(
        &mut app,
        Event::Output(OutputEvent::Message {
            message: cont.clone(),
        }),
    );
    let screen = render(&mut app, 80, 30);
    assert!(
        screen.contains("↻ pith: continuing after the compaction"),
        "{screen}"
    );
    assert!(
        !screen.contains("Continue if you have next steps"),
        "{screen}"
    );
    assert!(
        !screen.contains("› Continue"),
        "shown as the user's: {screen}"
    );
    insta::assert_snapshot!("continue_line_80x30", screen);
    // the same from stored history (a resumed session)
    let mut stored = compacted_history();
    stored.push(cont);
    let (mut resumed, _rx) = app_with(stored);
    let screen = render(&mut resumed, 80, 30);
    assert!(
        screen.contains("↻ pith: continuing after the compaction"),
        "{screen}"
    );
}

#[test]
fn the_divider_unfolded_lists_what_left() {
    let (mut app, _rx) = app_with(with_left());
    let folded = render(&mut app, 100, 40);
    assert!(
        !folded.contains("left the view (ctrl+l opens one)"),
        "{folded}"
    );
    let divider = app
        .transcript()
        .cells()
        .iter()
        .position(|c| c.key == "M3-c")
        .expect("divider");
    app.transcript_mut().toggle_cell(divider);
    let open = render(&mut app, 100, 40);
    assert!(open.contains("left the view (ctrl+l opens one):"), "{open}");
    let first = open.find("· your message · Why does").expect(&open);
    let last = open
        .find("· paste · a log of 40 lines — paste:M1:0")
        .expect(&open);
    assert!(first < last, "{open}");
    insta::assert_snapshot!("left_divider_unfolded_100x40", open);
}
