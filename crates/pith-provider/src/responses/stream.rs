//! Parsing a Responses API SSE stream (typed events) into [`StreamEvent`]s.

use std::collections::VecDeque;

use futures_util::Stream;
use serde_json::{Value, json};

use super::body::ENCRYPTED_PREFIX;
use crate::error::{FaultKind, ProviderError, from_stream_error};
use crate::openai::{ENDED_EARLY, Flow, SseParser, drive_sse};
use crate::{EventStream, FinishReason, StreamEvent};
use pith_protocol::llm::WebResult;
use pith_protocol::message::Usage;

type Item = Result<StreamEvent, ProviderError>;

#[derive(Debug, Default)]
struct Call {
    /// The output item's id (`fc_…`), which the argument deltas name.
    item_id: String,
    call_id: String,
    name: String,
    arguments: String,
    started: bool,
}

/// Accumulates the typed events of one response; pure, fed one SSE event at a time.
#[derive(Debug, Default)]
pub struct EventParser {
    calls: Vec<Call>,
    /// Output items whose text arrived as deltas (their `done` text is not repeated).
    streamed: Vec<String>,
    /// The reasoning item being streamed and the summary part last seen in it.
    reasoning: Option<(String, u64)>,
    usage: Option<Usage>,
    /// The id of the last hosted web search (`web_search_call`): the answer's citations are
    /// added to it.
    last_search: Option<String>,
}

impl EventParser {
    pub fn new() -> Self {
        Self::default()
    }

    /// Handles one SSE event: its type is the `type` field of the data, else the event name.
    pub fn on_event(&mut self, event: &str, data: &str, out: &mut VecDeque<Item>) -> Flow {
        let data = data.trim();
        if data.is_empty() || data == "[DONE]" {
            return Flow::Continue;
        }
        let value: Value = match serde_json::from_str(data) {
            Ok(v) => v,
            Err(e) => {
                out.push_back(Err(malformed(data, &e)));
                return Flow::Done;
            }
        };
        let kind = value
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or(event)
            .to_string();
        let text = |key: &str| value.get(key).and_then(Value::as_str).unwrap_or("");
        match kind.as_str() {
            "response.output_text.delta" | "response.refusal.delta" => {
                let delta = text("delta");
                if !delta.is_empty() {
                    self.mark_streamed(text("item_id"));
                    out.push_back(Ok(StreamEvent::TextDelta(delta.to_string())));
                }
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                self.on_reasoning_delta(&value, out);
            }
            "response.output_text.annotation.added" => {
                self.on_citations(std::slice::from_ref(&value["annotation"]), out);
            }
            "response.output_item.added" => self.on_item(&value["item"], false, out),
            "response.output_item.done" => self.on_item(&value["item"], true, out),
            "response.function_call_arguments.delta" => {
                if let Some(call) = self.call_by_item(text("item_id")) {
                    call.arguments.push_str(text("delta"));
                }
            }
            "response.function_call_arguments.done" => {
                let args = text("arguments").to_string();
                if let Some(call) = self.call_by_item(text("item_id"))
                    && !args.is_empty()
                {
                    call.arguments = args;
                }
            }
            "response.completed" | "response.incomplete" => {
                self.finish_into(&value["response"], out);
                return Flow::Done;
            }
            "response.failed" => {
                out.push_back(Err(failed(&value)));
                return Flow::Done;
            }
            "error" => {
                out.push_back(Err(from_stream_error(data)));
                return Flow::Done;
            }
            _ => {}
        }
        Flow::Continue
    }

    fn mark_streamed(&mut self, item_id: &str) {
        if !item_id.is_empty() && !self.streamed.iter().any(|s| s == item_id) {
            self.streamed.push(item_id.to_string());
        }
    }

    fn call_by_item(&mut self, item_id: &str) -> Option<&mut Call> {
        // A server that names no item: the latest call.
        match self.calls.iter().position(|c| c.item_id == item_id) {
            Some(i) => self.calls.get_mut(i),
            None if item_id.is_empty() => self.calls.last_mut(),
            None => None,
        }
    }

    fn on_reasoning_delta(&mut self, value: &Value, out: &mut VecDeque<Item>) {
        let delta = value.get("delta").and_then(Value::as_str).unwrap_or("");
        if delta.is_empty() {
            return;
        }
        let item = value.get("item_id").and_then(Value::as_str).unwrap_or("");
        let part = value
            .get("summary_index")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        let mut delta = delta.to_string();
        if let Some((id, last)) = &self.reasoning
            && id == item
            && *last != part
        {
            // The next summary part of the same item: a paragraph of its own.
            delta.insert_str(0, "\n\n");
        }
        self.reasoning = Some((item.to_string(), part));
        self.mark_streamed(item);
        out.push_back(Ok(StreamEvent::ReasoningDelta(delta)));
    }

