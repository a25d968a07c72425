//! A compaction on screen: one summary fold (the summary and what pith carried after it), the
//! user's carried messages readable when it is opened.

use pith_protocol::event::{Event, OutputEvent};
use pith_protocol::message::PartKind;

use super::tests::*;

/// `compacted_history` with the carried record pith appends to the summary message.
fn with_carried() -> Vec<pith_protocol::message::Message> {
    let mut msgs = compacted_history();
    let carried = "[pith: what was kept word for word]\n\n## The user's messages, word for word (oldest first)\n<user_message>\nWhy does `cargo test` fail?\n</user_message>\n<user_message current=\"true\">\nFix it and rerun the tests.\n</user_message>\nThe last message is the request being worked on.\n\n## Files\n- Read: src/b.rs";
    if let Some(s) = msgs.iter_mut().find(|m| m.summary) {
        s.parts.push(part(
            &s.id.clone(),
            "M4-carried",
            PartKind::Text {
                text: carried.into(),
                synthetic: true,
            },
        ));
    }
    msgs
}

#[test]
fn a_compaction_draws_one_summary_fold() {
    let (mut app, _rx) = app_with(Vec::new());
    for m in with_carried() {
        ev(&mut app, Event::Output(OutputEvent::Message { message: m }));
    }
    let folded = render(&mut app, 80, 24);
    assert_eq!(folded.matches("▸ summary").count(), 1, "{folded}");
    assert!(!folded.contains("user_message"), "{folded}");
    insta::assert_snapshot!("compaction_one_fold_80x24", folded);

    // clicking the divider opens the summary and the carried record together
    let divider = app
        .transcript()
        .cells()
        .iter()
        .position(|c| c.key == "M3-c")
        .expect("divider");
    app.transcript_mut().toggle_cell(divider);
    let open = render(&mut app, 80, 40);
    assert!(open.contains("▾ summary"), "{open}");
    assert!(!open.contains("<user_message"), "tags shown raw: {open}");
    assert!(open.contains("Fix it and rerun the tests."), "{open}");
    assert!(open.contains("the request being worked on:"), "{open}");
    insta::assert_snapshot!("compaction_one_fold_open_80x40", open);

    // and closes them together
    app.transcript_mut().toggle_cell(divider);
    let again = render(&mut app, 80, 24);
    assert_eq!(again.matches("▸ summary").count(), 1, "{again}");
    assert!(!again.contains("Fix it and rerun"), "{again}");
}

#[test]
fn carried_user_messages_read_as_quotes() {
    let text = "## The user's messages\n<user_message>\nfirst\nsecond line\n</user_message>\n<user_message current=\"true\">\nnow\n</user_message>";
    let r = super::cells::readable_carried(text);
    assert!(!r.contains("user_message"), "{r}");
    assert!(r.contains("> first\n> second line"), "{r}");
    assert!(r.contains("*the request being worked on:*\n> now"), "{r}");
}
