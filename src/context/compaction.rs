//! The pure parts of the compaction task (ARCHITECTURE.md §6.4): where the verbatim tail starts,
//! the summary request, the chunking that makes any history fit (in [`super::chunks`], re-exported
//! here) and the breaker.
//!
//! The engine's flow for one compaction (the new compaction message is the last of `view`):
//! 1. `let cut = cut(&view, preserve_recent_tokens(usable, cfg), est)`;
//! 2. `let msgs = prepare(view::convert(&refs(&view[cut.summarise.clone()]), ..))`;
//! 3. `let budget = chunk_budget(usable, cut.previous_summary.as_deref(), focus, est)`;
//! 4. for each chunk of `chunks(msgs, budget, est)`, oldest first: send
//!    `summary_request_messages(running.as_deref(), &chunk, focus)` with [`SYSTEM_PROMPT`] and no
//!    tools, and let `running` be the answer (it starts as `cut.previous_summary`);
//! 5. save the summary (`summary = true`), set `CompactionPart::tail_start = cut.tail_start`;
//! 6. `breaker(before, after, compactions_this_turn)`; after an automatic compaction append
//!    [`CONTINUE_MESSAGE`] as a synthetic user message.

use std::ops::Range;

use crate::config::CompactionConfig;
use crate::llm::{ChatMessage, UserContent};
use crate::message::{Message, MessageId};

use super::tokens::Estimator;
use super::view::{is_compaction_message, is_completed_summary, is_turn_start};

pub use super::COMPACTION_QUESTION;
pub use super::chunks::{TOOL_RESULT_MAX_CHARS, chunks, cut_text, fit_text, plan_chunks, prepare};

/// The synthetic user message after an automatic compaction (never after a manual one).
pub const CONTINUE_MESSAGE: &str = "Continue if you have next steps, or stop and ask for clarification if you are unsure how to proceed.";

/// The compaction agent's system prompt.
pub const SYSTEM_PROMPT: &str = include_str!("../../prompts/compaction.md");

/// The final user message of a summary request (placeholders `{{previous_summary}}`, `{{focus}}`).
pub const REQUEST_TEMPLATE: &str = include_str!("../../prompts/compaction-request.md");

/// Bounds of the default verbatim tail.
pub const PRESERVE_MIN: u64 = 2_000;
pub const PRESERVE_MAX: u64 = 8_000;

/// Tokens kept for the running summary when planning chunks (it grows as chunks are folded in).
pub const SUMMARY_RESERVE: u64 = 8_000;
/// The smallest chunk budget ever planned, however small the window.
pub const MIN_CHUNK_BUDGET: u64 = 1_000;

/// Tokens of recent history kept word for word: `compaction.preserve_recent_tokens`, or
/// clamp(25% of usable, 2,000, 8,000).
pub fn preserve_recent_tokens(usable: u64, cfg: &CompactionConfig) -> u64 {
    cfg.preserve_recent_tokens
        .unwrap_or_else(|| (usable / 4).clamp(PRESERVE_MIN, PRESERVE_MAX))
}

/// How a view splits for a compaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cut {
    /// The summary the view starts with (to merge, not stack), if any.
    pub previous_summary: Option<String>,
    /// `view[summarise]` is the history to summarise (after the previous summary, before the tail).
    pub summarise: Range<usize>,
    /// `view[tail]` stays word for word after the new summary (may be empty).
    pub tail: Range<usize>,
    /// Id of the tail's first message, for `CompactionPart::tail_start` (`None`: no tail).
    pub tail_start: Option<MessageId>,
}

/// Splits a view (model order, as the engine keeps it: a previous compaction message and its
/// summary first, if any) for a compaction. Trailing compaction messages (the one being
/// processed) and unfinished summaries at the end are left out of both ranges.
pub fn cut(view: &[Message], budget: u64, est: &mut Estimator) -> Cut {
    let head = view.len() >= 2 && is_compaction_message(&view[0]) && is_completed_summary(&view[1]);
    let body_start = if head { 2 } else { 0 };
    let mut end = view.len();
    while end > body_start && (is_compaction_message(&view[end - 1]) || view[end - 1].summary) {
        end -= 1;
    }
    let previous_summary = head
        .then(|| view[1].text())
        .filter(|s| !s.trim().is_empty());
    let start = split_tail(&view[body_start..end], budget, est) + body_start;
    Cut {
        previous_summary,
        summarise: body_start..start,
        tail: start..end,
        tail_start: (start < end).then(|| view[start].id.clone()),
    }
}

