//! Parsing a chat-completions SSE stream into [`StreamEvent`]s.

use std::collections::{HashMap, VecDeque};
use std::pin::Pin;

use eventsource_stream::{Event, EventStreamError, Eventsource};
use futures_util::{Stream, StreamExt, stream};
use serde_json::Value;

use crate::error::{FaultKind, ProviderError, from_stream_error};
use crate::{EventStream, FinishReason, StreamEvent};
use pith_protocol::message::Usage;

type Item = Result<StreamEvent, ProviderError>;

/// The message of a stream that stopped before `[DONE]` and before any finish reason.
pub(crate) const ENDED_EARLY: &str = "stream ended before the response finished";

#[derive(Debug, Default)]
struct Call {
    id: String,
    name: String,
    arguments: String,
    started: bool,
}

/// Accumulates chunks; pure, fed one SSE event at a time.
#[derive(Debug, Default)]
pub struct ChunkParser {
    calls: Vec<Call>,
    /// Stream index → position in `calls` of the call currently at that index.
    by_index: HashMap<u64, usize>,
    usage: Option<Usage>,
    finish: Option<String>,
}

/// Whether the stream goes on after an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Continue,
    /// `[DONE]` or an error: nothing more is read.
    Done,
}

impl ChunkParser {
    pub fn new() -> Self {
        Self::default()
    }

