//! The Messages API event stream → `StreamEvent`s.
//!
//! [`EventParser`] is a pure state machine fed one SSE event at a time; [`events`] drives it over
//! an HTTP body.

use std::collections::HashMap;

use eventsource_stream::Eventsource;
use futures_util::{Stream, StreamExt};
use serde_json::Value;

use super::classify;
use crate::{EventStream, FaultKind, FinishReason, ProviderError, StreamEvent};
use pith_protocol::llm::WebResult;
use pith_protocol::message::Usage;

/// A content block being streamed.
#[derive(Debug)]
enum Block {
    Tool {
        id: String,
        name: String,
        json: String,
        /// `input` of `content_block_start`, used when no delta arrives.
        initial: Option<Value>,
    },
    /// The web search server tool's call (`server_tool_use` named `web_search`): its input.
    Search {
        id: String,
        json: String,
        initial: Option<Value>,
    },
    Other,
}

/// Turns Messages API SSE events into `StreamEvent`s.
#[derive(Debug, Default)]
pub struct EventParser {
    blocks: HashMap<u64, Block>,
    usage: Usage,
    finish: Option<FinishReason>,
    done: bool,
    /// Web searches called, by id → what they search (their results come in a later block).
    searches: HashMap<String, String>,
    /// The last web search whose results came: the answer's citations are added to it.
    last_search: Option<String>,
}

impl EventParser {
    pub fn new() -> Self {
        Self::default()
    }

    /// `message_stop` was seen: the response is complete.
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Handles one SSE event (`event:` name and `data:` text).
    pub fn handle(&mut self, event: &str, data: &str) -> Result<Vec<StreamEvent>, ProviderError> {
        if self.done {
            return Ok(Vec::new());
        }
        let named = !event.is_empty() && event != "message";
        if named && !is_known(event) {
            tracing::debug!(event, "anthropic: ignoring unknown stream event");
            return Ok(Vec::new());
        }
        let value: Value = match serde_json::from_str(data) {
            Ok(v) => v,
            Err(e) => {
                return Err(ProviderError::new(
                    FaultKind::Malformed,
                    format!("anthropic: invalid JSON in `{event}` event: {e}"),
                ));
            }
        };
        let kind = if named {
            event.to_string()
        } else {
            str_at(&value, "type").to_string()
        };
        self.handle_value(&kind, &value)
    }

