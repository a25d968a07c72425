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
mod legacy;
pub mod lock;
mod outputs;
mod prompts;
pub mod recover;
mod sweep;
mod windows;

pub use error::{Result, StoreError};
pub use windows::LearnedWindow;

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};

use pith_protocol::message::{
    Agent, FinishReason, Message, MessageError, Part, PartKind, Role, Session, Usage, new_id,
    now_ms,
};

/// The schema version this build writes (`PRAGMA user_version`).
const SCHEMA_VERSION: i64 = 4;

/// A session that holds at least one message (the listings leave empty ones out).
const HAS_MESSAGES: &str = "EXISTS (SELECT 1 FROM messages m WHERE m.session_id = sessions.id)";

const SCHEMA_V1: &str = "
CREATE TABLE IF NOT EXISTS sessions (
    id               TEXT PRIMARY KEY NOT NULL,
    title            TEXT NOT NULL DEFAULT '',
    directory        TEXT NOT NULL,
    model            TEXT NOT NULL,
    time_created     INTEGER NOT NULL,
    time_updated     INTEGER NOT NULL,
    compaction_point TEXT,
    cost             REAL NOT NULL DEFAULT 0,
    tokens           INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS sessions_directory ON sessions (directory, time_updated);
CREATE INDEX IF NOT EXISTS sessions_updated ON sessions (time_updated);

CREATE TABLE IF NOT EXISTS messages (
    id           TEXT PRIMARY KEY NOT NULL,
    session_id   TEXT NOT NULL,
    role         TEXT NOT NULL,
    time_created INTEGER NOT NULL,
    data         TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS messages_session ON messages (session_id, id);

CREATE TABLE IF NOT EXISTS parts (
    id         TEXT PRIMARY KEY NOT NULL,
    message_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    data       TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS parts_session ON parts (session_id, message_id, id);

-- A new message keeps its session's `time_updated` current, so `latest_session` is right even
-- when the engine does not call `update_session` at once.
CREATE TRIGGER IF NOT EXISTS messages_touch_session AFTER INSERT ON messages BEGIN
    UPDATE sessions SET time_updated = MAX(time_updated, NEW.time_created)
    WHERE id = NEW.session_id;
END;
";

/// Version 2: the context windows learned from servers (see [`Store::learned_window`]).
const SCHEMA_V2: &str = "
CREATE TABLE IF NOT EXISTS model_windows (
    model  TEXT PRIMARY KEY NOT NULL,
    window INTEGER NOT NULL,
    source TEXT NOT NULL,
    time   INTEGER NOT NULL
);
";

/// Version 3: sub-agent sessions name the session that started them and their agent.
const SCHEMA_V3: &str = "
ALTER TABLE sessions ADD COLUMN parent_id TEXT;
ALTER TABLE sessions ADD COLUMN agent TEXT;
CREATE INDEX IF NOT EXISTS sessions_parent ON sessions (parent_id);
";

/// Version 4: the prompts typed in each project, for the composer's history across sessions.
const SCHEMA_V4: &str = "
CREATE TABLE IF NOT EXISTS prompt_history (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    directory TEXT NOT NULL,
    text      TEXT NOT NULL,
    time      INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS prompt_history_directory ON prompt_history (directory, id);
";

/// The SQLite store. `Send + Sync`: the connection sits behind a mutex; every call is short.
pub struct Store {
    conn: Mutex<Connection>,
    path: Option<PathBuf>,
}

/// The header fields of a message as stored in `messages.data` (parts live in their own table).
#[derive(Serialize)]
struct HeaderRef<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    time_completed: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    parent_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    agent: Option<&'a Agent>,
    summary: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    finish: Option<&'a FinishReason>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a MessageError>,
    usage: &'a Usage,
    cost: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    submission_id: Option<&'a str>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    mid_turn: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    command: Option<&'a str>,
}

#[derive(Deserialize, Default)]
struct Header {
    #[serde(default)]
    time_completed: Option<i64>,
    #[serde(default)]
    parent_id: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    agent: Option<Agent>,
    #[serde(default)]
    summary: bool,
    #[serde(default)]
    finish: Option<FinishReason>,
    #[serde(default)]
    error: Option<MessageError>,
    #[serde(default)]
    usage: Usage,
    #[serde(default)]
    cost: f64,
    #[serde(default)]
    submission_id: Option<String>,
    #[serde(default)]
    mid_turn: bool,
    #[serde(default)]
    command: Option<String>,
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

/// Sorts after every id (ids are ASCII; SQLite compares TEXT bytewise): "no upper bound".
const END_OF_IDS: &str = "\u{10FFFF}";

fn role_str(role: Role) -> &'static str {
    match role {
        Role::User => "user",
        Role::Assistant => "assistant",
    }
}

fn parse_role(s: &str) -> Option<Role> {
    match s {
        "user" => Some(Role::User),
        "assistant" => Some(Role::Assistant),
        _ => None,
    }
}

const SESSION_COLUMNS: &str = "id, title, directory, model, time_created, time_updated, \
     compaction_point, cost, tokens, parent_id, agent";

fn session_from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<Session> {
    Ok(Session {
        id: row.get(0)?,
        title: row.get(1)?,
        directory: row.get(2)?,
        model: row.get(3)?,
        time_created: row.get(4)?,
        time_updated: row.get(5)?,
        compaction_point: row.get(6)?,
        cost: row.get(7)?,
        tokens: row.get::<_, i64>(8)?.max(0) as u64,
        parent_id: row.get(9)?,
        agent: row.get(10)?,
    })
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
        migrate(&conn)?;
        Ok(Store {
            conn: Mutex::new(conn),
            path,
        })
    }

    pub(crate) fn conn(&self) -> MutexGuard<'_, Connection> {
        // A panic while holding the lock cannot leave the connection itself broken.
        self.conn.lock().unwrap_or_else(|e| e.into_inner())
    }

    // ---- sessions ------------------------------------------------------------------------------

    pub fn create_session(&self, directory: &str, model: &str) -> Result<Session> {
        self.insert_session(directory, model, None, None)
    }

    /// A sub-agent's session, started by `parent_id` for `agent` (ARCHITECTURE.md §13).
    pub fn create_child_session(
        &self,
        directory: &str,
        model: &str,
        parent_id: &str,
        agent: &str,
    ) -> Result<Session> {
        self.insert_session(directory, model, Some(parent_id), Some(agent))
    }

    fn insert_session(
        &self,
        directory: &str,
        model: &str,
        parent_id: Option<&str>,
        agent: Option<&str>,
    ) -> Result<Session> {
        let now = now_ms();
        let session = Session {
            id: new_id(),
            title: String::new(),
            directory: directory.to_string(),
            model: model.to_string(),
            time_created: now,
            time_updated: now,
            compaction_point: None,
            cost: 0.0,
            tokens: 0,
            parent_id: parent_id.map(str::to_string),
            agent: agent.map(str::to_string),
        };
        self.conn()
            .prepare_cached(
                "INSERT INTO sessions (id, title, directory, model, time_created, time_updated,
                                       compaction_point, cost, tokens, parent_id, agent)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            )?
            .execute(params![
                session.id,
                session.title,
                session.directory,
                session.model,
                session.time_created,
                session.time_updated,
                session.compaction_point,
                session.cost,
                to_i64(session.tokens),
                session.parent_id,
                session.agent,
            ])?;
        Ok(session)
    }

    /// The session with this id; an error names the id when there is none.
    pub fn get_session(&self, id: &str) -> Result<Session> {
        match self.find_session(id)? {
            Some(s) => Ok(s),
            None => Err(StoreError::NoSession(id.to_string())),
        }
    }

    /// The session with this id, if it exists.
    pub fn find_session(&self, id: &str) -> Result<Option<Session>> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {SESSION_COLUMNS} FROM sessions WHERE id = ?1"
        ))?;
        Ok(stmt.query_row([id], session_from_row).optional()?)
    }

    /// The most recently updated session in `directory` (for `pith -c`); sub-agents' sessions
    /// are not the user's conversations and are left out, and so are sessions with nothing
    /// stored (opened and left, or every prompt refused).
    pub fn latest_session(&self, directory: &str) -> Result<Option<Session>> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {SESSION_COLUMNS} FROM sessions WHERE directory = ?1 AND parent_id IS NULL
             AND {HAS_MESSAGES} ORDER BY time_updated DESC, id DESC LIMIT 1"
        ))?;
        Ok(stmt.query_row([directory], session_from_row).optional()?)
    }

    /// Every session the user started that holds something, most recently updated first
    /// (sub-agents' sessions are listed by [`Store::children`]; a session with no message —
    /// opened and left, or every prompt refused — is not listed).
    pub fn list_sessions(&self) -> Result<Vec<Session>> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {SESSION_COLUMNS} FROM sessions WHERE parent_id IS NULL AND {HAS_MESSAGES}
             ORDER BY time_updated DESC, id DESC"
        ))?;
        let rows = stmt.query_map([], session_from_row)?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    /// The sub-agent sessions `parent_id` started, oldest first.
    pub fn children(&self, parent_id: &str) -> Result<Vec<Session>> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {SESSION_COLUMNS} FROM sessions WHERE parent_id = ?1 ORDER BY id"
        ))?;
        let rows = stmt.query_map([parent_id], session_from_row)?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    /// Writes every field of `session`. `time_updated` never moves backwards (a new message may
    /// already have advanced it).
    pub fn update_session(&self, session: &Session) -> Result<()> {
        let changed = self
            .conn()
            .prepare_cached(
                "UPDATE sessions SET title = ?2, directory = ?3, model = ?4, time_created = ?5,
                        time_updated = MAX(time_updated, ?6), compaction_point = ?7, cost = ?8,
                        tokens = ?9
                 WHERE id = ?1",
            )?
            .execute(params![
                session.id,
                session.title,
                session.directory,
                session.model,
                session.time_created,
                session.time_updated,
                session.compaction_point,
                session.cost,
                to_i64(session.tokens),
            ])?;
        if changed == 0 {
            return Err(StoreError::NoSession(session.id.clone()));
        }
        Ok(())
    }

    /// Deletes a session with all its messages and parts, and its sub-agents' sessions.
    pub fn delete_session(&self, id: &str) -> Result<()> {
        for child in self.children(id)? {
            self.delete_session(&child.id)?;
        }
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        tx.execute("DELETE FROM parts WHERE session_id = ?1", [id])?;
        tx.execute("DELETE FROM messages WHERE session_id = ?1", [id])?;
        let n = tx.execute("DELETE FROM sessions WHERE id = ?1", [id])?;
        tx.commit()?;
        if n == 0 {
            return Err(StoreError::NoSession(id.to_string()));
        }
        Ok(())
    }

    // ---- messages and parts --------------------------------------------------------------------

    /// Inserts or replaces a message's header (not its parts: see [`Store::upsert_part`]).
    pub fn upsert_message(&self, message: &Message) -> Result<()> {
        upsert_message_on(&self.conn(), message)
    }

    /// Inserts or replaces one part. Called for every change of a part (streamed text is
    /// throttled by the engine), so it is a single cached statement.
    pub fn upsert_part(&self, session_id: &str, part: &Part) -> Result<()> {
        upsert_part_on(&self.conn(), session_id, part)
    }

    /// Writes a message header and all its parts in one transaction (e.g. a finished step).
    pub fn save_message(&self, message: &Message) -> Result<()> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        upsert_message_on(&tx, message)?;
        for part in &message.parts {
            upsert_part_on(&tx, &message.session_id, part)?;
        }
        tx.commit()?;
        Ok(())
    }

    /// Deletes one part (e.g. an empty text part the engine dropped).
    pub fn delete_part(&self, part_id: &str) -> Result<()> {
        self.conn()
            .prepare_cached("DELETE FROM parts WHERE id = ?1")?
            .execute([part_id])?;
        Ok(())
    }

    /// Deletes a message and its parts (a step that is retried, a compaction that failed).
    pub fn delete_message(&self, message_id: &str) -> Result<()> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        tx.execute(
            "DELETE FROM parts WHERE session_id = (SELECT session_id FROM messages WHERE id = ?1) AND message_id = ?1",
            [message_id],
        )?;
        tx.execute("DELETE FROM messages WHERE id = ?1", [message_id])?;
        tx.commit()?;
        Ok(())
    }

    /// The messages the model's view needs: those with id >= `from` (the session's
    /// `compaction_point`), each with its parts in order. `None` loads the whole session; so does
    /// a point that names no message or leaves no completed compaction in view (never an empty or
    /// headless history). Compaction messages a crash left without their summary are left out.
    pub fn load_view(&self, session_id: &str, from: Option<&str>) -> Result<Vec<Message>> {
        let mut messages = self.load_view_as_stored(session_id, from)?;
        for i in recover::stray_compactions(&messages).into_iter().rev() {
            messages.remove(i);
        }
        Ok(messages)
    }

    /// [`load_view`](Self::load_view) for the session's writer (holding its lock): what a crash
    /// left is repaired in the store too (see [`recover`]).
    pub fn open_view(
        &self,
        session_id: &str,
        from: Option<&str>,
    ) -> Result<(Vec<Message>, recover::Repairs)> {
        let mut messages = self.load_view_as_stored(session_id, from)?;
        let repairs = self.repair(&mut messages)?;
        Ok((messages, repairs))
    }

    fn load_view_as_stored(&self, session_id: &str, from: Option<&str>) -> Result<Vec<Message>> {
        let Some(from) = from.filter(|f| !f.is_empty()) else {
            return self.load_from(session_id, "");
        };
        let loaded = self.load_from(session_id, from)?;
        let sound = loaded.first().is_some_and(|m| m.id == from)
            && recover::has_completed_compaction(&loaded);
        if sound {
            return Ok(loaded);
        }
        tracing::warn!(
            session = session_id,
            point = from,
            "the session's compaction point names no completed compaction; loading the whole session"
        );
        self.load_from(session_id, "")
    }

    /// The whole session (exports).
    pub fn load_all(&self, session_id: &str) -> Result<Vec<Message>> {
        self.load_from(session_id, "")
    }

    /// The newest `max_messages` messages older than `before` (the end of the session when
    /// `None`), oldest first, and whether older ones remain: how the TUI shows a long session,
    /// a page at a time from the end. Two index range scans; the cost grows with the page, not
    /// with the session.
    pub fn load_page(
        &self,
        session_id: &str,
        before: Option<&str>,
        max_messages: usize,
    ) -> Result<HistoryPage> {
        let end = before.unwrap_or(END_OF_IDS);
        let ids: Vec<String> = {
            let conn = self.conn();
            let mut stmt = conn.prepare_cached(
                "SELECT id FROM messages WHERE session_id = ?1 AND id < ?2
                 ORDER BY id DESC LIMIT ?3",
            )?;
            let limit = i64::try_from(max_messages.max(1).saturating_add(1)).unwrap_or(i64::MAX);
            stmt.query_map(params![session_id, end, limit], |r| r.get(0))?
                .collect::<rusqlite::Result<_>>()?
        };
        let more = ids.len() > max_messages.max(1);
        let Some(from) = ids.get(max_messages.max(1) - 1).or(ids.last()) else {
            return Ok(HistoryPage {
                messages: Vec::new(),
                more: false,
            });
        };
        let messages = self.load_range(session_id, from, end)?;
        Ok(HistoryPage { messages, more })
    }

    /// How many messages a session holds.
    pub fn message_count(&self, session_id: &str) -> Result<u64> {
        let n: i64 = self
            .conn()
            .prepare_cached("SELECT COUNT(*) FROM messages WHERE session_id = ?1")?
            .query_row([session_id], |r| r.get(0))?;
        Ok(n.max(0) as u64)
    }

    fn load_from(&self, session_id: &str, from: &str) -> Result<Vec<Message>> {
        self.load_range(session_id, from, END_OF_IDS)
    }

    /// Messages with `from <= id < end`, each with its parts in order.
    fn load_range(&self, session_id: &str, from: &str, end: &str) -> Result<Vec<Message>> {
        let conn = self.conn();
        let mut messages: Vec<Message> = Vec::new();
        {
            let mut stmt = conn.prepare_cached(
                "SELECT id, role, time_created, data FROM messages
                 WHERE session_id = ?1 AND id >= ?2 AND id < ?3 ORDER BY id",
            )?;
            let mut rows = stmt.query(params![session_id, from, end])?;
            while let Some(row) = rows.next()? {
                let id: String = row.get(0)?;
                let role: String = row.get(1)?;
                let Some(role) = parse_role(&role) else {
                    tracing::warn!(message = %id, role, "skipping message with unknown role");
                    continue;
                };
                let data: String = row.get(3)?;
                let header: Header = serde_json::from_str(&data).unwrap_or_else(|e| {
                    tracing::warn!(message = %id, error = %e, "unreadable message header");
                    Header::default()
                });
                messages.push(Message {
                    id,
                    session_id: session_id.to_string(),
                    role,
                    time_created: row.get(2)?,
                    time_completed: header.time_completed,
                    parent_id: header.parent_id,
                    model: header.model,
                    agent: header.agent,
                    summary: header.summary,
                    finish: header.finish,
                    error: header.error,
                    usage: header.usage,
                    cost: header.cost,
                    parts: Vec::new(),
                    submission_id: header.submission_id,
                    mid_turn: header.mid_turn,
                    command: header.command,
                });
            }
        }
        let mut stmt = conn.prepare_cached(
            "SELECT id, message_id, data FROM parts
             WHERE session_id = ?1 AND message_id >= ?2 AND message_id < ?3
             ORDER BY message_id, id",
        )?;
        let mut rows = stmt.query(params![session_id, from, end])?;
        // Both lists are sorted by message id: merge them in one pass.
        let mut index = 0;
        while let Some(row) = rows.next()? {
            let id: String = row.get(0)?;
            let message_id: String = row.get(1)?;
            while index < messages.len() && messages[index].id < message_id {
                index += 1;
            }
            if index == messages.len() {
                break;
            }
            if messages[index].id != message_id {
                tracing::debug!(part = %id, message = %message_id, "part without a stored message");
                continue;
            }
            let data: String = row.get(2)?;
            match serde_json::from_str::<PartKind>(&data) {
                Ok(kind) => messages[index].parts.push(Part {
                    id,
                    message_id,
                    kind,
                }),
                Err(e) => tracing::warn!(part = %id, error = %e, "skipping unreadable part"),
            }
        }
        messages.iter_mut().for_each(legacy::upgrade);
        Ok(messages)
    }
}

