use super::*;
use pith_protocol::message::Role;

fn msg(role: Role, texts: &[&str]) -> Message {
    let mut m = Message::new("S", role);
    for t in texts {
        m.push(PartKind::Text {
            text: (*t).to_string(),
            synthetic: false,
        });
    }
    m
}

/// Loading a history (the fast path for messages not seen before) builds the same cells in
/// the same order as feeding each part before its header, the path live events can take.
#[test]
fn loading_a_history_matches_part_by_part_upserts() {
    let mut history = Vec::new();
    for i in 0..50 {
        history.push(msg(Role::User, &[&format!("q{i}")]));
        let mut a = msg(Role::Assistant, &[&format!("a{i}"), &format!("b{i}")]);
        if i % 7 == 0 {
            a.error = Some("boom".into());
        }
        history.push(a);
    }
    let loaded = Transcript::new(&history);
    let mut fed = Transcript::default();
    for m in &history {
        for p in &m.parts {
            fed.upsert_part(p.clone());
        }
        fed.upsert_message(m);
    }
    let keys = |t: &Transcript| t.cells.iter().map(|c| c.key.clone()).collect::<Vec<_>>();
    assert_eq!(keys(&loaded), keys(&fed));
    assert_eq!(loaded.cells.len(), 50 * 3 + 8);
    // every cell is findable by key
    for (i, c) in loaded.cells.iter().enumerate() {
        assert_eq!(loaded.position(&c.key), Some(i));
    }
}

/// Pages put in front keep every cell findable where it is: updates reach the right cell
/// after prepending, and after an insert in the middle renumbers everything.
#[test]
fn prepended_pages_keep_every_cell_findable() {
    let history: Vec<Message> = (0..30)
        .map(|i| msg(Role::Assistant, &[&format!("t{i}"), &format!("u{i}")]))
        .collect();
    let mut t = Transcript::new(&history[20..]);
    t.prepend(&history[10..20]);
    t.prepend(&history[..10]);
    assert_eq!(t.len(), 60);
    let check = |t: &Transcript| {
        for (i, c) in t.cells.iter().enumerate() {
            assert_eq!(t.position(&c.key), Some(i), "cell {}", c.key);
        }
    };
    check(&t);
    let text = |t: &Transcript, i: usize| match t.cells[i].part().map(|p| &p.kind) {
        Some(PartKind::Text { text, .. }) => text.clone(),
        other => panic!("not a text: {other:?}"),
    };
    assert_eq!(text(&t, 0), "t0");
    assert_eq!(text(&t, 21), "u10");
    // a delta for a part of the first page lands on that part
    t.append_delta(&history[0].id, &history[0].parts[1].id, "!", false);
    assert_eq!(text(&t, 1), "u0!");
    // an error cell goes in the middle (renumbers), then a newer page part still resolves
    let mut failed = history[5].clone();
    failed.error = Some("boom".into());
    t.upsert_message(&failed);
    assert!(matches!(t.cells[12].body, CellBody::MessageError(_)));
    check(&t);
    t.append_delta(&history[29].id, &history[29].parts[0].id, "?", false);
    assert_eq!(text(&t, 59), "t29?");
}

/// A header that changes (e.g. the summary flag) still re-renders the message's cells.
#[test]
fn a_changed_header_touches_its_cells() {
    let mut m = msg(Role::Assistant, &["text"]);
    let mut t = Transcript::new(std::slice::from_ref(&m));
    let rev = t.cells[0].rev;
    t.upsert_message(&m);
    assert_eq!(t.cells[0].rev, rev, "an unchanged header touches nothing");
    m.summary = true;
    t.upsert_message(&m);
    assert!(t.cells[0].rev > rev);
}
