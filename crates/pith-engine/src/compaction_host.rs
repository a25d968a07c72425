//! A turn as the compaction's host: the glue that lends the compactor (`compactor/`) the
//! parts a compaction uses — the planner's borrows, the session log, the compactor's state —
//! and what needs the whole turn (the next request and its estimates, the window learned from
//! an overflow, the context figure sent), and the hooks the turn runs around a compaction
//! (ARCHITECTURE.md §6.4).

use tokio_util::sync::CancellationToken;

use super::compactor::{CompactionHost, Compactor, Planner, SummaryHost};
use super::session_log::SessionLog;
use crate::compaction::{CompactRequest, CompactionError};
use crate::turn_context::Turn;
use pith_provider::ProviderError;

impl SummaryHost for Turn<'_> {
    /// What the compactor reads of the session to plan (see [`Planner`]).
    fn planner(&mut self) -> Planner<'_> {
        Planner {
            log: self.log,
            meter: self.meter,
            model: self.model,
            config: &self.opts.config,
            todos: &self.tools.state().todos,
        }
    }

    fn session_request(&self) -> pith_protocol::llm::ChatRequest {
        self.build_request(false)
    }

    fn estimate_request(&mut self) -> u64 {
        Turn::estimate_request(self)
    }

    fn learn_window(&mut self, err: &ProviderError) {
        Turn::learn_window(self, err, None);
    }
}

impl CompactionHost for Turn<'_> {
    fn compactor(&mut self) -> &mut Compactor {
        self.compactor
    }

    fn log(&mut self) -> &mut SessionLog {
        self.log
    }

    fn overhead(&mut self) -> u64 {
        Turn::overhead(self)
    }

    fn reset_estimate(&mut self) {
        Turn::reset_estimate(self);
    }

    fn emit_context(&mut self) {
        Turn::emit_context(self);
    }
}

impl Turn<'_> {
    /// Compacts the session (`compactor::compact`), with the `pre_compact` hooks before and
    /// the `post_compact` hooks after a compaction that went through.
    pub(crate) async fn compact(
        &mut self,
        req: CompactRequest,
        cancel: &CancellationToken,
    ) -> Result<(), CompactionError> {
        let manual = !req.trigger.is_auto();
        self.pre_compact_hooks(manual, req.trigger.focus(), cancel)
            .await;
        let result = crate::compactor::compact(self, req, cancel).await;
        if result.is_ok() {
            self.post_compact_hooks(manual, cancel).await;
        }
        result
    }
}
