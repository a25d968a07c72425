//! The reasoning effort on each wire format.

use serde_json::json;

use pith_config::OutputCap;
use pith_protocol::llm::{ChatMessage, ChatRequest, ReasoningEffort, UserContent};

fn req(effort: Option<ReasoningEffort>) -> ChatRequest {
    ChatRequest {
        model: "m".into(),
        system: vec![],
        messages: vec![ChatMessage::User {
            content: vec![UserContent::Text { text: "hi".into() }],
        }],
        tools: vec![],
        max_tokens: Some(2_000),
        temperature: None,
        thinking_budget: None,
        reasoning_effort: effort,
    }
}

#[test]
fn responses_api_sends_reasoning_effort_where_taken() {
    use super::responses::{Dialect, request_body};
    let on = Dialect {
        openai: true,
        effort: true,
    };
    for e in ReasoningEffort::ALL {
        let body = request_body(&req(Some(e)), on);
        assert_eq!(body["reasoning"]["effort"], json!(e.as_str()));
    }
    assert!(request_body(&req(None), on).get("reasoning").is_none());
    let off = Dialect {
        openai: false,
        effort: false,
    };
    let body = request_body(&req(Some(ReasoningEffort::High)), off);
    assert!(body.get("reasoning").is_none(), "{body}");
}

#[test]
fn chat_completions_send_reasoning_effort_only_where_taken() {
    use super::openai::{add_effort, request_body};
    let r = req(Some(ReasoningEffort::Minimal));
    let mut body = request_body(&r, OutputCap::MaxCompletionTokens);
    add_effort(&mut body, &r, true);
    assert_eq!(body["reasoning_effort"], json!("minimal"));
    let mut body = request_body(&r, OutputCap::MaxTokens);
    add_effort(&mut body, &r, false);
    assert!(body.get("reasoning_effort").is_none());
    let r = req(None);
    let mut body = request_body(&r, OutputCap::MaxTokens);
    add_effort(&mut body, &r, true);
    assert!(body.get("reasoning_effort").is_none());
}

#[test]
fn anthropic_turns_effort_into_a_thinking_budget() {
    use super::anthropic::{MIN_THINKING_BUDGET, effort_budget, request_body};
    let budgets: Vec<u32> = ReasoningEffort::ALL
        .into_iter()
        .map(effort_budget)
        .collect();
    assert_eq!(budgets, [MIN_THINKING_BUDGET, 4_000, 10_000, 32_000]);
    let body = request_body(&req(Some(ReasoningEffort::Medium)));
    assert_eq!(
        body["thinking"],
        json!({"type": "enabled", "budget_tokens": 10_000})
    );
    // max_tokens is raised above the budget
    assert!(body["max_tokens"].as_u64().unwrap() > 10_000);
    // the effort wins over a configured budget; without either, no thinking
    let mut r = req(Some(ReasoningEffort::Low));
    r.thinking_budget = Some(20_000);
    assert_eq!(request_body(&r)["thinking"]["budget_tokens"], json!(4_000));
    assert!(request_body(&req(None)).get("thinking").is_none());
}

#[test]
fn anthropic_never_gets_responses_reasoning() {
    use super::anthropic::request_body;
    use super::responses::ENCRYPTED_PREFIX;
    use pith_protocol::llm::AssistantContent;
    let mut r = req(None);
    r.messages.push(ChatMessage::Assistant {
        content: vec![
            AssistantContent::Reasoning {
                text: "openai summary".into(),
                signature: Some(format!("{ENCRYPTED_PREFIX}gAAA")),
                redacted: None,
            },
            AssistantContent::Reasoning {
                text: String::new(),
                signature: None,
                redacted: Some(format!("{ENCRYPTED_PREFIX}gBBB")),
            },
            AssistantContent::Text { text: "ok".into() },
        ],
    });
    let body = request_body(&r).to_string();
    assert!(!body.contains("gAAA") && !body.contains("gBBB"), "{body}");
    assert!(!body.contains("thinking"), "{body}");
}
