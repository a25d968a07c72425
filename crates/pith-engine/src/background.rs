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
use super::reader::{self, Quiet};
use super::runner::{ModelSetup, Runner};
use super::summarise::{Written, summary_problem};
use pith_context::carry;
use pith_context::view::is_turn_start;
use pith_protocol::event::EngineState;
use pith_protocol::llm::{ChatMessage, ChatRequest, UserContent};
use pith_protocol::message::{Carried, Usage};
use pith_provider::{FaultKind, ProviderError};

/// The default start, as a share of the usable window, for providers elsewhere. A server on
/// this machine or network gets none unless configured: a second request at once would slow
/// the session's own (one slot, or the machine's cores, are shared).
pub const DEFAULT_START: f64 = 0.65;

/// A swapped-in summary may leave at most this share of the usable window; more means the
/// stretch since the summary started is too long, and a foreground compaction plans afresh.
const MOST_AFTER_SWAP: f64 = 0.75;

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

impl Runner {
    /// Where background compaction starts, as a share of the usable window; `None`: never.
    fn background_start(&self) -> Option<f64> {
        let c = &self.opts.config.compaction;
        if !c.auto || self.model.limits.context == 0 {
            return None;
        }
        // A separate compaction model writes with the dedicated request, in the foreground.
        if c.model.as_ref().is_some_and(|m| m != &self.model.name) {
            return None;
        }
        let start = match c.background {
            Some(s) => s,
            None if self.model.local => return None,
            None => DEFAULT_START,
        };
        (start > 0.0 && start < 1.0).then_some(start)
    }

    /// At a step's end: starts the background summary when the context has passed the start
    /// and none is under way (a stale one is dropped first).
    pub(super) fn maybe_start_background(&mut self) {
        let Some(start) = self.background_start() else {
            self.compactions.drop_background();
            return;
        };
        if self
            .compactions
            .background()
            .is_some_and(|b| !self.covers(b))
        {
            tracing::info!("background summary is stale; dropped");
            self.compactions.drop_background();
        }
        let budget = self.budget();
        let used = self.meter.used();
        if self.compactions.background().is_some() || (used as f64) < start * budget.usable as f64 {
            return;
        }
        if self.overflowing() {
            return;
        }
        // The summary will be swapped in when the threshold is reached: the tail planned now
        // leaves room for everything that comes until then.
        let overhead = self.overhead();
        let room = budget.usable.saturating_sub(used);
        let target = budget
            .target_after
            .saturating_sub(room)
            .max(overhead + budget.summary_cap);
        let (cut, carried) = self.plan_cut_to(&budget, overhead, true, target);
        if cut.summarise.is_empty() {
            return;
        }
        let mut instruction = self.inline_instruction(&cut, None);
        if let Some(w) = pith_context::compaction::words_note(
            &carried.uncarried,
            budget.summary_cap,
            self.meter.estimator(),
        ) {
            instruction = format!("{instruction}\n\n{w}");
        }
        let Some(inline) = self.inline_budget(&budget, &instruction) else {
            return;
        };
        let mut request = self.build_request(false);
        request.messages.push(ChatMessage::User {
            content: vec![UserContent::Text { text: instruction }],
        });
        request.max_tokens = Some(inline.summary_cap.min(u64::from(u32::MAX)) as u32);
        let covered: Vec<String> = self.log.view()[..cut.tail.start]
            .iter()
            .map(|m| m.id.clone())
            .collect();
        // Its own token: it outlives the turn, and an interrupt drops it (`user_turn`).
        let token = CancellationToken::new();
        let task = tokio::spawn(write(
            self.model.clone(),
            request,
            inline.summary_cap,
            token.clone(),
        ));
        tracing::info!(
            used,
            covered = covered.len(),
            "background summary started at {:.0}% of the usable window",
            100.0 * used as f64 / budget.usable.max(1) as f64
        );
        self.compactions.set_background(Background {
            covered,
            carried,
            model: self.model.name.clone(),
            window: self.model.limits.context,
            cancel: token,
            task,
        });
    }

    /// Whether the view still starts with the messages `b` covers, for the same model.
    fn covers(&self, b: &Background) -> bool {
        b.model == self.model.name
            && b.window == self.model.limits.context
            && self.log.view().len() > b.covered.len()
            && self
                .log
                .view()
                .iter()
                .zip(&b.covered)
                .all(|(m, id)| &m.id == id)
    }

    /// At the threshold: swaps in the background summary when there is one that still covers
    /// the start of the view (waiting for it if it is still being written). `Ok(true)`: the
    /// context is compacted; `Ok(false)`: compact in the foreground.
    pub(super) async fn swap_in_background(
        &mut self,
        then: Then,
        cancel: &CancellationToken,
    ) -> Result<bool, CompactionError> {
        let Some(mut b) = self.compactions.take_background() else {
            return Ok(false);
        };
        if !self.covers(&b) {
            tracing::info!("background summary is stale; compacting in the foreground");
            return Ok(false);
        }
        let Some(written) = self.finished_summary(&mut b, cancel).await? else {
            return Ok(false);
        };
        let n = b.covered.len();
        let carried = self.carried_at_swap(std::mem::take(&mut b.carried), n);
        if self.swap_leaves_too_much(&written, &carried, n) {
            return Ok(false);
        }
        let before = self.meter.used();
        let estimator = self.meter.estimator_mut();
        let replaced: u64 = self.log.view()[..n]
            .iter()
            .map(|m| estimator.message(m))
            .sum();
        self.compactions.count();
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

    /// What pith carries across the swap, as planned with the summary and brought up to date:
    /// a request carried whole that is no longer the current one (the view's messages from
    /// `n` on start a turn) joins the user's messages; the todo list is the current one.
    fn carried_at_swap(&self, mut carried: Carried, n: usize) -> Carried {
        if self.log.view()[n..].iter().any(is_turn_start)
            && let Some(r) = carried.current_request.take()
        {
            carried.sources.push(pith_protocol::message::CarrySource {
                id: None,
                text: r.clone(),
                pasted: Vec::new(),
            });
            carried.user_messages.insert(0, r);
        }
        if let Ok(t) = self.tools.state().todos.lock()
            && t.as_array().is_some_and(|a| !a.is_empty())
        {
            carried.todos = Some(t.clone());
        }
        carried
    }

    /// The swap would leave more than [`MOST_AFTER_SWAP`] of the usable window (the summary
    /// is discarded, its cost counted).
    fn swap_leaves_too_much(&mut self, written: &Written, carried: &Carried, n: usize) -> bool {
        let budget = self.budget();
        let overhead = self.overhead();
        let estimator = self.meter.estimator_mut();
        let kept: u64 = self.log.view()[n..]
            .iter()
            .map(|m| estimator.message(m))
            .sum();
        let summary = self.meter.text(&written.text).min(budget.summary_cap);
        let after = overhead + summary + self.meter.text(&carry::render(carried)) + kept;
        if after as f64 > MOST_AFTER_SWAP * budget.usable as f64 {
            tracing::info!(
                after,
                "background summary leaves too much; compacting in the foreground"
            );
            self.log
                .add_cost(pith_provider::cost::cost(&written.usage, &self.model.info));
            return true;
        }
        false
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
