//! `Op::Recall`: what a front end asks to see in full of what left the view (the TUI's
//! `ctrl+l` list) is answered at once from the store, by recall id, with a clear "not found".

use crate::support;

use pith_protocol::event::{Event, EventMsg, Op, OutputEvent, SessionEvent, Submission};
use pith_protocol::message::Role;
use support::engine::{Harness, harness};
use support::openai;

/// Asks for `id` and waits for the answer naming the submission.
async fn recall(h: &mut Harness, id: &str) -> (bool, String, String) {
    let sub = format!("recall-{id}");
    h.handle
        .ops
        .send(Submission {
            id: sub.clone(),
            op: Op::Recall {
                session_id: h.session_id.clone(),
                id: id.into(),
            },
        })
        .unwrap();
    let msg: EventMsg = h
        .until_msg("the recalled item", |m| {
            m.submission() == Some(&sub)
                && matches!(m.event, Event::Session(SessionEvent::Recalled { .. }))
        })
        .await;
    match msg.event {
        Event::Session(SessionEvent::Recalled {
            id: got,
            found,
            kind,
            text,
        }) => {
            assert_eq!(got, id);
            (found, kind, text)
        }
        _ => unreachable!(),
    }
}

#[tokio::test]
async fn recall_answers_a_tool_output_a_paste_and_says_when_nothing_is_there() {
    let mut h = harness(vec![], false).await;
    let body: String = (1..=40)
        .map(|i| format!("line {i} of the notes\n"))
        .collect();
    std::fs::write(h.workspace.path().join("notes.txt"), &body).unwrap();
    h.server.push(openai::tool_calls(
        &[("call_r1", "read", r#"{"file_path":"notes.txt"}"#)],
        Some((500, 20)),
    ));
    h.server.push(openai::text("Read it.", Some((900, 5))));
    // what the user pasted (the TUI sends its spans) is a block `recall` returns whole
    let words = "Why does this fail?\n";
    let prompt = format!("{words}error[E0308]: mismatched types\n  --> src/b.rs:12:5\n");
    h.send(Op::UserTurn {
        id: "P1".into(),
        text: prompt.clone(),
        pasted: vec![(words.len(), prompt.len())],
    });
    let user = match h
        .until("the prompt stored", |e| {
            matches!(e, Event::Output(OutputEvent::Message { message }) if message.role == Role::User)
        })
        .await
    {
        Event::Output(OutputEvent::Message { message }) => message,
        _ => unreachable!(),
    };
    h.turn_finished().await;

    // a tool call's output, by its call id: whole, as stored
    let (found, kind, text) = recall(&mut h, "call_r1").await;
    assert!(found);
    assert_eq!(kind, "read");
    assert!(text.contains("line 1 of the notes"), "{text}");
    assert!(text.contains("line 40 of the notes"), "{text}");

    // a block the user pasted, by its paste id
    let (found, kind, text) = recall(&mut h, &pith_context::paste::recall_id(&user.id, 1)).await;
    assert!(found, "paste of {}", user.id);
    assert_eq!(kind, "pasted");
    assert!(text.contains("error[E0308]: mismatched types"), "{text}");

    // an id the session does not hold: a clear no, nothing else
    let (found, kind, text) = recall(&mut h, "call_nowhere").await;
    assert!(!found);
    assert!(kind.is_empty() && text.is_empty());
}

/// `/context`'s "left the view" figures come from the compaction in the view; `/new` has none.
#[tokio::test]
async fn the_breakdown_counts_what_the_compaction_took_out_of_the_view() {
    let mut h = support::engine::harness_with(vec![], false, |c| {
        let m = c.models.values_mut().next().unwrap();
        m.context = 8_000;
        m.output = 1_000;
    })
    .await;
    let body: String = (1..=80)
        .map(|i| format!("note {i}: the old design\n"))
        .collect();
    std::fs::write(h.workspace.path().join("notes.txt"), &body).unwrap();
    h.server.push(openai::tool_calls(
        &[("call_n1", "read", r#"{"file_path":"notes.txt"}"#)],
        Some((1_500, 20)),
    ));
    h.server.push(openai::text("read it", Some((2_500, 20))));
    h.send(Op::user_turn("Read notes.txt."));
    h.turn_finished().await;
    for n in 0..3 {
        let answer = format!("Answer {n}: {}", "details of the plan. ".repeat(60));
        h.server.push(openai::text(&answer, Some((2_500, 300))));
        h.send(Op::user_turn(format!("Next step {n}, please.")));
        h.turn_finished().await;
    }
    assert_eq!(breakdown(&mut h).await.left, Default::default());
    h.server
        .push(openai::text("the summary", Some((2_000, 60))));
    h.server
        .push(openai::text("the summary", Some((2_000, 60))));
    h.send(Op::Compact { focus: None });
    assert_eq!(
        h.turn_finished().await,
        pith_protocol::event::TurnEnd::Compacted
    );
    let left = breakdown(&mut h).await.left;
    assert!(left.tool_outputs >= 1, "{left:?}");
    h.send(Op::NewSession);
    assert_eq!(breakdown(&mut h).await.left, Default::default());
}

async fn breakdown(h: &mut Harness) -> pith_protocol::event::Breakdown {
    use pith_protocol::event::ContextEvent;
    h.send(Op::ContextBreakdown);
    match h
        .until("breakdown", |e| {
            matches!(e, Event::Context(ContextEvent::ContextBreakdown { .. }))
        })
        .await
    {
        Event::Context(ContextEvent::ContextBreakdown { breakdown, .. }) => breakdown,
        _ => unreachable!(),
    }
}
