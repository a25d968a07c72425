//! Streaming one step into an assistant message, with retries (ARCHITECTURE.md §5: provider faults
//! are retried with backoff or reported plainly).

use std::time::{Duration, Instant};

use futures_util::StreamExt;
use tokio_util::sync::CancellationToken;

use super::runner::Runner;
use pith_protocol::event::{EngineState, Event};
use pith_protocol::llm::{ChatRequest, FinishReason, StreamEvent};
use pith_protocol::message::{Part, PartKind, ToolState, Usage};
use pith_provider::{ErrorKind, Provider, ProviderError};

/// Streamed text is written to the store at least this often.
const FLUSH_EVERY: Duration = Duration::from_millis(250);
/// Silence from the provider after which pith says what it is waiting for (at most; a short
/// configured timeout brings it forward), and how often it says it again.
const WAIT_NOTICE_AFTER: Duration = Duration::from_secs(10);
const WAIT_NOTICE_EVERY: Duration = Duration::from_secs(30);
/// One step's output (text, reasoning and tool arguments) is bounded by the model's output limit
/// at this many bytes per token (a token is about four), and by [`MIN_STEP_OUTPUT`] at least.
const STEP_BYTES_PER_TOKEN: u64 = 16;
pub(super) const MIN_STEP_OUTPUT: u64 = 1024 * 1024;

pub(super) enum Outcome {
    Done {
        usage: Option<Usage>,
        finish: FinishReason,
    },
    Interrupted,
    Overflow(ProviderError),
    Failed(ProviderError),
}

