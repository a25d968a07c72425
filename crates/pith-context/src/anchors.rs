//! The anchor index (ARCHITECTURE.md §6.4): exact identifiers a later step is likely to need,
//! taken without a model from what leaves the view — file paths with line numbers, commands and
//! their exit status, error codes and first lines, URLs, hashes, ticket ids, ports, versions,
//! numbers the user typed — deduplicated, newest first, each with its recall id, within a
//! budget that scales with the window.

use pith_protocol::carried::Anchor;
use pith_protocol::message::Message;

use super::tokens::Estimator;

/// The anchors of `summarised` (the messages leaving the view, oldest first) merged with the
/// `previous` compaction's (newer first wins), bounded to `budget` tokens as [`render`]ed.
pub fn index(
    summarised: &[Message],
    previous: &[Anchor],
    budget: u64,
    est: &Estimator,
) -> Vec<Anchor> {
    let _ = (summarised, budget, est);
    previous.to_vec()
}

/// The anchors as the section pith appends after a summary; empty when there are none.
pub fn render(anchors: &[Anchor]) -> String {
    let _ = anchors;
    String::new()
}
