//! Reading a provider stream, for the agent's steps and the summaries alike: opening it, waiting
//! for what comes next (saying what pith waits for while the provider is silent, stopping at an
//! interruption), and retrying retryable faults with backoff (ARCHITECTURE.md §5: provider faults
//! are retried with backoff or reported plainly).

use std::time::Duration;

use futures_util::StreamExt;
use tokio_util::sync::CancellationToken;

use super::runner::{ModelSetup, Runner};
use pith_protocol::event::{EngineState, Event};
use pith_protocol::llm::{ChatRequest, StreamEvent};
use pith_provider::{EventStream, FaultKind, Provider, ProviderError};

/// Silence from the provider after which pith says what it is waiting for (at most; a short
/// configured timeout brings it forward), and how often it says it again.
const WAIT_NOTICE_AFTER: Duration = Duration::from_secs(10);
const WAIT_NOTICE_EVERY: Duration = Duration::from_secs(30);

/// Which stream is read: it decides what the status says while pith waits.
#[derive(Clone, Copy)]
pub(super) enum Reading {
    /// A step of the agent: "thinking", and `/context` is answered while it streams.
    Step,
    /// A summary of a compaction.
    Summary,
}

impl Reading {
    /// The engine state while this stream is read.
    fn state(self) -> EngineState {
        match self {
            Reading::Step => EngineState::Thinking,
            Reading::Summary => EngineState::Compacting,
        }
    }

    /// `/context` asked while this stream is read is answered at once.
    fn answers_breakdown(self) -> bool {
        matches!(self, Reading::Step)
    }
}

/// An open provider stream and how long the provider has been silent.
pub(super) struct Reader {
    stream: EventStream,
    wait: Waiting,
    reading: Reading,
}

/// What waiting on a [`Reader`] brought.
pub(super) enum Next {
    /// The next item of the stream; `None` at its end.
    Item(Option<Result<StreamEvent, ProviderError>>),
    /// The flush time asked for came first.
    FlushDue,
    /// The turn was interrupted.
    Cancelled,
}

/// One try at reading a request's stream, for [`Runner::with_retries`].
pub(super) trait Attempt {
    type Output;

    /// Sends the request and reads its stream once.
    fn once<'a>(
        &'a mut self,
        runner: &'a mut Runner,
        cancel: &'a CancellationToken,
    ) -> impl Future<Output = Result<Self::Output, ProviderError>> + Send + 'a;

    /// Undoes what a failed try left behind, before the next.
    fn before_retry(&mut self, _runner: &mut Runner) {}
}

impl Runner {
    /// Runs `attempt` until it succeeds, retrying the faults the model's retry policy retries:
    /// before each retry the attempt's `before_retry` runs, the retry is announced and waited
    /// for, and the status returns to `reading`'s. An interruption, a context overflow and a
    /// fault that is not retried (with the policy's final message) come back as the error.
    pub(super) async fn with_retries<A: Attempt>(
        &mut self,
        reading: Reading,
        attempt: &mut A,
        cancel: &CancellationToken,
    ) -> Result<A::Output, ProviderError> {
        let mut tries = 0;
        loop {
            tries += 1;
            let err = match attempt.once(self, cancel).await {
                Ok(done) => return Ok(done),
                Err(e) => e,
            };
            if matches!(err.kind, FaultKind::Cancelled | FaultKind::ContextOverflow) {
                return Err(err);
            }
            let Some(delay) = self.model.retry.delay(tries, &err) else {
                let message = self.model.retry.final_message(tries, &err);
                return Err(ProviderError { message, ..err });
            };
            attempt.before_retry(self);
            if !self.wait_retry(tries, delay, &err, cancel).await {
                return Err(ProviderError::new(FaultKind::Cancelled, "interrupted"));
            }
            // the retry is under way: the status bar stops saying "retrying"
            self.state(reading.state(), None);
        }
    }

    /// Announces a retry and sleeps; false when interrupted meanwhile.
    async fn wait_retry(
        &self,
        attempt: u32,
        delay: Duration,
        err: &ProviderError,
        cancel: &CancellationToken,
    ) -> bool {
        tracing::warn!(
            "provider error ({:?}), retry {attempt}/{} in {delay:?}: {}",
            err.kind,
            self.model.retry.max_retries,
            err.message
        );
        self.emit(Event::Retrying {
            attempt,
            max: self.model.retry.max_retries,
            delay_ms: delay.as_millis() as u64,
            message: err.message.clone(),
        });
        self.state(EngineState::Retrying, None);
        cancel
            .run_until_cancelled(tokio::time::sleep(delay))
            .await
            .is_some()
    }

    /// Sends `request` and waits for its stream to open; `None` when interrupted first.
    pub(super) async fn open_stream(
        &mut self,
        provider: &dyn Provider,
        request: &ChatRequest,
        reading: Reading,
        cancel: &CancellationToken,
    ) -> Result<Option<Reader>, ProviderError> {
        let shared = self.shared.clone();
        let mut wait = Waiting::new(&self.model);
        let connect = provider.stream(request);
        tokio::pin!(connect);
        loop {
            tokio::select! {
                r = &mut connect => {
                    let stream = r?;
                    return Ok(Some(Reader { stream, wait, reading }));
                }
                _ = tokio::time::sleep_until(wait.next) => self.say_waiting(&mut wait, reading),
                _ = shared.breakdown_asked.notified(), if reading.answers_breakdown() => {
                    self.answer_breakdown();
                }
                _ = cancel.cancelled() => return Ok(None),
            }
        }
    }

    /// Waits for the next item of the stream, the flush time `flush_at` (when something waits
    /// to be written) or the interruption, whichever comes first. Meanwhile says what pith
    /// waits for, and answers `/context` while a step streams (now, not after the step).
    pub(super) async fn next_item(
        &mut self,
        reader: &mut Reader,
        flush_at: Option<tokio::time::Instant>,
        cancel: &CancellationToken,
    ) -> Next {
        let shared = self.shared.clone();
        let reading = reader.reading;
        loop {
            let flush_time = flush_at.unwrap_or(reader.wait.next);
            tokio::select! {
                i = reader.stream.next() => return Next::Item(i),
                _ = tokio::time::sleep_until(flush_time), if flush_at.is_some() => {
                    return Next::FlushDue;
                }
                _ = tokio::time::sleep_until(reader.wait.next) => {
                    self.say_waiting(&mut reader.wait, reading);
                }
                _ = shared.breakdown_asked.notified(), if reading.answers_breakdown() => {
                    self.answer_breakdown();
                }
                _ = cancel.cancelled() => return Next::Cancelled,
            }
        }
    }

    /// Something arrived: the silence starts over, and a notice that was showing is cleared.
    pub(super) fn heard(&self, reader: &mut Reader) {
        if reader.wait.heard() {
            self.state(reader.reading.state(), None);
        }
    }

    /// Says what pith is waiting for (the status line, stderr headless).
    fn say_waiting(&self, wait: &mut Waiting, reading: Reading) {
        let detail = match reading {
            Reading::Step => wait.notice(&self.model.name),
            Reading::Summary => wait.notice("the summary"),
        };
        self.state(reading.state(), Some(detail));
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
