//! What a compaction is asked for with (its trigger, what the turn does after it) and why one
//! does not happen (ARCHITECTURE.md §6.4). A leaf: the compactor (`compactor/`) and its hosts
//! import it, it imports neither.

use crate::causes::with_causes;
use crate::factory::ModelError;
use pith_provider::ProviderError;

/// What started a compaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Trigger {
    /// `/compact [focus]`.
    Manual { focus: Option<String> },
    /// The context reached the usable window (at a step's end or before a request).
    Auto,
    /// The provider rejected a request as too long; `prompt_tokens` is what it counted, when
    /// its error said.
    Overflow { prompt_tokens: Option<u64> },
}

impl Trigger {
    pub(crate) fn is_auto(&self) -> bool {
        !matches!(self, Trigger::Manual { .. })
    }

    pub(crate) fn focus(&self) -> Option<&str> {
        match self {
            Trigger::Manual { focus } => focus.as_deref(),
            _ => None,
        }
    }
}

/// What the turn does once the context is compacted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Then {
    /// The turn goes on: an automatic compaction adds the continue message.
    Continue,
    /// The turn is over (or this was `/compact`).
    Stop,
}

/// A request to compact the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct CompactRequest {
    pub trigger: Trigger,
    pub then: Then,
}

/// Why a compaction did not happen or stopped the turn.
#[derive(Debug, thiserror::Error)]
pub enum CompactionError {
    /// Nothing worth compacting (manual only): said to the user; nothing changed.
    #[error("{0}")]
    NothingToCompact(String),
    /// The breaker: compacting cannot make the conversation fit, or would loop.
    #[error("{0}")]
    Breaker(String),
    #[error("compaction interrupted")]
    Interrupted,
    #[error("compaction model {model}: {}", with_causes(.source))]
    Model {
        model: String,
        #[source]
        source: ModelError,
    },
    #[error("compaction failed: {}", .0.message)]
    Provider(ProviderError),
    #[error("the compaction model returned an empty summary")]
    EmptySummary,
}