impl Runner {
    /// Streams the step into `self.view[idx]`, retrying retryable faults. A retry starts the
    /// message over (the partial parts are removed from the view and the store).
    pub(super) async fn stream_step(
        &mut self,
        idx: usize,
        request: &ChatRequest,
        cancel: &CancellationToken,
    ) -> Outcome {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let err = match self.stream_once(idx, request, cancel).await {
                Ok(outcome) => return outcome,
                Err(e) => e,
            };
            match err.kind {
                ErrorKind::Cancelled => return Outcome::Interrupted,
                ErrorKind::ContextOverflow => return Outcome::Overflow(err),
                _ => {}
            }
            let Some(delay) = self.model.retry.delay(attempt, &err) else {
                let message = self.model.retry.final_message(attempt, &err);
                return Outcome::Failed(ProviderError { message, ..err });
            };
            self.reset_step(idx);
            if !self.wait_retry(attempt, delay, &err, cancel).await {
                return Outcome::Interrupted;
            }
            // the retry is under way: the status bar stops saying "retrying"
            self.state(EngineState::Thinking, None);
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

    /// Drops every part after the StepStart (a failed attempt's partial output).
    fn reset_step(&mut self, idx: usize) {
        let m = &mut self.view[idx];
        let dropped: Vec<String> = m
            .parts
            .iter()
            .filter(|p| !matches!(p.kind, PartKind::StepStart))
            .map(|p| p.id.clone())
            .collect();
        m.parts.retain(|p| matches!(p.kind, PartKind::StepStart));
        let m = m.clone();
        for id in &dropped {
            if let Err(e) = self.store.delete_part(id) {
                self.store_failed(&format!("delete part {id}"), &e);
            }
        }
        if !dropped.is_empty() {
            self.emit(Event::PartsRemoved {
                message_id: m.id.clone(),
                part_ids: dropped,
            });
        }
        self.emit(Event::Message { message: m });
    }

    async fn stream_once(
        &mut self,
        idx: usize,
        request: &ChatRequest,
        cancel: &CancellationToken,
    ) -> Result<Outcome, ProviderError> {
        let provider = self.model.provider.clone();
        let shared = self.shared.clone();
        let mut wait = Waiting::new(&self.model);
        let connect = provider.stream(request);
        tokio::pin!(connect);
        let mut stream = loop {
            tokio::select! {
                r = &mut connect => break r?,
                _ = tokio::time::sleep_until(wait.next) => self.say_waiting(&mut wait),
                _ = shared.breakdown_asked.notified() => self.answer_breakdown(),
                _ = cancel.cancelled() => return Ok(Outcome::Interrupted),
            }
        };
        let max_output = self
            .model
            .limits
            .output
            .saturating_mul(STEP_BYTES_PER_TOKEN)
            .max(MIN_STEP_OUTPUT);
        let mut output_bytes: u64 = 0;
        let mut usage = None;
        let mut finish = None;
        let mut last_flush = Instant::now();
        // Index (into parts) of the text / reasoning part being streamed.
        let mut text: Option<usize> = None;
        let mut reasoning: Option<usize> = None;
        // Streamed parts changed since the last flush. A stream that stalls after a burst (the
        // model thinking, a slow network) must not keep that burst out of the store: a timer
        // flushes it, not only the next event.
        let mut dirty = false;
        loop {
            let flush_at = tokio::time::Instant::from_std(last_flush + FLUSH_EVERY);
            let item = tokio::select! {
                i = stream.next() => i,
                _ = tokio::time::sleep_until(flush_at), if dirty => {
                    self.flush_parts(idx);
                    last_flush = Instant::now();
                    dirty = false;
                    continue;
                }
                _ = tokio::time::sleep_until(wait.next) => {
                    self.say_waiting(&mut wait);
                    continue;
                }
                // `/context` while the answer streams is answered now, not after the step
                _ = shared.breakdown_asked.notified() => {
                    self.answer_breakdown();
                    continue;
                }
                _ = cancel.cancelled() => {
                    self.flush_parts(idx);
                    return Ok(Outcome::Interrupted);
                }
            };
            let event = match item {
                None => break,
                Some(Ok(ev)) => ev,
                Some(Err(e)) => {
                    // What streamed before the fault is kept until the retry starts over.
                    self.flush_parts(idx);
                    return Err(e);
                }
            };
            if wait.heard() {
                self.state(EngineState::Thinking, None);
            }
            output_bytes += event_bytes(&event);
            if output_bytes > max_output {
                self.flush_parts(idx);
                return Ok(Outcome::Failed(ProviderError::new(
                    ErrorKind::BadRequest,
                    format!(
                        "the answer passed {} MiB in one step, more than the model's output limit allows ({} tokens); stopped reading it. What arrived is kept; the model may be repeating itself",
                        max_output / (1024 * 1024),
                        self.model.limits.output
                    ),
                )));
            }
            let m = &mut self.view[idx];
            match event {
                StreamEvent::TextDelta(delta) => {
                    let pi = match text {
                        Some(pi) => pi,
                        None => {
                            m.push(PartKind::Text {
                                text: String::new(),
                                synthetic: false,
                            });
                            let pi = m.parts.len() - 1;
                            let _ = self.events.send(Event::PartUpdated {
                                part: m.parts[pi].clone(),
                            });
                            text = Some(pi);
                            pi
                        }
                    };
                    if let PartKind::Text { text: t, .. } = &mut m.parts[pi].kind {
                        t.push_str(&delta);
                    }
                    let _ = self.events.send(Event::TextDelta {
                        message_id: m.id.clone(),
                        part_id: m.parts[pi].id.clone(),
                        delta,
                    });
                }
                StreamEvent::ReasoningDelta(delta) => {
                    let pi = match reasoning {
                        Some(pi) => pi,
                        None => {
                            m.push(PartKind::Reasoning {
                                text: String::new(),
                                signature: None,
                                redacted: None,
                            });
                            let pi = m.parts.len() - 1;
                            let _ = self.events.send(Event::PartUpdated {
                                part: m.parts[pi].clone(),
                            });
                            reasoning = Some(pi);
                            pi
                        }
                    };
                    if let PartKind::Reasoning { text: t, .. } = &mut m.parts[pi].kind {
                        t.push_str(&delta);
                    }
                    let _ = self.events.send(Event::ReasoningDelta {
                        message_id: m.id.clone(),
                        part_id: m.parts[pi].id.clone(),
                        delta,
                    });
                }
                StreamEvent::ReasoningSignature(sig) => {
                    if let Some(pi) = reasoning
                        && let PartKind::Reasoning { signature, .. } = &mut m.parts[pi].kind
                    {
                        *signature = Some(sig);
                    }
                    // A signature closes the thinking block; the next one is a new part.
                    reasoning = None;
                }
                StreamEvent::RedactedReasoning(data) => {
                    m.push(PartKind::Reasoning {
                        text: String::new(),
                        signature: None,
                        redacted: Some(data),
                    });
                    reasoning = None;
                }
                StreamEvent::ToolCallStart { id, name } => {
                    if find_tool(&m.parts, &id).is_none() {
                        m.push(PartKind::Tool {
                            call_id: id,
                            tool: name,
                            input: serde_json::Value::Null,
                            state: ToolState::Pending,
                        });
                        let part = m.parts.last().cloned();
                        if let Some(part) = part {
                            let _ = self.events.send(Event::PartUpdated { part });
                        }
                    }
                    text = None;
                    reasoning = None;
                }
                StreamEvent::ToolCall {
                    id,
                    name,
                    arguments,
                } => {
                    let input = parse_arguments(&arguments);
                    let pi = match find_tool(&m.parts, &id) {
                        Some(pi) => pi,
                        None => {
                            m.push(PartKind::Tool {
                                call_id: id.clone(),
                                tool: name.clone(),
                                input: serde_json::Value::Null,
                                state: ToolState::Pending,
                            });
                            m.parts.len() - 1
                        }
                    };
                    if let PartKind::Tool { input: i, .. } = &mut m.parts[pi].kind {
                        *i = input;
                    }
                    let part = m.parts[pi].clone();
                    self.save_part(&part);
                    let _ = self.events.send(Event::PartUpdated { part });
                    text = None;
                    reasoning = None;
                }
                StreamEvent::Usage(u) => usage = Some(u),
                StreamEvent::Finish(f) => finish = Some(f),
            }
            dirty = true;
            if last_flush.elapsed() >= FLUSH_EVERY {
                self.flush_parts(idx);
                last_flush = Instant::now();
                dirty = false;
            }
        }
        self.flush_parts(idx);
        let has_tools = self.view[idx]
            .parts
            .iter()
            .any(|p| matches!(p.kind, PartKind::Tool { .. }));
        let finish = match finish {
            Some(FinishReason::Stop) if has_tools => FinishReason::ToolCalls,
            Some(f) => f,
            None if has_tools => FinishReason::ToolCalls,
            None => FinishReason::Stop,
        };
        Ok(Outcome::Done { usage, finish })
    }

    /// Says what pith is waiting for (the status line, stderr headless).
    fn say_waiting(&self, wait: &mut Waiting) {
        let detail = wait.notice(&self.model.name);
        self.state(EngineState::Thinking, Some(detail));
    }

    /// The same while a summary is written.
    fn say_waiting_compacting(&self, wait: &mut Waiting) {
        let detail = wait.notice("the summary");
        self.state(EngineState::Compacting, Some(detail));
    }

    /// Writes the streamed parts of `self.view[idx]` to the store.
    fn flush_parts(&self, idx: usize) {
        for p in &self.view[idx].parts {
            if matches!(
                p.kind,
                PartKind::Text { .. } | PartKind::Reasoning { .. } | PartKind::Tool { .. }
            ) {
                self.save_part(p);
            }
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
    fn new(model: &super::runner::ModelSetup) -> Waiting {
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

/// Bytes of output an event carries, for the bound on one step.
fn event_bytes(event: &StreamEvent) -> u64 {
    match event {
        StreamEvent::TextDelta(t) | StreamEvent::ReasoningDelta(t) => t.len() as u64,
        StreamEvent::ToolCall { arguments, .. } => arguments.len() as u64,
        StreamEvent::RedactedReasoning(d) => d.len() as u64,
        _ => 0,
    }
}

fn find_tool(parts: &[Part], call_id: &str) -> Option<usize> {
    parts
        .iter()
        .position(|p| matches!(&p.kind, PartKind::Tool { call_id: c, .. } if c == call_id))
}

/// Tool arguments as JSON; empty means `{}`; text that is not JSON is kept as a string so the
/// tool runner can report it to the model.
pub(super) fn parse_arguments(arguments: &str) -> serde_json::Value {
    if arguments.trim().is_empty() {
        return serde_json::json!({});
    }
    serde_json::from_str(arguments).unwrap_or_else(|_| serde_json::Value::String(arguments.into()))
}

/// What a tool-less request streamed: its text, the usage reported and why it stopped.
pub(super) type Completion = (String, Option<Usage>, Option<FinishReason>);

/// Streams a tool-less request to completion and returns its text (the compaction agent).
pub(super) async fn complete_text(
    runner: &Runner,
    provider: &dyn Provider,
    request: &ChatRequest,
    cancel: &CancellationToken,
) -> Result<Completion, ProviderError> {
    let mut attempt = 0;
    loop {
        attempt += 1;
        let err = match collect_once(runner, provider, request, cancel).await {
            Ok(done) => return Ok(done),
            Err(e) => e,
        };
        if matches!(err.kind, ErrorKind::Cancelled | ErrorKind::ContextOverflow) {
            return Err(err);
        }
        let Some(delay) = runner.model.retry.delay(attempt, &err) else {
            let message = runner.model.retry.final_message(attempt, &err);
            return Err(ProviderError { message, ..err });
        };
        if !runner.wait_retry(attempt, delay, &err, cancel).await {
            return Err(ProviderError::new(ErrorKind::Cancelled, "interrupted"));
        }
        runner.state(EngineState::Compacting, None);
    }
}

async fn collect_once(
    runner: &Runner,
    provider: &dyn Provider,
    request: &ChatRequest,
    cancel: &CancellationToken,
) -> Result<Completion, ProviderError> {
    let cancelled = || ProviderError::new(ErrorKind::Cancelled, "interrupted");
    let mut wait = Waiting::new(&runner.model);
    let connect = provider.stream(request);
    tokio::pin!(connect);
    let mut stream = loop {
        tokio::select! {
            r = &mut connect => break r?,
            _ = tokio::time::sleep_until(wait.next) => runner.say_waiting_compacting(&mut wait),
            _ = cancel.cancelled() => return Err(cancelled()),
        }
    };
    let mut text = String::new();
    let mut usage = None;
    let mut finish = None;
    loop {
        let item = tokio::select! {
            i = stream.next() => i,
            _ = tokio::time::sleep_until(wait.next) => {
                runner.say_waiting_compacting(&mut wait);
                continue;
            }
            _ = cancel.cancelled() => return Err(cancelled()),
        };
        if wait.heard() {
            runner.state(EngineState::Compacting, None);
        }
        match item {
            None => break,
            Some(Err(e)) => return Err(e),
            Some(Ok(StreamEvent::TextDelta(d))) => text.push_str(&d),
            Some(Ok(StreamEvent::Usage(u))) => usage = Some(u),
            Some(Ok(StreamEvent::Finish(f))) => finish = Some(f),
            Some(Ok(_)) => {}
        }
        if text.len() as u64 > MIN_STEP_OUTPUT {
            // A summary is a few thousand tokens; this one does not end.
            return Err(ProviderError::new(
                ErrorKind::BadRequest,
                format!(
                    "the summary passed {} MiB without ending; stopped reading it",
                    MIN_STEP_OUTPUT / (1024 * 1024)
                ),
            ));
        }
    }
    Ok((text, usage, finish))
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
