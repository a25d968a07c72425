//! A turn as the compaction's host: the glue that lends the compactor (`compactor/`) the
//! parts a compaction uses — the planner's borrows, the session log, the compactor's state —
//! and what needs the whole turn (the next request, the window learned from an overflow, the
//! context figure sent), and the hooks the turn runs around a compaction (ARCHITECTURE.md
//! §6.4).

use tokio_util::sync::CancellationToken;

use super::compactor::{CompactionHost, Compactor, Planner, SummaryHost};
use super::session_log::SessionLog;
use crate::compaction::{CompactRequest, CompactionError};
use crate::turn_context::Turn;
use pith_provider::ProviderError;

impl Turn<'_> {
    /// What the compactor reads of the session to plan, and what the request's estimates are
    /// made of (see [`Planner`]).
    pub(crate) fn planner(&mut self) -> Planner<'_> {
        Planner {
            log: self.log,
            system: self.system,
            specs: self.tools.specs(),
            meter: self.meter,
            model: self.model,
            config: &self.opts.config,
            todos: &self.tools.state().todos,
            jobs: self.tools.state().jobs.list(),
            cache: Default::default(),
        }
    }
}

impl SummaryHost for Turn<'_> {
    fn planner(&mut self) -> Planner<'_> {
        Turn::planner(self)
    }

    fn session_request(&self) -> pith_protocol::llm::ChatRequest {
        self.build_request(false)
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
