//! The database itself: reopened after a crash, refused when a newer pith wrote it, shared
//! across threads, and how a SQLite failure reads.

use super::*;

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
fn store_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Store>();
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
