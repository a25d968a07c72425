//! Repairing what a crash left in a session, when a writer opens it (with the session's lock).
//!
//! A killed pith leaves three kinds of debris, all in the most recent messages, which are the
//! ones the model's view holds:
//! - a compaction message whose summary was never written: it would be sent to the model as a
//!   bare "What did we do so far?" in every later request — it is deleted;
//! - tool calls still `pending` or `running`: they are marked as errors ("interrupted");
//! - an assistant step that never finished: it is marked interrupted, keeping what streamed.
//!
//! [`Store::load_view`](super::Store::load_view) also leaves such compaction messages out for
//! readers, and does not trust a compaction point that names no message.

use super::Result;

use super::Store;
use pith_protocol::llm::FinishReason;
use pith_protocol::message::{Message, MessageError, PartKind, Role, ToolState, now_ms};

/// The error a tool call cut off by a crash is left with.
pub(crate) const CRASH_INTERRUPTED_TOOL: &str =
    "Tool execution was interrupted: pith stopped before it finished";
/// The error of an assistant step cut off by a crash.
pub(crate) const CRASH_INTERRUPTED_STEP: &str =
    "interrupted: pith stopped before this step finished";

/// What a repair changed.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Repairs {
    /// Compaction messages without a summary, deleted.
    pub stray_compactions: usize,
    /// Tool calls marked interrupted.
    pub tools: usize,
    /// Assistant steps marked interrupted.
    pub steps: usize,
}

impl Repairs {
    pub fn is_empty(&self) -> bool {
        *self == Repairs::default()
    }
}

/// Whether a completed compaction (a compaction message and a summary answering it) is among
/// `messages`.
pub(crate) fn has_completed_compaction(messages: &[Message]) -> bool {
    let compactions = messages
        .iter()
        .filter(|m| m.is_compaction_message())
        .count();
    compactions > stray_compactions(messages).len()
}

/// Indices of compaction messages that no completed summary answers.
pub(crate) fn stray_compactions(messages: &[Message]) -> Vec<usize> {
    let mut stray = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        if !m.is_compaction_message() {
            continue;
        }
        let answered = messages[i + 1..]
            .iter()
            .any(|s| s.is_completed_summary() && s.parent_id.as_deref().is_none_or(|p| p == m.id));
        if !answered {
            stray.push(i);
        }
    }
    stray
}

