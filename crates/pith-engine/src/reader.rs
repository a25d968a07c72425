//! Reading a provider stream — the one loop in the engine that does — for the agent's steps, the
//! summaries in the foreground and the summary written in the background alike: opening it,
//! waiting for what comes next (saying what pith waits for while the provider is silent,
//! stopping at an interruption), handing each event to a [`Sink`], and retrying retryable faults
//! with backoff (ARCHITECTURE.md §5: provider faults are retried with backoff or reported
//! plainly). Who hears the status, the retries and a `/context` asked meanwhile is a
//! [`Listener`]: the turn, or [`Quiet`] for the summary written in the background.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use tokio_util::sync::CancellationToken;

use super::shared::Shared;
use crate::model::ModelSetup;
use pith_protocol::event::EngineState;
use pith_protocol::llm::{ChatRequest, FinishReason, StreamEvent};
use pith_protocol::message::Usage;
use pith_provider::{EventStream, FaultKind, Provider, ProviderError};

/// Silence from the provider after which pith says what it is waiting for (at most; a short
/// configured timeout brings it forward), and how often it says it again.
const WAIT_NOTICE_AFTER: Duration = Duration::from_secs(10);
const WAIT_NOTICE_EVERY: Duration = Duration::from_secs(30);
/// The least one stream may bring before it is stopped as endless: a step's bound (see
/// `step.rs`) and a summary's.
pub(super) const MIN_STEP_OUTPUT: u64 = 1024 * 1024;

/// Which stream is read: it decides what the status says while pith waits.
#[derive(Clone, Copy)]
pub(super) enum Reading {
    /// A step of the agent: "thinking", and `/context` is answered while it streams.
    Step,
    /// A summary of a compaction.
    Summary,
    /// The side request that asks whether the session's goal is met (`goal/check.rs`).
    GoalCheck,
}

impl Reading {
    /// The engine state while this stream is read.
    fn state(self) -> EngineState {
        match self {
            Reading::Step => EngineState::Thinking,
            Reading::Summary => EngineState::Compacting,
            Reading::GoalCheck => EngineState::Thinking,
        }
    }

    /// `/context` asked while this stream is read is answered at once.
    fn answers_breakdown(self) -> bool {
        matches!(self, Reading::Step)
    }
}

/// Who hears what reading a stream brings besides its events.
pub(super) trait Listener: Send + Sync {
    /// The model whose retry policy and timeouts apply, and whose name the status gives.
    fn model(&self) -> &ModelSetup;

    /// The engine's state while reading, with what pith waits for.
    fn status(&self, state: EngineState, detail: Option<String>);

    /// A retry of `err` is due in `delay` (the `attempt`th).
    fn retrying(&self, attempt: u32, delay: Duration, err: &ProviderError);

    /// Where a `/context` asked meanwhile is heard, when this listener answers it.
    fn breakdown_asked(&self) -> Option<Arc<Shared>>;

    /// Answers a `/context` asked meanwhile.
    fn answer_breakdown(&mut self);

    /// The error of a fault the retry policy gave up on at `tries`.
    fn gave_up(&self, tries: u32, err: ProviderError) -> ProviderError {
        let message = self.model().retry.final_message(tries, &err);
        ProviderError { message, ..err }
    }
}

/// The listener of the summary written in the background: the session goes on meanwhile, so
/// nothing is said — no status, no retries announced, a fault given up on as the provider said
/// it.
pub(super) struct Quiet {
    pub model: ModelSetup,
}

impl Listener for Quiet {
    fn model(&self) -> &ModelSetup {
        &self.model
    }

    fn status(&self, _: EngineState, _: Option<String>) {}

    fn retrying(&self, _: u32, _: Duration, _: &ProviderError) {}

    fn breakdown_asked(&self) -> Option<Arc<Shared>> {
        None
    }

    fn answer_breakdown(&mut self) {}

    fn gave_up(&self, _: u32, err: ProviderError) -> ProviderError {
        err
    }
}

/// Where the events of a stream go as they are read.
pub(super) trait Sink<L> {
    /// When what was taken is due to be written; `None` when nothing waits.
    fn due(&self) -> Option<tokio::time::Instant> {
        None
    }

