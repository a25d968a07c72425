//! Token estimates (ARCHITECTURE.md §6.5).
//!
//! Provider-reported usage is the count of record; this module estimates what lies between
//! reports. It counts with the real BPE of the model family (tiktoken-rs: o200k_base for current
//! OpenAI families, cl100k_base for older ones, o200k_base as the approximation for everything
//! else), corrected by what reported usage teaches. Each part is counted once and cached by part id
//! and a cheap fingerprint, so a step costs what is new, not the session.
//!
//! Two things are learned, apart, because servers differ in two ways: a correction *ratio* for
//! content (a different tokenizer), learned from how much the reported count grows between two
//! reports against how much the estimate grew, and the real cost of the fixed *overhead* (system
//! prompt and tool definitions), which a server may render very differently — a llama.cpp chat
//! template that has no place for tools sends none of them, so 2,500 estimated tokens of
//! definitions cost nothing. One ratio for both would be wrong for both.

mod encoding;
mod fingerprint;

pub use encoding::{Encoding, raw_count};

use std::collections::HashMap;

use serde_json::Value;

use encoding::Counter;
use fingerprint::{FNV_OFFSET, fingerprint, fnv};

use pith_protocol::llm::{AssistantContent, ChatMessage, ToolSpec, UserContent};
use pith_protocol::message::{Message, Part, PartKind, ToolState};

use super::COMPACTION_QUESTION;
use super::view::{INTERRUPTED_TOOL_RESULT, cleared_tool_result};

/// The learned overhead is at most this many times its raw estimate.
pub const OVERHEAD_MAX: f64 = 1.5;
/// Growth of the content estimate (raw tokens) between two reports below which no ratio is learned.
pub const MIN_GROWTH: f64 = 64.0;
/// Fixed framing cost of one part (content block, separators).
pub const PART_OVERHEAD: u64 = 3;
/// Extra framing of a tool call + its result (ids, names, result block).
pub const TOOL_OVERHEAD: u64 = 12;
/// Framing of one message (role, delimiters).
pub const MESSAGE_OVERHEAD: u64 = 4;
/// What an attached image is assumed to cost (providers bill images by size; this is a
/// conservative middle for the common sizes).
pub const IMAGE_TOKENS: u64 = 1_000;

#[derive(Debug, Clone, Copy)]
struct Entry {
    fingerprint: u64,
    /// Counted with the BPE (not the heuristic of a lazy estimator).
    exact: bool,
    /// Raw tokens of the part as sent.
    total: u64,
    /// Raw tokens of a completed, unpruned tool output (0 otherwise).
    output: u64,
}

/// Per-session estimator: BPE + correction ratio + per-part cache.
#[derive(Debug, Clone)]
pub struct Estimator {
    encoding: Encoding,
    /// Counting with the heuristic until [`Estimator::want_exact`] (see [`Estimator::lazy`]).
    lazy: bool,
    ratio: f64,
    samples: u32,
    /// Content estimate (raw, before the ratio) and reported count of the last report.
    last_report: Option<(f64, u64)>,
    /// The raw overhead estimate last computed by [`Estimator::request_overhead`].
    overhead_raw: u64,
    /// What the overhead really cost: (raw estimate it was learned against, real tokens).
    overhead_learned: Option<(u64, f64)>,
    cache: HashMap<String, Entry>,
    /// Cache of long fixed texts (system prompt blocks, tool specs) by content hash.
    fixed: HashMap<u64, u64>,
    hits: u64,
    misses: u64,
}

impl Estimator {
    pub fn for_model(model: &str) -> Self {
        Self::with_encoding(Encoding::for_model(model))
    }

    pub fn with_encoding(encoding: Encoding) -> Self {
        Estimator {
            encoding,
            lazy: false,
            ratio: 1.0,
            samples: 0,
            last_report: None,
            overhead_raw: 0,
            overhead_learned: None,
            cache: HashMap::new(),
            fixed: HashMap::new(),
            hits: 0,
            misses: 0,
        }
    }

