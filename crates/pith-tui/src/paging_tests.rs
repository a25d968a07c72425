//! A long session shown a page at a time: the transcript starts with the newest page, scrolling
//! near the top of it asks the engine for the page before, and a page that arrives goes above
//! without moving what is on screen.

use crossterm::event::KeyCode;
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

use pith_protocol::event::{Event, Op, SessionEvent};
use pith_protocol::message::{Message, Role};

use super::app::App;
use super::tests::{ev, init, key, msg, ops, render, text};

/// Turns `from..to`: a user question and an assistant answer each, ids sorting in order.
fn turns(from: usize, to: usize) -> Vec<Message> {
    let mut out = Vec::new();
    for i in from..to {
        let q = format!("M{i:05}a");
        let mut m = msg(&q, Role::User);
        m.parts
            .push(text(&q, &format!("{q}-t"), &format!("question {i}")));
        out.push(m);
        let a = format!("M{i:05}b");
        let mut m = msg(&a, Role::Assistant);
        m.parts
            .push(text(&a, &format!("{a}-t"), &format!("answer {i}")));
        out.push(m);
    }
    out
}

fn paged(
    messages: Vec<Message>,
    more: bool,
) -> (App, UnboundedReceiver<pith_protocol::event::Submission>) {
    let (tx, rx) = unbounded_channel();
    let mut i = init(messages);
    i.more_history = more;
    (App::new(i, tx), rx)
}

fn load_op(before: &str) -> Op {
    Op::LoadHistory {
        session_id: "S1".into(),
        before: before.into(),
    }
}

/// The transcript rows of a rendered 80×24 screen (above the composer), without the top row
/// where the "loading" label may sit.
fn transcript_rows(screen: &str) -> Vec<String> {
    screen
        .lines()
        .skip(1)
        .take(12)
        .map(str::to_string)
        .collect()
}

#[test]
fn scrolling_to_the_top_asks_for_the_page_before_and_keeps_the_view() {
    let (mut app, mut rx) = paged(turns(50, 100), true);
    render(&mut app, 80, 24);
    assert!(
        ops(&mut rx).is_empty(),
        "following the end: far from the top"
    );

    key(&mut app, KeyCode::Home);
    let screen = render(&mut app, 80, 24);
    assert_eq!(ops(&mut rx), vec![load_op("M00050a")]);
    assert!(screen.contains("loading older messages"), "{screen}");
    assert!(screen.contains("question 50"), "{screen}");
    render(&mut app, 80, 24);
    assert!(ops(&mut rx).is_empty(), "one request at a time");

    let before = transcript_rows(&render(&mut app, 80, 24));
    let cells = app.transcript().len();
    let renders = app.transcript().renders();
    ev(
        &mut app,
        Event::Session(SessionEvent::History {
            session_id: "S1".into(),
            messages: turns(0, 50),
            more: false,
        }),
    );
    let screen = render(&mut app, 80, 24);
    assert_eq!(transcript_rows(&screen), before, "the view did not move");
    assert!(!screen.contains("loading older messages"), "{screen}");
    assert_eq!(app.transcript().len(), cells + 100);
    assert_eq!(
        app.transcript().renders() - renders,
        100,
        "only the new cells were laid out"
    );

    key(&mut app, KeyCode::Home);
    let screen = render(&mut app, 80, 24);
    assert!(screen.contains("question 0"), "{screen}");
    assert!(ops(&mut rx).is_empty(), "nothing older remains");
    // the composer's history reaches into the older page
    let prompts: Vec<String> = (0..100)
        .map(|_| {
            key(&mut app, KeyCode::Up);
            app.composer().text()
        })
        .collect();
    assert_eq!(prompts.last().map(String::as_str), Some("question 0"));
}

#[test]
fn a_page_shorter_than_the_screen_fetches_more_at_once() {
    let (mut app, mut rx) = paged(turns(98, 100), true);
    render(&mut app, 80, 24);
    assert_eq!(ops(&mut rx), vec![load_op("M00098a")]);
    ev(
        &mut app,
        Event::Session(SessionEvent::History {
            session_id: "S1".into(),
            messages: turns(96, 98),
            more: true,
        }),
    );
    render(&mut app, 80, 24);
    assert_eq!(
        ops(&mut rx),
        vec![load_op("M00096a")],
        "still short: the next"
    );
    let screen = render(&mut app, 80, 24);
    assert!(screen.contains("question 96"), "{screen}");
}

#[test]
fn a_page_for_another_session_or_a_session_without_more_is_left_alone() {
    let (mut app, mut rx) = paged(turns(98, 100), false);
    render(&mut app, 80, 24);
    assert!(ops(&mut rx).is_empty(), "nothing older in the store");

    let (mut app, mut rx) = paged(turns(98, 100), true);
    render(&mut app, 80, 24);
    assert_eq!(ops(&mut rx).len(), 1);
    let cells = app.transcript().len();
    ev(
        &mut app,
        Event::Session(SessionEvent::History {
            session_id: "S2".into(),
            messages: turns(0, 5),
            more: false,
        }),
    );
    assert_eq!(app.transcript().len(), cells, "a stale page is dropped");
    // switching sessions starts its paging afresh
    let mut other = super::tests::session();
    other.id = "S2".into();
    ev(
        &mut app,
        Event::Session(SessionEvent::SessionLoaded {
            session: other,
            messages: turns(10, 12),
            more_history: true,
        }),
    );
    render(&mut app, 80, 24);
    assert_eq!(
        ops(&mut rx),
        vec![Op::LoadHistory {
            session_id: "S2".into(),
            before: "M00010a".into(),
        }]
    );
}
