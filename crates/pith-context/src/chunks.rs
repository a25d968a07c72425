//! Making the compaction request fit (ARCHITECTURE.md §6.4): strip media, cut tool outputs (to
//! 2,000 characters on large windows), then split the history into chunks that each fit, oldest
//! first. "Too large to compact" is never an answer: a single message larger than a chunk is split
//! (user text, so no instruction is lost) or cut down (assistant text, tool calls and results).

use std::ops::Range;

use serde_json::Value;

use pith_protocol::llm::{AssistantContent, ChatMessage, UserContent};

use super::tokens::Estimator;

/// What an image becomes in a summary request.
pub const IMAGE_OMITTED: &str = "[image omitted]";

/// Cuts `s` to at most `max_chars` characters of content, keeping the head (70%) and the end
/// (30%: errors and results are often last) with a marker saying how much was cut.
pub fn cut_text(s: &str, max_chars: usize) -> String {
    let total = s.chars().count();
    if total <= max_chars {
        return s.to_string();
    }
    let head = max_chars * 7 / 10;
    let tail = max_chars - head;
    let head_end = s.char_indices().nth(head).map_or(s.len(), |(i, _)| i);
    let tail_start = if tail == 0 {
        s.len()
    } else {
        s.char_indices()
            .nth(total - tail)
            .map_or(s.len(), |(i, _)| i)
    };
    format!(
        "{}\n[… {} characters cut for the summary …]\n{}",
        &s[..head_end],
        total - head - tail,
        &s[tail_start..]
    )
}

/// Cuts `s` until it is estimated at most `max_tokens` tokens.
pub fn fit_text(s: &str, max_tokens: u64, est: &Estimator) -> String {
    let mut tokens = est.text(s);
    if tokens <= max_tokens {
        return s.to_string();
    }
    let chars = s.chars().count();
    let mut keep = chars;
    let mut out = s.to_string();
    for _ in 0..8 {
        let scaled = (keep as f64 * max_tokens as f64 / tokens.max(1) as f64 * 0.9) as usize;
        keep = scaled.min(keep.saturating_sub(1));
        out = cut_text(s, keep);
        tokens = est.text(&out);
        if tokens <= max_tokens || keep == 0 {
            break;
        }
    }
    out
}

/// Strips what a summary request does not need: images become `[image omitted]`, reasoning is
/// dropped (private to the model that wrote it, and bulky), tool results and long string values
/// of tool inputs are cut to `max_chars` (`Budget::tool_result_chars`: 2,000 on large windows).
pub fn prepare(msgs: Vec<ChatMessage>, max_chars: usize) -> Vec<ChatMessage> {
    let mut out = Vec::with_capacity(msgs.len());
    for m in msgs {
        match m {
            ChatMessage::User { content } => {
                let content: Vec<UserContent> = content
                    .into_iter()
                    .map(|c| match c {
                        UserContent::Image { .. } => UserContent::Text {
                            text: IMAGE_OMITTED.to_string(),
                        },
                        t => t,
                    })
                    .collect();
                if !content.is_empty() {
                    out.push(ChatMessage::User { content });
                }
            }
            ChatMessage::Assistant { content } => {
                let content: Vec<AssistantContent> = content
                    .into_iter()
                    .filter_map(|c| match c {
                        AssistantContent::Reasoning { .. } => None,
                        AssistantContent::ToolCall { id, name, input } => {
                            Some(AssistantContent::ToolCall {
                                id,
                                name,
                                input: cut_json(input, max_chars),
                            })
                        }
                        t => Some(t),
                    })
                    .collect();
                if !content.is_empty() {
                    out.push(ChatMessage::Assistant { content });
                }
            }
            ChatMessage::ToolResult {
                call_id,
                content,
                is_error,
            } => out.push(ChatMessage::ToolResult {
                call_id,
                content: cut_text(&content, max_chars),
                is_error,
            }),
        }
    }
    out
}

/// Cuts every string in a JSON value to `max_chars`.
fn cut_json(v: Value, max_chars: usize) -> Value {
    match v {
        Value::String(s) => Value::String(cut_text(&s, max_chars)),
        Value::Array(a) => Value::Array(a.into_iter().map(|v| cut_json(v, max_chars)).collect()),
        Value::Object(o) => Value::Object(
            o.into_iter()
                .map(|(k, v)| (k, cut_json(v, max_chars)))
                .collect(),
        ),
        other => other,
    }
}

/// Units that must stay together: an assistant message with tool calls and the results after it.
fn units(msgs: &[ChatMessage]) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < msgs.len() {
        let mut j = i + 1;
        if let ChatMessage::Assistant { content } = &msgs[i]
            && content
                .iter()
                .any(|c| matches!(c, AssistantContent::ToolCall { .. }))
        {
            while j < msgs.len() && matches!(msgs[j], ChatMessage::ToolResult { .. }) {
                j += 1;
            }
        }
        out.push(i..j);
        i = j;
    }
    out
}

