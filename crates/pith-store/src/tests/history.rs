//! What a reader loads: the view from the compaction point (a bogus point, a compaction without
//! its summary, a long session), and pages of history walked backwards.

use super::*;

#[test]
fn load_view_starts_at_the_point_and_ignores_other_sessions() {
    let store = Store::open_in_memory().unwrap();
    let a = store.create_session("/w", "m/m").unwrap();
    let b = store.create_session("/w", "m/m").unwrap();
    let mut a_msgs = Vec::new();
    for i in 0..10 {
        a_msgs.push(add_message(
            &store,
            &a.id,
            Role::User,
            vec![text(&format!("a{i}"))],
        ));
        add_message(&store, &b.id, Role::User, vec![text(&format!("b{i}"))]);
    }
    let (c, summary) = add_compaction(&store, &a.id, Some(&a_msgs[6].id));
    a_msgs.push(c);
    a_msgs.push(summary);
    let view = store.load_view(&a.id, Some(&a_msgs[6].id)).unwrap();
    assert_eq!(view, a_msgs[6..].to_vec());
    assert_eq!(store.load_view(&a.id, None).unwrap(), a_msgs);
    assert!(store.load_view("nope", None).unwrap().is_empty());
}

/// A compaction point that names no message, or one with no completed compaction after it
/// (a damaged or hand-edited database), never yields an empty or cut history: the whole session
/// is loaded.
#[test]
fn a_bogus_compaction_point_loads_the_whole_session() {
    let store = Store::open_in_memory().unwrap();
    let a = store.create_session("/w", "m/m").unwrap();
    let msgs: Vec<Message> = (0..5)
        .map(|i| add_message(&store, &a.id, Role::User, vec![text(&format!("m{i}"))]))
        .collect();
    for point in ["ZZZZZZZZZZ", "", "0", msgs[3].id.as_str()] {
        assert_eq!(
            store.load_view(&a.id, Some(point)).unwrap(),
            msgs,
            "{point}"
        );
    }
}

/// A compaction whose summary was never written (pith killed mid-compaction) is not part of
/// the view a reader loads; the writer deletes it.
#[test]
fn a_compaction_without_its_summary_is_left_out_then_removed() {
    let store = Store::open_in_memory().unwrap();
    let a = store.create_session("/w", "m/m").unwrap();
    let first = add_message(&store, &a.id, Role::User, vec![text("hi")]);
    let stray = add_message(
        &store,
        &a.id,
        Role::User,
        vec![PartKind::Compaction(CompactionPart {
            auto: false,
            overflow: false,
            focus: None,
            tail_start: None,
            carried: Default::default(),
        })],
    );
    assert_eq!(store.load_view(&a.id, None).unwrap(), vec![first.clone()]);
    assert_eq!(store.load_all(&a.id).unwrap().len(), 2);
    let (view, repairs) = store.open_view(&a.id, None).unwrap();
    assert_eq!(view, vec![first]);
    assert_eq!(repairs.stray_compactions, 1);
    assert!(
        !store
            .load_all(&a.id)
            .unwrap()
            .iter()
            .any(|m| m.id == stray.id)
    );
}

#[test]
fn load_view_of_a_long_session_reads_only_the_tail() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let s = store.create_session("/w", "m/m").unwrap();
    let mut point = None;
    let mut tail = Vec::new();
    for i in 0..1000 {
        let mut m = Message::new(&s.id, Role::Assistant);
        for j in 0..10 {
            m.push(text(&format!("message {i} part {j}")));
        }
        store.save_message(&m).unwrap();
        if i == 990 {
            point = Some(m.id.clone());
        }
        if i >= 990 {
            tail.push(m);
        }
    }
    let (c, summary) = add_compaction(&store, &s.id, point.as_deref());
    tail.push(c);
    tail.push(summary);
    let view = store.load_view(&s.id, point.as_deref()).unwrap();
    assert_eq!(view.len(), 12);
    assert_eq!(view.iter().map(|m| m.parts.len()).sum::<usize>(), 102);
    assert_eq!(view, tail);

    // The range scan uses the (session_id, id) indexes rather than reading the table.
    let conn = store.conn();
    for sql in [
        "SELECT id FROM messages WHERE session_id = ?1 AND id >= ?2 ORDER BY id",
        "SELECT id FROM parts WHERE session_id = ?1 AND message_id >= ?2 ORDER BY message_id, id",
    ] {
        let plan: Vec<String> = conn
            .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
            .unwrap()
            .query_map(params!["x", "y"], |r| r.get::<_, String>(3))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let plan = plan.join(" | ");
        assert!(
            plan.contains("USING INDEX") || plan.contains("USING COVERING INDEX"),
            "{plan}"
        );
        assert!(!plan.contains("TEMP B-TREE"), "{plan}");
    }
}