    fn handle_value(&mut self, kind: &str, v: &Value) -> Result<Vec<StreamEvent>, ProviderError> {
        let mut out = Vec::new();
        match kind {
            "message_start" => {
                if let Some(u) = v.pointer("/message/usage") {
                    self.update_usage(u);
                }
            }
            "content_block_start" => self.block_start(v, &mut out)?,
            "content_block_delta" => self.block_delta(v, &mut out)?,
            "content_block_stop" => self.block_stop(v, &mut out)?,
            "message_delta" => {
                if let Some(reason) = v.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.finish = Some(finish_reason(reason));
                }
                if let Some(u) = v.get("usage") {
                    self.update_usage(u);
                }
            }
            "message_stop" => {
                self.done = true;
                out.push(StreamEvent::Usage(self.usage));
                out.push(StreamEvent::Finish(
                    self.finish.clone().unwrap_or(FinishReason::Stop),
                ));
            }
            "error" => return Err(stream_error(v)),
            // `ping`, and an unnamed event of an unknown type.
            _ => {}
        }
        Ok(out)
    }

    /// `content_block_start`: a tool call starts (its input may come whole here), or a text or
    /// thinking block with its first text.
    fn block_start(&mut self, v: &Value, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        let index = index_of(v)?;
        let block = v.get("content_block").unwrap_or(&Value::Null);
        match str_at(block, "type") {
            "tool_use" => {
                let id = str_at(block, "id").to_string();
                let name = str_at(block, "name").to_string();
                out.push(StreamEvent::ToolCallStart {
                    id: id.clone(),
                    name: name.clone(),
                });
                let initial = block
                    .get("input")
                    .filter(|i| i.as_object().is_some_and(|o| !o.is_empty()))
                    .cloned();
                self.blocks.insert(
                    index,
                    Block::Tool {
                        id,
                        name,
                        json: String::new(),
                        initial,
                    },
                );
            }
            "text" => {
                push_nonempty(out, str_at(block, "text"), StreamEvent::TextDelta);
                self.blocks.insert(index, Block::Other);
            }
            "thinking" => {
                push_nonempty(out, str_at(block, "thinking"), StreamEvent::ReasoningDelta);
                push_nonempty(
                    out,
                    str_at(block, "signature"),
                    StreamEvent::ReasoningSignature,
                );
                self.blocks.insert(index, Block::Other);
            }
            "server_tool_use" if str_at(block, "name") == "web_search" => {
                let initial = block
                    .get("input")
                    .filter(|i| i.as_object().is_some_and(|o| !o.is_empty()))
                    .cloned();
                let id = str_at(block, "id").to_string();
                self.blocks.insert(
                    index,
                    Block::Search {
                        id,
                        json: String::new(),
                        initial,
                    },
                );
            }
            "web_search_tool_result" => {
                out.push(self.search_result(block));
                self.blocks.insert(index, Block::Other);
            }
            "redacted_thinking" => {
                out.push(StreamEvent::RedactedReasoning(
                    str_at(block, "data").to_string(),
                ));
                self.blocks.insert(index, Block::Other);
            }
            other => {
                tracing::debug!(block = other, "anthropic: ignoring content block");
                self.blocks.insert(index, Block::Other);
            }
        }
        Ok(())
    }

    /// `content_block_delta`: more text, thinking or signature, or a piece of a tool call's
    /// input JSON.
    fn block_delta(&mut self, v: &Value, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        let index = index_of(v)?;
        let delta = v.get("delta").unwrap_or(&Value::Null);
        match str_at(delta, "type") {
            "text_delta" => push_nonempty(out, str_at(delta, "text"), StreamEvent::TextDelta),
            "thinking_delta" => {
                push_nonempty(out, str_at(delta, "thinking"), StreamEvent::ReasoningDelta)
            }
            "signature_delta" => push_nonempty(
                out,
                str_at(delta, "signature"),
                StreamEvent::ReasoningSignature,
            ),
            "citations_delta" => self.citation(&delta["citation"], out),
            "input_json_delta" => match self.blocks.get_mut(&index) {
                Some(Block::Tool { json, .. } | Block::Search { json, .. }) => {
                    json.push_str(str_at(delta, "partial_json"))
                }
                _ => {
                    return Err(ProviderError::new(
                        FaultKind::Malformed,
                        format!(
                            "anthropic: input_json_delta for block {index}, which is not a tool_use"
                        ),
                    ));
                }
            },
            other => tracing::debug!(delta = other, "anthropic: ignoring delta"),
        }
        Ok(())
    }

    /// `content_block_stop`: a tool call's input is complete (checked to be JSON).
    fn block_stop(&mut self, v: &Value, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        let index = index_of(v)?;
        if let Some(Block::Search { id, json, initial }) = self.blocks.get(&index) {
            let input = serde_json::from_str::<Value>(json)
                .ok()
                .or_else(|| initial.clone())
                .unwrap_or(Value::Null);
            let query = str_at(&input, "query").to_string();
            self.searches.insert(id.clone(), query);
            self.blocks.remove(&index);
            return Ok(());
        }
        let Some(Block::Tool {
            id,
            name,
            json,
            initial,
        }) = self.blocks.remove(&index)
        else {
            return Ok(());
        };
        let arguments = if !json.trim().is_empty() {
            if let Err(e) = serde_json::from_str::<Value>(&json) {
                return Err(ProviderError::new(
                    FaultKind::Malformed,
                    format!("anthropic: tool call `{name}` has invalid JSON input: {e}"),
                ));
            }
            json
        } else if let Some(initial) = initial {
            initial.to_string()
        } else {
            "{}".to_string()
        };
        out.push(StreamEvent::ToolCall {
            id,
            name,
            arguments,
        });
        Ok(())
    }

    /// A `web_search_tool_result` block: the pages the search found, or its error code.
    fn search_result(&mut self, block: &Value) -> StreamEvent {
        let id = str_at(block, "tool_use_id").to_string();
        let query = self.searches.remove(&id).unwrap_or_default();
        let content = block.get("content").unwrap_or(&Value::Null);
        let error = (str_at(content, "type") == "web_search_tool_result_error")
            .then(|| str_at(content, "error_code").to_string());
        let results = content
            .as_array()
            .into_iter()
            .flatten()
            .filter(|r| str_at(r, "type") == "web_search_result")
            .map(|r| WebResult {
                title: str_at(r, "title").to_string(),
                url: str_at(r, "url").to_string(),
            })
            .collect();
        self.last_search = Some(id.clone());
        StreamEvent::WebSearch {
            id,
            query,
            results,
            error,
        }
    }

    /// A citation of the answer's text: a search result it relies on, added to the last search.
    fn citation(&mut self, citation: &Value, out: &mut Vec<StreamEvent>) {
        let Some(id) = self.last_search.clone() else {
            return;
        };
        if str_at(citation, "type") != "web_search_result_location" {
            return;
        }
        out.push(StreamEvent::WebSearch {
            id,
            query: String::new(),
            results: vec![WebResult {
                title: str_at(citation, "title").to_string(),
                url: str_at(citation, "url").to_string(),
            }],
            error: None,
        });
    }

    /// Takes every count present (later reports are cumulative and win).
    fn update_usage(&mut self, u: &Value) {
        let get = |k: &str| u.get(k).and_then(Value::as_u64);
        if let Some(n) = get("input_tokens") {
            self.usage.input = n;
        }
        if let Some(n) = get("output_tokens") {
            self.usage.output = n;
        }
        if let Some(n) = get("cache_creation_input_tokens") {
            self.usage.cache_write = n;
        }
        if let Some(n) = get("cache_read_input_tokens") {
            self.usage.cache_read = n;
        }
    }
}

