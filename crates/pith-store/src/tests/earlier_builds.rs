//! What earlier builds wrote loads: headers with plain strings, a mid-turn message stored
//! wrapped, a version-2 database without sub-agent links.

use super::*;
use crate::schema::{SCHEMA_V1, SCHEMA_V2, SCHEMA_V3, SCHEMA_V4, SCHEMA_V5, SCHEMA_VERSION};

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
    add_message(&store, "old", Role::Assistant, vec![text("hello")]);
    add_message(&store, &child.id, Role::User, vec![text("task")]);
    add_message(&store, &child.id, Role::Assistant, vec![text("done")]);
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

/// A version-5 database (pins, no goals) gains the goals table and keeps what it held.
#[test]
fn a_version_5_database_gains_goals() {
    let dir = tempfile::tempdir().unwrap();
    {
        let conn = Connection::open(dir.path().join("pith.db")).unwrap();
        conn.execute_batch(&format!(
            "{SCHEMA_V1} {SCHEMA_V2} {SCHEMA_V3} {SCHEMA_V4} {SCHEMA_V5} PRAGMA user_version = 5;
             INSERT INTO sessions (id, title, directory, model, time_created, time_updated)
             VALUES ('old', 't', '/w', 'm/m', 1, 1);
             INSERT INTO pins (session_id, text, time) VALUES ('old', 'port 8443', 1);"
        ))
        .unwrap();
    }
    let store = Store::open(dir.path()).unwrap();
    let version: i64 = store
        .conn()
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, SCHEMA_VERSION);
    assert_eq!(store.pins("old").unwrap(), ["port 8443"]);
    assert_eq!(store.goal("old").unwrap(), None);
    let goal = pith_protocol::event::Goal {
        text: "tests pass".into(),
        status: pith_protocol::event::GoalStatus::Active,
        budget: pith_protocol::event::GoalBudget {
            limit: 3,
            unit: pith_protocol::event::BudgetUnit::Turns,
        },
        turns: 1,
        tokens: 10,
    };
    store.set_goal("old", &goal).unwrap();
    assert_eq!(store.goal("old").unwrap(), Some(goal));
}
