//! Messages and their parts as stored: every kind round-trips, parts change in place and keep
//! their order, an unreadable part is skipped.

use super::*;

#[test]
fn round_trips_every_part_kind_and_header() {
    let store = Store::open_in_memory().unwrap();
    let s = store.create_session("/w", "openai/gpt-4.1").unwrap();
    let user = add_message(&store, &s.id, Role::User, vec![text("hi")]);
    let mut asst = Message::new(&s.id, Role::Assistant);
    asst.parent_id = Some(user.id.clone());
    asst.model = Some("openai/gpt-4.1".into());
    asst.agent = Some("compaction".into());
    asst.summary = true;
    asst.finish = Some("stop".into());
    asst.error = Some("boom".into());
    asst.time_completed = Some(42);
    asst.usage = Usage {
        input: 1,
        output: 2,
        reasoning: 3,
        cache_read: 4,
        cache_write: 5,
    };
    asst.cost = 1.5;
    for kind in every_part_kind() {
        asst.push(kind);
    }
    store.save_message(&asst).unwrap();

    let loaded = store.load_all(&s.id).unwrap();
    assert_eq!(loaded, vec![user, asst]);
}

#[test]
fn parts_update_in_place_and_keep_order() {
    let store = Store::open_in_memory().unwrap();
    let s = store.create_session("/w", "m/m").unwrap();
    let mut m = Message::new(&s.id, Role::Assistant);
    store.upsert_message(&m).unwrap();
    let ids: Vec<String> = (0..50)
        .map(|i| m.push(text(&format!("p{i}"))).id.clone())
        .collect();
    // Write them in reverse: order must come from the ids, not the write order.
    for part in m.parts.iter().rev() {
        store.upsert_part(&s.id, part).unwrap();
    }
    // Streaming: the first part grows in place.
    m.parts[0].kind = text("p0 and more");
    store.upsert_part(&s.id, &m.parts[0]).unwrap();

    let loaded = store.load_all(&s.id).unwrap();
    assert_eq!(loaded.len(), 1);
    let got: Vec<&str> = loaded[0].parts.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(got, ids.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(loaded[0].parts[0].kind, text("p0 and more"));
    assert_eq!(loaded[0], m);
}

#[test]
fn messages_keep_creation_order_within_a_millisecond() {
    let store = Store::open_in_memory().unwrap();
    let s = store.create_session("/w", "m/m").unwrap();
    let msgs: Vec<Message> = (0..200)
        .map(|i| {
            let role = if i % 2 == 0 {
                Role::User
            } else {
                Role::Assistant
            };
            add_message(&store, &s.id, role, vec![text(&i.to_string())])
        })
        .collect();
    assert_eq!(store.load_all(&s.id).unwrap(), msgs);
    assert_eq!(store.message_count(&s.id).unwrap(), 200);
}

#[test]
fn unreadable_parts_are_skipped_not_fatal() {
    let store = Store::open_in_memory().unwrap();
    let s = store.create_session("/w", "m/m").unwrap();
    let m = add_message(&store, &s.id, Role::User, vec![text("a"), text("b")]);
    store
        .conn()
        .execute(
            "UPDATE parts SET data = '{\"type\":\"bogus\"}' WHERE id = ?1",
            [&m.parts[0].id],
        )
        .unwrap();
    let loaded = store.load_all(&s.id).unwrap();
    assert_eq!(loaded[0].parts, vec![m.parts[1].clone()]);
    store.delete_part(&m.parts[1].id).unwrap();
    assert!(store.load_all(&s.id).unwrap()[0].parts.is_empty());
}
