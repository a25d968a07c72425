//! The summary requests of a compaction, in one of two ways:
//!
//! - **cache-friendly** ([`summarise_inline`]): when the session's own model writes the
//!   summary and the conversation still fits, the request is the session's next request byte for
//!   byte — same system prompt, same tools, same messages — with the summary instruction appended
//!   as the last user message, so the prompt cache the last step wrote is read, not paid again;
//! - **dedicated** ([`summarise`]): the compaction agent's own system prompt, no tools,
//!   the history in chunks that each fit (a separate `compaction.model`, or a conversation that
//!   no longer fits the window).
//!
//! Either way a summary missing sections of the template, or cut at its cap, is asked for once
//! more with a note.

use std::collections::VecDeque;

use tokio_util::sync::CancellationToken;

use super::Planner;
use crate::compaction::CompactionError;
use crate::model::ModelSetup;
use crate::reader::{self, Completion, Listener, MIN_STEP_OUTPUT};
use pith_context::budget::Budget;
use pith_context::compaction as plan;
use pith_context::compaction::Cut;
use pith_context::tokens::Estimator;
use pith_protocol::carried::Anchor;
use pith_protocol::llm::{ChatMessage, ChatRequest, FinishReason, UserContent};
use pith_protocol::message::Carried;
use pith_protocol::message::Usage;
use pith_provider::{FaultKind, Provider, ProviderError};

/// What a dedicated summary request asks for besides the summary: a `/compact` focus, the
/// user's words pith could not carry itself, and the anchors it keeps (to use, not restate).
#[derive(Clone, Copy, Default)]
pub(crate) struct Ask<'a> {
    pub focus: Option<&'a str>,
    pub words: Option<&'a str>,
    pub anchors: &'a [Anchor],
}

/// How often a chunk that still overflowed is split further.
const MAX_SPLITS: u32 = 4;

/// A summary the compaction agent wrote.
pub(crate) struct Written {
    pub text: String,
    pub usage: Usage,
    pub calls: u32,
    /// Written by the cache-friendly request.
    pub inline: bool,
}

/// What the summariser asks of the session it summarises, besides hearing what reading a
/// stream brings ([`Listener`]): a [`Planner`] over it (which also estimates its next
/// request), that request itself, and what a provider's overflow error says about the window.
pub(crate) trait SummaryHost: Listener {
    /// What the compactor reads of the session.
    fn planner(&mut self) -> Planner<'_>;

    /// The session's next request, as the agent's next step would send it.
    fn session_request(&self) -> ChatRequest;

    /// Learns what a context overflow error says about the window.
    fn learn_window(&mut self, err: &ProviderError);
}

/// A summary to write: the history before `cut`'s tail, with what pith carries planned.
pub(crate) struct Job<'a> {
    pub cut: &'a Cut,
    pub carried: &'a Carried,
    /// A separate compaction model, if configured.
    pub setup: Option<&'a ModelSetup>,
    /// The provider said the conversation does not fit.
    pub overflowed: bool,
    pub focus: Option<&'a str>,
    pub budget: &'a Budget,
}

/// Writes the summary of the history before the job's tail: with the cache-friendly request
/// when the session's model writes it and the conversation still fits its window (not after
/// the provider said it does not), else, or when that request brings no text, with the
/// dedicated one.
pub(crate) async fn write_summary<H: SummaryHost>(
    host: &mut H,
    job: Job<'_>,
    cancel: &CancellationToken,
) -> Result<Written, CompactionError> {
    let Job {
        cut,
        carried,
        setup,
        overflowed,
        focus,
        budget,
    } = job;
    let anchors = pith_context::anchors::beyond_words(carried);
    let words = plan::words_note(
        &carried.uncarried,
        budget.summary_cap,
        host.planner().meter.estimator(),
    );
    if setup.is_none() && !overflowed {
        let mut instruction = host.planner().inline_instruction(cut, focus, &anchors);
        if let Some(w) = &words {
            instruction = format!("{instruction}\n\n{w}");
        }
        if let Some(inline) = inline_budget_of(host, budget, &instruction) {
            match summarise_inline(host, &instruction, &inline, cancel).await {
                Ok(Some(w)) => return Ok(w),
                Ok(None) => tracing::warn!(
                    "the cache-friendly summary request brought no text; using the compaction agent"
                ),
                Err(CompactionError::Provider(e)) if e.kind == FaultKind::ContextOverflow => {
                    host.learn_window(&e);
                    tracing::warn!(
                        "the cache-friendly summary request overflowed; using the compaction agent"
                    );
                }
                Err(e) => return Err(e),
            }
        }
    }
    let (chat, previous) = host.planner().dedicated_input(cut, carried, budget);
    let setup = setup.cloned().unwrap_or_else(|| host.model().clone());
    let ask = Ask {
        focus,
        words: words.as_deref(),
        anchors: &anchors,
    };
    summarise(host, &setup, previous.as_deref(), chat, ask, budget, cancel).await
}

