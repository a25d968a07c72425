//! The pure parts of the compaction task (ARCHITECTURE.md §6.4): where the verbatim tail starts,
//! the summary request, the chunking that makes any history fit (in [`super::chunks`], re-exported
//! here), the check of a written summary and the breaker. Every figure comes from [`Budget`],
//! which scales with the window.
//!
//! The engine's flow for one compaction (the view is the model's view, in model order):
//! 1. `let cut = cut(&view, budget.tail_after(overhead), est)` — the tail shrinks until the
//!    compacted context fits half the usable window, down to nothing (the current request then
//!    travels verbatim with the carried messages);
//! 2. `let msgs = prepare(convert(&view[cut.summarise]), budget.tool_result_chars)`; a previous
//!    summary too large to travel in every request becomes the first chunk
//!    ([`previous_summary_fits`]);
//! 3. for each chunk of `chunks(msgs, chunk_budget(&budget, ask, est), est)`, oldest first:
//!    send `summary_request_messages(running, &chunk, ask)` with [`SYSTEM_PROMPT`], no tools and
//!    the output cap `budget.summary_cap`; `running` is the answer;
//! 4. check it ([`missing_sections`]; one retry with [`retry_note`]), never accept one longer
//!    than what it replaces;
//! 5. append what pith carries itself ([`super::carry`]) and save the summary;
//! 6. `breaker(before, after, compactions_this_turn)`; after an automatic compaction append
//!    [`CONTINUE_MESSAGE`] as a synthetic user message.

use std::ops::Range;

use pith_protocol::carried::Anchor;
use pith_protocol::llm::{ChatMessage, UserContent};
use pith_protocol::message::{Carried, CarrySource, Message, MessageId, PartKind};

use super::budget::Budget;
use super::tokens::Estimator;
use super::view::{is_compaction_message, is_completed_summary, is_turn_start};

pub use super::COMPACTION_QUESTION;
pub use super::chunks::{chunks, cut_text, fit_text, plan_chunks, prepare};

/// The synthetic user message after an automatic compaction (never after a manual one); the
/// front ends show it as pith's note (`pith_protocol::compaction_note`).
pub use pith_protocol::compaction_note::CONTINUE_MESSAGE;

/// The compaction agent's system prompt.
pub const SYSTEM_PROMPT: &str = include_str!("../../../prompts/compaction.md");

/// The final user message of a summary request (placeholders `{{previous_summary}}`,
/// `{{anchors}}`, `{{focus}}`).
pub const REQUEST_TEMPLATE: &str = include_str!("../../../prompts/compaction-request.md");

/// The note of the one retry when a summary misses sections or was cut at its cap
/// (placeholders `{{problem}}`, `{{cap}}`).
pub const RETRY_TEMPLATE: &str = include_str!("../../../prompts/compaction-retry.md");

/// What a summary request says of the anchor index pith carries itself (placeholder
/// `{{anchors}}`): use them, do not restate them.
pub const ANCHORS_TEMPLATE: &str = include_str!("../../../prompts/compaction-anchors.md");

/// What a summary request says about the user's words pith could not carry itself
/// (placeholder `{{words}}`).
pub const WORDS_TEMPLATE: &str = include_str!("../../../prompts/compaction-words.md");

/// The note that asks a summary request to carry the user's `words` pith could not carry
/// itself (oldest first), in at most `max_tokens` (the summary cannot hold more than its cap),
/// newest first. Words of a message in the history being summarised (with an id) are named by
/// their opening: the summariser sees them whole there; words an earlier compaction carried are
/// quoted, cut when they must be. `None` when there are none.
pub fn words_note(words: &[CarrySource], max_tokens: u64, est: &Estimator) -> Option<String> {
    let mut left = max_tokens.saturating_sub(est.text(WORDS_TEMPLATE));
    let mut kept: Vec<String> = Vec::new();
    for w in words.iter().rev().filter(|w| !w.text.trim().is_empty()) {
        let text = match w.id {
            Some(_) => format!("(in the conversation above) {}", opening(&w.text)),
            None => w.text.trim().to_string(),
        };
        let t = est.text(&text) + 2;
        if t <= left {
            left -= t;
            kept.push(text);
            continue;
        }
        if left > 40 {
            kept.push(fit_text(&text, left - 20, est));
        }
        break;
    }
    kept.reverse();
    (!kept.is_empty()).then(|| {
        WORDS_TEMPLATE
            .trim_end()
            .replace("{{words}}", &kept.join("\n---\n"))
    })
}

