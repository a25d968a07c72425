//! The summary written ahead (ARCHITECTURE.md §6.6): from an earlier point of the usable window
//! (`compaction.background`), the summary of everything before the verbatim tail is written
//! while the session goes on. The request is the session's own next request with the summary
//! instruction appended (the cache-friendly form), sent through the one stream reader from a
//! task of its own, quietly; the compactor keeps it until it is swapped in, found stale or
//! dropped. When the threshold is reached the finished summary is swapped in at once — the
//! messages it covers have not changed — and what came since stays word for word. A summary
//! that is not ready is waited for (it is already under way); one that is stale (the covered
//! messages changed: an undo, a manual compaction, another session or model), failed, or leaves
//! too much is discarded and the compaction happens in the foreground as before. One at a
//! time; never when `auto` is off.

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::compact::{Installed, install};
use super::{CompactionHost, Written, inline_budget_of, summary_problem};
use crate::compaction::{CompactionError, Then};
use crate::model::ModelSetup;
use crate::reader::{self, Quiet};
use pith_context::budget::Budget;
use pith_protocol::event::{ContextEvent, EngineState};
use pith_protocol::llm::{ChatMessage, ChatRequest, UserContent};
use pith_protocol::message::{Carried, Message, Usage};
use pith_provider::{FaultKind, ProviderError};

/// The default start, as a share of the usable window, for providers elsewhere. A server on
/// this machine or network gets none unless configured: a second request at once would slow
/// the session's own (one slot, or the machine's cores, are shared).
pub(crate) const DEFAULT_START: f64 = 0.65;

/// A swapped-in summary may leave at most this share of the usable window; more means the
/// stretch since the summary started is too long, and a foreground compaction plans afresh.
pub(crate) const MOST_AFTER_SWAP: f64 = 0.75;

/// A summary being written in the background, and what it covers.
pub(crate) struct Background {
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
    /// How the task ended, once it has (`Some(true)`: written, `Some(false)`: failed), for an
    /// idle engine to notice.
    ended: tokio::sync::watch::Receiver<Option<bool>>,
}

impl Drop for Background {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

impl Background {
    /// Starts writing `planned` with `model` in a task of its own. Its own token: it outlives
    /// the turn, and an interrupt drops it (`user_turn`).
    pub(crate) fn start(planned: Planned, model: ModelSetup) -> Background {
        let cancel = CancellationToken::new();
        let (name, window) = (model.name.clone(), model.limits.context);
        let (ended_tx, ended) = tokio::sync::watch::channel(None);
        let writing = write(model, planned.request, planned.cap, cancel.clone());
        let task = tokio::spawn(async move {
            let written = writing.await;
            let _ = ended_tx.send(Some(written.is_ok()));
            written
        });
        Background {
            covered: planned.covered,
            carried: planned.carried,
            model: name,
            window,
            cancel,
            task,
            ended,
        }
    }

    /// A receiver of how the summary ended, once it has (see [`Background::written`]).
    pub(crate) fn ended(&self) -> tokio::sync::watch::Receiver<Option<bool>> {
        self.ended.clone()
    }

    /// The summary is written and waits to be installed.
    pub(crate) fn written(&self) -> bool {
        *self.ended.borrow() == Some(true)
    }

    /// How many of the view's first messages it covers.
    pub(crate) fn covered(&self) -> usize {
        self.covered.len()
    }

    /// What pith carries across, as planned with it.
    pub(crate) fn take_carried(&mut self) -> Carried {
        std::mem::take(&mut self.carried)
    }

    /// It is still being written.
    pub(crate) fn is_writing(&self) -> bool {
        self.ended.borrow().is_none() && !self.task.is_finished()
    }