    /// Writes what was taken (its time came).
    fn flush(&mut self, _listener: &mut L) {}

    /// Takes one event; an error stops the reading (the stream passed its bound).
    fn take(&mut self, listener: &mut L, event: StreamEvent) -> Result<(), ProviderError>;
}

/// How reading a stream ended.
pub(super) enum Ended {
    /// The stream ended.
    Done,
    /// The turn was interrupted.
    Cancelled,
    /// The stream failed.
    Fault(ProviderError),
    /// The sink stopped the reading.
    Stopped(ProviderError),
}

/// An open provider stream and how long the provider has been silent.
pub(super) struct Reader {
    stream: EventStream,
    wait: Waiting,
    reading: Reading,
}

/// What waiting on a [`Reader`] brought.
enum Next {
    /// The next item of the stream; `None` at its end.
    Item(Option<Result<StreamEvent, ProviderError>>),
    /// The flush time asked for came first.
    FlushDue,
    /// The turn was interrupted.
    Cancelled,
}

/// One try at reading a request's stream, for [`with_retries`].
pub(super) trait Attempt<L> {
    type Output;

    /// Sends the request and reads its stream once.
    fn once<'a>(
        &'a mut self,
        listener: &'a mut L,
        cancel: &'a CancellationToken,
    ) -> impl Future<Output = Result<Self::Output, ProviderError>> + Send + 'a;

    /// Undoes what a failed try left behind, before the next.
    fn before_retry(&mut self, _listener: &mut L) {}
}

/// Runs `attempt` until it succeeds, retrying the faults the model's retry policy retries:
/// before each retry the attempt's `before_retry` runs, the retry is announced and waited for,
/// and the status returns to `reading`'s. An interruption, a context overflow and a fault that
/// is not retried (as the listener gives it up) come back as the error.
pub(super) async fn with_retries<L: Listener, A: Attempt<L>>(
    listener: &mut L,
    reading: Reading,
    attempt: &mut A,
    cancel: &CancellationToken,
) -> Result<A::Output, ProviderError> {
    let mut tries = 0;
    loop {
        tries += 1;
        let err = match attempt.once(listener, cancel).await {
            Ok(done) => return Ok(done),
            Err(e) => e,
        };
        if matches!(err.kind, FaultKind::Cancelled | FaultKind::ContextOverflow) {
            return Err(err);
        }
        let Some(delay) = listener.model().retry.delay(tries, &err) else {
            return Err(listener.gave_up(tries, err));
        };
        attempt.before_retry(listener);
        listener.retrying(tries, delay, &err);
        if cancel
            .run_until_cancelled(tokio::time::sleep(delay))
            .await
            .is_none()
        {
            return Err(interrupted());
        }
        // the retry is under way: the status bar stops saying "retrying"
        listener.status(reading.state(), None);
    }
}

/// The error of an interrupted read.
fn interrupted() -> ProviderError {
    ProviderError::new(FaultKind::Cancelled, "interrupted")
}

/// Sends `request` and waits for its stream to open; `None` when interrupted first.
pub(super) async fn open<L: Listener>(
    listener: &mut L,
    provider: &dyn Provider,
    request: &ChatRequest,
    reading: Reading,
    cancel: &CancellationToken,
) -> Result<Option<Reader>, ProviderError> {
    let shared = listener.breakdown_asked();
    let mut wait = Waiting::new(listener.model());
    let connect = provider.stream(request);
    tokio::pin!(connect);
    loop {
        tokio::select! {
            r = &mut connect => {
                let stream = r?;
                return Ok(Some(Reader { stream, wait, reading }));
            }
            _ = tokio::time::sleep_until(wait.next) => say_waiting(listener, &mut wait, reading),
            _ = asked(shared.as_deref()), if reading.answers_breakdown() => {
                listener.answer_breakdown();
            }
            _ = cancel.cancelled() => return Ok(None),
        }
    }
}