/// Pages walk a session from its end to its start: no message twice, none missed, each page
/// oldest first, `more` false only on the last; other sessions never leak in.
#[test]
fn pages_walk_a_session_backwards_from_its_end() {
    let store = Store::open_in_memory().unwrap();
    let s = store.create_session("/w", "m/m").unwrap();
    let other = store.create_session("/w", "m/m").unwrap();
    let mut all = Vec::new();
    for i in 0..23 {
        let kinds = (0..(i % 3 + 1))
            .map(|j| text(&format!("m{i} p{j}")))
            .collect();
        all.push(add_message(&store, &s.id, Role::User, kinds));
        add_message(&store, &other.id, Role::User, vec![text("elsewhere")]);
    }
    let mut before: Option<String> = None;
    let mut seen: Vec<Message> = Vec::new();
    let mut pages = 0;
    loop {
        let page = store.load_page(&s.id, before.as_deref(), 5).unwrap();
        pages += 1;
        assert!(page.messages.len() <= 5);
        assert!(page.messages.windows(2).all(|w| w[0].id < w[1].id));
        let mut next = page.messages.clone();
        next.extend(seen);
        seen = next;
        if !page.more {
            break;
        }
        assert_eq!(page.messages.len(), 5, "only the last page may be short");
        before = Some(page.messages[0].id.clone());
    }
    assert_eq!(pages, 5);
    assert_eq!(seen, all);
    // a page larger than the session is the session, with nothing more
    let whole = store.load_page(&s.id, None, 1000).unwrap();
    assert_eq!((whole.messages, whole.more), (all.clone(), false));
    // exactly one page's worth: nothing more either
    let first = store.load_page(&s.id, Some(&all[5].id), 5).unwrap();
    assert_eq!((first.messages, first.more), (all[..5].to_vec(), false));
    // before the first message, or in an empty session: an empty page
    let none = store.load_page(&s.id, Some(&all[0].id), 5).unwrap();
    assert_eq!((none.messages.len(), none.more), (0, false));
    let empty = store.create_session("/w", "m/m").unwrap();
    assert_eq!(
        store.load_page(&empty.id, None, 5).unwrap(),
        HistoryPage::default()
    );
}

/// Paging uses the indexes both ways: a bounded range scan, no sort.
#[test]
fn page_queries_use_the_indexes() {
    let store = Store::open_in_memory().unwrap();
    let conn = store.conn();
    for sql in [
        "SELECT id FROM messages WHERE session_id = ?1 AND id < ?2 ORDER BY id DESC LIMIT 5",
        "SELECT id FROM messages WHERE session_id = ?1 AND id >= ?2 AND id < ?2 ORDER BY id",
        "SELECT id FROM parts WHERE session_id = ?1 AND message_id >= ?2 AND message_id < ?2 ORDER BY message_id, id",
    ] {
        let plan: Vec<String> = conn
            .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
            .unwrap()
            .query_map(params!["x", "y"], |r| r.get::<_, String>(3))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let plan = plan.join(" | ");
        assert!(
            plan.contains("USING INDEX") || plan.contains("USING COVERING INDEX"),
            "{plan}"
        );
        assert!(
            plan.contains('<'),
            "the upper bound is an index constraint: {plan}"
        );
        assert!(!plan.contains("TEMP B-TREE"), "{plan}");
    }
}