    /// Handles one SSE event (`event` is the event name, empty for plain `data:` frames).
    pub fn on_event(&mut self, event: &str, data: &str, out: &mut VecDeque<Item>) -> Flow {
        let data = data.trim();
        if data == "[DONE]" {
            self.finish_into(out);
            return Flow::Done;
        }
        if event == "error" {
            out.push_back(Err(from_stream_error(data)));
            return Flow::Done;
        }
        if data.is_empty() {
            return Flow::Continue;
        }
        let chunk: Value = match serde_json::from_str(data) {
            Ok(v) => v,
            Err(e) => {
                out.push_back(Err(malformed(data, &e)));
                return Flow::Done;
            }
        };
        if chunk.get("error").is_some_and(|e| !e.is_null()) {
            out.push_back(Err(from_stream_error(data)));
            return Flow::Done;
        }
        if let Some(u) = chunk.get("usage").filter(|u| u.is_object()) {
            self.usage = Some(parse_usage(u));
        }
        let choice = chunk
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|c| c.first());
        if let Some(choice) = choice {
            if let Some(delta) = choice.get("delta").filter(|d| d.is_object()) {
                self.on_delta(delta, out);
            }
            if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str)
                && !reason.is_empty()
            {
                self.finish = Some(reason.to_string());
            }
        }
        Flow::Continue
    }

    fn on_delta(&mut self, delta: &Value, out: &mut VecDeque<Item>) {
        let text = |key: &str| {
            delta
                .get(key)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
        };
        // Servers send one or the other (DeepSeek / vLLM: reasoning_content; OpenRouter /
        // Ollama: reasoning); never both of the same text.
        if let Some(r) = text("reasoning_content").or_else(|| text("reasoning")) {
            out.push_back(Ok(StreamEvent::ReasoningDelta(r.to_string())));
        }
        if let Some(t) = text("content") {
            out.push_back(Ok(StreamEvent::TextDelta(t.to_string())));
        }
        if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
            for (pos, tc) in calls.iter().enumerate() {
                self.on_tool_delta(pos, tc, out);
            }
        }
    }

    fn on_tool_delta(&mut self, pos: usize, tc: &Value, out: &mut VecDeque<Item>) {
        let index = tc
            .get("index")
            .and_then(Value::as_u64)
            .unwrap_or(pos as u64);
        let id = tc
            .get("id")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty());
        let function = tc.get("function");
        let name = function
            .and_then(|f| f.get("name"))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty());
        let arguments = function.and_then(|f| f.get("arguments"));

        let slot = match (self.by_index.get(&index).copied(), id) {
            // A different id at an index already in use starts a new call.
            (Some(i), Some(id)) if !self.calls[i].id.is_empty() && self.calls[i].id != id => None,
            (Some(i), _) => Some(i),
            (None, _) => None,
        };
        let slot = slot.unwrap_or_else(|| {
            self.calls.push(Call::default());
            let i = self.calls.len() - 1;
            self.by_index.insert(index, i);
            i
        });
        let call = &mut self.calls[slot];
        if let Some(id) = id
            && call.id.is_empty()
        {
            call.id = id.to_string();
        }
        if let Some(name) = name
            && call.name.is_empty()
        {
            call.name = name.to_string();
        }
        match arguments {
            Some(Value::String(s)) => call.arguments.push_str(s),
            // Some servers send the arguments as an object instead of JSON text.
            Some(v @ Value::Object(_)) => call.arguments.push_str(&v.to_string()),
            _ => {}
        }
        if !call.started && !call.id.is_empty() && !call.name.is_empty() {
            call.started = true;
            out.push_back(Ok(StreamEvent::ToolCallStart {
                id: call.id.clone(),
                name: call.name.clone(),
            }));
        }
    }

    /// Whether a finish reason has been seen (the answer is complete even if `[DONE]` is not).
    pub(crate) fn saw_finish(&self) -> bool {
        self.finish.is_some()
    }

    /// Emits every tool call in order, the usage if reported, then the finish reason.
    pub(crate) fn finish_into(&mut self, out: &mut VecDeque<Item>) {
        let calls = std::mem::take(&mut self.calls);
        self.by_index.clear();
        let has_calls = !calls.is_empty();
        for (n, mut call) in calls.into_iter().enumerate() {
            if call.id.is_empty() {
                // Some local servers never send an id.
                call.id = format!("call_{n}");
            }
            if !call.started {
                out.push_back(Ok(StreamEvent::ToolCallStart {
                    id: call.id.clone(),
                    name: call.name.clone(),
                }));
            }
            let arguments = if call.arguments.trim().is_empty() {
                "{}".to_string()
            } else {
                call.arguments
            };
            out.push_back(Ok(StreamEvent::ToolCall {
                id: call.id,
                name: call.name,
                arguments,
            }));
        }
        if let Some(u) = self.usage.take() {
            out.push_back(Ok(StreamEvent::Usage(u)));
        }
        let reason = match self.finish.take() {
            Some(r) => finish_reason(&r),
            None if has_calls => FinishReason::ToolCalls,
            None => FinishReason::Stop,
        };
        // Some servers say "stop" after tool calls; the calls are what matter.
        let reason = if has_calls && reason == FinishReason::Stop {
            FinishReason::ToolCalls
        } else {
            reason
        };
        out.push_back(Ok(StreamEvent::Finish(reason)));
    }

    /// The byte stream ended (`err` None) or failed before `[DONE]`.
    pub fn on_end(&mut self, err: Option<ProviderError>, out: &mut VecDeque<Item>) {
        if self.saw_finish() {
            if let Some(e) = err {
                tracing::debug!(error = %e, "stream broke after the finish reason; treated as complete");
            }
            self.finish_into(out);
            return;
        }
        let message = match err {
            Some(e) => format!("{ENDED_EARLY}: {}", e.message),
            None => ENDED_EARLY.to_string(),
        };
        out.push_back(Err(ProviderError::new(FaultKind::Network, message)));
    }
}

fn malformed(data: &str, err: &serde_json::Error) -> ProviderError {
    let mut shown: String = data.chars().take(200).collect();
    if shown.len() < data.len() {
        shown.push('…');
    }
    ProviderError::new(
        FaultKind::Malformed,
        format!("malformed stream chunk ({err}): {shown}"),
    )
}

/// Maps an OpenAI finish reason.
pub(super) fn finish_reason(r: &str) -> FinishReason {
    match r {
        "stop" | "end_turn" | "eos" => FinishReason::Stop,
        "tool_calls" | "function_call" | "tool_use" => FinishReason::ToolCalls,
        "length" | "max_tokens" => FinishReason::Length,
        "content_filter" => FinishReason::ContentFilter,
        other => FinishReason::Other(other.to_string()),
    }
}