    /// The summary, waited for when it is still being written; `None` when it failed.
    pub(crate) async fn finished(
        &mut self,
        cancel: &CancellationToken,
    ) -> Result<Option<Written>, CompactionError> {
        if self.is_writing() {
            tracing::info!("waiting for the background summary");
        }
        let written = tokio::select! {
            r = &mut self.task => r,
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

    /// Whether `view` still starts with the messages this summary covers, for `model`.
    pub(crate) fn covers(&self, view: &[Message], model: &ModelSetup) -> bool {
        self.model == model.name
            && self.window == model.limits.context
            && view.len() > self.covered.len()
            && view.iter().zip(&self.covered).all(|(m, id)| &m.id == id)
    }
}

/// A background summary as planned: what it covers and carries, its request and cap.
pub(crate) struct Planned {
    /// Ids of the view's messages it covers, oldest first.
    pub covered: Vec<String>,
    pub carried: Carried,
    pub request: ChatRequest,
    pub cap: u64,
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

/// At a step's end: starts the background summary when the context has passed the start and
/// none is under way (a stale one is dropped first).
pub(crate) fn maybe_start_background<H: CompactionHost>(host: &mut H) {
    let Some(start) = host.planner().background_start() else {
        host.compactor().drop_background();
        return;
    };
    drop_stale_background(host);
    let budget = host.planner().budget();
    let used = host.planner().meter.used();
    if host.compactor().has_background() || (used as f64) < start * budget.usable as f64 {
        return;
    }
    if host.planner().overflowing() {
        return;
    }
    if let Some(planned) = plan_background(host, &budget, used) {
        start_background(host, planned, &budget, used);
    }
}

/// Drops the summary being written ahead when the view no longer starts with the messages it
/// covers, or the model is not the one it was planned for.
fn drop_stale_background<H: CompactionHost>(host: &mut H) {
    let Some(b) = host.compactor().take_background() else {
        return;
    };
    let planner = host.planner();
    if b.covers(planner.log.view(), planner.model) {
        host.compactor().keep_background(b);
    } else {
        tracing::info!("background summary is stale; dropped");
    }
}

/// Plans the background summary at `used` tokens: the summary will be swapped in when the
/// threshold is reached, so the tail planned now leaves room for everything that comes until
/// then. `None` when there is nothing to summarise or no room for the request.
fn plan_background<H: CompactionHost>(host: &mut H, budget: &Budget, used: u64) -> Option<Planned> {
    let overhead = host.planner().overhead();
    let room = budget.usable.saturating_sub(used);
    let target = budget
        .target_after
        .saturating_sub(room)
        .max(overhead + budget.summary_cap);
    let (cut, carried) = host.planner().plan_cut_to(budget, overhead, true, target);
    if cut.summarise.is_empty() {
        return None;
    }
    let anchors = pith_context::anchors::beyond_words(&carried);
    let mut instruction = host.planner().inline_instruction(&cut, None, &anchors);
    if let Some(w) = pith_context::compaction::words_note(
        &carried.uncarried,
        budget.summary_cap,
        host.planner().meter.estimator(),
    ) {
        instruction = format!("{instruction}\n\n{w}");
    }
    let inline = inline_budget_of(host, budget, &instruction)?;
    let mut request = host.session_request();
    request.messages.push(ChatMessage::User {
        content: vec![UserContent::Text { text: instruction }],
    });
    request.max_tokens = Some(inline.summary_cap.min(u64::from(u32::MAX)) as u32);
    let covered: Vec<String> = host.planner().log.view()[..cut.tail.start]
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
fn start_background<H: CompactionHost>(host: &mut H, planned: Planned, budget: &Budget, used: u64) {
    let covered = planned.covered.len();
    let model = host.model().clone();
    host.compactor().start_background(planned, model);
    tracing::info!(
        used,
        covered,
        "background summary started at {:.0}% of the usable window",
        100.0 * used as f64 / budget.usable.max(1) as f64
    );
}

/// At the threshold: swaps in the background summary when there is one that still covers the
/// start of the view (waiting for it if it is still being written). `Ok(true)`: the context is
/// compacted; `Ok(false)`: compact in the foreground.
pub(crate) async fn swap_in_background<H: CompactionHost>(
    host: &mut H,
    then: Then,
    cancel: &CancellationToken,
) -> Result<bool, CompactionError> {
    let Some(mut b) = host.compactor().take_background() else {
        return Ok(false);
    };
    let planner = host.planner();
    if !b.covers(planner.log.view(), planner.model) {
        tracing::info!("background summary is stale; compacting in the foreground");
        return Ok(false);
    }
    if b.is_writing() {
        host.status(EngineState::Compacting, None);
    }
    let Some(written) = b.finished(cancel).await? else {
        return Ok(false);
    };
    let n = b.covered();
    let carried = host.planner().carried_at_swap(b.take_carried(), n);
    let (budget, overhead) = (host.planner().budget(), host.planner().overhead());
    if host
        .planner()
        .swap_leaves_too_much(&written, &carried, n, &budget, overhead)
    {
        // the summary is discarded, its cost counted
        let cost = pith_provider::cost::cost(&written.usage, &host.model().info);
        host.log().add_cost(cost);
        return Ok(false);
    }
    let before = host.planner().meter.used();
    let replaced = host.planner().tokens_of(0..n);
    host.compactor().count();
    host.log().emit(ContextEvent::CompactionStarted {
        auto: true,
        overflow: false,
        focus: None,
    });
    let tail = n..host.planner().log.view().len();
    install(
        host,
        Installed {
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
        },
    )?;
    Ok(true)
}
