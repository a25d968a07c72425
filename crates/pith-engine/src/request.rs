//! The request of the main agent's next step: the view as wire messages, the system prompt and
//! tools, the output cap and the reasoning effort.

use crate::prompt;
use crate::turn_context::Turn;
use pith_context::overflow;
use pith_protocol::event::TurnEvent;
use pith_protocol::llm::{AssistantContent, ChatMessage, ChatRequest};
use pith_protocol::message::Message;

impl Turn<'_> {
    /// The request for the next step of the main agent.
    pub(crate) fn build_request(&self, last_step: bool) -> ChatRequest {
        let images = self.takes_images();
        let refs: Vec<&Message> = self.log.view().iter().collect();
        let mut messages = pith_context::view::convert(&refs, &mut |path, mime| {
            crate::images::image_content(path, mime, images)
        });
        if last_step {
            messages.push(ChatMessage::Assistant {
                content: vec![AssistantContent::Text {
                    text: prompt::MAX_STEPS_PROMPT.trim_end().to_string(),
                }],
            });
        }
        let (system, mut tools) = self.request_frame();
        // the provider's own search replaces pith's where it offers one
        if self.model.provider.hosted_search() {
            let search = pith_protocol::tool::Builtin::WebSearch.as_str();
            tools.to_mut().retain(|t| t.name != search);
        }
        ChatRequest {
            model: self.model.model_id.clone(),
            system: system.into_owned(),
            messages,
            tools: if last_step {
                Vec::new()
            } else {
                tools.into_owned()
            },
            max_tokens: self.max_tokens(),
            temperature: None,
            thinking_budget: self.model.info.thinking_budget,
            reasoning_effort: self.effort(),
        }
    }

    /// The reasoning effort of every request: the session's (`--effort`, `/effort`), else the
    /// model's; none when the provider does not take one (it would never be sent).
    pub(crate) fn effort(&self) -> Option<pith_protocol::llm::ReasoningEffort> {
        self.opts
            .config
            .effort
            .or(self.model.info.reasoning_effort)
            .filter(|_| self.model.provider.takes_effort())
    }

    /// The session asks for a reasoning effort its provider does not take: says it is not sent.
    pub(crate) fn warn_effort_not_sent(&mut self) {
        if self.opts.config.effort.is_none() || self.model.provider.takes_effort() {
            return;
        }
        let provider = self.model.name.split('/').next().unwrap_or_default();
        let message = format!(
            "not sent: {provider} does not take a reasoning effort (set reasoning_effort = true in [provider.{provider}] if it does)"
        );
        self.emit(TurnEvent::Info { message });
    }

    /// The output cap of every request: the room the overflow test keeps for the reply, so the
    /// reserve is real (the provider picks the field that carries it).
    pub(crate) fn max_tokens(&self) -> Option<u32> {
        Some(overflow::max_output(&self.model.limits).min(u64::from(u32::MAX)) as u32)
    }
}
