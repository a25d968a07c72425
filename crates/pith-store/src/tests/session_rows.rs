//! Sessions: the latest per directory, the listing, updates and deletes.

use super::*;

#[test]
fn sessions_latest_per_directory_list_update_delete() {
    let store = Store::open_in_memory().unwrap();
    let a1 = store.create_session("/a", "m/m").unwrap();
    let b1 = store.create_session("/b", "m/m").unwrap();
    let a2 = store.create_session("/a", "m/m").unwrap();
    assert_eq!(store.latest_session("/c").unwrap(), None);
    // sessions with nothing in them are neither listed nor resumed
    assert_eq!(store.latest_session("/a").unwrap(), None);
    assert!(store.list_sessions().unwrap().is_empty());
    add_message(&store, &a1.id, Role::User, vec![text("a1")]);
    add_message(&store, &b1.id, Role::User, vec![text("b1")]);
    // nor are those no model answered in
    assert!(store.list_sessions().unwrap().is_empty());
    add_message(&store, &a1.id, Role::Assistant, vec![text("ok")]);
    add_message(&store, &b1.id, Role::Assistant, vec![text("ok")]);

    // Make the order explicit rather than relying on the clock.
    for (s, t) in [(&a1, 100), (&b1, 200), (&a2, 50)] {
        store
            .conn()
            .execute(
                "UPDATE sessions SET time_updated = ?2 WHERE id = ?1",
                params![s.id, t],
            )
            .unwrap();
    }
    assert_eq!(store.latest_session("/a").unwrap().unwrap().id, a1.id);
    assert_eq!(store.latest_session("/b").unwrap().unwrap().id, b1.id);

    // A new message in a2 makes it the latest in /a (the trigger advances time_updated).
    add_message(&store, &a2.id, Role::User, vec![text("x")]);
    add_message(&store, &a2.id, Role::Assistant, vec![text("y")]);
    assert_eq!(store.latest_session("/a").unwrap().unwrap().id, a2.id);
    let ids: Vec<String> = store
        .list_sessions()
        .unwrap()
        .into_iter()
        .map(|s| s.id)
        .collect();
    assert_eq!(ids, vec![a2.id.clone(), b1.id, a1.id]);

    // update_session writes every field; an older time_updated does not move it back.
    let mut s = store.get_session(&a2.id).unwrap();
    let newest = s.time_updated;
    s.title = "Fix the parser".into();
    s.model = "anthropic/claude-sonnet-4-5".into();
    s.compaction_point = Some("01ABC".into());
    s.cost = 0.75;
    s.tokens = 12_345;
    s.time_updated = 1;
    store.update_session(&s).unwrap();
    let got = store.get_session(&a2.id).unwrap();
    assert_eq!(
        got,
        Session {
            time_updated: newest,
            ..s.clone()
        }
    );

    store.delete_session(&a2.id).unwrap();
    assert!(store.find_session(&a2.id).unwrap().is_none());
    assert!(store.load_all(&a2.id).unwrap().is_empty());
    let n: i64 = store
        .conn()
        .query_row(
            "SELECT COUNT(*) FROM parts WHERE session_id = ?1",
            [&a2.id],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(n, 0);
    assert!(
        store
            .get_session(&a2.id)
            .unwrap_err()
            .to_string()
            .contains(&a2.id)
    );
    assert!(store.update_session(&s).is_err());
    assert!(store.delete_session(&a2.id).is_err());
}

/// A session where no model ever answered (every request failed, the server was down) is
/// neither listed nor resumed by `pith -c`: only the user's words are in it.
#[test]
fn a_session_no_model_answered_is_neither_listed_nor_resumed() {
    let store = Store::open_in_memory().unwrap();
    let answered = store.create_session("/a", "m/m").unwrap();
    add_message(&store, &answered.id, Role::User, vec![text("hi")]);
    add_message(&store, &answered.id, Role::Assistant, vec![text("hello")]);
    let failed = store.create_session("/a", "m/m").unwrap();
    add_message(&store, &failed.id, Role::User, vec![text("hi again")]);
    // the failed step's message holds no answer: a step start and no text
    add_message(
        &store,
        &failed.id,
        Role::Assistant,
        vec![PartKind::StepStart],
    );
    store
        .conn()
        .execute(
            "UPDATE sessions SET time_updated = time_updated + 1000 WHERE id = ?1",
            [&failed.id],
        )
        .unwrap();
    assert_eq!(store.latest_session("/a").unwrap().unwrap().id, answered.id);
    let ids: Vec<String> = store
        .list_sessions()
        .unwrap()
        .into_iter()
        .map(|s| s.id)
        .collect();
    assert_eq!(ids, vec![answered.id]);
    // a tool call is an answer too
    add_message(
        &store,
        &failed.id,
        Role::Assistant,
        vec![PartKind::Tool {
            call_id: "c1".into(),
            tool: "read".into(),
            input: serde_json::json!({}),
            state: ToolState::Pending,
        }],
    );
    assert_eq!(store.list_sessions().unwrap().len(), 2);
}