/// The budget of a cache-friendly summary request with this instruction (see
/// [`inline_budget`]).
pub(crate) fn inline_budget_of<H: SummaryHost>(
    host: &mut H,
    budget: &Budget,
    instruction: &str,
) -> Option<Budget> {
    let estimated = host.planner().estimate_request();
    let planner = host.planner();
    let instruction = planner.meter.text(instruction);
    inline_budget(budget, estimated, planner.meter.used(), instruction)
}

/// The cache-friendly summary request (see the module documentation); any tool call the
/// model makes is ignored. `None` when it brought no text at all.
async fn summarise_inline<H: SummaryHost>(
    host: &mut H,
    instruction: &str,
    budget: &Budget,
    cancel: &CancellationToken,
) -> Result<Option<Written>, CompactionError> {
    let mut usage = Usage::default();
    let mut calls = 0;
    let mut note: Option<String> = None;
    loop {
        let mut request = host.session_request();
        let mut content = vec![UserContent::Text {
            text: instruction.to_string(),
        }];
        if let Some(n) = &note {
            content.push(UserContent::Text { text: n.clone() });
        }
        request.messages.push(ChatMessage::User { content });
        request.max_tokens = Some(budget.summary_cap.min(u64::from(u32::MAX)) as u32);
        let provider = host.model().provider.clone();
        let (text, u, finish) = match complete_text(host, provider.as_ref(), &request, cancel).await
        {
            Ok(done) => done,
            Err(e) if e.kind == FaultKind::Cancelled => {
                return Err(CompactionError::Interrupted);
            }
            Err(e) => return Err(CompactionError::Provider(e)),
        };
        calls += 1;
        if let Some(u) = u {
            usage.add(&u);
        }
        if text.trim().is_empty() {
            return Ok(None);
        }
        match (
            note.is_some(),
            summary_problem(&text, finish.as_ref(), budget.summary_cap),
        ) {
            (false, Some(n)) => note = Some(n),
            _ => {
                return Ok(Some(Written {
                    text,
                    usage,
                    calls,
                    inline: true,
                }));
            }
        }
    }
}

/// Runs the summary requests: one per chunk, oldest first, each folding the running summary,
/// each capped at the summary cap. The last one is checked: a summary missing sections of
/// the template, or cut at its cap, gets one retry with a note; then it is kept as it is
/// (pith's own record follows it anyway).
async fn summarise<H: SummaryHost>(
    host: &mut H,
    setup: &ModelSetup,
    previous: Option<&str>,
    chat: Vec<ChatMessage>,
    ask: Ask<'_>,
    main: &Budget,
    cancel: &CancellationToken,
) -> Result<Written, CompactionError> {
    let budget = host.planner().summary_budget(setup, main);
    let cap = budget.summary_cap;
    let instructions = host.planner().config.compaction.instructions.clone();
    let user = plan::SummaryAsk {
        instructions: instructions.as_deref(),
        focus: ask.focus,
        anchors: ask.anchors,
    };
    let mut running: Option<String> = previous.map(str::to_string);
    if chat.is_empty() {
        // Only the request that travels whole was left to summarise: nothing to write.
        return Ok(Written {
            text: running.unwrap_or_else(|| NOTHING_BEFORE.to_string()),
            usage: Usage::default(),
            calls: 0,
            inline: false,
        });
    }
    let chunk_budget = host.planner().chunk_budget(&budget, user, ask);
    let mut chunks = Chunks::new(chat, chunk_budget, host.planner().meter.estimator());
    let mut usage = Usage::default();
    let mut calls = 0u32;
    let mut retried = false;
    let mut note: Option<String> = None;
    let pinned = crate::pins::summary_note(host.planner().system);
    while let Some(chunk) = chunks.queue.pop_front() {
        let notes = [ask.words, note.as_deref(), pinned.as_deref()];
        let request = summary_request(setup, running.as_deref(), &chunk, user, notes, cap);
        match complete_text(host, setup.provider.as_ref(), &request, cancel).await {
            Ok((text, u, finish)) => {
                calls += 1;
                if let Some(u) = u {
                    usage.add(&u);
                }
                if text.trim().is_empty() {
                    return Err(CompactionError::EmptySummary);
                }
                if chunks.queue.is_empty()
                    && !retried
                    && let Some(n) = summary_problem(&text, finish.as_ref(), cap)
                {
                    retried = true;
                    note = Some(n);
                    chunks.queue.push_front(chunk);
                    continue;
                }
                running = Some(text);
            }
            Err(e) if e.kind == FaultKind::ContextOverflow && chunks.splits < MAX_SPLITS => {
                // The estimate was off for this model: split the chunk further.
                calls += 1;
                host.learn_window(&e);
                chunks.split(chunk, host.planner().meter.estimator());
            }
            Err(e) if e.kind == FaultKind::Cancelled => {
                return Err(CompactionError::Interrupted);
            }
            Err(e) => return Err(CompactionError::Provider(e)),
        }
    }
    let text = running.ok_or(CompactionError::EmptySummary)?;
    Ok(Written {
        text,
        usage,
        calls,
        inline: false,
    })
}

