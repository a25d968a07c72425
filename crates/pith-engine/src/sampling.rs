//! MCP sampling (`sampling/createMessage`): a server asks the session's model to answer its
//! messages. Behind a permission like a tool's (`[permission] mcp_sampling`, by server name,
//! `ask` by default; "always" holds for the server for the session; `--yes` and the bypass
//! mode allow it, as they allow a tool; headless it is denied unless `--yes`). Allowed, it is one request with the current model, no tools, the server's
//! messages and system prompt, bounded by the server's `maxTokens`, [`MAX_SAMPLING_TOKENS`] and
//! [`SAMPLING_WAIT`]; its cost joins the session's (when the call that caused it ends:
//! `Turn::fold_sampling`) and a note says its tokens and cost.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use tokio_util::sync::CancellationToken;

use crate::server_questions::EngineQuestions;
use pith_config::{PermissionAction, PermissionSetting};
use pith_mcp::questions::{SampleReply, SampleRequest};
use pith_protocol::event::{EventMsg, PermissionReply, PermissionRequest, TurnEvent};
use pith_protocol::llm::{AssistantContent, ChatMessage, ChatRequest, StreamEvent, UserContent};

/// pith's own cap on a sampled answer's tokens, whatever the server asks.
pub(crate) const MAX_SAMPLING_TOKENS: u32 = 4_096;
/// How long one sampled answer may take.
pub(crate) const SAMPLING_WAIT: Duration = Duration::from_secs(120);
/// The permission rule's name.
pub(crate) const SAMPLING_RULE: &str = "mcp_sampling";

/// The model sampling uses: the one of the session's latest step.
#[derive(Clone)]
pub(crate) struct SamplingModel {
    pub name: String,
    pub provider: Arc<dyn pith_provider::Provider>,
    pub model_id: String,
    pub images: bool,
    /// Its prices, for what a sampled answer cost.
    pub info: pith_config::ModelConfig,
}

/// The sampling state of one engine.
#[derive(Default)]
pub(crate) struct Sampling {
    /// `[permission] mcp_sampling`.
    pub(crate) rule: Option<PermissionSetting>,
    /// Servers the user allowed for the session ("always").
    pub(crate) allowed: Mutex<HashSet<String>>,
}

impl Sampling {
    fn rule_for(&self, server: &str) -> PermissionAction {
        match &self.rule {
            None => PermissionAction::Ask,
            Some(PermissionSetting::Action(a)) => *a,
            Some(PermissionSetting::Patterns(p)) => p
                .iter()
                .filter(|(pat, _)| {
                    pith_config::permission_glob(pat).is_ok_and(|g| g.is_match(server))
                })
                .max_by_key(|(pat, _)| pat.len())
                .map_or(PermissionAction::Ask, |(_, a)| *a),
        }
    }

    /// Whether `server` may sample now: the rules, the session's grant, the user's answer.
    async fn permit(
        &self,
        q: &EngineQuestions,
        server: &str,
        request: &SampleRequest,
        stop: &CancellationToken,
    ) -> Result<(), String> {
        match self.rule_for(server) {
            PermissionAction::Deny => return Err("the user's rules deny sampling".into()),
            PermissionAction::Allow => return Ok(()),
            PermissionAction::Ask => {}
        }
        if self.allowed.lock().is_ok_and(|a| a.contains(server)) {
            return Ok(());
        }
        let title = format!(
            "MCP server {server} wants the model to answer: {}",
            first_lines(request)
        );
        let bypass = q
            .shared
            .mode
            .lock()
            .is_ok_and(|m| *m == Some(pith_protocol::event::PermissionMode::Bypass));
        if q.auto_yes || bypass {
            q.note(format!("{title} (allowed: --yes)"));
            return Ok(());
        }
        if q.headless {
            q.note(format!(
                "{title}; denied: this run cannot ask (--yes, or [permission] {SAMPLING_RULE} = \"allow\", allows it)"
            ));
            return Err("the user could not be asked, so sampling was denied".into());
        }
        let id = pith_protocol::message::new_id();
        let ask = PermissionRequest {
            call_id: format!("{SAMPLING_RULE}-{id}"),
            id,
            tool: SAMPLING_RULE.to_string(),
            title,
            patterns: vec![server.to_string()],
            agent: None,
        };
        let mut wait = q.shared.wait_permission(&ask.id);
        if q.events
            .send(EventMsg::from(TurnEvent::PermissionAsked(ask)))
            .is_err()
        {
            return Err("no one can answer".into());
        }
        q.shared.notify_user(format!(
            "pith needs your permission: MCP server {server} wants the model to answer"
        ));
        let turn = q.shared.current_cancel();
        let answer = tokio::select! {
            a = wait.answer() => a,
            _ = turn.cancelled() => None,
            _ = stop.cancelled() => None,
            _ = tokio::time::sleep(crate::server_questions::ANSWER_WAIT) => None,
        };
        match answer {
            None => Err("the question was withdrawn".into()),
            // the user's note (what to do instead) goes to the server that asked
            Some((PermissionReply::Deny, Some(note))) if !note.trim().is_empty() => Err(format!(
                "the user denied sampling: {}",
                pith_protocol::text::one_line_max(&note, 500)
            )),
            Some((PermissionReply::Deny, _)) => Err("the user denied sampling".into()),
            Some((PermissionReply::Always | PermissionReply::AlwaysExact, _)) => {
                if let Ok(mut a) = self.allowed.lock() {
                    a.insert(server.to_string());
                }
                Ok(())
            }
            Some((PermissionReply::Once, _)) => Ok(()),
        }
    }

