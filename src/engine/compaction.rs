//! The compaction task (ARCHITECTURE.md §6.4): a Compaction part on a user message, processed by
//! the hidden compaction agent, saved as a summary message; the view restarts from it.

use std::collections::VecDeque;

use tokio_util::sync::CancellationToken;

use super::runner::{ModelSetup, Runner};
use super::step::complete_text;
use super::turn::CONTINUE;
use crate::context::compaction as plan;
use crate::context::overflow;
use crate::event::{EngineState, Event};
use crate::llm::{AssistantContent, ChatMessage, ChatRequest, UserContent};
use crate::message::{Agent, CompactionPart, FinishReason, Message, PartKind, Role, Usage, now_ms};
use crate::provider::ErrorKind;

/// Budget when the model's window is unknown.
const UNKNOWN_WINDOW_BUDGET: u64 = 100_000;
/// How often a chunk that still overflowed is split further.
const MAX_SPLITS: u32 = 4;

impl Runner {
    /// Compacts the session. `continue_after`: the turn goes on, so an automatic compaction adds
    /// the synthetic continue message when the view does not already end with the user's request.
    pub(super) async fn compact(
        &mut self,
        auto: bool,
        overflow: bool,
        focus: Option<String>,
        continue_after: bool,
        cancel: &CancellationToken,
    ) -> Result<(), String> {
        if auto && self.compactions_this_turn >= 2 {
            return Err(plan::breaker(u64::MAX, 0, self.compactions_this_turn + 1).unwrap_or_else(
                || "stopped: a third compaction in one turn would be needed; the conversation does not fit even after compacting twice".into(),
            ));
        }
        self.compactions_this_turn += 1;
        // Tail, chunks and the breaker's figures are decided on exact counts.
        if !self.estimator.is_exact() {
            self.estimator.want_exact();
            self.reset_estimate();
        }
        // After a provider overflow error the context is at least the usable window, whatever
        // the estimate says.
        let before = if overflow {
            self.tracker.used().max(self.usable())
        } else {
            self.tracker.used()
        };
        self.emit(Event::CompactionStarted {
            auto,
            overflow,
            focus: focus.clone(),
        });
        self.state(EngineState::Compacting, None);

        // What is summarised: everything after the previous summary, before the verbatim tail.
        let budget = plan::preserve_recent_tokens(self.usable(), &self.opts.config.compaction);
        let cut = plan::cut(&self.view, budget, &mut self.estimator);
        let previous = cut.previous_summary.clone();
        let tail = cut.summarise.end;
        // Cut first (tool results and inputs to 2,000 chars, media stripped), then turn tool
        // blocks into text: `prepare` recognises tool results only as tool blocks.
        let chat = flatten_tools(plan::prepare(super::runner::to_wire(
            &self.view[cut.summarise.clone()],
        )));
        let tail_start = cut.tail_start.clone();

        let mut c = Message::new(&self.session.id, Role::User);
        c.push(PartKind::Compaction(CompactionPart {
            auto,
            overflow,
            focus: focus.clone(),
            tail_start: tail_start.clone(),
        }));
        self.save_message(&c);
        self.emit(Event::Message { message: c.clone() });

        let setup = match &self.opts.config.compaction.model {
            Some(name) if name != &self.model.name => {
                match ModelSetup::build(&self.opts.config, name) {
                    Ok((s, _)) => s,
                    Err(e) => {
                        self.discard(&c);
                        return Err(format!("compaction model {name}: {e:#}"));
                    }
                }
            }
            _ => self.model.clone(),
        };
        let summarised = self
            .summarise(&setup, previous.as_deref(), chat, focus.as_deref(), cancel)
            .await;
        let (summary, usage, calls) = match summarised {
            Ok(r) => r,
            Err(message) => {
                self.discard(&c);
                self.state(EngineState::Thinking, None);
                return Err(message);
            }
        };

        let mut s = Message::new(&self.session.id, Role::Assistant);
        s.parent_id = Some(c.id.clone());
        s.summary = true;
        s.agent = Some(Agent::Compaction);
        s.model = Some(setup.name.clone());
        s.usage = usage;
        s.cost = crate::provider::cost::cost(&usage, &setup.info);
        s.finish = Some(FinishReason::Stop);
        s.time_completed = Some(now_ms());
        s.push(PartKind::Text {
            text: summary,
            synthetic: false,
        });
        self.save_message(&s);
        self.emit(Event::Message { message: s.clone() });
        for p in &s.parts {
            self.emit(Event::PartUpdated { part: p.clone() });
        }
        self.session.cost += s.cost;

        let kept: Vec<Message> = self.view.drain(tail..).collect();
        self.view = vec![c, s.clone()];
        self.view.extend(kept);
        self.session.compaction_point = Some(tail_start.unwrap_or_else(|| self.view[0].id.clone()));
        self.touch_session();
        self.reset_estimate();
        let after = self.tracker.used();
        tracing::info!("compacted: {before} -> {after} tokens in {calls} model calls");
        self.emit(Event::CompactionFinished {
            summary_message_id: s.id.clone(),
            before,
            after,
            model_calls: calls,
        });
        self.emit_context();
        if continue_after && auto && !self.ends_with_user_request() {
            self.push_user_text(CONTINUE, true);
            self.emit_context();
        }
        if auto && let Some(message) = plan::breaker(before, after, self.compactions_this_turn) {
            return Err(message);
        }
        if !auto && after as f64 >= 0.9 * before as f64 && before > 0 {
            self.emit(Event::Info {
                message: format!(
                    "compaction freed little room ({before} → {after} tokens): the recent turns kept verbatim are most of the context"
                ),
            });
        }
        Ok(())
    }

