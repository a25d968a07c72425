//! The summary written ahead (ARCHITECTURE.md §6.6): a task of its own sends the planned
//! request — the session's next request with the summary instruction — through the one stream
//! reader, quietly (the session goes on meanwhile); the compactor keeps it until it is swapped
//! in, found stale or dropped.

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::{Written, summary_problem};
use crate::compaction::CompactionError;
use crate::reader::{self, Quiet};
use crate::runner::ModelSetup;
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
}

impl Drop for Background {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

impl Background {
    /// Starts writing `planned` with `model` in a task of its own. Its own token: it outlives
    /// the turn, and an interrupt drops it (`user_turn`).
    pub fn start(planned: Planned, model: &ModelSetup) -> Background {
        let cancel = CancellationToken::new();
        let task = tokio::spawn(write(
            model.clone(),
            planned.request,
            planned.cap,
            cancel.clone(),
        ));
        Background {
            covered: planned.covered,
            carried: planned.carried,
            model: model.name.clone(),
            window: model.limits.context,
            cancel,
            task,
        }
    }

    /// How many of the view's first messages it covers.
    pub fn covered(&self) -> usize {
        self.covered.len()
    }

    /// What pith carries across, as planned with it.
    pub fn take_carried(&mut self) -> Carried {
        std::mem::take(&mut self.carried)
    }

    /// It is still being written.
    pub fn is_writing(&self) -> bool {
        !self.task.is_finished()
    }

    /// The summary, waited for when it is still being written; `None` when it failed.
    pub async fn finished(
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
    pub fn covers(&self, view: &[Message], model: &ModelSetup) -> bool {
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
