//! Persistent storage: SQLite sessions, messages and parts (ARCHITECTURE.md §3, §7).
//!
//! One database file, `<data_dir>/pith.db`, in WAL mode: every write is one small statement and is
//! durable against a killed process as soon as it returns, so a `kill -9` mid-stream loses at most
//! what the engine had not yet handed to [`Store::upsert_part`].
//!
//! Ids are ULIDs ([`pith_protocol::message::new_id`], monotonic), so messages and parts sort by id in
//! creation order and "the view from the compaction point on" is a range scan over
//! `(session_id, id)`.

mod error;
pub mod export;
mod goals;
mod legacy;
pub mod lock;
mod messages;
mod outputs;
mod pins;
mod prompts;
pub(crate) mod recover;
mod schema;
mod sessions;
mod sweep;
mod windows;

pub use error::{Result, StoreError};
pub use outputs::MessageText;
pub use recover::Repairs;
pub use windows::LearnedWindow;

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use rusqlite::Connection;

use pith_protocol::message::Message;

/// A session that holds at least one message (the listings leave empty ones out).
const HAS_MESSAGES: &str = "EXISTS (SELECT 1 FROM messages m WHERE m.session_id = sessions.id)";
/// A model answered in the session at least once: an assistant message holds text, reasoning
/// or a tool call (a session whose every request failed holds only the user's words, and is
/// neither listed nor resumed by `pith -c`).
const ANSWERED: &str = "EXISTS (SELECT 1 FROM parts p JOIN messages m ON m.id = p.message_id
     WHERE p.session_id = sessions.id AND m.role = 'assistant'
     AND json_extract(p.data, '$.type') IN ('text', 'reasoning', 'tool'))";

/// The SQLite store. `Send + Sync`: the connection sits behind a mutex; every call is short.
pub struct Store {
    conn: Mutex<Connection>,
    path: Option<PathBuf>,
}

/// How many messages a page of history holds: what a resumed session shows first, and what each
/// scroll past the top fetches. A few screens' worth; about 600 cells in a typical session.
pub const PAGE_MESSAGES: usize = 200;

/// A page of a session's history, oldest message first (see [`Store::load_page`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HistoryPage {
    pub messages: Vec<Message>,
    /// Older messages remain before the first one.
    pub more: bool,
}

fn to_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

impl Store {
    /// Opens (creating if needed) `<data_dir>/pith.db`, creating `data_dir` too.
    pub fn open(data_dir: &Path) -> Result<Store> {
        std::fs::create_dir_all(data_dir).map_err(|source| StoreError::CreateDataDir {
            path: data_dir.to_path_buf(),
            source,
        })?;
        let path = data_dir.join("pith.db");
        let conn = Connection::open(&path).map_err(|source| StoreError::Open {
            path: path.clone(),
            source,
        })?;
        let store = Store::init(conn, Some(path.clone())).map_err(|source| StoreError::Init {
            path: path.clone(),
            source: Box::new(source),
        })?;
        tracing::debug!(path = %path.display(), "store opened");
        Ok(store)
    }

    /// A private in-memory database (tests, `--no-session` style runs).
    pub fn open_in_memory() -> Result<Store> {
        Store::init(Connection::open_in_memory()?, None)
    }

    /// The database file, `None` for an in-memory store.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    fn init(conn: Connection, path: Option<PathBuf>) -> Result<Store> {
        conn.busy_timeout(Duration::from_secs(5))?;
        if path.is_some() {
            let mode: String = conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))?;
            if !mode.eq_ignore_ascii_case("wal") {
                tracing::warn!(mode, "SQLite refused WAL mode");
            }
        }
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        schema::migrate(&conn)?;
        Ok(Store {
            conn: Mutex::new(conn),
            path,
        })
    }

    pub(crate) fn conn(&self) -> MutexGuard<'_, Connection> {
        // A panic while holding the lock cannot leave the connection itself broken.
        self.conn.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests;