/// Reads the stream to its end, handing each event to `sink`; writes what the sink holds when
/// its time comes.
pub(super) async fn read<L: Listener, S: Sink<L>>(
    listener: &mut L,
    reader: &mut Reader,
    sink: &mut S,
    cancel: &CancellationToken,
) -> Ended {
    loop {
        let event = match next_item(listener, reader, sink.due(), cancel).await {
            Next::FlushDue => {
                sink.flush(listener);
                continue;
            }
            Next::Cancelled => return Ended::Cancelled,
            Next::Item(None) => return Ended::Done,
            Next::Item(Some(Err(e))) => return Ended::Fault(e),
            Next::Item(Some(Ok(event))) => event,
        };
        heard(listener, reader);
        if let Err(e) = sink.take(listener, event) {
            return Ended::Stopped(e);
        }
    }
}

/// Waits for the next item of the stream, the flush time `flush_at` (when something waits to be
/// written) or the interruption, whichever comes first. Meanwhile says what pith waits for, and
/// answers `/context` while a step streams (now, not after the step).
async fn next_item<L: Listener>(
    listener: &mut L,
    reader: &mut Reader,
    flush_at: Option<tokio::time::Instant>,
    cancel: &CancellationToken,
) -> Next {
    let shared = listener.breakdown_asked();
    let reading = reader.reading;
    loop {
        let flush_time = flush_at.unwrap_or(reader.wait.next);
        tokio::select! {
            i = reader.stream.next() => return Next::Item(i),
            _ = tokio::time::sleep_until(flush_time), if flush_at.is_some() => {
                return Next::FlushDue;
            }
            _ = tokio::time::sleep_until(reader.wait.next) => {
                say_waiting(listener, &mut reader.wait, reading);
            }
            _ = asked(shared.as_deref()), if reading.answers_breakdown() => {
                listener.answer_breakdown();
            }
            _ = cancel.cancelled() => return Next::Cancelled,
        }
    }
}

/// A `/context` asked meanwhile; never, for a listener that does not answer it.
async fn asked(shared: Option<&Shared>) {
    match shared {
        Some(s) => s.breakdown_asked.notified().await,
        None => std::future::pending().await,
    }
}

/// Something arrived: the silence starts over, and a notice that was showing is cleared.
fn heard<L: Listener>(listener: &L, reader: &mut Reader) {
    if reader.wait.heard() {
        listener.status(reader.reading.state(), None);
    }
}

/// Says what pith is waiting for (the status line, stderr headless).
fn say_waiting<L: Listener>(listener: &L, wait: &mut Waiting, reading: Reading) {
    let detail = match reading {
        Reading::Step => wait.notice(&listener.model().name),
        Reading::Summary => wait.notice("the summary"),
        Reading::GoalCheck => wait.notice("the goal check"),
    };
    listener.status(reading.state(), Some(detail));
}

/// What a tool-less request streamed: its text, the usage reported and why it stopped.
pub(super) type Completion = (String, Option<Usage>, Option<FinishReason>);

/// Streams a tool-less request (a summary, in the foreground or the background) to completion
/// with `provider`, retrying retryable faults; `overlong` is the error of a text that passes
/// [`MIN_STEP_OUTPUT`] without ending.
pub(super) async fn complete_text<L: Listener>(
    listener: &mut L,
    provider: &dyn Provider,
    request: &ChatRequest,
    overlong: &str,
    cancel: &CancellationToken,
) -> Result<Completion, ProviderError> {
    complete_text_as(
        listener,
        provider,
        request,
        overlong,
        Reading::Summary,
        cancel,
    )
    .await
}

/// [`complete_text`] for a stream read as `reading` (what the status says while it waits).
pub(super) async fn complete_text_as<L: Listener>(
    listener: &mut L,
    provider: &dyn Provider,
    request: &ChatRequest,
    overlong: &str,
    reading: Reading,
    cancel: &CancellationToken,
) -> Result<Completion, ProviderError> {
    let mut attempt = TextAttempt {
        provider,
        request,
        overlong,
        reading,
    };
    with_retries(listener, reading, &mut attempt, cancel).await
}

/// One try at a tool-less request.
struct TextAttempt<'r> {
    provider: &'r dyn Provider,
    request: &'r ChatRequest,
    overlong: &'r str,
    reading: Reading,
}

impl<L: Listener> Attempt<L> for TextAttempt<'_> {
    type Output = Completion;

    fn once<'a>(
        &'a mut self,
        listener: &'a mut L,
        cancel: &'a CancellationToken,
    ) -> impl Future<Output = Result<Completion, ProviderError>> + Send + 'a {
        text_once(
            listener,
            self.provider,
            self.request,
            self.overlong,
            self.reading,
            cancel,
        )
    }
}