/// The history still to summarise, in chunks that each fit a request, oldest first
/// (oversized messages are split, not dropped).
struct Chunks {
    queue: VecDeque<Vec<ChatMessage>>,
    budget: u64,
    /// How often a chunk that overflowed was split further.
    splits: u32,
}

impl Chunks {
    fn new(chat: Vec<ChatMessage>, budget: u64, estimator: &Estimator) -> Chunks {
        Chunks {
            queue: plan::chunks(chat, budget, estimator).into(),
            budget,
            splits: 0,
        }
    }

    /// A chunk overflowed: it goes back at the front, split in halves of the budget.
    fn split(&mut self, chunk: Vec<ChatMessage>, estimator: &Estimator) {
        self.splits += 1;
        self.budget = (self.budget / 2).max(MIN_SPLIT);
        let budget = self.budget;
        tracing::warn!("summary request overflowed; splitting to {budget} tokens");
        for piece in plan::chunks(chunk, budget, estimator).into_iter().rev() {
            self.queue.push_front(piece);
        }
    }
}

/// The dedicated summary request for one chunk: the compaction agent's system prompt, the
/// running summary and the chunk, the `notes` (the user's words, a retry's note) appended.
fn summary_request(
    setup: &ModelSetup,
    running: Option<&str>,
    chunk: &[ChatMessage],
    user: plan::SummaryAsk<'_>,
    notes: [Option<&str>; 3],
    cap: u64,
) -> ChatRequest {
    let mut messages = plan::summary_request_messages(running, chunk, user);
    if let Some(ChatMessage::User { content }) = messages.last_mut() {
        for n in notes.into_iter().flatten() {
            content.push(UserContent::Text {
                text: n.to_string(),
            });
        }
    }
    ChatRequest {
        model: setup.model_id.clone(),
        system: vec![plan::SYSTEM_PROMPT.trim_end().to_string()],
        messages,
        tools: Vec::new(),
        max_tokens: Some(cap.min(u64::from(u32::MAX)) as u32),
        temperature: None,
        thinking_budget: None,
        reasoning_effort: None,
    }
}

/// Streams a tool-less request to completion and returns its text (the compaction agent),
/// retrying retryable faults.
async fn complete_text<H: SummaryHost>(
    host: &mut H,
    provider: &dyn Provider,
    request: &ChatRequest,
    cancel: &CancellationToken,
) -> Result<Completion, ProviderError> {
    let overlong = format!(
        "the summary passed {} MiB without ending; stopped reading it",
        MIN_STEP_OUTPUT / (1024 * 1024)
    );
    reader::complete_text(host, provider, request, &overlong, cancel).await
}

