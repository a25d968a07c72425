use serde_json::json;

use super::*;
use crate::testutil::*;
use pith_protocol::message::{Carried, LeftView};

fn est() -> Estimator {
    Estimator::for_model("gpt-4o")
}

/// A user message with a fenced block pasted in its middle.
fn user_with_paste(id: &str) -> Message {
    user(
        id,
        "Here is the failing build, fix it:\n```\nerror[E0308]: mismatched types\n --> src/a.rs:3:9\n  |\n3 |   let x: u8 = \"a\";\n```\nThe port is 8123.",
    )
}

fn history() -> Vec<Message> {
    let mut a1 = tool_msg("a1", "u1", "bash", "the output of cargo build");
    add(&mut a1, text("The build fails in src/a.rs; fixing it."));
    let mut a2 = assistant("a2", "u2");
    add(&mut a2, text("Done: the port stays 8123."));
    vec![
        user_with_paste("u1"),
        a1,
        synthetic_user("s1", crate::CONTINUE_MESSAGE),
        user("u2", "Thanks. Keep the port."),
        a2,
    ]
}

#[test]
fn every_reply_output_and_paste_that_left_gets_an_item_newest_first() {
    let items = items(&history(), &est());
    let got: Vec<(&str, LeftKind)> = items.iter().map(|i| (i.id.as_str(), i.kind)).collect();
    assert_eq!(
        got,
        vec![
            ("a2", LeftKind::Reply),
            ("a1", LeftKind::Reply),
            ("call_a1", LeftKind::ToolOutput),
            (paste::recall_id("u1", 1).as_str(), LeftKind::Paste),
        ]
    );
    assert_eq!(items[0].label, "Done: the port stays 8123.");
    assert_eq!(items[2].label, "bash: t");
    assert!(
        items[3].label.starts_with("4 lines: error[E0308]"),
        "{items:?}"
    );
    assert!(items.iter().all(|i| i.tokens > 0), "{items:?}");
    // The user's own messages are not items until the carry budget cuts them.
    assert!(items.iter().all(|i| i.kind != LeftKind::UserMessage));
    let cut = cut_messages(
        &[
            CarrySource {
                id: None,
                text: "carried by an earlier compaction".into(),
                pasted: vec![],
            },
            CarrySource {
                id: Some("u2".into()),
                text: "Thanks. Keep the port.".into(),
                pasted: vec![],
            },
        ],
        &est(),
    );
    assert_eq!(cut.len(), 1, "only a message of this history has an id");
    assert_eq!(
        (cut[0].id.as_str(), cut[0].kind),
        ("u2", LeftKind::UserMessage)
    );
}

#[test]
fn the_note_groups_by_kind_and_counts_what_it_does_not_list() {
    let new = items(&history(), &est());
    let l = merge(new, 5, None, 1_000, &est()).unwrap();
    let l = with_cut_messages(
        Some(l),
        vec![LeftItem {
            id: "u2".into(),
            kind: LeftKind::UserMessage,
            label: "Thanks. Keep the port.".into(),
            tokens: 6,
        }],
        1_000,
        &est(),
    )
    .unwrap();
    assert_eq!(
        l.counts,
        LeftCounts {
            user_messages: 1,
            replies: 2,
            tool_outputs: 1,
            pastes: 1
        }
    );
    assert_eq!(l.listed, 5);
    assert_eq!(l.items[0].id, "u2", "the cut message is the newest item");
    let c = Carried {
        left_view: Some(l),
        ..Carried::default()
    };
    let note = crate::carry::render(&c);
    for want in [
        "## Left the view",
        "1 user message, 2 replies of yours, 1 tool output, 1 pasted block left;",
        "- User messages cut from the record: `u2` Thanks. Keep the port.",
        "- Your replies: `a2` Done: the port stays 81…; `a1` The build fails",
        "- Tool outputs: `call_a1` bash: t",
        "- Pasted blocks: `paste:u1:1` 4 lines: error[E0308]",
    ] {
        assert!(note.contains(want), "{want} missing from\n{note}");
    }
    assert!(!note.contains("not listed"), "{note}");
    assert_eq!(
        merge(vec![], 3, None, 1_000, &est()),
        None,
        "nothing left: no note"
    );
}