    pub(crate) async fn sample(
        &self,
        q: &EngineQuestions,
        server: &str,
        request: SampleRequest,
        stop: CancellationToken,
    ) -> Result<SampleReply, String> {
        self.permit(q, server, &request, &stop).await?;
        let model = q
            .shared
            .sampling_model
            .lock()
            .ok()
            .and_then(|m| m.clone())
            .ok_or("no model has answered in this session yet")?;
        let chat = chat_request(&request, &model);
        let turn = q.shared.current_cancel();
        let read = tokio::select! {
            r = tokio::time::timeout(SAMPLING_WAIT, read_answer(&model, &chat)) => {
                r.unwrap_or_else(|_| Err("the model did not answer in time".into()))
            }
            _ = turn.cancelled() => Err("interrupted".into()),
            _ = stop.cancelled() => Err("the server gave up".into()),
        };
        let (text, usage, cut) = read?;
        let cost = pith_provider::cost::cost(&usage, &model.info);
        if let Ok(mut spent) = q.shared.sampling_spent.lock() {
            spent.0.input += usage.input;
            spent.0.output += usage.output;
            spent.0.cache_read += usage.cache_read;
            spent.0.cache_write += usage.cache_write;
            spent.1 += cost;
        }
        q.note(format!(
            "MCP server {server} sampled {}: {} tokens in, {} out (${cost:.4})",
            model.name,
            pith_protocol::text::count(usage.input + usage.cache_read + usage.cache_write),
            pith_protocol::text::count(usage.output)
        ));
        Ok(SampleReply {
            text,
            model: model.name,
            cut,
        })
    }
}

/// The first lines of the request's last user message, for the question (one line, bounded).
fn first_lines(request: &SampleRequest) -> String {
    let text = request
        .messages
        .iter()
        .rev()
        .find(|m| !m.assistant)
        .map_or("", |m| m.text.as_str());
    let head: Vec<&str> = text.lines().take(3).collect();
    pith_protocol::text::one_line_max(&pith_protocol::text::strip_controls(&head.join(" ")), 160)
}

/// The provider request: the server's messages, no tools; images only for a model that takes
/// them.
pub(crate) fn chat_request(request: &SampleRequest, model: &SamplingModel) -> ChatRequest {
    let messages = request
        .messages
        .iter()
        .map(|m| {
            if m.assistant {
                ChatMessage::Assistant {
                    content: vec![AssistantContent::Text {
                        text: m.text.clone(),
                    }],
                }
            } else {
                let mut content = vec![UserContent::Text {
                    text: m.text.clone(),
                }];
                for (mime, data) in &m.images {
                    content.push(if model.images {
                        UserContent::Image {
                            mime: mime.clone(),
                            data_base64: data.clone(),
                        }
                    } else {
                        UserContent::Text {
                            text: "[an image was left out: this model does not take images]".into(),
                        }
                    });
                }
                ChatMessage::User { content }
            }
        })
        .collect();
    ChatRequest {
        model: model.model_id.clone(),
        system: request.system.iter().cloned().collect(),
        messages,
        tools: Vec::new(),
        max_tokens: Some(sampling_cap(request.max_tokens, &model.info)),
        temperature: request.temperature,
        thinking_budget: None,
        reasoning_effort: None,
    }
}