/// The first words of a message (about a line), to name it.
fn opening(text: &str) -> String {
    let words: Vec<&str> = text.split_whitespace().collect();
    let mut out = words[..words.len().min(OPENING_WORDS)].join(" ");
    if words.len() > OPENING_WORDS {
        out.push_str(" …");
    }
    format!("the message that begins \"{out}\"")
}

/// How many words name a message in the words note.
const OPENING_WORDS: usize = 16;

/// The template's sections, as the words a heading must start with.
pub const SECTIONS: [&str; 7] = [
    "Goal",
    "Constraints",
    "Progress",
    "Key Decisions",
    "Next Steps",
    "Critical Context",
    "Relevant Files",
];

/// How a view splits for a compaction.
#[derive(Debug, Clone, PartialEq)]
pub struct Cut {
    /// The summary the view starts with (to merge, not stack), if any: the summariser's text
    /// only, without what pith appended to it.
    pub previous_summary: Option<String>,
    /// What pith carried across the previous compaction (merged into the next one).
    pub previous_carried: Carried,
    /// `view[summarise]` is the history to summarise (after the previous summary, before the tail).
    pub summarise: Range<usize>,
    /// `view[tail]` stays word for word after the new summary (may be empty).
    pub tail: Range<usize>,
    /// Id of the tail's first message, for `CompactionPart::tail_start` (`None`: no tail).
    pub tail_start: Option<MessageId>,
}

/// Where the history after a view's previous compaction starts (2 when the view begins with a
/// compaction message and its finished summary, else 0), and what that compaction carried.
pub fn previous_compaction(view: &[Message]) -> (usize, Carried) {
    let head = view.len() >= 2 && is_compaction_message(&view[0]) && is_completed_summary(&view[1]);
    if !head {
        return (0, Carried::default());
    }
    let carried = view[0]
        .compaction()
        .map(|c| (*c.carried).clone())
        .unwrap_or_default();
    (2, carried)
}