/// Index in `history` (the messages before the compaction message, without a previous summary)
/// where the verbatim tail starts: the most recent whole turns (a turn starts at a user message
/// the user typed) that fit in `budget` tokens. Never inside a turn, so never between a tool
/// call and its result (both live in one assistant message). Never the whole history: the oldest
/// turn is always summarised. If the last turn alone exceeds the budget the tail is empty
/// (`history.len()`) and everything is summarised.
pub fn split_tail(history: &[Message], budget: u64, est: &mut Estimator) -> usize {
    let mut best = history.len();
    let mut sum = 0u64;
    for i in (0..history.len()).rev() {
        sum = sum.saturating_add(est.message(&history[i]));
        if sum > budget {
            break;
        }
        if i > 0 && is_turn_start(&history[i]) {
            best = i;
        }
    }
    best
}

/// The token budget of one chunk of history in a summary request to a model with `usable`
/// tokens: what is left after the system prompt, the request message (with the previous summary
/// and the focus) and room for the running summary, with a 10% margin for estimate error.
pub fn chunk_budget(
    usable: u64,
    previous_summary: Option<&str>,
    focus: Option<&str>,
    est: &Estimator,
) -> u64 {
    // Room for the summary the model writes: SUMMARY_RESERVE, or a quarter of a small window.
    let fixed = est.text(SYSTEM_PROMPT)
        + est.text(&request_text(previous_summary, focus))
        + SUMMARY_RESERVE.min(usable / 4);
    (usable - usable / 10)
        .saturating_sub(fixed)
        .max(MIN_CHUNK_BUDGET)
}

/// The text of the final user message of a summary request.
pub fn request_text(previous_summary: Option<&str>, focus: Option<&str>) -> String {
    let previous = match previous_summary.map(str::trim).filter(|s| !s.is_empty()) {
        Some(s) => format!(
            "<previous-summary>\n{s}\n</previous-summary>\n\n\
             The previous summary above covers the conversation before the messages shown here. \
             Your new summary replaces it: carry forward everything in it that still holds \
             (every user instruction, constraint, preference, decision, name, path, command, \
             identifier and open task) and update what has changed. Do not drop a fact because \
             the newer messages do not repeat it.\n\n"
        ),
        None => String::new(),
    };
    let focus = match focus.map(str::trim).filter(|s| !s.is_empty()) {
        Some(f) => format!(
            "\n\nThe user asked this compaction to focus on: {f}\n\
             Give that topic extra detail, but still fill in every section above."
        ),
        None => String::new(),
    };
    REQUEST_TEMPLATE
        .trim_end()
        .replace("{{previous_summary}}", &previous)
        .replace("{{focus}}", &focus)
}

/// The messages of one summary request: the chunk (prepared), then the final user message asking
/// for the anchored summary (with the previous summary and the focus). A chunk that does not
/// start with a user message gets a short user lead-in, as providers require.
pub fn summary_request_messages(
    previous_summary: Option<&str>,
    chunk: &[ChatMessage],
    focus: Option<&str>,
) -> Vec<ChatMessage> {
    let mut out = Vec::with_capacity(chunk.len() + 2);
    if chunk
        .first()
        .is_some_and(|m| !matches!(m, ChatMessage::User { .. }))
    {
        out.push(ChatMessage::User {
            content: vec![UserContent::Text {
                text: "[The conversation below continues from earlier work covered by the previous summary.]".to_string(),
            }],
        });
    }
    out.extend_from_slice(chunk);
    out.push(ChatMessage::User {
        content: vec![UserContent::Text {
            text: request_text(previous_summary, focus),
        }],
    });
    out
}

/// The breaker (ARCHITECTURE.md §6.4): after a compaction, stop the turn with a clear message when
/// it did not bring the context under 0.9 of what it was, or when it was the third compaction of
/// this user turn (`compactions_this_turn` counts the one just finished).
pub fn breaker(before: u64, after: u64, compactions_this_turn: u32) -> Option<String> {
    if compactions_this_turn >= 3 {
        return Some(format!(
            "Stopped: the context had to be compacted {compactions_this_turn} times in this turn \
             (now ~{after} tokens); the task produces more than the model's window holds — \
             continue with a smaller step or a model with a larger context window."
        ));
    }
    if before > 0 && u128::from(after) * 10 >= u128::from(before) * 9 {
        return Some(format!(
            "Stopped: compaction did not shrink the context ({before} → {after} tokens), so \
             continuing would loop — start a new session or lower compaction.preserve_recent_tokens."
        ));
    }
    None
}

#[cfg(test)]
#[path = "compaction_tests.rs"]
mod tests;
