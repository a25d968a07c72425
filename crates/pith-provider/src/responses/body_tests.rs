use serde_json::json;

use super::*;
use pith_protocol::llm::{ReasoningEffort, ToolSpec};

const OPENAI: Dialect = Dialect {
    openai: true,
    effort: true,
};
const LOCAL: Dialect = Dialect {
    openai: false,
    effort: false,
};

fn req(messages: Vec<ChatMessage>) -> ChatRequest {
    ChatRequest {
        model: "gpt-test".into(),
        system: vec!["header".into(), " ".into(), "rest".into()],
        messages,
        tools: vec![],
        max_tokens: None,
        temperature: None,
        thinking_budget: None,
        reasoning_effort: None,
    }
}

fn user(text: &str) -> ChatMessage {
    ChatMessage::User {
        content: vec![UserContent::Text { text: text.into() }],
    }
}

fn encrypted(text: &str, data: &str) -> AssistantContent {
    AssistantContent::Reasoning {
        text: text.into(),
        signature: Some(format!("{ENCRYPTED_PREFIX}{data}")),
        redacted: None,
    }
}

#[test]
fn a_local_server_gets_the_basic_fields_only() {
    let mut r = req(vec![user("hi")]);
    r.temperature = Some(0.2);
    r.reasoning_effort = Some(ReasoningEffort::High);
    let body = request_body(&r, LOCAL);
    assert_eq!(
        body,
        json!({
            "model": "gpt-test",
            "instructions": "header\n\nrest",
            "input": [{ "type": "message", "role": "user", "content": [{ "type": "input_text", "text": "hi" }] }],
            "stream": true,
            "max_output_tokens": DEFAULT_MAX_OUTPUT,
            "temperature": 0.2,
        })
    );
}

#[test]
fn openai_gets_store_include_and_the_effort() {
    let mut r = req(vec![user("hi")]);
    r.max_tokens = Some(1000);
    r.temperature = Some(0.2);
    r.reasoning_effort = Some(ReasoningEffort::Low);
    let body = request_body(&r, OPENAI);
    assert_eq!(body["store"], json!(false));
    assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!(
        body["reasoning"],
        json!({ "effort": "low", "summary": "auto" })
    );
    assert_eq!(body["max_output_tokens"], json!(1000));
    // reasoning models take no temperature
    assert_eq!(body.get("temperature"), None);

    // a server configured to take the effort gets it, without OpenAI's extras
    let body = request_body(
        &r,
        Dialect {
            openai: false,
            effort: true,
        },
    );
    assert_eq!(body["reasoning"], json!({ "effort": "low" }));
    assert_eq!(body.get("store"), None);
    assert_eq!(body.get("include"), None);
}

#[test]
fn calls_results_and_encrypted_reasoning_become_items() {
    let mut r = req(vec![
        user("go"),
        ChatMessage::Assistant {
            content: vec![
                encrypted("I should list", "gAAA1"),
                AssistantContent::Text {
                    text: "Listing.".into(),
                },
                AssistantContent::ToolCall {
                    id: "call_1".into(),
                    name: "bash".into(),
                    input: json!({"command": "ls"}),
                },
            ],
        },
        ChatMessage::ToolResult {
            call_id: "call_1".into(),
            content: "a\nb".into(),
            is_error: false,
        },
        ChatMessage::Assistant {
            content: vec![
                AssistantContent::Reasoning {
                    text: String::new(),
                    signature: None,
                    redacted: Some(format!("{ENCRYPTED_PREFIX}gAAA2")),
                },
                // another API's thinking is never sent here
                AssistantContent::Reasoning {
                    text: "claude thought".into(),
                    signature: Some("anthropic-sig".into()),
                    redacted: None,
                },
                AssistantContent::Text {
                    text: "done".into(),
                },
            ],
        },
        // reasoning alone (an interrupted step) is left out
        ChatMessage::Assistant {
            content: vec![encrypted("half", "gAAA3")],
        },
    ]);
    r.tools = vec![ToolSpec {
        name: "bash".into(),
        description: "Run".into(),
        parameters: json!({"type": "object"}),
    }];
    let body = request_body(&r, OPENAI);
    assert_eq!(
        body["tools"],
        json!([{ "type": "function", "name": "bash", "description": "Run",
                 "parameters": {"type": "object"} }])
    );
    let input = body["input"].as_array().unwrap();
    assert_eq!(
        input[1..],
        [
            json!({ "type": "reasoning", "encrypted_content": "gAAA1",
                    "summary": [{ "type": "summary_text", "text": "I should list" }] }),
            json!({ "type": "message", "role": "assistant", "content": [{ "type": "output_text", "text": "Listing." }] }),
            json!({ "type": "function_call", "call_id": "call_1", "name": "bash",
                    "arguments": "{\"command\":\"ls\"}" }),
            json!({ "type": "function_call_output", "call_id": "call_1", "output": "a\nb" }),
            json!({ "type": "reasoning", "encrypted_content": "gAAA2", "summary": [] }),
            json!({ "type": "message", "role": "assistant", "content": [{ "type": "output_text", "text": "done" }] }),
        ]
    );
    assert!(!body.to_string().contains("claude thought"));
    assert!(!body.to_string().contains("gAAA3"));

    // elsewhere no reasoning goes back at all
    let local = request_body(&r, LOCAL).to_string();
    assert!(!local.contains("gAAA"), "{local}");
    assert!(local.contains("function_call_output"));
}

#[test]
fn a_request_without_tools_carries_calls_as_text() {
    let r = req(vec![
        user("go"),
        ChatMessage::Assistant {
            content: vec![AssistantContent::ToolCall {
                id: "c".into(),
                name: "read".into(),
                input: json!({}),
            }],
        },
        ChatMessage::ToolResult {
            call_id: "c".into(),
            content: "x".into(),
            is_error: false,
        },
    ]);
    let body = request_body(&r, OPENAI).to_string();
    assert!(!body.contains("function_call"), "{body}");
    assert!(body.contains("[called tool read"), "{body}");
}

#[test]
fn images_are_input_images() {
    let body = request_body(
        &req(vec![ChatMessage::User {
            content: vec![UserContent::Image {
                mime: "image/png".into(),
                data_base64: "AAAA".into(),
            }],
        }]),
        LOCAL,
    );
    assert_eq!(
        body["input"][0]["content"],
        json!([{ "type": "input_image", "image_url": "data:image/png;base64,AAAA" }])
    );
}
