//! Background compaction (ARCHITECTURE.md §6.6): from an earlier point of the usable window
//! (`compaction.background`), the summary of everything before the verbatim tail is written
//! while the session goes on. The request is the session's own next request with the summary
//! instruction appended (the cache-friendly form), sent from a task of its own. When the
//! threshold is reached the finished summary is swapped in at once — the messages it covers
//! have not changed — and what came since stays word for word. A summary that is not ready is
//! waited for (it is already under way); one that is stale (the covered messages changed: an
//! undo, a manual compaction, another session or model), failed, or leaves too much is
//! discarded and the compaction happens in the foreground as before. One at a time; never when
//! `auto` is off.

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::compaction::{CompactionError, Installed, Then};
use super::compactor::{Written, inline_budget_of, summary_problem};
use super::reader::{self, Quiet};
use super::runner::{ModelSetup, Runner};
use pith_context::budget::Budget;
use pith_protocol::event::EngineState;
use pith_protocol::llm::{ChatMessage, ChatRequest, UserContent};
use pith_protocol::message::{Carried, Message, Usage};
use pith_provider::{FaultKind, ProviderError};

/// The default start, as a share of the usable window, for providers elsewhere. A server on
/// this machine or network gets none unless configured: a second request at once would slow
/// the session's own (one slot, or the machine's cores, are shared).
pub const DEFAULT_START: f64 = 0.65;

/// A swapped-in summary may leave at most this share of the usable window; more means the
/// stretch since the summary started is too long, and a foreground compaction plans afresh.
pub(super) const MOST_AFTER_SWAP: f64 = 0.75;

/// A summary being written in the background, and what it covers.
pub(super) struct Background {
    /// Ids of the view's messages the summary covers, oldest first (the view's first
    /// `covered.len()` messages when it was started).
    covered: Vec<String>,
    /// What pith carries across, planned with it.
    carried: Carried,
    /// The model and window it was planned for.
    model: String,
    window: u64,
    cancel: CancellationToken,
    task: JoinHandle<Result<Written, ProviderError>>,
}

impl Drop for Background {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

impl Background {
    /// Whether `view` still starts with the messages this summary covers, for `model`.
    pub(super) fn covers(&self, view: &[Message], model: &ModelSetup) -> bool {
        self.model == model.name
            && self.window == model.limits.context
            && view.len() > self.covered.len()
            && view.iter().zip(&self.covered).all(|(m, id)| &m.id == id)
    }
}

/// A background summary as planned: what it covers and carries, its request and cap.
struct Planned {
    covered: Vec<String>,
    carried: Carried,
    request: ChatRequest,
    cap: u64,
}

impl Runner {
    /// At a step's end: starts the background summary when the context has passed the start
    /// and none is under way (a stale one is dropped first).
    pub(super) fn maybe_start_background(&mut self) {
        let Some(start) = self.planner().background_start() else {
            self.compactor.drop_background();
            return;
        };
        self.compactor
            .drop_stale_background(self.log.view(), &self.model);
        let budget = self.budget();
        let used = self.meter.used();
        if self.compactor.has_background() || (used as f64) < start * budget.usable as f64 {
            return;
        }
        if self.overflowing() {
            return;
        }
        if let Some(planned) = self.plan_background(&budget, used) {
            self.start_background(planned, &budget, used);
        }
    }

    /// Plans the background summary at `used` tokens: the summary will be swapped in when the
    /// threshold is reached, so the tail planned now leaves room for everything that comes
    /// until then. `None` when there is nothing to summarise or no room for the request.
    fn plan_background(&mut self, budget: &Budget, used: u64) -> Option<Planned> {
        let overhead = self.overhead();
        let room = budget.usable.saturating_sub(used);
        let target = budget
            .target_after
            .saturating_sub(room)
            .max(overhead + budget.summary_cap);
        let (cut, carried) = self.planner().plan_cut_to(budget, overhead, true, target);
        if cut.summarise.is_empty() {
            return None;
        }
        let mut instruction = self.planner().inline_instruction(&cut, None);
        if let Some(w) = pith_context::compaction::words_note(
            &carried.uncarried,
            budget.summary_cap,
            self.meter.estimator(),
        ) {
            instruction = format!("{instruction}\n\n{w}");
        }
        let inline = inline_budget_of(self, budget, &instruction)?;
        let mut request = self.build_request(false);
        request.messages.push(ChatMessage::User {
            content: vec![UserContent::Text { text: instruction }],
        });
        request.max_tokens = Some(inline.summary_cap.min(u64::from(u32::MAX)) as u32);
        let covered: Vec<String> = self.log.view()[..cut.tail.start]
            .iter()
            .map(|m| m.id.clone())
            .collect();
        Some(Planned {
            covered,
            carried,
            request,
            cap: inline.summary_cap,
        })
    }