fn upsert_message_on(conn: &Connection, message: &Message) -> Result<()> {
    let header = HeaderRef {
        time_completed: message.time_completed,
        parent_id: message.parent_id.as_deref(),
        model: message.model.as_deref(),
        agent: message.agent.as_ref(),
        summary: message.summary,
        finish: message.finish.as_ref(),
        error: message.error.as_ref(),
        usage: &message.usage,
        cost: message.cost,
        submission_id: message.submission_id.as_deref(),
        mid_turn: message.mid_turn,
        command: message.command.as_deref(),
    };
    let data = pith_secrets::scrub(&serde_json::to_string(&header)?).into_owned();
    conn.prepare_cached(
        "INSERT INTO messages (id, session_id, role, time_created, data)
         VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (id) DO UPDATE SET role = excluded.role,
             time_created = excluded.time_created, data = excluded.data",
    )?
    .execute(params![
        message.id,
        message.session_id,
        role_str(message.role),
        message.time_created,
        data
    ])?;
    Ok(())
}

fn upsert_part_on(conn: &Connection, session_id: &str, part: &Part) -> Result<()> {
    let data = pith_secrets::scrub(&serde_json::to_string(&part.kind)?).into_owned();
    conn.prepare_cached(
        "INSERT INTO parts (id, message_id, session_id, data) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (id) DO UPDATE SET data = excluded.data",
    )?
    .execute(params![part.id, part.message_id, session_id, data])?;
    Ok(())
}

