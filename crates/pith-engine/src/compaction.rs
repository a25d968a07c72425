//! What a compaction is asked for with (its trigger, what the turn does after it) and why one
//! does not happen, and the runner as the compaction's host: the glue that lends the compactor
//! (`compactor/`) the parts a compaction uses — the planner's borrows, the session log, the
//! context figures, the hooks, the continue message (ARCHITECTURE.md §6.4).

use tokio_util::sync::CancellationToken;

use super::compactor::{CompactionHost, Compactor, Planner, SummaryHost};
use super::runner::Runner;
use super::session_log::SessionLog;
use super::turn::CONTINUE;
use pith_context::budget::Budget;
use pith_protocol::event::Event;
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
    pub fn is_auto(&self) -> bool {
        !matches!(self, Trigger::Manual { .. })
    }

    pub fn focus(&self) -> Option<&str> {
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
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CompactionError {
    /// Nothing worth compacting (manual only): said to the user; nothing changed.
    #[error("{0}")]
    NothingToCompact(String),
    /// The breaker: compacting cannot make the conversation fit, or would loop.
    #[error("{0}")]
    Breaker(String),
    #[error("compaction interrupted")]
    Interrupted,
    #[error("compaction model {model}: {reason}")]
    Model { model: String, reason: String },
    #[error("compaction failed: {}", .0.message)]
    Provider(ProviderError),
    #[error("the compaction model returned an empty summary")]
    EmptySummary,
}

impl SummaryHost for Runner {
    /// What the compactor reads of the session to plan (see [`Planner`]).
    fn planner(&mut self) -> Planner<'_> {
        Planner {
            log: &self.log,
            meter: &mut self.meter,
            model: &self.model,
            config: &self.opts.config,
            todos: &self.tools.state().todos,
        }
    }

    fn session_request(&self) -> pith_protocol::llm::ChatRequest {
        self.build_request(false)
    }

    fn estimate_request(&mut self) -> u64 {
        Runner::estimate_request(self)
    }

    fn learn_window(&mut self, err: &ProviderError) {
        Runner::learn_window(self, err, None);
    }
}

impl CompactionHost for Runner {
    fn compactor(&mut self) -> &mut Compactor {
        &mut self.compactor
    }

    fn log(&mut self) -> &mut SessionLog {
        &mut self.log
    }

    fn budget(&self) -> Budget {
        Runner::budget(self)
    }

    fn overhead(&mut self) -> u64 {
        Runner::overhead(self)
    }

    fn reset_estimate(&mut self) {
        Runner::reset_estimate(self);
    }

    fn overflowing(&self) -> bool {
        Runner::overflowing(self)
    }

    fn emit(&self, event: Event) {
        Runner::emit(self, event);
    }

    fn touch_session(&mut self) {
        Runner::touch_session(self);
    }

    fn emit_context(&mut self) {
        Runner::emit_context(self);
    }

    fn push_continue(&mut self) {
        self.push_user_text(CONTINUE, true);
    }

    async fn pre_compact_hooks(
        &mut self,
        manual: bool,
        focus: Option<&str>,
        cancel: &CancellationToken,
    ) {
        Runner::pre_compact_hooks(self, manual, focus, cancel).await;
    }

    async fn post_compact_hooks(&mut self, manual: bool, cancel: &CancellationToken) {
        Runner::post_compact_hooks(self, manual, cancel).await;
    }
}