    /// An output item began (`done` false) or is complete.
    fn on_item(&mut self, item: &Value, done: bool, out: &mut VecDeque<Item>) {
        let s = |key: &str| item.get(key).and_then(Value::as_str).unwrap_or("");
        match s("type") {
            "function_call" => self.on_call_item(item, done, out),
            "message" if done => {
                let streamed = self.streamed.iter().any(|id| id == s("id"));
                for part in item["content"].as_array().into_iter().flatten() {
                    // Text not streamed as deltas (a server that sends only whole items).
                    let t = part.get("text").and_then(Value::as_str).unwrap_or("");
                    if !streamed && !t.is_empty() {
                        out.push_back(Ok(StreamEvent::TextDelta(t.to_string())));
                    }
                    if let Some(notes) = part.get("annotations").and_then(Value::as_array) {
                        self.on_citations(notes, out);
                    }
                }
            }
            "web_search_call" if done => self.on_web_search(item, out),
            "reasoning" if done => self.on_reasoning_done(item, out),
            _ => {}
        }
    }

    fn on_call_item(&mut self, item: &Value, done: bool, out: &mut VecDeque<Item>) {
        let s = |key: &str| item.get(key).and_then(Value::as_str).unwrap_or("");
        let item_id = s("id").to_string();
        let pos = self
            .calls
            .iter()
            .position(|c| !item_id.is_empty() && c.item_id == item_id);
        let pos = pos.unwrap_or_else(|| {
            self.calls.push(Call {
                item_id: item_id.clone(),
                ..Call::default()
            });
            self.calls.len() - 1
        });
        let call = &mut self.calls[pos];
        if call.call_id.is_empty() {
            call.call_id = s("call_id").to_string();
        }
        if call.name.is_empty() {
            call.name = s("name").to_string();
        }
        if done && !s("arguments").is_empty() {
            call.arguments = s("arguments").to_string();
        }
        if !call.started && !call.call_id.is_empty() && !call.name.is_empty() {
            call.started = true;
            out.push_back(Ok(StreamEvent::ToolCallStart {
                id: call.call_id.clone(),
                name: call.name.clone(),
            }));
        }
    }

    /// A hosted web search done: what it searched (or opened), the pages it found when the
    /// request asked for its sources.
    fn on_web_search(&mut self, item: &Value, out: &mut VecDeque<Item>) {
        let s = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).unwrap_or("").to_string();
        let id = s(item, "id");
        let action = &item["action"];
        let query = match s(action, "type").as_str() {
            "open_page" => format!("open {}", s(action, "url")),
            "find" => format!("find \"{}\" in {}", s(action, "pattern"), s(action, "url")),
            _ => {
                let q = s(action, "query");
                if q.is_empty() {
                    let qs: Vec<String> = action["queries"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|q| q.as_str().map(str::to_string))
                        .collect();
                    qs.join("; ")
                } else {
                    q
                }
            }
        };
        let results = action["sources"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|src| WebResult {
                title: s(src, "title"),
                url: s(src, "url"),
            })
            .filter(|r| !r.url.is_empty())
            .collect();
        let error = (s(item, "status") == "failed").then(|| "failed".to_string());
        self.last_search = Some(id.clone());
        out.push_back(Ok(StreamEvent::WebSearch {
            id,
            query,
            results,
            error,
        }));
    }

    /// `url_citation` annotations of the answer: the pages it cites, added to the last search.
    fn on_citations(&mut self, notes: &[Value], out: &mut VecDeque<Item>) {
        let Some(id) = self.last_search.clone() else {
            return;
        };
        let results: Vec<WebResult> = notes
            .iter()
            .filter(|n| n.get("type").and_then(Value::as_str) == Some("url_citation"))
            .filter_map(|n| {
                Some(WebResult {
                    url: n.get("url").and_then(Value::as_str)?.to_string(),
                    title: n
                        .get("title")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                })
            })
            .collect();
        if !results.is_empty() {
            out.push_back(Ok(StreamEvent::WebSearch {
                id,
                query: String::new(),
                results,
                error: None,
            }));
        }
    }

    /// A complete reasoning item: its summary if it was not streamed, then its encrypted content
    /// (to carry back), kept as the part's signature — or as a redacted part when it has no text.
    fn on_reasoning_done(&mut self, item: &Value, out: &mut VecDeque<Item>) {
        let id = item.get("id").and_then(Value::as_str).unwrap_or("");
        let mut has_text = self.streamed.iter().any(|s| s == id);
        if !has_text {
            let summary: Vec<&str> = item["summary"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .filter(|t| !t.is_empty())
                .collect();
            if !summary.is_empty() {
                has_text = true;
                out.push_back(Ok(StreamEvent::ReasoningDelta(summary.join("\n\n"))));
            }
        }
        self.reasoning = None;
        let Some(encrypted) = item
            .get("encrypted_content")
            .and_then(Value::as_str)
            .filter(|e| !e.is_empty())
        else {
            return;
        };
        let stored = format!("{ENCRYPTED_PREFIX}{encrypted}");
        out.push_back(Ok(if has_text {
            StreamEvent::ReasoningSignature(stored)
        } else {
            StreamEvent::RedactedReasoning(stored)
        }));
    }

    /// The response ended (`response` is the final response object): every tool call in order,
    /// the usage, the finish reason.
    pub(crate) fn finish_into(&mut self, response: &Value, out: &mut VecDeque<Item>) {
        if let Some(u) = response.get("usage").filter(|u| u.is_object()) {
            self.usage = Some(parse_usage(u));
        }
        let calls = std::mem::take(&mut self.calls);
        let has_calls = !calls.is_empty();
        for (n, call) in calls.into_iter().enumerate() {
            let id = if call.call_id.is_empty() {
                format!("call_{n}")
            } else {
                call.call_id
            };
            if !call.started {
                out.push_back(Ok(StreamEvent::ToolCallStart {
                    id: id.clone(),
                    name: call.name.clone(),
                }));
            }
            let arguments = if call.arguments.trim().is_empty() {
                "{}".to_string()
            } else {
                call.arguments
            };
            out.push_back(Ok(StreamEvent::ToolCall {
                id,
                name: call.name,
                arguments,
            }));
        }
        if let Some(u) = self.usage.take() {
            out.push_back(Ok(StreamEvent::Usage(u)));
        }
        let incomplete = response
            .pointer("/incomplete_details/reason")
            .and_then(Value::as_str);
        let reason = match incomplete {
            Some("max_output_tokens") => FinishReason::Length,
            Some("content_filter") => FinishReason::ContentFilter,
            Some(other) => FinishReason::Other(other.to_string()),
            None if has_calls => FinishReason::ToolCalls,
            None => FinishReason::Stop,
        };
        out.push_back(Ok(StreamEvent::Finish(reason)));
    }

    /// The byte stream ended (`err` None) or failed before the response completed.
    pub fn on_end(&mut self, err: Option<ProviderError>, out: &mut VecDeque<Item>) {
        let message = match err {
            Some(e) => format!("{ENDED_EARLY}: {}", e.message),
            None => ENDED_EARLY.to_string(),
        };
        out.push_back(Err(ProviderError::new(FaultKind::Network, message)));
    }
}