fn migrate(conn: &Connection) -> Result<()> {
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if version > SCHEMA_VERSION {
        return Err(StoreError::NewerSchema {
            found: version,
            known: SCHEMA_VERSION,
        });
    }
    if version < 1 {
        conn.execute_batch(&format!(
            "BEGIN; {SCHEMA_V1} {SCHEMA_V2} {SCHEMA_V3} {SCHEMA_V4} PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;"
        ))?;
        tracing::info!("store schema created (version {SCHEMA_VERSION})");
        return Ok(());
    }
    if version < 2 {
        conn.execute_batch(&format!(
            "BEGIN; {SCHEMA_V2} PRAGMA user_version = 2; COMMIT;"
        ))?;
        tracing::info!("store schema upgraded to version 2");
    }
    if version < 3 {
        conn.execute_batch(&format!(
            "BEGIN; {SCHEMA_V3} PRAGMA user_version = 3; COMMIT;"
        ))?;
        tracing::info!("store schema upgraded to version 3");
    }
    if version < 4 {
        conn.execute_batch(&format!(
            "BEGIN; {SCHEMA_V4} PRAGMA user_version = 4; COMMIT;"
        ))?;
        tracing::info!("store schema upgraded to version 4");
    }
    Ok(())
}

#[cfg(test)]
mod tests;