    /// Starts writing the planned summary in a task of its own; the compactor keeps it.
    fn start_background(&mut self, planned: Planned, budget: &Budget, used: u64) {
        // Its own token: it outlives the turn, and an interrupt drops it (`user_turn`).
        let token = CancellationToken::new();
        let task = tokio::spawn(write(
            self.model.clone(),
            planned.request,
            planned.cap,
            token.clone(),
        ));
        tracing::info!(
            used,
            covered = planned.covered.len(),
            "background summary started at {:.0}% of the usable window",
            100.0 * used as f64 / budget.usable.max(1) as f64
        );
        self.compactor.set_background(Background {
            covered: planned.covered,
            carried: planned.carried,
            model: self.model.name.clone(),
            window: self.model.limits.context,
            cancel: token,
            task,
        });
    }

    /// At the threshold: swaps in the background summary when there is one that still covers
    /// the start of the view (waiting for it if it is still being written). `Ok(true)`: the
    /// context is compacted; `Ok(false)`: compact in the foreground.
    pub(super) async fn swap_in_background(
        &mut self,
        then: Then,
        cancel: &CancellationToken,
    ) -> Result<bool, CompactionError> {
        let Some(mut b) = self.compactor.take_background() else {
            return Ok(false);
        };
        if !b.covers(self.log.view(), &self.model) {
            tracing::info!("background summary is stale; compacting in the foreground");
            return Ok(false);
        }
        let Some(written) = self.finished_summary(&mut b, cancel).await? else {
            return Ok(false);
        };
        let n = b.covered.len();
        let carried = self
            .planner()
            .carried_at_swap(std::mem::take(&mut b.carried), n);
        let (budget, overhead) = (self.budget(), self.overhead());
        if self
            .planner()
            .swap_leaves_too_much(&written, &carried, n, &budget, overhead)
        {
            // the summary is discarded, its cost counted
            self.log
                .add_cost(pith_provider::cost::cost(&written.usage, &self.model.info));
            return Ok(false);
        }
        let before = self.meter.used();
        let replaced = self.planner().tokens_of(0..n);
        self.compactor.count();
        self.emit(pith_protocol::event::Event::CompactionStarted {
            auto: true,
            overflow: false,
            focus: None,
        });
        let tail = n..self.log.view().len();
        self.install(Installed {
            written,
            setup: None,
            auto: true,
            overflow: false,
            focus: None,
            tail,
            carried,
            before,
            replaced,
            then,
            background: true,
        })?;
        Ok(true)
    }

    /// The background summary, waited for when it is still being written; `None` when it
    /// failed.
    async fn finished_summary(
        &self,
        b: &mut Background,
        cancel: &CancellationToken,
    ) -> Result<Option<Written>, CompactionError> {
        if !b.task.is_finished() {
            self.state(EngineState::Compacting, None);
            tracing::info!("waiting for the background summary");
        }
        let written = tokio::select! {
            r = &mut b.task => r,
            _ = cancel.cancelled() => return Err(CompactionError::Interrupted),
        };
        match written {
            Ok(Ok(w)) => Ok(Some(w)),
            Ok(Err(e)) => {
                tracing::warn!("background summary failed: {}", e.message);
                Ok(None)
            }
            Err(e) => {
                tracing::warn!("background summary task: {e}");
                Ok(None)
            }
        }
    }
}

/// Writes the summary with `model`: the request as planned, retried on the provider's
/// transient faults (quietly: the session goes on), and asked once more with a note when it
/// misses sections or was cut at its cap.
async fn write(
    model: ModelSetup,
    mut request: ChatRequest,
    cap: u64,
    cancel: CancellationToken,
) -> Result<Written, ProviderError> {
    let provider = model.provider.clone();
    let mut quiet = Quiet { model };
    let mut usage = Usage::default();
    let mut calls = 0;
    let mut noted = false;
    loop {
        let (text, u, finish) = reader::complete_text(
            &mut quiet,
            provider.as_ref(),
            &request,
            "the background summary did not end",
            &cancel,
        )
        .await?;
        calls += 1;
        if let Some(u) = u {
            usage.add(&u);
        }
        if text.trim().is_empty() {
            return Err(ProviderError::new(
                FaultKind::BadRequest,
                "the background summary request brought no text",
            ));
        }
        match summary_problem(&text, finish.as_ref(), cap) {
            Some(note) if !noted => {
                noted = true;
                if let Some(ChatMessage::User { content }) = request.messages.last_mut() {
                    content.push(UserContent::Text { text: note });
                }
            }
            _ => {
                return Ok(Written {
                    text,
                    usage,
                    calls,
                    inline: true,
                });
            }
        }
    }
}
