//! What `recall` brings back (ARCHITECTURE.md §6.4): every item a prune or a compaction took
//! out of the model's view stays in the store under a recall id — a tool call's id for its
//! output, `paste:<end of the message id>:<n>` for a block the user pasted, a message's own id
//! for its whole text (a user message the carry budget cut, an assistant's reply). Only items
//! of the session asking are found.

use std::sync::Arc;

use pith_store::Store;

/// The item `id` of session `session_id`: (what it is, its text), or `None` when there is none.
pub(crate) fn lookup(store: &Store, session_id: &str, id: &str) -> Option<(String, String)> {
    use pith_context::paste;
    let Some((id_end, n)) = paste::parse_recall_id(id) else {
        return store
            .find_tool_output(session_id, id)
            .inspect_err(|e| tracing::error!("store: cannot look up output {id}: {e:#}"))
            .ok()
            .flatten()
            .or_else(|| message(store, session_id, id));
    };
    store
        .find_user_text(session_id, id_end)
        .inspect_err(|e| tracing::error!("store: cannot look up {id}: {e:#}"))
        .ok()
        .flatten()
        .and_then(|(text, pasted)| paste::block(&text, &pasted, n))
        .map(|block| ("pasted".to_string(), block))
}

/// The event that answers `Op::Recall { session_id, id }`: the item in full, or `found: false`.
pub(crate) fn answer(store: &Store, session_id: &str, id: &str) -> pith_protocol::event::Event {
    let found = lookup(store, session_id, id);
    let (kind, text) = found.clone().unwrap_or_default();
    pith_protocol::event::Event::Session(pith_protocol::event::SessionEvent::Recalled {
        id: id.to_string(),
        found: found.is_some(),
        kind,
        text,
    })
}

/// Message `id` of the session: ("user message" or "reply", its text).
fn message(store: &Store, session_id: &str, id: &str) -> Option<(String, String)> {
    let m = store
        .find_message_text(session_id, id)
        .inspect_err(|e| tracing::error!("store: cannot look up message {id}: {e:#}"))
        .ok()
        .flatten()?;
    let what = if m.role == "user" {
        "user message"
    } else {
        "reply"
    };
    Some((what.to_string(), m.text))
}

/// The store as the `recall` tool reads it.
pub(crate) struct Recallable(pub(crate) Arc<Store>);

impl pith_tools::OutputLookup for Recallable {
    fn tool_output(&self, session_id: &str, id: &str) -> Option<(String, String)> {
        lookup(&self.0, session_id, id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pith_protocol::message::{Message, PartKind, Role};

    /// Every kind of recall id resolves in its own session, and none in another.
    #[test]
    fn each_kind_of_id_resolves_in_its_session_only() {
        let store = Store::open_in_memory().unwrap();
        let a = store.create_session("/w", "p/m").unwrap();
        let b = store.create_session("/w", "p/m").unwrap();
        let mut u = Message::new(&a.id, Role::User);
        u.push(PartKind::Text {
            text: "See this:\n```\nline one\nline two\nline three\n```\nThe code is ORCA-5.".into(),
            synthetic: false,
        });
        store.save_message(&u).unwrap();
        let mut r = Message::new(&a.id, Role::Assistant);
        r.push(PartKind::Text {
            text: "ORCA-5 noted.".into(),
            synthetic: false,
        });
        store.save_message(&r).unwrap();
        let (what, text) = lookup(&store, &a.id, &u.id).unwrap();
        assert_eq!(what, "user message");
        assert!(text.starts_with("See this:") && text.ends_with("ORCA-5."));
        assert_eq!(
            lookup(&store, &a.id, &r.id),
            Some(("reply".into(), "ORCA-5 noted.".into()))
        );
        let paste = pith_context::paste::recall_id(&u.id, 1);
        assert_eq!(
            lookup(&store, &a.id, &paste).unwrap().1,
            "```\nline one\nline two\nline three\n```"
        );
        for id in [&u.id, &r.id, &paste] {
            assert_eq!(lookup(&store, &b.id, id), None, "{id} from another session");
        }
    }
}