impl Store {
    /// Repairs `messages` (the session's view, as loaded) in memory and in the store. Call it
    /// only while holding the session's lock, before anything runs on the session.
    pub fn repair(&self, messages: &mut Vec<Message>) -> Result<Repairs> {
        let mut repairs = Repairs::default();
        for i in stray_compactions(messages).into_iter().rev() {
            let m = messages.remove(i);
            tracing::warn!(message = %m.id, "removing a compaction that never got its summary");
            self.delete_message(&m.id)?;
            repairs.stray_compactions += 1;
        }
        let now = now_ms();
        for m in messages.iter_mut() {
            let mut touched = false;
            for p in &mut m.parts {
                if let PartKind::Tool { state, .. } = &mut p.kind
                    && !state.is_done()
                {
                    let start = match state {
                        ToolState::Running { start, .. } => Some(*start),
                        _ => None,
                    };
                    *state = ToolState::Error {
                        message: CRASH_INTERRUPTED_TOOL.into(),
                        start,
                        end: Some(now),
                    };
                    repairs.tools += 1;
                    touched = true;
                }
            }
            let unfinished = m.role == Role::Assistant
                && m.time_completed.is_none()
                && m.error.is_none()
                && !m.summary;
            if unfinished {
                m.error = Some(MessageError::Failed(CRASH_INTERRUPTED_STEP.into()));
                m.finish = Some(FinishReason::Interrupted);
                m.time_completed = Some(now);
                repairs.steps += 1;
                touched = true;
            }
            if touched {
                self.save_message(m)?;
            }
        }
        if !repairs.is_empty() {
            tracing::info!(?repairs, "repaired what a crash left in the session");
        }
        Ok(repairs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pith_protocol::message::{CompactionPart, Part};

    fn user(session: &str, text: &str) -> Message {
        let mut m = Message::new(session, Role::User);
        m.push(PartKind::Text {
            text: text.into(),
            synthetic: false,
        });
        m
    }

    fn compaction(session: &str) -> Message {
        let mut m = Message::new(session, Role::User);
        m.push(PartKind::Compaction(CompactionPart {
            auto: true,
            overflow: false,
            focus: None,
            tail_start: None,
            carried: Default::default(),
        }));
        m
    }

    fn summary(session: &str, parent: &str) -> Message {
        let mut m = Message::new(session, Role::Assistant);
        m.summary = true;
        m.parent_id = Some(parent.into());
        m.finish = Some(FinishReason::Stop);
        m.time_completed = Some(1);
        m.push(PartKind::Text {
            text: "summary".into(),
            synthetic: false,
        });
        m
    }

    fn tool(state: ToolState) -> PartKind {
        PartKind::Tool {
            call_id: "c".into(),
            tool: "bash".into(),
            input: serde_json::json!({"command": "sleep 100"}),
            state,
        }
    }

    #[test]
    fn a_crash_mid_compaction_and_mid_tool_is_repaired_in_memory_and_in_the_store() {
        let store = Store::open_in_memory().unwrap();
        let s = store.create_session("/w", "p/m").unwrap();
        let first = user(&s.id, "hi");
        let done_c = compaction(&s.id);
        let done_s = summary(&s.id, &done_c.id);
        let mut a = Message::new(&s.id, Role::Assistant);
        a.push(PartKind::StepStart);
        a.push(PartKind::Text {
            text: "let me look".into(),
            synthetic: false,
        });
        a.push(tool(ToolState::Running {
            start: 5,
            title: None,
        }));
        a.push(tool(ToolState::Pending));
        a.time_completed = Some(2);
        let stray = compaction(&s.id);
        let mut b = Message::new(&s.id, Role::Assistant);
        b.push(PartKind::StepStart);
        b.push(PartKind::Text {
            text: "half an ans".into(),
            synthetic: false,
        });
        let all = vec![first, done_c, done_s, a, stray.clone(), b];
        for m in &all {
            store.save_message(m).unwrap();
        }

        let mut view = store.load_all(&s.id).unwrap();
        let r = store.repair(&mut view).unwrap();
        assert_eq!(
            r,
            Repairs {
                stray_compactions: 1,
                tools: 2,
                steps: 1
            }
        );
        assert!(!view.iter().any(|m| m.id == stray.id));
        // Stored the same way: a second load needs no repair, and the model never sees the
        // stray question.
        let mut again = store.load_all(&s.id).unwrap();
        assert_eq!(again, view);
        assert!(store.repair(&mut again).unwrap().is_empty());
        // (That the repaired session asks the compaction question once in a request is checked
        // where the conversion lives: pith-engine's `stored_view_tests`.)
        let compactions = again.iter().filter(|m| m.is_compaction_message()).count();
        assert_eq!(compactions, 1, "only the completed compaction is left");
        let a = &again[3];
        let states: Vec<&ToolState> = a
            .parts
            .iter()
            .filter_map(|p: &Part| match &p.kind {
                PartKind::Tool { state, .. } => Some(state),
                _ => None,
            })
            .collect();
        assert!(states.iter().all(|s| matches!(
            s,
            ToolState::Error { message, .. } if message == CRASH_INTERRUPTED_TOOL
        )));
        let b = again.last().unwrap();
        assert_eq!(
            b.error,
            Some(MessageError::Failed(CRASH_INTERRUPTED_STEP.into()))
        );
        // What streamed is kept.
        assert!(matches!(&b.parts[1].kind, PartKind::Text { text, .. } if text == "half an ans"));
    }
}
