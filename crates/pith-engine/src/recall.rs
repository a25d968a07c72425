//! What `recall` brings back (ARCHITECTURE.md §6.4): every item a prune or a compaction took
//! out of the model's view stays in the store under a recall id — a tool call's id for its
//! output, `paste:<end of the message id>:<n>` for a block the user pasted.

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
            .flatten();
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

/// The store as the `recall` tool reads it.
pub(crate) struct Recallable(pub(crate) Arc<Store>);

impl pith_tools::OutputLookup for Recallable {
    fn tool_output(&self, session_id: &str, id: &str) -> Option<(String, String)> {
        lookup(&self.0, session_id, id)
    }
}
