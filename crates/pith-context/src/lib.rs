//! Context management logic (ARCHITECTURE.md §4, §6). Pure: no I/O, no async.
//!
//! - [`tokens`]: the token estimator (tiktoken + learned correction ratio + per-part cache);
//! - [`exactness`]: when a lazy estimator must count with the BPE (its error bound near a threshold);
//! - [`overflow`]: `usable`, the output cap and the overflow test;
//! - [`budget`]: every figure that scales with the window (tail, summary cap, prune thresholds);
//! - [`tracker`]: the running context figure between provider reports;
//! - [`view`]: stored history → the model's view → wire messages;
//! - [`prune`]: the plan for clearing old tool outputs;
//! - [`carry`], [`anchors`], [`decisions`], [`frontier`]: what pith carries across a compaction itself;
//! - [`left_view`], [`step`]: what left the view (by recall id) and the step in hand;
//! - [`compaction`]: the pure parts of the compaction task (tail cut, request, chunks, breaker).

pub mod anchors;
pub mod bpe;
pub mod budget;
pub mod carry;
pub mod chunks;
pub mod compaction;
pub mod decisions;
pub mod exactness;
pub mod frontier;
pub mod left_view;
pub mod overflow;
pub mod paste;
pub mod prune;
pub mod retain;
pub mod said;
pub mod skills;
pub mod step;
pub mod tokens;
pub mod tracker;
pub mod view;

#[cfg(test)]
pub(crate) mod testutil;

/// The user text a Compaction part is sent as; the summary answers it.
pub const COMPACTION_QUESTION: &str = "What did we do so far?";

pub use compaction::CONTINUE_MESSAGE;
pub use overflow::{Limits, is_overflow, usable};
pub use tokens::Estimator;
pub use tracker::ContextTracker;