/// Usage from an OpenAI `usage` object: `input` excludes the cached prompt tokens.
pub(crate) fn parse_usage(u: &Value) -> Usage {
    let n = |v: Option<&Value>| v.and_then(Value::as_u64).unwrap_or(0);
    let prompt = n(u.get("prompt_tokens"));
    let completion = n(u.get("completion_tokens"));
    let cached = u
        .pointer("/prompt_tokens_details/cached_tokens")
        .or_else(|| u.get("prompt_cache_hit_tokens"))
        .and_then(Value::as_u64)
        .unwrap_or(0);
    Usage {
        input: prompt.saturating_sub(cached),
        output: completion,
        reasoning: n(u.pointer("/completion_tokens_details/reasoning_tokens")),
        cache_read: cached,
        cache_write: 0,
    }
}

type SseEvents = Pin<Box<dyn Stream<Item = Result<Event, EventStreamError<ProviderError>>> + Send>>;

/// A wire format's reader of SSE events: what each event adds, and what the end of the stream
/// (clean, or cut by a transport error) adds.
pub trait SseParser: Send + 'static {
    fn on_event(&mut self, event: &str, data: &str, out: &mut VecDeque<Item>) -> Flow;
    fn on_end(&mut self, err: Option<ProviderError>, out: &mut VecDeque<Item>);
}

impl SseParser for ChunkParser {
    fn on_event(&mut self, event: &str, data: &str, out: &mut VecDeque<Item>) -> Flow {
        ChunkParser::on_event(self, event, data, out)
    }
    fn on_end(&mut self, err: Option<ProviderError>, out: &mut VecDeque<Item>) {
        ChunkParser::on_end(self, err, out)
    }
}

struct State<P> {
    events: SseEvents,
    parser: P,
    pending: VecDeque<Item>,
    ended: bool,
}

/// Turns a byte stream of chat-completion SSE into events. Dropping the returned stream drops
/// `bytes` (and with it the connection).
pub fn parse_sse<S, B>(bytes: S) -> EventStream
where
    S: Stream<Item = Result<B, ProviderError>> + Send + 'static,
    B: AsRef<[u8]> + Send + 'static,
{
    drive_sse(bytes, ChunkParser::new())
}

/// Turns a byte stream of SSE into events with `parser` (one loop for every wire format that
/// reads SSE through it). Dropping the returned stream drops `bytes`.
pub(crate) fn drive_sse<S, B, P>(bytes: S, parser: P) -> EventStream
where
    S: Stream<Item = Result<B, ProviderError>> + Send + 'static,
    B: AsRef<[u8]> + Send + 'static,
    P: SseParser,
{
    let state = State {
        events: Box::pin(bytes.eventsource()),
        parser,
        pending: VecDeque::new(),
        ended: false,
    };
    Box::pin(stream::unfold(state, |mut st| async move {
        loop {
            if let Some(item) = st.pending.pop_front() {
                return Some((item, st));
            }
            if st.ended {
                return None;
            }
            match st.events.next().await {
                Some(Ok(ev)) => {
                    if st.parser.on_event(&ev.event, &ev.data, &mut st.pending) == Flow::Done {
                        st.ended = true;
                    }
                }
                Some(Err(EventStreamError::Transport(e))) => {
                    st.ended = true;
                    st.parser.on_end(Some(e), &mut st.pending);
                }
                Some(Err(e)) => {
                    st.ended = true;
                    st.pending.push_back(Err(ProviderError::new(
                        FaultKind::Malformed,
                        format!("malformed event stream: {e}"),
                    )));
                }
                None => {
                    st.ended = true;
                    st.parser.on_end(None, &mut st.pending);
                }
            }
        }
    }))
}

