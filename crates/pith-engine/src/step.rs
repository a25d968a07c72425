//! Streaming one step into an assistant message: the provider's events become the message's
//! parts, announced as they arrive and written to the store as they stream (the stream itself is
//! read, and retried, by `reader.rs`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use super::reader::{self, Attempt, Ended, Listener, MIN_STEP_OUTPUT, Reading, Sink};
use super::shared::Shared;
use crate::model::ModelSetup;
use crate::turn_context::Turn;
use pith_protocol::event::{EngineState, TurnEvent};
use pith_protocol::llm::{ChatRequest, FinishReason, StreamEvent};
use pith_protocol::message::{PartKind, Usage};
use pith_provider::{FaultKind, ProviderError};

/// Streamed text is written to the store at least this often.
const FLUSH_EVERY: Duration = Duration::from_millis(250);
/// One step's output (text, reasoning and tool arguments) is bounded by the model's output limit
/// at this many bytes per token (a token is about four), and by [`MIN_STEP_OUTPUT`] at least.
const STEP_BYTES_PER_TOKEN: u64 = 16;

pub(super) enum Outcome {
    Done {
        usage: Option<Usage>,
        finish: FinishReason,
    },
    Interrupted,
    Overflow(ProviderError),
    Failed(ProviderError),
}

impl Turn<'_> {
    /// Streams the step into `self.log.view()[idx]`, retrying retryable faults. A retry starts the
    /// message over (the partial parts are removed from the view and the store).
    pub(crate) async fn stream_step(
        &mut self,
        idx: usize,
        request: &ChatRequest,
        cancel: &CancellationToken,
    ) -> Outcome {
        self.publish_sampling_model();
        let mut attempt = StepAttempt { idx, request };
        let streamed = reader::with_retries(self, Reading::Step, &mut attempt, cancel).await;
        match streamed {
            Ok(outcome) => outcome,
            Err(e) => match e.kind {
                FaultKind::Cancelled => Outcome::Interrupted,
                FaultKind::ContextOverflow => Outcome::Overflow(e),
                _ => Outcome::Failed(e),
            },
        }
    }

    /// One attempt at the step: reads the provider's stream into `self.log.view()[idx]`, writing the
    /// streamed parts to the store at least every [`FLUSH_EVERY`]. A fault mid-stream is the
    /// error (what streamed before it is kept until the retry starts over).
    async fn stream_once(
        &mut self,
        idx: usize,
        request: &ChatRequest,
        cancel: &CancellationToken,
    ) -> Result<Outcome, ProviderError> {
        let provider = self.model.provider.clone();
        let Some(mut stream) =
            reader::open(self, provider.as_ref(), request, Reading::Step, cancel).await?
        else {
            return Ok(Outcome::Interrupted);
        };
        let mut step = StepStream::new(idx, self.max_step_output());
        let ended = reader::read(self, &mut stream, &mut step, cancel).await;
        self.flush_parts(idx);
        match ended {
            Ended::Done => {
                let finish = self.step_finish(idx, step.finish);
                Ok(Outcome::Done {
                    usage: step.usage,
                    finish,
                })
            }
            Ended::Cancelled => Ok(Outcome::Interrupted),
            Ended::Fault(e) => Err(e),
            Ended::Stopped(e) => Ok(Outcome::Failed(e)),
        }
    }

    /// The most one step may stream, in bytes (see [`STEP_BYTES_PER_TOKEN`]).
    fn max_step_output(&self) -> u64 {
        self.model
            .limits
            .output
            .saturating_mul(STEP_BYTES_PER_TOKEN)
            .max(MIN_STEP_OUTPUT)
    }

    /// The failure of a step whose answer passed `max_output` bytes.
    fn answer_too_long(&self, max_output: u64) -> ProviderError {
        ProviderError::new(
            FaultKind::BadRequest,
            format!(
                "the answer passed {} MiB in one step, more than the model's output limit allows ({} tokens); stopped reading it. What arrived is kept; the model may be repeating itself",
                max_output / (1024 * 1024),
                self.model.limits.output
            ),
        )
    }

    /// Why the step ended: a step with tool calls asks for their results, whatever the
    /// provider said; no reason at all is a stop.
    fn step_finish(&self, idx: usize, finish: Option<FinishReason>) -> FinishReason {
        // a search the provider ran itself asks nothing of pith
        let has_tools = self.log.view()[idx].parts.iter().any(|p| {
            matches!(&p.kind, PartKind::Tool { tool, state, .. }
                if !pith_protocol::tool::is_hosted_search(tool, state))
        });
        match finish {
            Some(FinishReason::Stop) if has_tools => FinishReason::ToolCalls,
            Some(f) => f,
            None if has_tools => FinishReason::ToolCalls,
            None => FinishReason::Stop,
        }
    }

    /// Adds one streamed event to `self.log.view()[idx]` and announces it.
    fn apply_stream_event(&mut self, idx: usize, step: &mut StepStream, event: StreamEvent) {
        match event {
            StreamEvent::TextDelta(delta) => self.stream_text(idx, &mut step.text, delta),
            StreamEvent::ReasoningDelta(delta) => {
                self.stream_reasoning(idx, &mut step.reasoning, delta);
            }
            StreamEvent::ReasoningSignature(sig) => {
                if let Some(pi) = step.reasoning {
                    self.log.sign_reasoning(idx, pi, sig);
                }
                // A signature closes the thinking block; the next one is a new part.
                step.reasoning = None;
            }
            StreamEvent::RedactedReasoning(data) => {
                let kind = PartKind::Reasoning {
                    text: String::new(),
                    signature: None,
                    redacted: Some(data),
                };
                self.log.add_part(idx, kind);
                step.reasoning = None;
            }
            StreamEvent::ToolCallStart { id, name } => {
                self.log.start_tool_call(idx, id, name);
                step.close_text();
            }
            StreamEvent::ToolCall {
                id,
                name,
                arguments,
            } => {
                self.log
                    .finish_tool_call(idx, id, name, parse_arguments(&arguments));
                step.close_text();
            }
            StreamEvent::Usage(u) => step.usage = Some(u),
            StreamEvent::Finish(f) => step.finish = Some(f),
            StreamEvent::WebSearch {
                id,
                query,
                results,
                error,
            } => {
                step.close_text();
                self.record_hosted_search(idx, id, query, &results, error);
            }
        }
    }

    /// A search the provider ran itself, as its `websearch` part (saved and announced); the
    /// same id again adds the pages the answer cites.
    fn record_hosted_search(
        &mut self,
        idx: usize,
        id: String,
        query: String,
        results: &[pith_protocol::llm::WebResult],
        error: Option<String>,
    ) {
        let found = self.log.view()[idx]
            .parts
            .iter()
            .position(|p| matches!(&p.kind, PartKind::Tool { call_id, .. } if *call_id == id));
        let pi = match found {
            Some(pi) => {
                self.log.update_part(idx, pi, |p| {
                    crate::hosted_search::add_results(&mut p.kind, results)
                });
                return;
            }
            None => self
                .log
                .add_part(idx, crate::hosted_search::part(id, query, results, error)),
        };
        self.log.update_part(idx, pi, |_| {});
    }

    /// The part of `self.log.view()[idx]` that `open` points at; when none, a new `kind` part,
    /// announced.
    fn open_part(&mut self, idx: usize, open: &mut Option<usize>, kind: PartKind) -> usize {
        if let Some(pi) = *open {
            return pi;
        }
        let pi = self.log.open_part(idx, kind);
        *open = Some(pi);
        pi
    }

    fn stream_text(&mut self, idx: usize, open: &mut Option<usize>, delta: String) {
        let kind = PartKind::Text {
            text: String::new(),
            synthetic: false,
        };
        let pi = self.open_part(idx, open, kind);
        self.log.stream_text(idx, pi, delta);
    }

    fn stream_reasoning(&mut self, idx: usize, open: &mut Option<usize>, delta: String) {
        let kind = PartKind::Reasoning {
            text: String::new(),
            signature: None,
            redacted: None,
        };
        let pi = self.open_part(idx, open, kind);
        self.log.stream_reasoning(idx, pi, delta);
    }

    /// Writes the streamed parts and starts the flush interval over.
    fn flush_step(&self, idx: usize, step: &mut StepStream) {
        self.flush_parts(idx);
        step.last_flush = Instant::now();
        step.dirty = false;
    }

    /// Writes the streamed parts of `self.log.view()[idx]` to the store.
    fn flush_parts(&self, idx: usize) {
        for p in &self.log.view()[idx].parts {
            if matches!(
                p.kind,
                PartKind::Text { .. } | PartKind::Reasoning { .. } | PartKind::Tool { .. }
            ) {
                self.log.save_part(p);
            }
        }
    }
}