/// One try at a tool-less request: its text, usage and finish reason.
async fn text_once<L: Listener>(
    listener: &mut L,
    provider: &dyn Provider,
    request: &ChatRequest,
    overlong: &str,
    reading: Reading,
    cancel: &CancellationToken,
) -> Result<Completion, ProviderError> {
    let Some(mut reader) = open(listener, provider, request, reading, cancel).await? else {
        return Err(interrupted());
    };
    let mut collected = Collected {
        overlong,
        ..Collected::default()
    };
    match read(listener, &mut reader, &mut collected, cancel).await {
        Ended::Done => Ok(collected.done()),
        Ended::Cancelled => Err(interrupted()),
        Ended::Fault(e) | Ended::Stopped(e) => Err(e),
    }
}

/// The text, usage and finish reason of a tool-less request, as its stream arrives.
#[derive(Default)]
struct Collected<'r> {
    text: String,
    usage: Option<Usage>,
    finish: Option<FinishReason>,
    /// The error of a text that does not end.
    overlong: &'r str,
}

impl Collected<'_> {
    fn done(self) -> Completion {
        (self.text, self.usage, self.finish)
    }
}

impl<L> Sink<L> for Collected<'_> {
    /// Adds one event; stops once the text passed [`MIN_STEP_OUTPUT`] (a summary is a few
    /// thousand tokens; this one does not end).
    fn take(&mut self, _: &mut L, event: StreamEvent) -> Result<(), ProviderError> {
        match event {
            StreamEvent::TextDelta(d) => self.text.push_str(&d),
            StreamEvent::Usage(u) => self.usage = Some(u),
            StreamEvent::Finish(f) => self.finish = Some(f),
            _ => {}
        }
        if self.text.len() as u64 <= MIN_STEP_OUTPUT {
            Ok(())
        } else {
            Err(ProviderError::new(FaultKind::BadRequest, self.overlong))
        }
    }
}

/// How long the provider has been silent, and when to say so.
struct Waiting {
    since: tokio::time::Instant,
    /// When the next notice is due.
    next: tokio::time::Instant,
    /// Nothing has arrived yet (the first-byte timeout applies, else the idle one).
    first: bool,
    /// A notice is showing (the next event clears it).
    shown: bool,
    first_byte: Duration,
    idle: Duration,
}

impl Waiting {
    fn new(model: &ModelSetup) -> Waiting {
        let now = tokio::time::Instant::now();
        let mut w = Waiting {
            since: now,
            next: now,
            first: true,
            shown: false,
            first_byte: model.timeouts.first_byte,
            idle: model.timeouts.idle,
        };
        w.next = now + w.after();
        w
    }

    /// The bound that applies now.
    fn limit(&self) -> Duration {
        if self.first {
            self.first_byte
        } else {
            self.idle
        }
    }

    /// Silence before the first notice: 10 s, or a quarter of a shorter timeout.
    fn after(&self) -> Duration {
        WAIT_NOTICE_AFTER.min(self.limit() / 4)
    }

    /// Something arrived: the silence starts over. True when a notice was showing.
    fn heard(&mut self) -> bool {
        let now = tokio::time::Instant::now();
        self.first = false;
        self.since = now;
        self.next = now + self.after();
        std::mem::take(&mut self.shown)
    }

    fn notice(&mut self, model: &str) -> String {
        let now = tokio::time::Instant::now();
        self.shown = true;
        self.next = now
            + WAIT_NOTICE_EVERY
                .min(self.limit() / 4)
                .max(Duration::from_millis(50));
        let silent = now.duration_since(self.since);
        let silent = if silent < Duration::from_secs(10) {
            format!("{:.1} s", silent.as_secs_f64())
        } else {
            format!("{} s", silent.as_secs())
        };
        let limit = self.limit().as_secs();
        if self.first {
            format!("waiting for {model}: no answer yet after {silent} (gives up at {limit} s)")
        } else {
            format!("waiting for {model}: the answer paused {silent} ago (gives up at {limit} s)")
        }
    }
}

#[cfg(test)]
mod tests;