/// The events of a complete (non-streamed) `chat.completion` body, for servers that ignore
/// `stream: true` and answer with plain JSON.
pub(crate) fn completion_events(body: &str) -> Vec<Item> {
    let value: Value = match serde_json::from_str(body) {
        Ok(v) => v,
        Err(e) => return vec![Err(malformed(body, &e))],
    };
    if value.get("error").is_some_and(|e| !e.is_null()) {
        return vec![Err(from_stream_error(body))];
    }
    let mut parser = ChunkParser::new();
    let mut out = VecDeque::new();
    if let Some(u) = value.get("usage").filter(|u| u.is_object()) {
        parser.usage = Some(parse_usage(u));
    }
    if let Some(choice) = value
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
    {
        if let Some(msg) = choice.get("message").filter(|m| m.is_object()) {
            parser.on_delta(msg, &mut out);
        }
        if let Some(r) = choice.get("finish_reason").and_then(Value::as_str) {
            parser.finish = Some(r.to_string());
        }
    }
    parser.finish_into(&mut out);
    out.into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn feed(frames: &[(&str, Value)]) -> Vec<Item> {
        let mut p = ChunkParser::new();
        let mut out = VecDeque::new();
        for (ev, data) in frames {
            let data = match data {
                Value::String(s) => s.clone(),
                v => v.to_string(),
            };
            if p.on_event(ev, &data, &mut out) == Flow::Done {
                break;
            }
        }
        out.into()
    }

    fn delta(d: Value) -> (&'static str, Value) {
        (
            "",
            json!({ "choices": [{ "index": 0, "delta": d, "finish_reason": null }] }),
        )
    }

    fn done() -> (&'static str, Value) {
        ("", json!("[DONE]"))
    }

    #[test]
    fn same_id_repeated_is_one_call_and_new_id_is_another() {
        let out = feed(&[
            delta(
                json!({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "x", "arguments": "{\"p\":"}}]}),
            ),
            delta(
                json!({"tool_calls": [{"index": 0, "id": "a", "function": {"arguments": "1}"}}]}),
            ),
            delta(
                json!({"tool_calls": [{"index": 0, "id": "b", "function": {"name": "y", "arguments": "{}"}}]}),
            ),
            done(),
        ]);
        let out: Vec<StreamEvent> = out.into_iter().map(Result::unwrap).collect();
        assert_eq!(
            out,
            vec![
                StreamEvent::ToolCallStart {
                    id: "a".into(),
                    name: "x".into()
                },
                StreamEvent::ToolCallStart {
                    id: "b".into(),
                    name: "y".into()
                },
                StreamEvent::ToolCall {
                    id: "a".into(),
                    name: "x".into(),
                    arguments: "{\"p\":1}".into()
                },
                StreamEvent::ToolCall {
                    id: "b".into(),
                    name: "y".into(),
                    arguments: "{}".into()
                },
                StreamEvent::Finish(FinishReason::ToolCalls),
            ]
        );
    }

    #[test]
    fn calls_without_ids_or_index_get_defaults() {
        let out = feed(&[
            delta(
                json!({"tool_calls": [{"function": {"name": "ls", "arguments": {"path": "."}}}]}),
            ),
            (
                "",
                json!({"choices": [{"delta": {}, "finish_reason": "stop"}]}),
            ),
            done(),
        ]);
        let out: Vec<StreamEvent> = out.into_iter().map(Result::unwrap).collect();
        assert_eq!(
            out,
            vec![
                StreamEvent::ToolCallStart {
                    id: "call_0".into(),
                    name: "ls".into()
                },
                StreamEvent::ToolCall {
                    id: "call_0".into(),
                    name: "ls".into(),
                    arguments: "{\"path\":\".\"}".into()
                },
                StreamEvent::Finish(FinishReason::ToolCalls),
            ]
        );
    }

    #[test]
    fn reasoning_field_variants() {
        let out = feed(&[
            delta(json!({"reasoning": "r1"})),
            delta(json!({"reasoning_content": "r2", "reasoning": "r2"})),
            delta(json!({"content": "t"})),
            done(),
        ]);
        let out: Vec<StreamEvent> = out.into_iter().map(Result::unwrap).collect();
        assert_eq!(
            out,
            vec![
                StreamEvent::ReasoningDelta("r1".into()),
                StreamEvent::ReasoningDelta("r2".into()),
                StreamEvent::TextDelta("t".into()),
                StreamEvent::Finish(FinishReason::Stop),
            ]
        );
    }

    #[test]
    fn usage_maps_cached_and_reasoning() {
        let u = parse_usage(&json!({
            "prompt_tokens": 100, "completion_tokens": 20,
            "prompt_tokens_details": {"cached_tokens": 60},
            "completion_tokens_details": {"reasoning_tokens": 5}
        }));
        assert_eq!(
            u,
            Usage {
                input: 40,
                output: 20,
                reasoning: 5,
                cache_read: 60,
                cache_write: 0
            }
        );
        let u = parse_usage(
            &json!({"prompt_tokens": 10, "completion_tokens": 2, "prompt_cache_hit_tokens": 4}),
        );
        assert_eq!(
            u,
            Usage {
                input: 6,
                output: 2,
                reasoning: 0,
                cache_read: 4,
                cache_write: 0
            }
        );
        let u = parse_usage(&json!({"prompt_tokens": 10, "completion_tokens": null}));
        assert_eq!(
            u,
            Usage {
                input: 10,
                ..Usage::default()
            }
        );
    }

    #[test]
    fn finish_reasons() {
        assert_eq!(finish_reason("stop"), FinishReason::Stop);
        assert_eq!(finish_reason("tool_calls"), FinishReason::ToolCalls);
        assert_eq!(finish_reason("length"), FinishReason::Length);
        assert_eq!(finish_reason("content_filter"), FinishReason::ContentFilter);
        assert_eq!(finish_reason("weird"), FinishReason::Other("weird".into()));
    }

    #[test]
    fn end_without_finish_is_network_but_after_finish_is_complete() {
        let mut p = ChunkParser::new();
        let mut out = VecDeque::new();
        p.on_event(
            "",
            &json!({"choices":[{"delta":{"content":"hi"}}]}).to_string(),
            &mut out,
        );
        p.on_end(None, &mut out);
        let last = out.pop_back().unwrap().unwrap_err();
        assert_eq!(last.kind, FaultKind::Network);
        assert_eq!(last.message, ENDED_EARLY);

        let mut p = ChunkParser::new();
        let mut out = VecDeque::new();
        p.on_event(
            "",
            &json!({"choices":[{"delta":{"content":"hi"},"finish_reason":"length"}]}).to_string(),
            &mut out,
        );
        p.on_end(
            Some(ProviderError::new(FaultKind::Network, "reset")),
            &mut out,
        );
        assert_eq!(
            out.pop_back().unwrap().unwrap(),
            StreamEvent::Finish(FinishReason::Length)
        );
    }

    #[test]
    fn error_chunks_and_garbage() {
        let out = feed(&[(
            "",
            json!({"error": {"message": "upstream failed", "code": 502}}),
        )]);
        let e = out[0].clone().unwrap_err();
        assert_eq!(e.kind, FaultKind::Server);
        assert!(e.message.contains("upstream failed"));
        let out = feed(&[("error", json!("overloaded"))]);
        assert_eq!(out[0].clone().unwrap_err().kind, FaultKind::Server);
        let out = feed(&[("", json!("{not json"))]);
        assert_eq!(out[0].clone().unwrap_err().kind, FaultKind::Malformed);
        // usage: null and empty choices are fine
        let out = feed(&[("", json!({"choices": [], "usage": null})), done()]);
        assert_eq!(out.len(), 1);
    }

    #[test]
    fn non_streamed_completion() {
        let body = json!({
            "choices": [{"message": {"role": "assistant", "content": "hello",
                "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]},
                "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 1}
        })
        .to_string();
        let out: Vec<StreamEvent> = completion_events(&body)
            .into_iter()
            .map(Result::unwrap)
            .collect();
        assert_eq!(
            out,
            vec![
                StreamEvent::TextDelta("hello".into()),
                StreamEvent::ToolCallStart {
                    id: "c1".into(),
                    name: "ls".into()
                },
                StreamEvent::ToolCall {
                    id: "c1".into(),
                    name: "ls".into(),
                    arguments: "{}".into()
                },
                StreamEvent::Usage(Usage {
                    input: 3,
                    output: 1,
                    ..Usage::default()
                }),
                StreamEvent::Finish(FinishReason::ToolCalls),
            ]
        );
        assert_eq!(
            completion_events("nope")[0].clone().unwrap_err().kind,
            FaultKind::Malformed
        );
    }
}
