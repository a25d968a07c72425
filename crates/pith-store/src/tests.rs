use serde_json::json;

use super::export::{export_json, export_markdown};
use super::schema::{SCHEMA_V1, SCHEMA_V2, SCHEMA_VERSION};
use super::*;
use pith_protocol::message::{CompactionPart, ToolState, ToolTime};
use pith_protocol::message::{PartKind, Role, Session, Usage};
use rusqlite::params;

/// One part of every kind (a tool call in each state), in this order.
fn every_part_kind() -> Vec<PartKind> {
    [text_parts(), tool_parts(), bookkeeping_parts()].concat()
}

/// Text (typed and synthetic) and reasoning (signed and redacted).
fn text_parts() -> Vec<PartKind> {
    vec![
        PartKind::Text {
            text: "hello «世界»\nline two".into(),
            synthetic: false,
        },
        PartKind::Text {
            text: "Continue if you have next steps".into(),
            synthetic: true,
        },
        PartKind::Reasoning {
            text: "thinking".into(),
            signature: Some("sig".into()),
            redacted: None,
        },
        PartKind::Reasoning {
            text: String::new(),
            signature: None,
            redacted: Some("opaque".into()),
        },
    ]
}

/// A tool call in each state.
fn tool_parts() -> Vec<PartKind> {
    vec![
        PartKind::Tool {
            call_id: "c1".into(),
            tool: "bash".into(),
            input: json!({"command": "ls"}),
            state: ToolState::Pending,
        },
        PartKind::Tool {
            call_id: "c2".into(),
            tool: "bash".into(),
            input: json!({"command": "sleep 9"}),
            state: ToolState::Running {
                start: 5,
                title: Some("sleep".into()),
            },
        },
        PartKind::Tool {
            call_id: "c3".into(),
            tool: "read".into(),
            input: json!({"path": "a.rs"}),
            state: ToolState::Completed {
                output: "fn main() {}".into(),
                title: "a.rs".into(),
                metadata: json!({"lines": 1}),
                time: ToolTime {
                    start: 1,
                    end: 2,
                    compacted: Some(3),
                },
            },
        },
        PartKind::Tool {
            call_id: "c4".into(),
            tool: "read".into(),
            input: json!({}),
            state: ToolState::Error {
                message: "no such file".into(),
                start: Some(1),
                end: None,
            },
        },
    ]
}

/// A compaction request, step marks, an attached file and a patch.
fn bookkeeping_parts() -> Vec<PartKind> {
    vec![
        PartKind::Compaction(CompactionPart {
            auto: true,
            overflow: true,
            focus: Some("the parser".into()),
            tail_start: Some("01TAIL".into()),
            ..Default::default()
        }),
        PartKind::StepStart,
        PartKind::StepFinish {
            usage: Usage {
                input: 10,
                output: 20,
                reasoning: 3,
                cache_read: 4,
                cache_write: 5,
            },
            finish: "tool_calls".into(),
            cost: 0.25,
        },
        PartKind::File {
            path: "img.png".into(),
            mime: "image/png".into(),
        },
        PartKind::Patch {
            files: vec!["src/a.rs".into(), "src/b.rs".into()],
        },
    ]
}

/// Stores a message with the given parts (header first, then each part) and returns it.
fn add_message(store: &Store, session: &str, role: Role, kinds: Vec<PartKind>) -> Message {
    let mut m = Message::new(session, role);
    store.upsert_message(&m).unwrap();
    for kind in kinds {
        let part = m.push(kind).clone();
        store.upsert_part(session, &part).unwrap();
    }
    m
}

/// A completed compaction: its message (keeping the tail from `tail_start`) and its summary.
fn add_compaction(store: &Store, session: &str, tail_start: Option<&str>) -> (Message, Message) {
    let c = add_message(
        store,
        session,
        Role::User,
        vec![PartKind::Compaction(CompactionPart {
            auto: true,
            overflow: false,
            focus: None,
            tail_start: tail_start.map(str::to_string),
            carried: Default::default(),
        })],
    );
    let mut s = Message::new(session, Role::Assistant);
    s.summary = true;
    s.parent_id = Some(c.id.clone());
    s.finish = Some("stop".into());
    s.time_completed = Some(1);
    s.push(text("the summary"));
    store.save_message(&s).unwrap();
    (c, s)
}

fn text(s: &str) -> PartKind {
    PartKind::Text {
        text: s.into(),
        synthetic: false,
    }
}

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

