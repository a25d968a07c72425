//! A stored session's history as the events an engine answers with: the newest page as the
//! `SessionLoaded` it opens the session with, and older pages as the `History` that answers
//! `Op::LoadHistory`. For a front end that must show a session before its engine may start
//! (ACP's `session/load` while the workspace's trust is unanswered); a running engine sends the
//! same events itself.

use pith_protocol::event::{Event, SessionEvent};
use pith_protocol::message::Session;
use pith_store::{PAGE_MESSAGES, Store};

/// The event an engine opens `session` with: its newest page of history.
pub fn opening(store: &Store, session: Session) -> Event {
    let page = store
        .load_page(&session.id, None, PAGE_MESSAGES)
        .unwrap_or_default();
    Event::Session(SessionEvent::SessionLoaded {
        session,
        messages: page.messages,
        more_history: page.more,
    })
}

/// The events that answer `Op::LoadHistory { session_id, before }`.
pub fn older(store: &Store, session_id: &str, before: &str) -> Vec<Event> {
    crate::shared::history_page(store, session_id, before)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pith_protocol::message::{Message, Role};

    #[test]
    fn the_opening_page_is_the_newest_and_older_pages_come_before_it() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let session = store.create_session("/w", "m/x").unwrap();
        let ids: Vec<String> = (0..PAGE_MESSAGES + 5)
            .map(|_| {
                let m = Message::new(&session.id, Role::User);
                store.save_message(&m).unwrap();
                m.id
            })
            .collect();
        let id = session.id.clone();
        let Event::Session(SessionEvent::SessionLoaded {
            messages,
            more_history: true,
            ..
        }) = opening(&store, session)
        else {
            panic!("the opening page says older messages remain");
        };
        assert_eq!(messages.len(), PAGE_MESSAGES);
        assert_eq!(messages[0].id, ids[5]);
        let older_events = older(&store, &id, &messages[0].id);
        let [Event::Session(SessionEvent::History { messages, more, .. })] =
            older_events.as_slice()
        else {
            panic!("one page: {older_events:?}");
        };
        assert!(!more);
        let got: Vec<&str> = messages.iter().map(|m| m.id.as_str()).collect();
        assert_eq!(got, ids[..5].iter().map(String::as_str).collect::<Vec<_>>());
    }
}
