//! Streaming one step into an assistant message, with retries (ARCHITECTURE.md §5: provider faults
//! are retried with backoff or reported plainly).

use std::time::{Duration, Instant};

use futures_util::StreamExt;
use tokio_util::sync::CancellationToken;

use super::runner::Runner;
use crate::event::{EngineState, Event};
use crate::llm::{ChatRequest, FinishReason, StreamEvent};
use crate::message::{Part, PartKind, ToolState, Usage};
use crate::provider::{ErrorKind, Provider, ProviderError};

/// Streamed text is written to the store at least this often.
const FLUSH_EVERY: Duration = Duration::from_millis(250);

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
            let Some(delay) = self.retry.delay(attempt, &err) else {
                return Outcome::Failed(err);
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
            self.retry.max_retries,
            err.message
        );
        self.emit(Event::Retrying {
            attempt,
            max: self.retry.max_retries,
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
        for id in &dropped {
            if let Err(e) = self.store.delete_part(id) {
                tracing::error!("store: cannot delete part {id}: {e:#}");
            }
        }
        let m = m.clone();
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
        let Some(opened) = cancel.run_until_cancelled(provider.stream(request)).await else {
            return Ok(Outcome::Interrupted);
        };
        let mut stream = opened?;
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
                _ = cancel.cancelled() => {
                    self.flush_parts(idx);
                    return Ok(Outcome::Interrupted);
                }
            };
            let event = match item {
                None => break,
                Some(Ok(ev)) => ev,
                Some(Err(e)) => return Err(e),
            };
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
        let err = match collect_once(provider, request, cancel).await {
            Ok(done) => return Ok(done),
            Err(e) => e,
        };
        if matches!(err.kind, ErrorKind::Cancelled | ErrorKind::ContextOverflow) {
            return Err(err);
        }
        let Some(delay) = runner.retry.delay(attempt, &err) else {
            return Err(err);
        };
        if !runner.wait_retry(attempt, delay, &err, cancel).await {
            return Err(ProviderError::new(ErrorKind::Cancelled, "interrupted"));
        }
        runner.state(EngineState::Compacting, None);
    }
}

async fn collect_once(
    provider: &dyn Provider,
    request: &ChatRequest,
    cancel: &CancellationToken,
) -> Result<Completion, ProviderError> {
    let cancelled = || ProviderError::new(ErrorKind::Cancelled, "interrupted");
    let mut stream = cancel
        .run_until_cancelled(provider.stream(request))
        .await
        .ok_or_else(cancelled)??;
    let mut text = String::new();
    let mut usage = None;
    let mut finish = None;
    loop {
        let item = cancel
            .run_until_cancelled(stream.next())
            .await
            .ok_or_else(cancelled)?;
        match item {
            None => break,
            Some(Err(e)) => return Err(e),
            Some(Ok(StreamEvent::TextDelta(d))) => text.push_str(&d),
            Some(Ok(StreamEvent::Usage(u))) => usage = Some(u),
            Some(Ok(StreamEvent::Finish(f))) => finish = Some(f),
            Some(Ok(_)) => {}
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