/// The error of a `response.failed` event. Its documented codes name a request the server
/// refused (`invalid_prompt`, `invalid_image`, …: reported) apart from its own faults
/// (`server_error`: retried).
fn failed(value: &Value) -> ProviderError {
    let error = value
        .pointer("/response/error")
        .cloned()
        .unwrap_or_else(|| json!({ "message": "the response failed" }));
    let refused = error
        .get("code")
        .and_then(Value::as_str)
        .is_some_and(|c| c.starts_with("invalid_"));
    let mut err = from_stream_error(&json!({ "error": error }).to_string());
    if refused && err.kind == FaultKind::Server {
        err.kind = FaultKind::BadRequest;
        err.message = err.message.replace("(server error)", "(bad request)");
    }
    err
}

fn malformed(data: &str, err: &serde_json::Error) -> ProviderError {
    let shown = pith_protocol::text::one_line_max(data, 200);
    ProviderError::new(
        FaultKind::Malformed,
        format!("malformed stream event ({err}): {shown}"),
    )
}

/// Usage from a Responses `usage` object: `input` excludes the cached tokens.
pub(crate) fn parse_usage(u: &Value) -> Usage {
    let n = |p: &str| u.pointer(p).and_then(Value::as_u64).unwrap_or(0);
    let cached = n("/input_tokens_details/cached_tokens");
    Usage {
        input: n("/input_tokens").saturating_sub(cached),
        output: n("/output_tokens"),
        reasoning: n("/output_tokens_details/reasoning_tokens"),
        cache_read: cached,
        cache_write: 0,
    }
}

/// The events of a complete (non-streamed) response object, for a server that ignored
/// `stream: true`.
pub(crate) fn response_events(body: &str) -> Vec<Item> {
    let value: Value = match serde_json::from_str(body) {
        Ok(v) => v,
        Err(e) => return vec![Err(malformed(body, &e))],
    };
    if value.get("error").is_some_and(|e| !e.is_null()) {
        return vec![Err(from_stream_error(body))];
    }
    let mut parser = EventParser::new();
    let mut out = VecDeque::new();
    for item in value["output"].as_array().into_iter().flatten() {
        parser.on_item(item, false, &mut out);
        parser.on_item(item, true, &mut out);
    }
    parser.finish_into(&value, &mut out);
    out.into()
}

impl SseParser for EventParser {
    fn on_event(&mut self, event: &str, data: &str, out: &mut VecDeque<Item>) -> Flow {
        EventParser::on_event(self, event, data, out)
    }
    fn on_end(&mut self, err: Option<ProviderError>, out: &mut VecDeque<Item>) {
        EventParser::on_end(self, err, out)
    }
}

/// Turns a byte stream of Responses SSE into events. Dropping the returned stream drops
/// `bytes` (and with it the connection).
pub fn parse_sse<S, B>(bytes: S) -> EventStream
where
    S: Stream<Item = Result<B, ProviderError>> + Send + 'static,
    B: AsRef<[u8]> + Send + 'static,
{
    drive_sse(bytes, EventParser::new())
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
