//! A stored session replayed as `session/update`s (`session/load`): the user's prompts, the
//! answers and thinking, every tool call in its final state, the compactions. The history comes
//! from the engine ([`Pages`]): the newest page it opens the session with, then the older pages
//! it answers `Op::LoadHistory` with.

use std::path::Path;

use agent_client_protocol_schema::v1::{
    ContentBlock, ContentChunk, SessionUpdate, TextContent, ToolCall, ToolCallStatus, ToolKind,
};

use super::tools;
use super::translate::{COMPACTION_TITLE, message_chunk, thought_chunk};
use pith_protocol::event::{Event, SessionEvent};
use pith_protocol::message::{Message, PartKind, Role, ToolState};

/// A session's whole history as the engine gives it, oldest message first: the newest page
/// (`SessionLoaded`), then each older page asked for (`History`).
#[derive(Debug, Default)]
pub(crate) struct Pages {
    session: Option<String>,
    messages: Vec<Message>,
    more: bool,
    /// The session's cost when it was opened.
    pub cost: f64,
}

impl Pages {
    /// Takes in `event` when it is the page this history opens with or an older page of it;
    /// false for any other event.
    pub(crate) fn absorb(&mut self, event: &Event) -> bool {
        match event {
            Event::Session(SessionEvent::SessionLoaded {
                session,
                messages,
                more_history,
                ..
            }) if self.session.is_none() => {
                self.session = Some(session.id.clone());
                self.cost = session.cost;
                self.messages = messages.clone();
                self.more = *more_history;
                true
            }
            Event::Session(SessionEvent::History {
                session_id,
                messages,
                more,
                ..
            }) if self.session.as_deref() == Some(session_id) => {
                let newer = std::mem::replace(&mut self.messages, messages.clone());
                self.messages.extend(newer);
                self.more = *more;
                true
            }
            // a second opening page, another session's page, or no page at all
            Event::Session(_)
            | Event::Output(_)
            | Event::Context(_)
            | Event::Turn(_)
            | Event::Settings(_)
            | Event::Subagent(_) => false,
        }
    }

    /// Whether the opening page came.
    pub(crate) fn opened(&self) -> bool {
        self.session.is_some()
    }

    /// The message to ask for older ones before, while older ones remain.
    pub(crate) fn before(&self) -> Option<&str> {
        self.messages
            .first()
            .filter(|_| self.more)
            .map(|m| m.id.as_str())
    }

    pub(crate) fn messages(&self) -> &[Message] {
        &self.messages
    }
}

/// The history of `session` read as its engine would give it, for a session shown before its
/// engine may start (the workspace's trust unanswered).
pub(crate) fn stored_pages(
    store: &pith_store::Store,
    session: pith_protocol::message::Session,
) -> Pages {
    let id = session.id.clone();
    let mut pages = Pages::default();
    pages.absorb(&pith_engine::stored_history::opening(store, session));
    let mut asked = None;
    while let Some(before) = pages.before().map(str::to_string) {
        if asked.as_ref() == Some(&before) {
            break;
        }
        for event in pith_engine::stored_history::older(store, &id, &before) {
            pages.absorb(&event);
        }
        asked = Some(before);
    }
    pages
}

fn user_chunk(text: String) -> SessionUpdate {
    SessionUpdate::UserMessageChunk(ContentChunk::new(ContentBlock::Text(TextContent::new(
        text,
    ))))
}