    /// An estimator that counts with a script-aware heuristic until [`Estimator::want_exact`]
    /// is called, so a short session never pays for loading the BPE (~6 MiB, ~15 ms). The
    /// engine switches it to exact counts before any decision (overflow, prune, tail, chunks)
    /// could depend on the difference (see [`crate::exactness`]).
    pub fn lazy(model: &str) -> Self {
        Estimator {
            lazy: true,
            ..Self::for_model(model)
        }
    }

    /// Counts are exact BPE counts from now on. Cached heuristic counts are recounted on their
    /// next use, and the correction ratio (learned against heuristic counts) starts over; the
    /// overhead learned in real tokens is kept.
    pub fn want_exact(&mut self) {
        if self.lazy {
            self.lazy = false;
            self.ratio = 1.0;
            self.samples = 0;
            // Growth is measured in one kind of count; the learned overhead is in real tokens
            // and stays (scaled to the exact raw figure on its next use).
            self.last_report = None;
            self.fixed.clear();
        }
    }

    /// Whether counts are exact BPE counts.
    pub fn is_exact(&self) -> bool {
        !self.lazy
    }

    /// Starts loading the BPE in the background (see [`Encoding::prefetch`]).
    pub fn prefetch(&self) {
        self.encoding.prefetch();
    }

    fn counter(&self) -> Counter {
        Counter {
            encoding: self.encoding,
            exact: !self.lazy,
        }
    }

    pub fn encoding(&self) -> Encoding {
        self.encoding
    }

    /// The learned correction ratio (reported / estimated), 1.0 until the first report.
    pub fn ratio(&self) -> f64 {
        self.ratio
    }

    fn scale(&self, raw: u64) -> u64 {
        (raw as f64 * self.ratio).round() as u64
    }

    /// Tokens of a text: raw BPE count × the correction ratio.
    pub fn text(&self, s: &str) -> u64 {
        self.scale(self.counter().count(s))
    }

    /// What `part` costs as sent (see `view::to_chat`), cached by part id and fingerprint.
    pub fn part(&mut self, part: &Part) -> u64 {
        let e = self.entry(part);
        self.scale(e.total)
    }

    /// Tokens of a completed tool's output as it would be sent unpruned (0 for anything else or an
    /// already pruned output). Shares the part cache.
    pub fn tool_output(&mut self, part: &Part) -> u64 {
        let e = self.entry(part);
        self.scale(e.output)
    }

    /// What a whole message costs as sent.
    pub fn message(&mut self, m: &Message) -> u64 {
        let raw = self.message_raw(m);
        self.scale(raw)
    }

