//! Tool outputs by call id, for the `recall` tool: pruning and compaction take outputs out of
//! the model's view, never out of the store.

use crate::message::{PartKind, ToolState};
use crate::tools::OutputLookup;

use super::Store;

impl Store {
    /// The tool name and output (or error message) of call `call_id` in `session_id`.
    pub fn find_tool_output(
        &self,
        session_id: &str,
        call_id: &str,
    ) -> anyhow::Result<Option<(String, String)>> {
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

impl OutputLookup for Store {
    fn tool_output(&self, session_id: &str, call_id: &str) -> Option<(String, String)> {
        self.find_tool_output(session_id, call_id)
            .inspect_err(|e| tracing::error!("store: cannot look up output {call_id}: {e:#}"))
            .ok()
            .flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{Message, Role, ToolTime};

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
}
