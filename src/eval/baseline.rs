//! The `summary-only` strategy, the plain compaction of the original OpenCode design: its
//! compaction agent's system prompt and its default request over the same history; the context
//! is then that summary alone. And the questions every strategy is asked.

use pith_context::tokens::Estimator;

use super::ask::Model;

/// OpenCode's compaction agent (`agent/prompt/compaction.txt`).
const SYSTEM: &str = include_str!("../../prompts/eval-baseline-system.md");
/// OpenCode's default compaction request (`session/compaction.ts`).
const REQUEST: &str = include_str!("../../prompts/eval-baseline.md");
/// What a probe question is asked under.
const PROBE: &str = include_str!("../../prompts/eval-probe.md");
/// The longest answer a probe gets, in tokens.
const ANSWER_CAP: u32 = 256;

/// The summary's cap at a `window`: as pith's own (a sixth of it, 400 to 8,000 tokens).
pub(super) fn summary_cap(window: u64) -> u32 {
    (window / 6).clamp(400, 8_000) as u32
}

/// The baseline's context for `history` (the whole session as text), compacted at `window`.
pub(super) async fn summary(model: &Model, history: &str, window: u64) -> anyhow::Result<String> {
    let cap = summary_cap(window);
    let text = fit(model, history, &[SYSTEM, REQUEST], cap);
    let summary = model
        .ask(SYSTEM, format!("{text}\n\n{}", REQUEST.trim()), cap)
        .await?;
    Ok(format!(
        "[user]\nWhat did we do so far?\n\n[assistant]\n{summary}\n"
    ))
}

/// The model's answer to `question` with only `context` (its newest part, when the model's
/// window cannot hold it whole).
pub(super) async fn answer(
    model: &Model,
    context: &str,
    question: &str,
) -> Result<String, pith_provider::ProviderError> {
    let context = fit(model, context, &[PROBE, question], ANSWER_CAP);
    model
        .ask(
            PROBE,
            format!("<context>\n{context}</context>\n\nQuestion: {question}"),
            ANSWER_CAP,
        )
        .await
}

/// `text`, its oldest lines left out until it fits the model's window beside `with` and a reply
/// of `cap` tokens (whole when the window is unknown).
fn fit<'a>(model: &Model, text: &'a str, with: &[&str], cap: u32) -> &'a str {
    let window = model.info.input.unwrap_or(model.info.context);
    if window == 0 {
        return text;
    }
    let est = Estimator::for_model(&model.name);
    let fixed: u64 = with.iter().map(|w| est.text(w)).sum::<u64>() + u64::from(cap) + 64;
    let room = window.saturating_sub(fixed);
    let mut start = 0;
    // drop about the excess at a time, at line starts, until it fits
    while start < text.len() && est.text(&text[start..]) > room {
        let excess = (est.text(&text[start..]) - room) as usize * 3 + 1;
        let mut at = (start + excess).min(text.len());
        while !text.is_char_boundary(at) {
            at += 1;
        }
        start = text[at..].find('\n').map_or(text.len(), |n| at + n + 1);
    }
    &text[start..]
}