fn is_known(event: &str) -> bool {
    matches!(
        event,
        "message_start"
            | "content_block_start"
            | "content_block_delta"
            | "content_block_stop"
            | "message_delta"
            | "message_stop"
            | "ping"
            | "error"
    )
}

fn finish_reason(reason: &str) -> FinishReason {
    match reason {
        "end_turn" | "stop_sequence" => FinishReason::Stop,
        "tool_use" => FinishReason::ToolCalls,
        "max_tokens" | "model_context_window_exceeded" => FinishReason::Length,
        "refusal" => FinishReason::ContentFilter,
        other => FinishReason::Other(other.to_string()),
    }
}

fn str_at<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// An `error` event as the error it reports.
fn stream_error(v: &Value) -> ProviderError {
    let etype = v
        .pointer("/error/type")
        .and_then(Value::as_str)
        .unwrap_or("error");
    let message = v
        .pointer("/error/message")
        .and_then(Value::as_str)
        .unwrap_or("");
    ProviderError::new(
        classify(None, etype, message),
        super::one_line(&format!("anthropic: {etype}: {message}")),
    )
}

fn index_of(v: &Value) -> Result<u64, ProviderError> {
    v.get("index").and_then(Value::as_u64).ok_or_else(|| {
        ProviderError::new(
            FaultKind::Malformed,
            "anthropic: content block event without an index",
        )
    })
}

fn push_nonempty(out: &mut Vec<StreamEvent>, s: &str, make: fn(String) -> StreamEvent) {
    if !s.is_empty() {
        out.push(make(s.to_string()));
    }
}

/// Drives an [`EventParser`] over a byte stream. The stream ends after `message_stop`, or after
/// the first error item; a body that ends before `message_stop` yields a `Network` error.
pub fn events<S, B, E>(bytes: S) -> EventStream
where
    S: Stream<Item = Result<B, E>> + Send + 'static,
    B: AsRef<[u8]> + Send + 'static,
    E: Into<ProviderError> + std::fmt::Display + Send + 'static,
{
    struct State<T> {
        sse: T,
        parser: EventParser,
        pending: std::collections::VecDeque<StreamEvent>,
        finished: bool,
    }
    let state = State {
        sse: Box::pin(bytes.eventsource()),
        parser: EventParser::new(),
        pending: Default::default(),
        finished: false,
    };
    let stream = futures_util::stream::unfold(state, |mut st| async move {
        loop {
            if let Some(ev) = st.pending.pop_front() {
                return Some((Ok(ev), st));
            }
            if st.finished || st.parser.is_done() {
                return None;
            }
            let err = match st.sse.next().await {
                Some(Ok(ev)) => match st.parser.handle(&ev.event, &ev.data) {
                    Ok(evs) => {
                        st.pending.extend(evs);
                        continue;
                    }
                    Err(e) => e,
                },
                Some(Err(eventsource_stream::EventStreamError::Transport(e))) => {
                    // A timeout or a cut connection (retried), or an answer too large (not).
                    let mut err: ProviderError = e.into();
                    let what = if err.kind == FaultKind::Network {
                        "stream interrupted: "
                    } else {
                        ""
                    };
                    err.message = super::one_line(&format!("anthropic: {what}{}", err.message));
                    err
                }
                Some(Err(e)) => {
                    let msg = super::one_line(&format!("anthropic: unreadable stream: {e}"));
                    ProviderError::new(FaultKind::Malformed, msg)
                }
                None => ProviderError::new(
                    FaultKind::Network,
                    "anthropic: stream ended before message_stop",
                ),
            };
            tracing::debug!(kind = ?err.kind, "{}", err.message);
            st.finished = true;
            return Some((Err(err), st));
        }
    });
    Box::pin(stream)
}