/// Oldest-first chunks of `msgs` that each fit `budget_tokens`, split on message boundaries and
/// never between a tool call and its results. A unit larger than the budget gets a chunk of its
/// own (which [`chunks`] cuts down to fit). Empty input → no chunks.
pub fn plan_chunks(msgs: &[ChatMessage], budget_tokens: u64, est: &Estimator) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = Vec::new();
    let mut current: Option<Range<usize>> = None;
    let mut current_tokens = 0u64;
    for unit in units(msgs) {
        let tokens = est.chat_messages(&msgs[unit.clone()]);
        match &mut current {
            Some(r) if current_tokens + tokens <= budget_tokens => {
                r.end = unit.end;
                current_tokens += tokens;
            }
            _ => {
                if let Some(r) = current.take() {
                    out.push(r);
                }
                current = Some(unit);
                current_tokens = tokens;
            }
        }
    }
    if let Some(r) = current {
        out.push(r);
    }
    out
}

/// The chunks themselves, each guaranteed to fit `budget_tokens` (by estimate): user text larger
/// than a chunk is split over several user messages (nothing the user said is lost), and a unit
/// still too large has its longest texts cut.
pub fn chunks(
    msgs: Vec<ChatMessage>,
    budget_tokens: u64,
    est: &Estimator,
) -> Vec<Vec<ChatMessage>> {
    let budget = budget_tokens.max(1);
    let mut exploded = Vec::with_capacity(msgs.len());
    for m in msgs {
        let oversized = matches!(m, ChatMessage::User { .. }) && est.chat_message(&m) > budget;
        match m {
            ChatMessage::User { content } if oversized => {
                split_user(content, budget, est, &mut exploded)
            }
            other => exploded.push(other),
        }
    }
    let ranges = plan_chunks(&exploded, budget, est);
    let mut out = Vec::with_capacity(ranges.len());
    for r in ranges {
        let mut chunk = exploded[r].to_vec();
        if est.chat_messages(&chunk) > budget {
            shrink(&mut chunk, budget, est);
        }
        out.push(chunk);
    }
    out
}

/// Splits an oversized user message into several user messages that each fit.
fn split_user(content: Vec<UserContent>, budget: u64, est: &Estimator, out: &mut Vec<ChatMessage>) {
    let piece_budget = (budget * 8 / 10).max(1);
    for c in content {
        let UserContent::Text { text } = c else {
            out.push(ChatMessage::User { content: vec![c] });
            continue;
        };
        let pieces = split_text(&text, piece_budget, est);
        let n = pieces.len();
        for (i, p) in pieces.into_iter().enumerate() {
            let text = if n > 1 {
                format!("[Message part {} of {n}]\n{p}", i + 1)
            } else {
                p
            };
            out.push(ChatMessage::User {
                content: vec![UserContent::Text { text }],
            });
        }
    }
}

/// Splits text into pieces of at most about `max_tokens` each, preferring line breaks.
fn split_text(s: &str, max_tokens: u64, est: &Estimator) -> Vec<String> {
    let tokens = est.text(s).max(1);
    if tokens <= max_tokens {
        return vec![s.to_string()];
    }
    let chars: Vec<(usize, char)> = s.char_indices().collect();
    let per_piece =
        ((chars.len() as f64 * max_tokens as f64 / tokens as f64) * 0.9).max(1.0) as usize;
    let mut out = Vec::new();
    let mut start = 0; // index into `chars`
    while start < chars.len() {
        let mut end = (start + per_piece).min(chars.len());
        if end < chars.len() {
            // Prefer to end after a newline in the second half of the piece.
            if let Some(nl) = (start + per_piece / 2..end)
                .rev()
                .find(|&k| chars[k].1 == '\n')
            {
                end = nl + 1;
            }
        }
        let from = chars[start].0;
        let to = chars.get(end).map_or(s.len(), |c| c.0);
        let piece = &s[from..to];
        // A piece can still be over budget (dense text): cut it rather than loop.
        out.push(fit_text(piece, max_tokens, est));
        start = end;
    }
    out
}

/// Cuts the texts of a chunk until it fits.
fn shrink(chunk: &mut [ChatMessage], budget: u64, est: &Estimator) {
    for round in 0..6 {
        let total = est.chat_messages(chunk);
        if total <= budget {
            return;
        }
        // Scale every long text down by the overshoot (more aggressively each round).
        let factor = budget as f64 / total as f64 * (0.9 - 0.1 * round as f64).max(0.3);
        for m in chunk.iter_mut() {
            for text in texts_mut(m) {
                let t = est.text(text);
                if t > 50 {
                    let target = ((t as f64) * factor).max(20.0) as u64;
                    *text = fit_text(text, target, est);
                }
            }
        }
    }
}

fn texts_mut(m: &mut ChatMessage) -> Vec<&mut String> {
    let mut out = Vec::new();
    match m {
        ChatMessage::User { content } => {
            for c in content {
                if let UserContent::Text { text } = c {
                    out.push(text);
                }
            }
        }
        ChatMessage::Assistant { content } => {
            for c in content {
                match c {
                    AssistantContent::Text { text } | AssistantContent::Reasoning { text, .. } => {
                        out.push(text)
                    }
                    AssistantContent::ToolCall { input, .. } => json_strings_mut(input, &mut out),
                }
            }
        }
        ChatMessage::ToolResult { content, .. } => out.push(content),
    }
    out
}

fn json_strings_mut<'a>(v: &'a mut Value, out: &mut Vec<&'a mut String>) {
    match v {
        Value::String(s) => out.push(s),
        Value::Array(a) => a.iter_mut().for_each(|v| json_strings_mut(v, out)),
        Value::Object(o) => o.values_mut().for_each(|v| json_strings_mut(v, out)),
        _ => {}
    }
}

#[cfg(test)]
#[path = "chunks_tests.rs"]
mod tests;
