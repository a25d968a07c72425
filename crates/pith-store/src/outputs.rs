//! Tool outputs by call id, for the `recall` tool: pruning and compaction take outputs out of
//! the model's view, never out of the store.

use pith_protocol::message::{PartKind, Span, ToolState};

use super::Store;

impl Store {
    /// The tool name and output (or error message) of call `call_id` in `session_id`.
    pub fn find_tool_output(
        &self,
        session_id: &str,
        call_id: &str,
    ) -> super::Result<Option<(String, String)>> {
        if call_id.is_empty() {
            return Ok(None);
        }
        let conn = self.conn();
        // The call id is inside the part's JSON: `instr` narrows the scan to candidate rows,
        // the parse decides.
        let mut stmt = conn.prepare_cached(
            "SELECT data FROM parts WHERE session_id = ?1 AND instr(data, ?2) > 0 ORDER BY id DESC",
        )?;
        let rows = stmt.query_map([session_id, call_id], |r| r.get::<_, String>(0))?;
        for data in rows {
            let Ok(PartKind::Tool {
                call_id: id,
                tool,
                state,
                ..
            }) = serde_json::from_str::<PartKind>(&data?)
            else {
                continue;
            };
            if id != call_id {
                continue;
            }
            let output = match state {
                ToolState::Completed { output, .. } => output,
                ToolState::Error { message, .. } => format!("[the call failed] {message}"),
                ToolState::Pending | ToolState::Running { .. } => {
                    "[the call never finished: no output was recorded]".to_string()
                }
            };
            return Ok(Some((tool, output)));
        }
        Ok(None)
    }
}

impl Store {
    /// The text the user typed in their message whose id ends with `id_end` in `session_id`
    /// (its non-blank, non-synthetic text parts) and the spans of it they pasted, for the
    /// `recall` of a pasted block.
    pub fn find_user_text(
        &self,
        session_id: &str,
        id_end: &str,
    ) -> super::Result<Option<(String, Vec<Span>)>> {
        if id_end.is_empty() {
            return Ok(None);
        }
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(
            "SELECT message_id, data FROM parts WHERE session_id = ?1 \
             AND substr(message_id, -length(?2)) = ?2 ORDER BY message_id, id",
        )?;
        let rows = stmt.query_map([session_id, id_end], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
        })?;
        let mut found: Option<(String, Vec<String>)> = None;
        let mut spans = Vec::new();
        for row in rows {
            let (message, data) = row?;
            if found.as_ref().is_some_and(|(m, _)| *m != message) {
                break;
            }
            match serde_json::from_str::<PartKind>(&data) {
                Ok(PartKind::Text {
                    text,
                    synthetic: false,
                }) if !text.trim().is_empty() => match &mut found {
                    Some((_, t)) => t.push(text),
                    None => found = Some((message, vec![text])),
                },
                Ok(PartKind::Pasted { spans: s }) => spans = s,
                _ => {}
            }
        }
        Ok(found.map(|(_, t)| (t.join("\n"), spans)))
    }
}

/// A message brought back by `recall`: who wrote it and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageText {
    /// `user` or `assistant`.
    pub role: String,
    /// A user message: its text parts as typed (pasted text included). An assistant message:
    /// its text, and each tool call it made named on a line of its own.
    pub text: String,
}

