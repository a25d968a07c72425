//! The database schema and its migrations (`PRAGMA user_version`).

use rusqlite::Connection;

use super::{Result, StoreError};

/// The schema version this build writes (`PRAGMA user_version`).
pub(super) const SCHEMA_VERSION: i64 = 6;

pub(super) const SCHEMA_V1: &str = "
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
pub(super) const SCHEMA_V2: &str = "
CREATE TABLE IF NOT EXISTS model_windows (
    model  TEXT PRIMARY KEY NOT NULL,
    window INTEGER NOT NULL,
    source TEXT NOT NULL,
    time   INTEGER NOT NULL
);
";

/// Version 3: sub-agent sessions name the session that started them and their agent.
pub(super) const SCHEMA_V3: &str = "
ALTER TABLE sessions ADD COLUMN parent_id TEXT;
ALTER TABLE sessions ADD COLUMN agent TEXT;
CREATE INDEX IF NOT EXISTS sessions_parent ON sessions (parent_id);
";

/// Version 4: the prompts typed in each project, for the composer's history across sessions.
pub(super) const SCHEMA_V4: &str = "
CREATE TABLE IF NOT EXISTS prompt_history (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    directory TEXT NOT NULL,
    text      TEXT NOT NULL,
    time      INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS prompt_history_directory ON prompt_history (directory, id);
";

/// Version 5: what the user pinned in each session (`/pin`), carried into every request.
pub(super) const SCHEMA_V5: &str = "
CREATE TABLE IF NOT EXISTS pins (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL,
    text       TEXT NOT NULL,
    time       INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS pins_session ON pins (session_id, id);
";

/// Version 6: each session's goal (`/goal`): the protocol's `Goal` as JSON, one row a session.
pub(super) const SCHEMA_V6: &str = "
CREATE TABLE IF NOT EXISTS goals (
    session_id TEXT PRIMARY KEY,
    data       TEXT NOT NULL,
    time       INTEGER NOT NULL
);
";

pub(super) fn migrate(conn: &Connection) -> Result<()> {
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if version > SCHEMA_VERSION {
        return Err(StoreError::NewerSchema {
            found: version,
            known: SCHEMA_VERSION,
        });
    }
    if version < 1 {
        conn.execute_batch(&format!(
            "BEGIN; {SCHEMA_V1} {SCHEMA_V2} {SCHEMA_V3} {SCHEMA_V4} {SCHEMA_V5} {SCHEMA_V6} PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;"
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
    if version < 5 {
        conn.execute_batch(&format!(
            "BEGIN; {SCHEMA_V5} PRAGMA user_version = 5; COMMIT;"
        ))?;
        tracing::info!("store schema upgraded to version 5");
    }
    if version < 6 {
        conn.execute_batch(&format!(
            "BEGIN; {SCHEMA_V6} PRAGMA user_version = 6; COMMIT;"
        ))?;
        tracing::info!("store schema upgraded to version 6");
    }
    Ok(())
}