/// The turn hears what reading a step's or a foreground summary's stream brings.
impl Listener for Turn<'_> {
    fn model(&self) -> &ModelSetup {
        self.model
    }

    fn status(&self, state: EngineState, detail: Option<String>) {
        self.state(state, detail);
    }

    /// Announces a retry: logged, sent, and the status says "retrying".
    fn retrying(&self, attempt: u32, delay: Duration, err: &ProviderError) {
        tracing::warn!(
            "provider error ({:?}), retry {attempt}/{} in {delay:?}: {}",
            err.kind,
            self.model.retry.retries_for(err),
            err.message
        );
        self.emit(TurnEvent::Retrying {
            attempt,
            max: self.model.retry.retries_for(err),
            delay_ms: delay.as_millis() as u64,
            message: err.message.clone(),
        });
        self.state(EngineState::Retrying, None);
    }

    fn breakdown_asked(&self) -> Option<Arc<Shared>> {
        Some(self.shared.clone())
    }

    fn answer_breakdown(&mut self) {
        Turn::answer_breakdown(self);
    }
}

/// One try at the step streamed into `view[idx]`.
struct StepAttempt<'r> {
    idx: usize,
    request: &'r ChatRequest,
}

impl<'t> Attempt<Turn<'t>> for StepAttempt<'_> {
    type Output = Outcome;

    fn once<'a>(
        &'a mut self,
        turn: &'a mut Turn<'t>,
        cancel: &'a CancellationToken,
    ) -> impl Future<Output = Result<Outcome, ProviderError>> + Send + 'a {
        turn.stream_once(self.idx, self.request, cancel)
    }

    /// A retry starts the message over.
    fn before_retry(&mut self, turn: &mut Turn<'t>) {
        turn.log.restart_step(self.idx);
    }
}

