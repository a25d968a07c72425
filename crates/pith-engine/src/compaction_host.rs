//! The runner as the compaction's host: the glue that lends the compactor (`compactor/`) the
//! parts a compaction uses — the planner's borrows, the session log, the context figures, the
//! hooks, the continue message (ARCHITECTURE.md §6.4).

use tokio_util::sync::CancellationToken;

use super::compactor::{CompactionHost, Compactor, Planner, SummaryHost};
use super::runner::Runner;
use super::session_log::SessionLog;
use pith_context::budget::Budget;
use pith_context::compaction::CONTINUE_MESSAGE as CONTINUE;
use pith_protocol::event::Event;
use pith_provider::ProviderError;

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