/// Splits a view (model order, as the engine keeps it: a previous compaction message and its
/// summary first, if any) for a compaction. Trailing compaction messages (the one being
/// processed) and unfinished summaries at the end are left out of both ranges.
pub fn cut(view: &[Message], budget: u64, est: &mut Estimator) -> Cut {
    let (body_start, previous_carried) = previous_compaction(view);
    let head = body_start > 0;
    let mut end = view.len();
    while end > body_start && (is_compaction_message(&view[end - 1]) || view[end - 1].summary) {
        end -= 1;
    }
    let previous_summary = head
        .then(|| written_text(&view[1]))
        .filter(|s| !s.trim().is_empty());
    let start = split_tail(&view[body_start..end], budget, est) + body_start;
    Cut {
        previous_summary,
        previous_carried,
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

/// The text a model wrote in a message: its non-synthetic text parts (a summary without what
/// pith appended to it).
pub fn written_text(m: &Message) -> String {
    m.parts
        .iter()
        .filter_map(|p| match &p.kind {
            PartKind::Text {
                text,
                synthetic: false,
            } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The token budget of one chunk of history in a summary request: what is left of the usable
/// window (less 10% for estimate error) after the system prompt, the request message and room
/// for the running summary (at most the summary cap), never below `budget.min_chunk`.
pub fn chunk_budget(budget: &Budget, ask: SummaryAsk<'_>, est: &Estimator) -> u64 {
    let fixed = est.text(SYSTEM_PROMPT) + est.text(&request_text(None, ask)) + budget.summary_cap;
    (budget.usable - budget.usable / 10)
        .saturating_sub(fixed)
        .max(budget.min_chunk)
}

/// Whether a previous summary can travel inside every summary request as
/// `<previous-summary>`: one written under the current cap can. A larger one (written for a
/// bigger window, or before caps existed) is summarised as the first chunk instead, so the
/// request always fits.
pub fn previous_summary_fits(previous: &str, budget: &Budget, est: &Estimator) -> bool {
    est.text(previous) <= budget.summary_cap + budget.summary_cap / 4
}

/// A previous summary that does not fit a request, as the first message of the history.
pub fn previous_summary_as_history(previous: &str) -> ChatMessage {
    ChatMessage::User {
        content: vec![UserContent::Text {
            text: format!(
                "[Summary of the conversation before the messages below]\n{}",
                previous.trim()
            ),
        }],
    }
}

/// The template's sections missing from a summary: a line that starts (after `#`, `*`, spaces
/// and numbering) with the section's words, in any case, counts as its heading.
pub fn missing_sections(summary: &str) -> Vec<&'static str> {
    let headings: Vec<String> = summary
        .lines()
        .map(|l| {
            l.trim_start_matches(|c: char| {
                c == '#'
                    || c == '*'
                    || c == '_'
                    || c.is_whitespace()
                    || c.is_ascii_digit()
                    || c == '.'
            })
            .to_lowercase()
        })
        .collect();
    SECTIONS
        .iter()
        .copied()
        .filter(|s| {
            let want = s.to_lowercase();
            !headings.iter().any(|h| h.starts_with(&want))
        })
        .collect()
}

/// The note appended to a summary request for its one retry.
pub fn retry_note(missing: &[&str], cut_at_cap: bool, cap: u64) -> String {
    let problem = match (missing.is_empty(), cut_at_cap) {
        (_, true) => {
            format!("Your summary was cut off at the {cap}-token limit before it was finished.")
        }
        (false, false) => format!(
            "Your summary is missing these sections: {}.",
            missing.join(", ")
        ),
        (true, false) => "Your summary did not follow the template.".to_string(),
    };
    RETRY_TEMPLATE
        .trim_end()
        .replace("{{problem}}", &problem)
        .replace("{{cap}}", &cap.to_string())
}

/// What the user asked of summaries: standing `instructions` (`compaction.instructions`, for
/// every summary) and this compaction's `focus` (`/compact focus`); and the `anchors` pith
/// keeps word for word after the summary, which it is asked to use, not to restate.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SummaryAsk<'a> {
    pub instructions: Option<&'a str>,
    pub focus: Option<&'a str>,
    pub anchors: &'a [Anchor],
}

impl<'a> SummaryAsk<'a> {
    pub fn focus(focus: Option<&'a str>) -> Self {
        SummaryAsk {
            focus,
            ..SummaryAsk::default()
        }
    }
}

/// The text of the final user message of a summary request.
pub fn request_text(previous_summary: Option<&str>, ask: SummaryAsk<'_>) -> String {
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
    let mut focus = match ask.instructions.map(str::trim).filter(|s| !s.is_empty()) {
        Some(i) => {
            format!("\n\nThe user's standing instructions for every summary (follow them):\n{i}")
        }
        None => String::new(),
    };
    if let Some(f) = ask.focus.map(str::trim).filter(|s| !s.is_empty()) {
        focus.push_str(&format!(
            "\n\nThe user asked this compaction to focus on: {f}\n\
             Give that topic extra detail, but still fill in every section above."
        ));
    }
    let anchors = match ask.anchors {
        [] => String::new(),
        a => format!(
            "\n\n{}",
            ANCHORS_TEMPLATE
                .trim_end()
                .replace("{{anchors}}", &super::anchors::list(a))
        ),
    };
    REQUEST_TEMPLATE
        .trim_end()
        .replace("{{previous_summary}}", &previous)
        .replace("{{anchors}}", &anchors)
        .replace("{{focus}}", &focus)
}

/// The messages of one summary request: the chunk (prepared), then the final user message asking
/// for the anchored summary (with the previous summary and the focus). A chunk that does not
/// start with a user message gets a short user lead-in, as providers require.
pub fn summary_request_messages(
    previous_summary: Option<&str>,
    chunk: &[ChatMessage],
    ask: SummaryAsk<'_>,
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
            text: request_text(previous_summary, ask),
        }],
    });
    out
}

/// The breaker (ARCHITECTURE.md §6.4): after a compaction, stop the turn with a clear message
/// when the compacted context still does not fit `usable`, when it did not come under 0.9 of
/// what it was, or when it was the third compaction of this user turn (`compactions_this_turn`
/// counts the one just finished).
pub fn breaker(before: u64, after: u64, usable: u64, compactions_this_turn: u32) -> Option<String> {
    use pith_protocol::text::count;
    let (before_n, after_n, usable_n) = (count(before), count(after), count(usable));
    if compactions_this_turn >= 3 {
        return Some(format!(
            "Stopped: the context had to be compacted {compactions_this_turn} times in this turn \
             (now ~{after_n} tokens); the task produces more than the model's window holds — \
             continue with a smaller step or a model with a larger context window."
        ));
    }
    if usable > 0 && after >= usable {
        return Some(format!(
            "Stopped: even compacted to the summary and the current request, the context \
             (~{after_n} tokens) does not fit the {usable_n} tokens this model can use — shorten the \
             request, remove instruction files, or use a model with a larger context window."
        ));
    }
    if before > 0 && u128::from(after) * 10 >= u128::from(before) * 9 {
        return Some(format!(
            "Stopped: compaction did not shrink the context ({before_n} → {after_n} tokens), so \
             continuing would loop — start a new session or use a model with a larger context \
             window."
        ));
    }
    None
}

#[cfg(test)]
#[path = "compaction_tests.rs"]
mod tests;