/// The updates that show `messages` (oldest first).
pub(crate) fn updates(workspace: &Path, messages: &[Message]) -> Vec<SessionUpdate> {
    let mut out = Vec::new();
    for m in messages {
        for part in &m.parts {
            match (&part.kind, m.role) {
                // the continue line after an automatic compaction is pith's, not the user's
                (PartKind::Text { text, synthetic }, Role::User)
                    if *synthetic && pith_protocol::compaction_note::is_continue(text) =>
                {
                    out.push(thought_chunk(pith_protocol::compaction_note::CONTINUE_NOTE));
                }
                (PartKind::Text { text, synthetic }, Role::User) if !synthetic => {
                    out.push(user_chunk(
                        m.command.clone().unwrap_or_else(|| text.clone()),
                    ));
                }
                (PartKind::Text { text, synthetic }, Role::Assistant)
                    if !synthetic && !m.summary =>
                {
                    out.push(message_chunk(text.clone()));
                }
                (PartKind::Reasoning { text, .. }, _) if !text.is_empty() => {
                    out.push(thought_chunk(text.clone()));
                }
                (
                    PartKind::Tool {
                        call_id,
                        tool,
                        input,
                        state,
                    },
                    Role::Assistant,
                ) => out.push(tool_call(workspace, call_id, tool, input, state)),
                (PartKind::Compaction(c), _) => {
                    let mut text = match &c.focus {
                        Some(f) => format!("The conversation was summarised (focus: {f})."),
                        None => "The conversation was summarised.".to_string(),
                    };
                    text.push_str(&kept_and_left(c));
                    let call =
                        ToolCall::new(format!("pith-compaction-{}", part.id), COMPACTION_TITLE)
                            .kind(ToolKind::Think)
                            .status(ToolCallStatus::Completed)
                            .content(vec![tools::text(text)]);
                    out.push(SessionUpdate::ToolCall(call));
                }
                _ => {}
            }
        }
    }
    out
}

/// ` Kept: your 2 messages, todo. Left the view: 4 tool outputs.` of a stored compaction.
fn kept_and_left(c: &pith_protocol::message::CompactionPart) -> String {
    use pith_protocol::compaction_note::{kept_items, left_counts, left_items};
    let mut out = String::new();
    let kept = kept_items(&c.carried.kept(0, 0));
    if !kept.is_empty() {
        out.push_str(&format!(" Kept: {}.", kept.join(", ")));
    }
    let left = c.carried.left_view.as_ref().map(left_counts);
    let left = left_items(&left.unwrap_or_default());
    if !left.is_empty() {
        out.push_str(&format!(" Left the view: {}.", left.join(", ")));
    }
    out
}

fn tool_call(
    workspace: &Path,
    call_id: &str,
    tool: &str,
    input: &serde_json::Value,
    state: &ToolState,
) -> SessionUpdate {
    let mut call = ToolCall::new(call_id.to_string(), tools::title(tool, input))
        .kind(tools::kind(tool))
        .locations(tools::locations(workspace, tool, input))
        .raw_input(Some(input.clone()));
    let done = tools::from_state(workspace, tool, input, state);
    call = call.status(match state {
        ToolState::Completed { .. } => ToolCallStatus::Completed,
        // a call that never finished (the run was stopped) did not succeed
        _ => ToolCallStatus::Failed,
    });
    if let Some(content) = done.content {
        call = call.content(content);
    }
    SessionUpdate::ToolCall(call)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pith_protocol::message::Session;

    fn page(ids: &[&str]) -> Vec<Message> {
        ids.iter()
            .map(|id| {
                let mut m = Message::new("s1", Role::User);
                m.id = id.to_string();
                m
            })
            .collect()
    }

    fn session(id: &str, cost: f64) -> Session {
        serde_json::from_value(serde_json::json!({
            "id": id, "title": "", "directory": "/w", "model": "m/x",
            "time_created": 0, "time_updated": 0, "cost": cost
        }))
        .unwrap()
    }

    #[test]
    fn older_pages_go_before_the_opening_page_until_none_remain() {
        let mut pages = Pages::default();
        assert!(!pages.absorb(&Event::Session(SessionEvent::History {
            session_id: "s1".into(),
            messages: page(&["a"]),
            more: false,
        })));
        assert!(pages.absorb(&Event::Session(SessionEvent::SessionLoaded {
            session: session("s1", 0.25),
            messages: page(&["c", "d"]),
            more_history: true,
        })));
        assert!(pages.opened() && pages.cost == 0.25);
        assert_eq!(pages.before(), Some("c"));
        // another session's page is not this history's
        assert!(!pages.absorb(&Event::Session(SessionEvent::History {
            session_id: "s2".into(),
            messages: page(&["x"]),
            more: false,
        })));
        assert!(pages.absorb(&Event::Session(SessionEvent::History {
            session_id: "s1".into(),
            messages: page(&["a", "b"]),
            more: false,
        })));
        let ids: Vec<&str> = pages.messages().iter().map(|m| m.id.as_str()).collect();
        assert_eq!(ids, ["a", "b", "c", "d"]);
        assert_eq!(pages.before(), None);
    }
}