#[test]
fn the_note_stays_within_its_budget_and_lists_the_newest() {
    let mut a = assistant("a1", "u1");
    for i in 0..200 {
        add(&mut a, tool("read", &format!("call_{i}"), completed("x")));
    }
    let l = merge(items(&[a], &est()), 1, None, 128, &est()).unwrap();
    let note = render(&l);
    assert!(
        est().text(&note) <= 128,
        "{} tokens:\n{note}",
        est().text(&note)
    );
    assert!(l.listed > 0 && l.listed < 200, "{}", l.listed);
    assert_eq!(l.items.len(), 200, "every item is kept for the list");
    assert!(note.contains("`call_199`"), "the newest is listed:\n{note}");
    assert!(!note.contains("`call_0`"), "{note}");
    assert!(
        note.contains(&format!("({} older not listed)", 200 - l.listed)),
        "{note}"
    );
}

#[test]
fn a_second_compaction_merges_the_first_ones_items() {
    let first = merge(items(&history(), &est()), 5, None, 1_000, &est()).unwrap();
    let mut a3 = tool_msg("a3", "u3", "read", "newer output");
    add(&mut a3, text("Read it."));
    let later = vec![user("u3", "read it"), a3];
    let second = merge(items(&later, &est()), 2, Some(&first), 1_000, &est()).unwrap();
    let ids: Vec<&str> = second.items.iter().map(|i| i.id.as_str()).collect();
    assert_eq!(
        ids,
        ["a3", "call_a3", "a2", "a1", "call_a1", "paste:u1:1"],
        "newest first, the earlier compaction's items after"
    );
    assert_eq!(second.counts.replies, 3);
    assert_eq!(second.counts.tool_outputs, 2);
    assert_eq!(second.counts.pastes, 1);
    assert_eq!(second.messages, 7);
    // With little room the newest win it; the older are counted.
    let tight = merge(items(&later, &est()), 2, Some(&first), 70, &est()).unwrap();
    assert!(tight.listed >= 1 && tight.listed < 6, "{}", tight.listed);
    assert!(render(&tight).contains("`a3`"), "{}", render(&tight));
    assert!(render(&tight).contains("older not listed"));
}

#[test]
fn an_older_stored_note_is_read_and_merged() {
    // A note written before items existed: its tool calls stay recallable.
    let old: LeftView = serde_json::from_value(json!({
        "messages": 4,
        "tool_outputs": 9,
        "recallable": [["call_1", "bash", "ls"], ["call_2", "read", "a.rs"]]
    }))
    .unwrap();
    let l = merge(vec![], 1, Some(&old), 1_000, &est()).unwrap();
    assert_eq!(l.counts.tool_outputs, 9);
    let ids: Vec<&str> = l.items.iter().map(|i| i.id.as_str()).collect();
    assert_eq!(ids, ["call_2", "call_1"]);
    assert!(
        render(&l).contains("(7 older not listed)"),
        "{}",
        render(&l)
    );
}

#[test]
fn a_small_note_lists_the_newest_of_each_kind_first() {
    let mut a = assistant("a9", "u1");
    for i in 0..40 {
        add(&mut a, tool("read", &format!("call_{i}"), completed("x")));
    }
    add(&mut a, text("All forty files read."));
    let mut history = history();
    history.push(a);
    let l = merge(items(&history, &est()), 6, None, 128, &est()).unwrap();
    let note = render(&l);
    assert!(est().text(&note) <= 128, "{note}");
    // Every kind that left has an id in the note, though forty newer outputs left after them.
    for id in ["`a9`", "`call_39`", "`paste:u1:1`"] {
        assert!(note.contains(id), "{id} missing from\n{note}");
    }
    let shown: Vec<&str> = listed(&l).iter().map(|i| i.id.as_str()).collect();
    assert_eq!(shown.len(), l.listed);
    assert_eq!(shown[0], "a9", "in the order of the items: {shown:?}");
    assert_eq!(shown.last(), Some(&"paste:u1:1"), "{shown:?}");
}
