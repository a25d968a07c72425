//! Sessions: creating, finding, listing, updating and deleting them.

use rusqlite::{OptionalExtension, params};

use super::{ANSWERED, HAS_MESSAGES, Result, Store, StoreError, to_i64};
use pith_protocol::message::{Session, new_id, now_ms};

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

impl Store {
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
    /// are not the user's conversations and are left out, and so are sessions no model ever
    /// answered in (opened and left, every prompt refused, every request failed).
    pub fn latest_session(&self, directory: &str) -> Result<Option<Session>> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {SESSION_COLUMNS} FROM sessions WHERE directory = ?1 AND parent_id IS NULL
             AND {ANSWERED} ORDER BY time_updated DESC, id DESC LIMIT 1"
        ))?;
        Ok(stmt.query_row([directory], session_from_row).optional()?)
    }

    /// The most recently updated session the user started that holds any message, answered
    /// or not (the last run's session, also when its every request failed).
    pub fn latest_stored_session(&self) -> Result<Option<Session>> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {SESSION_COLUMNS} FROM sessions WHERE parent_id IS NULL
             AND {HAS_MESSAGES} ORDER BY time_updated DESC, id DESC LIMIT 1"
        ))?;
        Ok(stmt.query_row([], session_from_row).optional()?)
    }

    /// Every session the user started that a model answered in, most recently updated first
    /// (sub-agents' sessions are listed by [`Store::children`]; a session no model answered
    /// in — opened and left, every prompt refused, every request failed — is not listed).
    pub fn list_sessions(&self) -> Result<Vec<Session>> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {SESSION_COLUMNS} FROM sessions WHERE parent_id IS NULL AND {ANSWERED}
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
        tx.execute("DELETE FROM pins WHERE session_id = ?1", [id])?;
        tx.execute("DELETE FROM goals WHERE session_id = ?1", [id])?;
        tx.execute("DELETE FROM messages WHERE session_id = ?1", [id])?;
        let n = tx.execute("DELETE FROM sessions WHERE id = ?1", [id])?;
        tx.commit()?;
        if n == 0 {
            return Err(StoreError::NoSession(id.to_string()));
        }
        Ok(())
    }
}