    /// Sum of `message` over a list (e.g. a view).
    pub fn messages<'a>(&mut self, ms: impl IntoIterator<Item = &'a Message>) -> u64 {
        let mut raw = 0;
        for m in ms {
            raw += self.message_raw(m);
        }
        self.scale(raw)
    }

    /// A message's unscaled count: its parts, the reminder a mid-turn message is sent in, and the
    /// per-message overhead (nothing for a message that sends nothing).
    fn message_raw(&mut self, m: &Message) -> u64 {
        let mut raw = 0;
        for p in &m.parts {
            raw += self.entry(p).total;
        }
        if raw == 0 {
            return 0;
        }
        if m.mid_turn {
            raw += self.counter().count(&super::view::wrap_mid_turn(""));
        }
        raw + MESSAGE_OVERHEAD
    }

    /// Part-cache statistics: (hits, misses).
    pub fn cache_stats(&self) -> (u64, u64) {
        (self.hits, self.misses)
    }

    /// Forgets cached counts of parts that are no longer needed (e.g. before the view start).
    pub fn forget<'a>(&mut self, parts: impl IntoIterator<Item = &'a Part>) {
        for p in parts {
            self.cache.remove(&p.id);
        }
    }

    fn entry(&mut self, part: &Part) -> Entry {
        let fp = fingerprint(&part.kind);
        if let Some(e) = self.cache.get(&part.id)
            && e.fingerprint == fp
            && e.exact != self.lazy
        {
            self.hits += 1;
            return *e;
        }
        self.misses += 1;
        let (total, output) = self.count_part(&part.kind);
        let e = Entry {
            fingerprint: fp,
            exact: !self.lazy,
            total,
            output,
        };
        self.cache.insert(part.id.clone(), e);
        e
    }

    fn count_part(&self, kind: &PartKind) -> (u64, u64) {
        let enc = self.counter();
        match kind {
            PartKind::Text { text, .. } => {
                if text.is_empty() {
                    (0, 0)
                } else {
                    (enc.count(text) + PART_OVERHEAD, 0)
                }
            }
            PartKind::Reasoning { text, redacted, .. } => {
                let n = enc.count(text) + redacted.as_deref().map_or(0, |r| r.len() as u64 / 4);
                if n == 0 {
                    (0, 0)
                } else {
                    (n + PART_OVERHEAD, 0)
                }
            }
            PartKind::Tool {
                tool,
                input,
                state,
                call_id,
            } => {
                let call = enc.count(tool) + json_tokens(enc, input) + TOOL_OVERHEAD;
                let (result, output) = match state {
                    ToolState::Completed { output, time, .. } => {
                        if time.compacted.is_some() {
                            (enc.count(&cleared_tool_result(call_id)), 0)
                        } else {
                            let n = enc.count(output);
                            (n, n)
                        }
                    }
                    ToolState::Error { message, .. } => (enc.count(message), 0),
                    ToolState::Pending | ToolState::Running { .. } => {
                        (enc.count(INTERRUPTED_TOOL_RESULT), 0)
                    }
                };
                (call + result, output)
            }
            PartKind::Compaction(_) => (enc.count(COMPACTION_QUESTION) + PART_OVERHEAD, 0),
            PartKind::File { path, mime } => {
                if mime.starts_with("image/") {
                    (IMAGE_TOKENS, 0)
                } else if mime.starts_with("text/") || mime == "application/x-directory" {
                    // Sent as (synthetic) text parts beside it.
                    (0, 0)
                } else {
                    (enc.count(path) + PART_OVERHEAD, 0)
                }
            }
            PartKind::StepStart
            | PartKind::StepFinish { .. }
            | PartKind::Patch { .. }
            | PartKind::Pasted { .. } => (0, 0),
        }
    }

    /// Learns from a provider report. `content` is what this estimator predicted for the
    /// request's messages (without the system prompt and tools), `reported` the prompt tokens the
    /// provider counted for the whole request.
    ///
    /// - The ratio comes from *growth*: between two reports the overhead is the same, so
    ///   `(reported − last reported) / (content − last content)` is the content ratio alone.
    ///   Growth under [`MIN_GROWTH`] raw tokens, or of opposite sign, says nothing and is skipped.
    ///   Smoothed (exponential average) and clamped to 0.5..=2.0.
    /// - The overhead is what the report leaves after the content: `reported − ratio × content`
    ///   (kept within 0.1..=1.5 times its raw estimate), smoothed, taken from a first report
    ///   where it is most of the request and from every report that taught a ratio;
    ///   [`Estimator::request_overhead`] answers with it from then on (scaled if the system
    ///   prompt or tools change size).
    pub fn learn(&mut self, content: u64, reported: u64) {
        if reported == 0 {
            return;
        }
        let content_raw = content as f64 / self.ratio;
        // The first report, and every report that taught a ratio, teach the overhead; a report
        // that jumped with no matching growth of the content says nothing reliable about it.
        // A first report teaches it only when the overhead is most of the request (a fresh
        // session), where content estimate errors cannot swamp it.
        let mut teaches_overhead =
            self.overhead_learned.is_none() && content_raw <= self.overhead_raw as f64;
        if let Some((last_raw, last_reported)) = self.last_report {
            let grew = content_raw - last_raw;
            let reported_grew = reported as f64 - last_reported as f64;
            if grew.abs() >= MIN_GROWTH && grew.signum() == reported_grew.signum() {
                teaches_overhead = true;
                let sample = (reported_grew / grew).clamp(0.5, 2.0);
                self.ratio = if self.samples == 0 {
                    sample
                } else {
                    0.6 * self.ratio + 0.4 * sample
                }
                .clamp(0.5, 2.0);
                self.samples = self.samples.saturating_add(1);
            }
        }
        self.last_report = Some((content_raw, reported));
        if !teaches_overhead {
            return;
        }
        // Within 0.1..=1.5 times the raw estimate: a server may leave out most of it (a chat
        // template without tools), but a report far above it is more likely content the
        // estimate missed than a system prompt twice its size.
        let raw = self.overhead_raw as f64;
        let overhead =
            (reported as f64 - content_raw * self.ratio).clamp(0.1 * raw, OVERHEAD_MAX * raw);
        self.overhead_learned = Some(match self.overhead_learned {
            Some((raw, old)) if raw == self.overhead_raw => (raw, 0.5 * old + 0.5 * overhead),
            _ => (self.overhead_raw, overhead),
        });
    }

    /// Estimate of a list of wire messages (used to chunk the compaction request). Not cached.
    pub fn chat_messages(&self, msgs: &[ChatMessage]) -> u64 {
        msgs.iter().map(|m| self.chat_message(m)).sum()
    }

    /// Estimate of one wire message.
    pub fn chat_message(&self, m: &ChatMessage) -> u64 {
        let enc = self.counter();
        let raw = match m {
            ChatMessage::User { content } => content
                .iter()
                .map(|c| match c {
                    UserContent::Text { text } => enc.count(text) + PART_OVERHEAD,
                    UserContent::Image { .. } => IMAGE_TOKENS,
                })
                .sum::<u64>(),
            ChatMessage::Assistant { content } => content
                .iter()
                .map(|c| match c {
                    AssistantContent::Text { text } => enc.count(text) + PART_OVERHEAD,
                    AssistantContent::Reasoning { text, .. } => enc.count(text) + PART_OVERHEAD,
                    AssistantContent::ToolCall { name, input, .. } => {
                        enc.count(name) + json_tokens(enc, input) + TOOL_OVERHEAD
                    }
                })
                .sum::<u64>(),
            ChatMessage::ToolResult { content, .. } => enc.count(content) + PART_OVERHEAD,
        };
        self.scale(raw + MESSAGE_OVERHEAD)
    }

    /// Estimate of the fixed part of a request: system blocks and tool specs. Cached by content
    /// hash, so a stable system prompt is counted once per session.
    /// Once a report has taught what the overhead really costs, that figure is used (scaled by
    /// how much the raw estimate changed since, e.g. when tools are added).
    pub fn request_overhead(&mut self, system: &[String], tools: &[ToolSpec]) -> u64 {
        let mut raw = 0;
        for s in system {
            raw += self.fixed_text(s) + PART_OVERHEAD;
        }
        for t in tools {
            raw += self.tool_raw(t);
        }
        self.overhead_raw = raw;
        match self.overhead_learned {
            Some((at, real)) if at > 0 => (real * raw as f64 / at as f64).round() as u64,
            Some((_, real)) => real.round() as u64,
            None => self.scale(raw),
        }
    }

    /// Estimate of tool definitions alone, counted as [`Estimator::request_overhead`] counts
    /// them (learning nothing): what these tools add to every request.
    pub fn tool_definitions(&mut self, tools: &[ToolSpec]) -> u64 {
        let raw: u64 = tools.iter().map(|t| self.tool_raw(t)).sum();
        self.scale(raw)
    }

    fn tool_raw(&mut self, t: &ToolSpec) -> u64 {
        let schema = t.parameters.to_string();
        self.fixed_text(&t.name)
            + self.fixed_text(&t.description)
            + self.fixed_text(&schema)
            + TOOL_OVERHEAD
    }

    fn fixed_text(&mut self, s: &str) -> u64 {
        let h = fnv(s.as_bytes(), FNV_OFFSET) ^ s.len() as u64;
        if let Some(n) = self.fixed.get(&h) {
            return *n;
        }
        let n = self.counter().count(s);
        self.fixed.insert(h, n);
        n
    }
}

/// Tokens of a JSON value as serialised on the wire.
fn json_tokens(enc: Counter, v: &Value) -> u64 {
    match v {
        Value::Null => 1,
        Value::String(s) => enc.count(s) + 2,
        other => enc.count(&other.to_string()),
    }
}

#[cfg(test)]
mod tests;