/// The budget of a cache-friendly summary request: the summary gets what the window leaves
/// after the prefix (the session's request and the instruction), at most its cap. The prefix is
/// the provider's count of the last request plus the estimate of what came since, or the
/// estimate of the whole when that says more; the margin is 10% of what is estimated and 2% of
/// what was counted. `None` when what is left is less than half the cap: at the threshold the
/// prefix fills the usable window by definition, and a window whose output reserve is the
/// summary cap leaves no room for it.
pub(crate) fn inline_budget(
    budget: &Budget,
    estimated: u64,
    counted: u64,
    instruction: u64,
) -> Option<Budget> {
    let (prefix, margin) = if counted >= estimated {
        (counted + instruction, counted / 50 + instruction / 10)
    } else {
        let p = estimated + instruction;
        (p, p / 10)
    };
    let room = (budget.usable + budget.max_output).saturating_sub(prefix + margin);
    let cap = budget.summary_cap.min(room);
    (cap > 0 && cap >= budget.summary_cap / 2).then_some(Budget {
        summary_cap: cap,
        ..*budget
    })
}

/// What is wrong with a written summary, as the note of its one retry: cut at its cap, or
/// missing sections of the template. `None` when it is fine.
pub(crate) fn summary_problem(
    text: &str,
    finish: Option<&FinishReason>,
    cap: u64,
) -> Option<String> {
    let cut_at_cap = finish == Some(&FinishReason::Length);
    let missing = plan::missing_sections(text);
    if !cut_at_cap && missing.is_empty() {
        return None;
    }
    tracing::warn!(
        "summary {}; retrying once",
        if cut_at_cap {
            "cut at its cap".to_string()
        } else {
            format!("missing {missing:?}")
        }
    );
    Some(plan::retry_note(&missing, cut_at_cap, cap))
}

/// The summary when nothing came before the request being worked on.
const NOTHING_BEFORE: &str = "Nothing happened before the request below.";

/// The smallest chunk a split goes down to.
const MIN_SPLIT: u64 = 200;

#[cfg(test)]
mod tests {
    use super::*;
    use pith_protocol::llm::{AssistantContent, flatten_tools};

    fn budget(context: u64, output: u64) -> Budget {
        let limits = pith_context::overflow::Limits {
            context,
            input: None,
            output,
            max_tokens: None,
        };
        Budget::new(&limits, &pith_config::CompactionConfig::default())
    }

    #[test]
    fn a_cache_friendly_summary_gets_the_room_the_prefix_leaves() {
        // 200k window, 32k reserve: at the threshold (168k counted) the whole cap fits.
        let b = budget(200_000, 64_000);
        let full = inline_budget(&b, 150_000, 168_000, 500).unwrap();
        assert_eq!(full.summary_cap, b.summary_cap);
        // 20k window, 4k reserve: a counted prefix at the threshold leaves part of the cap.
        let b = budget(20_000, 4_000);
        let part = inline_budget(&b, 10_000, 17_000, 300).unwrap();
        assert!(part.summary_cap < b.summary_cap && part.summary_cap >= b.summary_cap / 2);
        // An estimate gets a wider margin than a count of the same size.
        assert!(inline_budget(&b, 17_000, 0, 300).is_none());
        // 4k window whose reserve is the summary cap: past the threshold, no room.
        let b = budget(4_096, 512);
        assert!(inline_budget(&b, 2_000, 3_700, 150).is_none());
        assert!(inline_budget(&b, 1_800, 2_000, 150).is_some());
    }

    #[test]
    fn tool_blocks_become_text() {
        let msgs = vec![
            ChatMessage::Assistant {
                content: vec![
                    AssistantContent::Reasoning {
                        text: "hmm".into(),
                        signature: None,
                        redacted: None,
                    },
                    AssistantContent::ToolCall {
                        id: "c1".into(),
                        name: "bash".into(),
                        input: serde_json::json!({"command": "ls"}),
                    },
                ],
            },
            ChatMessage::ToolResult {
                call_id: "c1".into(),
                content: "a.txt".into(),
                is_error: false,
            },
        ];
        let out = flatten_tools(msgs);
        assert_eq!(out.len(), 2);
        let ChatMessage::Assistant { content } = &out[0] else {
            panic!("assistant expected")
        };
        assert_eq!(
            content,
            &vec![AssistantContent::Text {
                text: r#"[called tool bash with {"command":"ls"}]"#.into()
            }]
        );
        let ChatMessage::User { content } = &out[1] else {
            panic!("user expected")
        };
        assert_eq!(
            content,
            &vec![UserContent::Text {
                text: "[tool result]\na.txt".into()
            }]
        );
    }
}
