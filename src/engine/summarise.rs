//! The summary requests of a compaction: the dedicated compaction agent (its own system prompt,
//! no tools, the history in chunks that each fit) and the checks every summary goes through.

use std::collections::VecDeque;

use tokio_util::sync::CancellationToken;

use super::compaction::CompactionError;
use super::runner::{ModelSetup, Runner};
use super::step::complete_text;
use crate::context::budget::Budget;
use crate::context::compaction as plan;
use crate::llm::{AssistantContent, ChatMessage, ChatRequest, FinishReason, UserContent};
use crate::message::Usage;
use crate::provider::ErrorKind;

/// How often a chunk that still overflowed is split further.
const MAX_SPLITS: u32 = 4;

/// A summary the compaction agent wrote.
pub(super) struct Written {
    pub text: String,
    pub usage: Usage,
    pub calls: u32,
}

impl Runner {
    /// Runs the summary requests: one per chunk, oldest first, each folding the running summary,
    /// each capped at the summary cap. The last one is checked: a summary missing sections of
    /// the template, or cut at its cap, gets one retry with a note; then it is kept as it is
    /// (pith's own record follows it anyway).
    pub(super) async fn summarise(
        &mut self,
        setup: &ModelSetup,
        previous: Option<&str>,
        chat: Vec<ChatMessage>,
        focus: Option<&str>,
        main: &Budget,
        cancel: &CancellationToken,
    ) -> Result<Written, CompactionError> {
        // Chunks follow the compaction model's window; the summary must fit the session's.
        let own = Budget::new(&setup.limits, &self.opts.config.compaction);
        let cap = main.summary_cap.min(own.max_output);
        let budget = Budget {
            summary_cap: cap,
            ..own
        };
        let mut chunk_budget = plan::chunk_budget(&budget, focus, &self.estimator);
        let mut running: Option<String> = previous.map(str::to_string);
        if chat.is_empty() {
            // Only the request that travels whole was left to summarise: nothing to write.
            return Ok(Written {
                text: running.unwrap_or_else(|| NOTHING_BEFORE.to_string()),
                usage: Usage::default(),
                calls: 0,
            });
        }
        let mut usage = Usage::default();
        let mut calls = 0u32;
        let mut splits = 0u32;
        let mut retried = false;
        // Oldest first; every chunk fits the budget (oversized messages are split, not dropped).
        let mut queue: VecDeque<Vec<ChatMessage>> =
            plan::chunks(chat, chunk_budget, &self.estimator).into();
        let mut note: Option<String> = None;
        while let Some(chunk) = queue.pop_front() {
            let mut messages = plan::summary_request_messages(running.as_deref(), &chunk, focus);
            if let (Some(n), Some(ChatMessage::User { content })) = (&note, messages.last_mut()) {
                content.push(UserContent::Text { text: n.clone() });
            }
            let request = ChatRequest {
                model: setup.model_id.clone(),
                system: vec![plan::SYSTEM_PROMPT.trim_end().to_string()],
                messages,
                tools: Vec::new(),
                max_tokens: Some(cap.min(u64::from(u32::MAX)) as u32),
                temperature: None,
                thinking_budget: None,
            };
            match complete_text(self, setup.provider.as_ref(), &request, cancel).await {
                Ok((text, u, finish)) => {
                    calls += 1;
                    if let Some(u) = u {
                        usage.add(&u);
                    }
                    if text.trim().is_empty() {
                        return Err(CompactionError::EmptySummary);
                    }
                    let cut_at_cap = finish == Some(FinishReason::Length);
                    let missing = plan::missing_sections(&text);
                    if queue.is_empty() && !retried && (cut_at_cap || !missing.is_empty()) {
                        tracing::warn!(
                            "summary {}; retrying once",
                            if cut_at_cap {
                                "cut at its cap".to_string()
                            } else {
                                format!("missing {missing:?}")
                            }
                        );
                        retried = true;
                        note = Some(plan::retry_note(&missing, cut_at_cap, cap));
                        queue.push_front(chunk);
                        continue;
                    }
                    running = Some(text);
                }
                Err(e) if e.kind == ErrorKind::ContextOverflow && splits < MAX_SPLITS => {
                    // The estimate was off for this model: split the chunk further.
                    calls += 1;
                    splits += 1;
                    self.learn_window(&e, None);
                    chunk_budget = (chunk_budget / 2).max(MIN_SPLIT);
                    tracing::warn!(
                        "summary request overflowed; splitting to {chunk_budget} tokens"
                    );
                    for piece in plan::chunks(chunk.clone(), chunk_budget, &self.estimator)
                        .into_iter()
                        .rev()
                    {
                        queue.push_front(piece);
                    }
                }
                Err(e) if e.kind == ErrorKind::Cancelled => {
                    return Err(CompactionError::Interrupted);
                }
                Err(e) => return Err(CompactionError::Provider(e)),
            }
        }
        let text = running.ok_or(CompactionError::EmptySummary)?;
        Ok(Written { text, usage, calls })
    }
}

/// The summary when nothing came before the request being worked on.
const NOTHING_BEFORE: &str = "Nothing happened before the request below.";

/// The smallest chunk a split goes down to.
const MIN_SPLIT: u64 = 200;

/// The compaction agent has no tools: tool calls and results become plain text, so every
/// provider accepts the request (Anthropic rejects tool blocks without tool definitions).
pub(super) fn flatten_tools(messages: Vec<ChatMessage>) -> Vec<ChatMessage> {
    messages
        .into_iter()
        .filter_map(|m| match m {
            ChatMessage::Assistant { content } => {
                let content: Vec<AssistantContent> = content
                    .into_iter()
                    .filter_map(|c| match c {
                        AssistantContent::ToolCall { name, input, .. } => {
                            Some(AssistantContent::Text {
                                text: format!("[called tool {name} with {input}]"),
                            })
                        }
                        AssistantContent::Reasoning { .. } => None,
                        other => Some(other),
                    })
                    .collect();
                (!content.is_empty()).then_some(ChatMessage::Assistant { content })
            }
            ChatMessage::ToolResult {
                content, is_error, ..
            } => Some(ChatMessage::User {
                content: vec![UserContent::Text {
                    text: format!(
                        "[tool {}]\n{content}",
                        if is_error { "error" } else { "result" }
                    ),
                }],
            }),
            user => Some(user),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

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