#[test]
fn reopens_after_drop_without_close() {
    let dir = tempfile::tempdir().unwrap();
    let (session, msgs) = {
        let store = Store::open(dir.path()).unwrap();
        let s = store.create_session("/w", "m/m").unwrap();
        let u = add_message(&store, &s.id, Role::User, vec![text("do it")]);
        let mut a = add_message(&store, &s.id, Role::Assistant, every_part_kind());
        // A streamed part written mid-stream, then the process "dies" (no explicit close).
        let p = a.push(text("partial stream")).clone();
        store.upsert_part(&s.id, &p).unwrap();
        let journal: String = store
            .conn()
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(journal.to_lowercase(), "wal");
        std::mem::forget(store); // like kill -9: no destructor, no checkpoint
        (s, vec![u, a])
    };
    assert!(dir.path().join("pith.db-wal").exists());
    let store = Store::open(dir.path()).unwrap();
    assert_eq!(store.get_session(&session.id).unwrap().id, session.id);
    assert_eq!(store.load_all(&session.id).unwrap(), msgs);
    assert_eq!(store.latest_session("/w").unwrap().unwrap().id, session.id);
}

#[test]
fn rejects_a_database_from_a_newer_pith() {
    let dir = tempfile::tempdir().unwrap();
    {
        let store = Store::open(dir.path()).unwrap();
        store
            .conn()
            .execute_batch("PRAGMA user_version = 99")
            .unwrap();
    }
    let err = Store::open(dir.path()).err().unwrap();
    // what the user reads: the error and its causes
    let mut shown = err.to_string();
    let mut cause = std::error::Error::source(&err);
    while let Some(c) = cause {
        shown = format!("{shown}: {c}");
        cause = c.source();
    }
    assert!(shown.contains("newer pith"), "{shown}");
    assert!(matches!(
        err,
        StoreError::Init { source, .. } if matches!(*source, StoreError::NewerSchema { found: 99, .. })
    ));
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

#[test]
fn store_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Store>();
}

fn sample_history() -> (Session, Vec<Message>) {
    let store = Store::open_in_memory().unwrap();
    let mut s = store.create_session("/w", "openai/gpt-4.1").unwrap();
    s.title = "Fix it".into();
    let u = add_message(&store, &s.id, Role::User, vec![text("please fix")]);
    let mut a = add_message(&store, &s.id, Role::Assistant, every_part_kind());
    a.model = Some("openai/gpt-4.1".into());
    let mut sum = add_message(&store, &s.id, Role::Assistant, vec![text("## Goal\nfix")]);
    sum.summary = true;
    (s, vec![u, a, sum])
}

#[test]
fn json_export_holds_everything() {
    let (s, msgs) = sample_history();
    let v = export_json(&s, &msgs);
    assert_eq!(v["format"], "pith-session");
    assert_eq!(v["session"]["title"], "Fix it");
    assert_eq!(v["messages"].as_array().unwrap().len(), 3);
    let back: Vec<Message> = serde_json::from_value(v["messages"].clone()).unwrap();
    assert_eq!(back, msgs);
    // The pruned output is still there in full, marked as compacted.
    let text = v.to_string();
    assert!(text.contains("fn main() {}"));
    assert!(text.contains("\"compacted\":3"));
    assert_eq!(v["messages"][2]["summary"], true);
}

#[test]
fn markdown_export_is_readable() {
    let (s, mut msgs) = sample_history();
    // An output that itself holds a fence must not break out of its block.
    msgs[1].push(PartKind::Tool {
        call_id: "c9".into(),
        tool: "bash".into(),
        input: json!({"command": "cat README.md"}),
        state: ToolState::Completed {
            output: "```rust\nfn x() {}\n```".into(),
            title: "cat".into(),
            metadata: json!(null),
            time: ToolTime {
                start: 1,
                end: 2,
                compacted: None,
            },
        },
    });
    let md = export_markdown(&s, &msgs);
    assert!(md.starts_with("# Fix it\n"));
    assert_eq!(md.matches("\n## User · ").count(), 1, "{md}");
    assert_eq!(md.matches("\n## Assistant").count(), 2, "{md}");
    assert!(md.contains("## User · "));
    assert!(md.contains("## Assistant (openai/gpt-4.1) · "));
    assert!(md.contains("### Tool `bash` — pending"));
    assert!(md.contains("### Tool `read` — completed: a.rs"));
    assert!(md.contains("```json\n{\n  \"command\": \"ls\"\n}\n```"));
    assert!(md.contains(
        "*(pruned from the model's context at 1970-01-01 00:00:00 UTC; kept here in full)*"
    ));
    assert!(md.contains("```\nfn main() {}\n```"));
    assert!(md.contains("Error:\n\n```\nno such file\n```"));
    assert!(
        md.contains("**Compaction requested** (automatic, context overflow) — focus: the parser")
    );
    assert!(md.contains("**Compaction summary**"));
    assert!(md.contains("````\n```rust\nfn x() {}\n```\n````"), "{md}");
    assert!(!md.contains("sent while the agent worked"), "{md}");
    msgs[0].mid_turn = true;
    let md = export_markdown(&s, &msgs);
    assert!(md.contains("*(sent while the agent worked)*"), "{md}");
}