    /// True when the view ends with a message the user typed (so the model will answer it).
    fn ends_with_user_request(&self) -> bool {
        self.view.last().is_some_and(|m| {
            m.role == Role::User
                && m.compaction().is_none()
                && m.parts.iter().any(|p| {
                    matches!(
                        p.kind,
                        PartKind::Text {
                            synthetic: false,
                            ..
                        }
                    )
                })
        })
    }

    /// `max_tokens` for a summary request: OpenAI-compatible servers get it only when configured.
    fn summary_max_tokens(&self, setup: &ModelSetup) -> Option<u32> {
        if setup.kind == crate::config::ProviderKind::Openai {
            return setup.info.max_tokens;
        }
        Some(overflow::max_output(&setup.limits).clamp(1_024, 16_000) as u32)
    }

    /// Removes a compaction message that did not complete.
    fn discard(&self, c: &Message) {
        if let Err(e) = self.store.delete_message(&c.id) {
            tracing::error!("store: cannot delete message {}: {e:#}", c.id);
        }
    }

    /// Runs the summary requests: one per chunk, oldest first, each folding the running summary.
    async fn summarise(
        &mut self,
        setup: &ModelSetup,
        previous: Option<&str>,
        chat: Vec<ChatMessage>,
        focus: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<(String, Usage, u32), String> {
        let usable = overflow::usable(&setup.limits, &self.opts.config.compaction);
        let usable = if usable == 0 {
            UNKNOWN_WINDOW_BUDGET
        } else {
            usable
        };
        let mut budget = plan::chunk_budget(usable, previous, focus, &self.estimator);
        let mut running: Option<String> = previous.map(str::to_string);
        let mut usage = Usage::default();
        let mut calls = 0u32;
        let mut splits = 0u32;
        if chat.is_empty() {
            return Err(if running.is_some() {
                "nothing new to compact since the last summary".into()
            } else {
                "nothing to compact yet".into()
            });
        }
        // Oldest first; every chunk fits the budget (oversized messages are split, not dropped).
        let mut queue: VecDeque<Vec<ChatMessage>> =
            plan::chunks(chat, budget, &self.estimator).into();
        while let Some(chunk) = queue.pop_front() {
            let messages = plan::summary_request_messages(running.as_deref(), &chunk, focus);
            let request = ChatRequest {
                model: setup.model_id.clone(),
                system: vec![plan::SYSTEM_PROMPT.trim_end().to_string()],
                messages,
                tools: Vec::new(),
                max_tokens: self.summary_max_tokens(setup),
                temperature: None,
                thinking_budget: None,
            };
            match complete_text(self, setup.provider.as_ref(), &request, cancel).await {
                Ok((text, u)) => {
                    calls += 1;
                    if let Some(u) = u {
                        usage = u;
                    }
                    if text.trim().is_empty() {
                        return Err("the compaction model returned an empty summary".into());
                    }
                    running = Some(text);
                }
                Err(e) if e.kind == ErrorKind::ContextOverflow && splits < MAX_SPLITS => {
                    // The estimate was off for this model: split the chunk further.
                    calls += 1;
                    splits += 1;
                    budget = (budget / 2).max(500);
                    tracing::warn!("summary request overflowed; splitting to {budget} tokens");
                    for piece in plan::chunks(chunk.clone(), budget, &self.estimator)
                        .into_iter()
                        .rev()
                    {
                        queue.push_front(piece);
                    }
                }
                Err(e) if e.kind == ErrorKind::Cancelled => {
                    return Err("compaction interrupted".into());
                }
                Err(e) => return Err(format!("compaction failed: {}", e.message)),
            }
        }
        let summary = running.ok_or_else(|| "compaction produced no summary".to_string())?;
        Ok((summary, usage, calls))
    }
}

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
