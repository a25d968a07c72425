//! Messages and their parts: writing them as they stream, and reading views, pages and whole
//! sessions back.

use rusqlite::{Connection, params};
use serde::{Deserialize, Serialize};

use super::{HistoryPage, Result, Store, legacy, recover};
use pith_protocol::message::{
    Agent, FinishReason, Message, MessageError, Part, PartKind, Role, Usage,
};

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

impl Store {
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
