//! A stored session's history as the events an engine answers with: the newest page as the
//! `SessionLoaded` it opens the session with, and older pages as the `History` that answers
//! `Op::LoadHistory`. For a front end that must show a session before its engine may start
//! (ACP's `session/load` while the workspace's trust is unanswered); a running engine sends the
//! same events itself.

use pith_protocol::event::Event;
use pith_protocol::message::Session;
use pith_store::{PAGE_MESSAGES, Store};

/// The event an engine opens `session` with: its newest page of history.
pub fn opening(store: &Store, session: Session) -> Event {
    let page = store
        .load_page(&session.id, None, PAGE_MESSAGES)
        .unwrap_or_default();
    Event::SessionLoaded {
        session,
        messages: page.messages,
        more_history: page.more,
        submission: None,
    }
}

/// The events that answer `Op::LoadHistory { session_id, before }`.
pub fn older(store: &Store, session_id: &str, before: &str) -> Vec<Event> {
    crate::shared::history_page(store, session_id, before)
}