/// The output cap of a sampled answer: the server's, within pith's and the model's own.
fn sampling_cap(asked: u32, model: &pith_config::ModelConfig) -> u32 {
    let mut cap = MAX_SAMPLING_TOKENS;
    if model.output > 0 {
        cap = cap.min(u32::try_from(model.output).unwrap_or(u32::MAX));
    }
    if let Some(m) = model.max_tokens {
        cap = cap.min(m);
    }
    asked.clamp(1, cap.max(1))
}

/// Reads the answer's text, its usage and whether it was cut at the cap.
async fn read_answer(
    model: &SamplingModel,
    chat: &ChatRequest,
) -> Result<(String, pith_protocol::llm::Usage, bool), String> {
    let mut stream = model
        .provider
        .stream(chat)
        .await
        .map_err(|e| pith_protocol::text::one_line_max(&e.to_string(), 300))?;
    let mut text = String::new();
    let mut usage = pith_protocol::llm::Usage::default();
    let mut cut = false;
    // a provider that ignores max_tokens still cannot grow this without bound
    let limit = MAX_SAMPLING_TOKENS as usize * 16;
    while let Some(event) = stream.next().await {
        match event.map_err(|e| pith_protocol::text::one_line_max(&e.to_string(), 300))? {
            StreamEvent::TextDelta(d) => {
                text.push_str(&d);
                if text.len() > limit {
                    text.truncate(text.floor_char_boundary(limit));
                    cut = true;
                    break;
                }
            }
            StreamEvent::Usage(u) => usage = u,
            StreamEvent::Finish(f) => {
                cut |= f == pith_protocol::llm::FinishReason::Length;
            }
            _ => {}
        }
    }
    Ok((text, usage, cut))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sampled_answer_is_capped_by_the_server_pith_and_the_model() {
        let mut model = pith_config::ModelConfig::default();
        assert_eq!(sampling_cap(50, &model), 50);
        assert_eq!(sampling_cap(1_000_000, &model), MAX_SAMPLING_TOKENS);
        assert_eq!(sampling_cap(0, &model), 1);
        model.output = 1_000;
        assert_eq!(sampling_cap(2_000, &model), 1_000);
        model.max_tokens = Some(300);
        assert_eq!(sampling_cap(2_000, &model), 300);
    }

    fn model(images: bool) -> SamplingModel {
        struct Never;
        #[async_trait::async_trait]
        impl pith_provider::Provider for Never {
            async fn stream(
                &self,
                _: &ChatRequest,
            ) -> Result<pith_provider::EventStream, pith_provider::error::ProviderError>
            {
                unreachable!()
            }
        }
        SamplingModel {
            name: "p/m".into(),
            provider: Arc::new(Never),
            model_id: "m".into(),
            images,
            info: Default::default(),
        }
    }

    #[test]
    fn images_go_only_to_a_model_that_takes_them_and_no_tools_ever() {
        let request = SampleRequest {
            system: Some("be brief".into()),
            messages: vec![pith_mcp::questions::SampleMessage {
                assistant: false,
                text: "what is this?".into(),
                images: vec![("image/png".into(), "AAAA".into())],
            }],
            max_tokens: 10,
            temperature: None,
            stop: vec![],
        };
        let with = chat_request(&request, &model(true));
        let without = chat_request(&request, &model(false));
        assert!(with.tools.is_empty() && without.tools.is_empty());
        assert_eq!(with.system, ["be brief"]);
        let content = |r: &ChatRequest| match &r.messages[0] {
            ChatMessage::User { content } => content.clone(),
            other => panic!("{other:?}"),
        };
        assert!(
            matches!(&content(&with)[1], UserContent::Image { mime, .. } if mime == "image/png")
        );
        assert!(
            matches!(&content(&without)[1], UserContent::Text { text } if text.contains("does not take images"))
        );
    }

    #[test]
    fn a_rule_by_server_name_wins_by_its_length() {
        let mut patterns = std::collections::BTreeMap::new();
        patterns.insert("*".to_string(), PermissionAction::Deny);
        patterns.insert("docs".to_string(), PermissionAction::Allow);
        let s = Sampling {
            rule: Some(PermissionSetting::Patterns(patterns)),
            ..Default::default()
        };
        assert_eq!(s.rule_for("docs"), PermissionAction::Allow);
        assert_eq!(s.rule_for("other"), PermissionAction::Deny);
        assert_eq!(Sampling::default().rule_for("x"), PermissionAction::Ask);
    }
}