impl Store {
    /// The text of message `message_id` of `session_id` (see [`MessageText`]), for the `recall`
    /// of a message that left the view; `None` when the session has no such message or it holds
    /// no text. A message of another session is never found.
    pub fn find_message_text(
        &self,
        session_id: &str,
        message_id: &str,
    ) -> super::Result<Option<MessageText>> {
        if message_id.is_empty() {
            return Ok(None);
        }
        let conn = self.conn();
        let role: Option<String> = conn
            .prepare_cached("SELECT role FROM messages WHERE id = ?1 AND session_id = ?2")?
            .query_map([message_id, session_id], |r| r.get::<_, String>(0))?
            .next()
            .transpose()?;
        let Some(role) = role else {
            return Ok(None);
        };
        let mut stmt = conn.prepare_cached(
            "SELECT data FROM parts WHERE session_id = ?1 AND message_id = ?2 ORDER BY id",
        )?;
        let rows = stmt.query_map([session_id, message_id], |r| r.get::<_, String>(0))?;
        let mut lines: Vec<String> = Vec::new();
        for data in rows {
            match serde_json::from_str::<PartKind>(&data?) {
                Ok(PartKind::Text {
                    text,
                    synthetic: false,
                }) if !text.trim().is_empty() => lines.push(text),
                Ok(PartKind::Tool {
                    call_id,
                    tool,
                    state,
                    ..
                }) => {
                    let what = match state {
                        ToolState::Completed { title, .. } => title,
                        ToolState::Error { .. } => "failed".to_string(),
                        ToolState::Pending | ToolState::Running { .. } => "not finished".into(),
                    };
                    lines.push(format!("[tool call {tool}: {what} — recall \"{call_id}\"]"));
                }
                _ => {}
            }
        }
        Ok((!lines.is_empty()).then(|| MessageText {
            role,
            text: lines.join("\n"),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pith_protocol::message::{Message, Role, ToolTime};

    #[test]
    fn finds_a_pruned_output_by_call_id_in_its_session_only() {
        let s = Store::open_in_memory().unwrap();
        let a = s.create_session("/w", "p/m").unwrap();
        let b = s.create_session("/w", "p/m").unwrap();
        let mut m = Message::new(&a.id, Role::Assistant);
        m.push(PartKind::Tool {
            call_id: "call_7".into(),
            tool: "bash".into(),
            input: serde_json::json!({"command": "ls"}),
            state: ToolState::Completed {
                output: "a.txt\nb.txt".into(),
                title: "ls".into(),
                metadata: serde_json::json!({}),
                time: ToolTime {
                    start: 1,
                    end: 2,
                    compacted: Some(3),
                },
            },
        });
        m.push(PartKind::Tool {
            call_id: "call_77".into(),
            tool: "read".into(),
            input: serde_json::json!({}),
            state: ToolState::Error {
                message: "no such file".into(),
                start: None,
                end: None,
            },
        });
        s.save_message(&m).unwrap();
        assert_eq!(
            s.find_tool_output(&a.id, "call_7").unwrap(),
            Some(("bash".into(), "a.txt\nb.txt".into()))
        );
        // "call_7" is a substring of "call_77": the id must match exactly.
        assert_eq!(
            s.find_tool_output(&a.id, "call_77").unwrap().unwrap().1,
            "[the call failed] no such file"
        );
        assert_eq!(s.find_tool_output(&b.id, "call_7").unwrap(), None);
        assert_eq!(s.find_tool_output(&a.id, "call_8").unwrap(), None);
        assert_eq!(s.find_tool_output(&a.id, "").unwrap(), None);
    }

    #[test]
    fn finds_what_the_user_typed_by_the_end_of_the_message_id() {
        let s = Store::open_in_memory().unwrap();
        let a = s.create_session("/w", "p/m").unwrap();
        let mut m = Message::new(&a.id, Role::User);
        m.push(PartKind::Text {
            text: "The code word is OTTER-9.".into(),
            synthetic: false,
        });
        m.push(PartKind::Text {
            text: "pith wrote this".into(),
            synthetic: true,
        });
        m.push(PartKind::Text {
            text: "  ".into(),
            synthetic: false,
        });
        m.push(PartKind::Pasted {
            spans: vec![(17, 24)],
        });
        m.push(PartKind::Text {
            text: "And a log.".into(),
            synthetic: false,
        });
        s.save_message(&m).unwrap();
        let end = &m.id[m.id.len() - 10..];
        assert_eq!(
            s.find_user_text(&a.id, end).unwrap(),
            Some((
                "The code word is OTTER-9.\nAnd a log.".to_string(),
                vec![(17, 24)]
            ))
        );
        assert_eq!(s.find_user_text(&a.id, "NOSUCHID00").unwrap(), None);
        assert_eq!(s.find_user_text("other", end).unwrap(), None);
        assert_eq!(s.find_user_text(&a.id, "").unwrap(), None);
    }

    #[test]
    fn finds_a_message_text_by_id_in_its_session_only() {
        let s = Store::open_in_memory().unwrap();
        let a = s.create_session("/w", "p/m").unwrap();
        let b = s.create_session("/w", "p/m").unwrap();
        let mut u = Message::new(&a.id, Role::User);
        u.push(PartKind::Text {
            text: "Use port 8123.".into(),
            synthetic: false,
        });
        u.push(PartKind::Text {
            text: "pith wrote this".into(),
            synthetic: true,
        });
        s.save_message(&u).unwrap();
        let mut r = Message::new(&a.id, Role::Assistant);
        r.push(PartKind::StepStart);
        r.push(PartKind::Text {
            text: "Checking the port.".into(),
            synthetic: false,
        });
        r.push(PartKind::Tool {
            call_id: "call_3".into(),
            tool: "bash".into(),
            input: serde_json::json!({"command": "ss -lt"}),
            state: ToolState::Error {
                message: "exit 1".into(),
                start: None,
                end: None,
            },
        });
        s.save_message(&r).unwrap();
        assert_eq!(
            s.find_message_text(&a.id, &u.id).unwrap(),
            Some(MessageText {
                role: "user".into(),
                text: "Use port 8123.".into()
            })
        );
        assert_eq!(
            s.find_message_text(&a.id, &r.id).unwrap().unwrap().text,
            "Checking the port.\n[tool call bash: failed — recall \"call_3\"]"
        );
        // Scoped to the session: the same id in another session is not found.
        assert_eq!(s.find_message_text(&b.id, &u.id).unwrap(), None);
        assert_eq!(s.find_message_text(&a.id, "01NOSUCH").unwrap(), None);
        assert_eq!(s.find_message_text(&a.id, "").unwrap(), None);
    }
}