/// Where one attempt at a step stands while it streams.
struct StepStream {
    /// The message streamed into: `view[idx]`.
    idx: usize,
    /// Bytes of output so far, and the most allowed.
    output_bytes: u64,
    max_output: u64,
    usage: Option<Usage>,
    finish: Option<FinishReason>,
    last_flush: Instant,
    /// Index (into parts) of the text / reasoning part being streamed.
    text: Option<usize>,
    reasoning: Option<usize>,
    /// Streamed parts changed since the last flush. A stream that stalls after a burst (the
    /// model thinking, a slow network) must not keep that burst out of the store: a timer
    /// flushes it, not only the next event.
    dirty: bool,
}

impl StepStream {
    fn new(idx: usize, max_output: u64) -> StepStream {
        StepStream {
            idx,
            output_bytes: 0,
            max_output,
            usage: None,
            finish: None,
            last_flush: Instant::now(),
            text: None,
            reasoning: None,
            dirty: false,
        }
    }

    /// When the changed parts are due to be written; `None` when nothing changed.
    fn flush_at(&self) -> Option<tokio::time::Instant> {
        self.dirty
            .then(|| tokio::time::Instant::from_std(self.last_flush + FLUSH_EVERY))
    }

    /// A tool call ends the text and reasoning being streamed: what follows is a new part.
    fn close_text(&mut self) {
        self.text = None;
        self.reasoning = None;
    }
}

impl<'t> Sink<Turn<'t>> for StepStream {
    fn due(&self) -> Option<tokio::time::Instant> {
        self.flush_at()
    }

    fn flush(&mut self, turn: &mut Turn<'t>) {
        turn.flush_step(self.idx, self);
    }

    /// Adds one event to the message, within the bound on one step's output; writes the
    /// streamed parts when [`FLUSH_EVERY`] has passed.
    fn take(&mut self, turn: &mut Turn<'t>, event: StreamEvent) -> Result<(), ProviderError> {
        self.output_bytes += event_bytes(&event);
        if self.output_bytes > self.max_output {
            return Err(turn.answer_too_long(self.max_output));
        }
        turn.apply_stream_event(self.idx, self, event);
        self.dirty = true;
        if self.last_flush.elapsed() >= FLUSH_EVERY {
            turn.flush_step(self.idx, self);
        }
        Ok(())
    }
}

/// Bytes of output an event carries, for the bound on one step.
fn event_bytes(event: &StreamEvent) -> u64 {
    match event {
        StreamEvent::TextDelta(t) | StreamEvent::ReasoningDelta(t) => t.len() as u64,
        StreamEvent::ToolCall { arguments, .. } => arguments.len() as u64,
        StreamEvent::RedactedReasoning(d) => d.len() as u64,
        _ => 0,
    }
}

/// Tool arguments as JSON; empty means `{}`; text that is not JSON is kept as a string so the
/// tool runner can report it to the model.
pub(crate) fn parse_arguments(arguments: &str) -> serde_json::Value {
    if arguments.trim().is_empty() {
        return serde_json::json!({});
    }
    serde_json::from_str(arguments).unwrap_or_else(|_| serde_json::Value::String(arguments.into()))
}

impl Turn<'_> {
    /// Tells sampling which model the session uses now (before each step).
    pub(crate) fn publish_sampling_model(&self) {
        let model = crate::sampling::SamplingModel {
            name: self.model.name.clone(),
            provider: self.model.provider.clone(),
            model_id: self.model.model_id.clone(),
            images: self.takes_images(),
            info: self.model.info.clone(),
        };
        if let Ok(mut m) = self.shared.sampling_model.lock() {
            *m = Some(model);
        }
        if let Ok(mut n) = self.shared.notify_user.lock() {
            *n = self.notifier();
        }
    }
}

impl Turn<'_> {
    /// Adds what MCP sampling cost since the last time to the session's cost and the goal's
    /// spending (sampling runs beside the turn, in the servers' tasks).
    pub(crate) fn fold_sampling(&mut self) {
        let (usage, cost) = self
            .shared
            .sampling_spent
            .lock()
            .map(|mut s| std::mem::take(&mut *s))
            .unwrap_or_default();
        if cost > 0.0 {
            self.log.add_cost(cost);
        }
        if usage.input + usage.output > 0 {
            self.goal_spend(Some(&usage));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_parse_or_stay_raw() {
        assert_eq!(parse_arguments(""), serde_json::json!({}));
        assert_eq!(
            parse_arguments(r#"{"command":"ls"}"#),
            serde_json::json!({"command": "ls"})
        );
        assert_eq!(
            parse_arguments("{\"command\": "),
            serde_json::Value::String("{\"command\": ".into())
        );
    }
}