/// Message headers as earlier builds wrote them: finish, error and agent as plain strings.
fn earlier_build_headers() -> [(&'static str, String); 4] {
    let usage =
        r#""usage":{"input":1,"output":2,"reasoning":0,"cache_read":0,"cache_write":0},"cost":0.5"#;
    [
        (
            "01A",
            format!(
                r#"{{"time_completed":5,"model":"m","agent":"build","summary":false,"finish":"interrupted","error":"interrupted",{usage}}}"#
            ),
        ),
        (
            "01B",
            format!(
                r#"{{"agent":"compaction","summary":true,"finish":"stop","error":"provider returned 500",{usage}}}"#
            ),
        ),
        (
            "01C",
            format!(r#"{{"agent":"plan","summary":false,"finish":"pause_turn",{usage}}}"#),
        ),
        (
            "01D",
            format!(r#"{{"summary":false,"error":"aborted",{usage}}}"#),
        ),
    ]
}

/// Stores `rows` as assistant messages of `session`, and under the first a step-finish part
/// as earlier builds wrote it.
fn insert_earlier_build_rows(store: &Store, session: &str, rows: &[(&str, String)]) {
    let conn = store.conn();
    for (id, data) in rows {
        conn.execute(
            "INSERT INTO messages (id, session_id, role, time_created, data) VALUES (?1, ?2, 'assistant', 1, ?3)",
            params![id, session, data],
        )
        .unwrap();
    }
    conn.execute(
        "INSERT INTO parts (id, message_id, session_id, data) VALUES ('01AP', '01A', ?1, ?2)",
        params![
            session,
            r#"{"type":"step_finish","usage":{"input":1,"output":2,"reasoning":0,"cache_read":0,"cache_write":0},"finish":"tool_calls","cost":0.0}"#
        ],
    )
    .unwrap();
}

/// Headers and parts as earlier builds wrote them (finish, error and agent as plain strings)
/// load as the typed values, and are written back byte for byte.
#[test]
fn stored_strings_of_earlier_builds_load_as_enums() {
    use pith_protocol::message::{Agent, FinishReason, MessageError};
    let store = Store::open_in_memory().unwrap();
    let s = store.create_session("/w", "openai/gpt-4.1").unwrap();
    let rows = earlier_build_headers();
    insert_earlier_build_rows(&store, &s.id, &rows);
    let loaded = store.load_all(&s.id).unwrap();
    assert_eq!(loaded.len(), 4);
    assert_eq!(loaded[0].agent, Some(Agent::Build));
    assert_eq!(loaded[0].finish, Some(FinishReason::Interrupted));
    assert_eq!(loaded[0].error, Some(MessageError::Interrupted));
    assert!(matches!(
        &loaded[0].parts[0].kind,
        PartKind::StepFinish {
            finish: FinishReason::ToolCalls,
            ..
        }
    ));
    assert_eq!(loaded[1].agent, Some(Agent::Compaction));
    assert_eq!(loaded[1].finish, Some(FinishReason::Stop));
    assert_eq!(
        loaded[1].error,
        Some(MessageError::Failed("provider returned 500".into()))
    );
    assert_eq!(loaded[2].agent, Some(Agent::Other("plan".into())));
    assert_eq!(
        loaded[2].finish,
        Some(FinishReason::Other("pause_turn".into()))
    );
    assert_eq!(loaded[3].error, Some(MessageError::Interrupted));

    // written back, the first three headers are what was stored (the synonym is normalised)
    for m in &loaded {
        store.save_message(m).unwrap();
    }
    let conn = store.conn();
    for (id, data) in &rows[..3] {
        let stored: String = conn
            .query_row("SELECT data FROM messages WHERE id = ?1", [id], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(&stored, data);
    }
    let part: String = conn
        .query_row("SELECT data FROM parts WHERE id = '01AP'", [], |r| r.get(0))
        .unwrap();
    assert!(part.contains(r#""finish":"tool_calls""#), "{part}");
}

/// Earlier builds stored a message typed mid-turn wrapped in the reminder: it loads as what the
/// user typed, flagged mid-turn, and is sent exactly as before.
#[test]
fn a_mid_turn_message_stored_wrapped_loads_as_typed() {
    let store = Store::open_in_memory().unwrap();
    let s = store.create_session("/w", "openai/gpt-4.1").unwrap();
    let wrapped = "<system-reminder>\nThe user sent the following message:\nalso fix\nthe tests\n\nPlease address this message and continue with your tasks.\n</system-reminder>";
    add_message(&store, &s.id, Role::User, vec![text(wrapped)]);
    let plain = add_message(
        &store,
        &s.id,
        Role::User,
        vec![text("<system-reminder> typed")],
    );
    let loaded = store.load_all(&s.id).unwrap();
    assert_eq!(loaded[0].text(), "also fix\nthe tests");
    assert!(loaded[0].mid_turn);
    assert_eq!(loaded[1], plain, "text that only looks alike is left alone");
    // That the model sees the same bytes as before is checked where the conversion lives:
    // pith-engine's `stored_view_tests`.
    // saved again, it is stored in the current form
    store.save_message(&loaded[0]).unwrap();
    assert_eq!(store.load_all(&s.id).unwrap()[0], loaded[0]);
}

#[test]
fn a_version_2_database_gains_sub_agent_links() {
    let dir = tempfile::tempdir().unwrap();
    {
        // What a build before sub-agents wrote: schema 2, no parent column.
        let conn = Connection::open(dir.path().join("pith.db")).unwrap();
        conn.execute_batch(&format!(
            "{SCHEMA_V1} {SCHEMA_V2} PRAGMA user_version = 2;
             INSERT INTO sessions (id, title, directory, model, time_created, time_updated)
             VALUES ('old', 't', '/w', 'm/m', 1, 1);"
        ))
        .unwrap();
    }
    let store = Store::open(dir.path()).unwrap();
    let version: i64 = store
        .conn()
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, SCHEMA_VERSION);
    let old = store.get_session("old").unwrap();
    assert_eq!((old.parent_id, old.agent), (None, None));
    let child = store
        .create_child_session("/w", "m/m", "old", "explore")
        .unwrap();
    let got = store.get_session(&child.id).unwrap();
    assert_eq!(got.parent_id.as_deref(), Some("old"));
    assert_eq!(got.agent.as_deref(), Some("explore"));
    // children are the parent's, not the user's list or `pith -c`
    add_message(&store, "old", Role::User, vec![text("hi")]);
    add_message(&store, &child.id, Role::User, vec![text("task")]);
    let listed: Vec<String> = store
        .list_sessions()
        .unwrap()
        .into_iter()
        .map(|s| s.id)
        .collect();
    assert_eq!(listed, vec!["old".to_string()]);
    assert_eq!(store.latest_session("/w").unwrap().unwrap().id, "old");
    // as stored now: adding its message touched its time
    let got = store.get_session(&child.id).unwrap();
    assert_eq!(store.children("old").unwrap(), vec![got]);
    store.delete_session("old").unwrap();
    assert!(store.find_session(&child.id).unwrap().is_none());
}

/// A SQLite failure reads as it did when the store's errors were anyhow's: `{}` the error, `{:#}`
/// the error and its causes, each once along the `source()` chain.
#[test]
fn a_sqlite_failure_shows_its_causes_with_the_alternate_form() {
    let failure = rusqlite::Error::SqliteFailure(
        rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_FULL),
        Some("database or disk is full".into()),
    );
    let ffi = std::error::Error::source(&failure).unwrap().to_string();
    let err = StoreError::from(failure);
    assert_eq!(err.to_string(), "database or disk is full");
    assert_eq!(
        format!("{err:#}"),
        format!("database or disk is full: {ffi}")
    );
    let mut chain = vec![err.to_string()];
    let mut cause = std::error::Error::source(&err);
    while let Some(c) = cause {
        chain.push(c.to_string());
        cause = c.source();
    }
    assert_eq!(chain.join(": "), format!("{err:#}"));
}
