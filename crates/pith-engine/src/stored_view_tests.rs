//! What the store hands the engine still converts to the request it did: a session repaired
//! after a crash asks the compaction question only for the completed compaction, and a message
//! an earlier build stored wrapped is sent with the same bytes. The store knows nothing of the
//! conversion; these checks live where both meet.

use pith_context::view::to_chat;
use pith_protocol::llm::FinishReason;
use pith_protocol::message::{CompactionPart, Message, PartKind, Role, ToolState};
use pith_store::Store;

fn text(s: &str) -> PartKind {
    PartKind::Text {
        text: s.into(),
        synthetic: false,
    }
}

fn compaction(session: &str) -> Message {
    let mut m = Message::new(session, Role::User);
    m.push(PartKind::Compaction(CompactionPart {
        auto: true,
        overflow: false,
        focus: None,
        tail_start: None,
        carried: Default::default(),
    }));
    m
}

fn summary(session: &str, parent: &str) -> Message {
    let mut m = Message::new(session, Role::Assistant);
    m.summary = true;
    m.parent_id = Some(parent.into());
    m.finish = Some(FinishReason::Stop);
    m.time_completed = Some(1);
    m.push(text("summary"));
    m
}

#[test]
fn a_session_repaired_after_a_crash_asks_only_the_completed_compaction() {
    let store = Store::open_in_memory().unwrap();
    let s = store.create_session("/w", "p/m").unwrap();
    let mut first = Message::new(&s.id, Role::User);
    first.push(text("hi"));
    let done_c = compaction(&s.id);
    let done_s = summary(&s.id, &done_c.id);
    let mut a = Message::new(&s.id, Role::Assistant);
    a.push(PartKind::StepStart);
    a.push(text("let me look"));
    a.push(PartKind::Tool {
        call_id: "c".into(),
        tool: "bash".into(),
        input: serde_json::json!({"command": "sleep 100"}),
        state: ToolState::Pending,
    });
    a.time_completed = Some(2);
    let stray = compaction(&s.id);
    let mut b = Message::new(&s.id, Role::Assistant);
    b.push(PartKind::StepStart);
    b.push(text("half an ans"));
    for m in [first, done_c, done_s, a, stray, b] {
        store.save_message(&m).unwrap();
    }

    let (view, repairs) = store.open_view(&s.id, None).unwrap();
    assert_eq!(repairs.stray_compactions, 1);
    let wire = to_chat(&view);
    let questions = serde_json::to_string(&wire)
        .unwrap()
        .matches(pith_context::COMPACTION_QUESTION)
        .count();
    assert_eq!(questions, 1, "only the completed compaction asks");
}

/// Earlier builds stored a message typed mid-turn wrapped in the reminder: loaded, it is sent
/// exactly as the stored form was.
#[test]
fn a_mid_turn_message_stored_wrapped_is_sent_as_before() {
    let store = Store::open_in_memory().unwrap();
    let s = store.create_session("/w", "openai/gpt-4.1").unwrap();
    let wrapped = "<system-reminder>\nThe user sent the following message:\nalso fix\nthe tests\n\nPlease address this message and continue with your tasks.\n</system-reminder>";
    let mut old = Message::new(&s.id, Role::User);
    store.upsert_message(&old).unwrap();
    let part = old.push(text(wrapped)).clone();
    store.upsert_part(&s.id, &part).unwrap();

    let loaded = store.load_all(&s.id).unwrap();
    assert!(loaded[0].mid_turn);
    assert_eq!(
        to_chat(&loaded),
        to_chat(&[old]),
        "the model sees the same bytes"
    );
}
