//! The wire rules the mock checks on every request (`support::wire`): each rule catches the
//! body that breaks it, the bodies pith sends pass, and a broken request fails the test that
//! sent it.

use crate::support;

use serde_json::{Value, json};
use support::wire::{anthropic, openai};
use support::{MockServer, openai as oa};

fn call(id: &str) -> Value {
    json!({"id": id, "type": "function", "function": {"name": "bash", "arguments": "{}"}})
}

fn oa_body(messages: Vec<Value>) -> Value {
    json!({"model": "m", "messages": messages})
}

#[test]
fn openai_rules() {
    let system = json!({"role": "system", "content": "sys"});
    let user = json!({"role": "user", "content": "hi"});
    let asks =
        json!({"role": "assistant", "content": null, "tool_calls": [call("c1"), call("c2")]});
    let r1 = json!({"role": "tool", "tool_call_id": "c1", "content": "ok"});
    let r2 = json!({"role": "tool", "tool_call_id": "c2", "content": "ok"});
    let answer = json!({"role": "assistant", "content": "done"});
    let good = oa_body(vec![
        system,
        user.clone(),
        asks.clone(),
        r1.clone(),
        r2.clone(),
        answer,
    ]);
    assert_eq!(openai(&good), Vec::<String>::new());

    let cases = [
        (
            "a call without its result",
            vec![user.clone(), asks.clone(), r1.clone()],
        ),
        ("an orphan result", vec![user.clone(), r1.clone()]),
        (
            "a message between a call and its result",
            vec![
                user.clone(),
                asks.clone(),
                r1.clone(),
                user.clone(),
                r2.clone(),
            ],
        ),
        (
            "a result twice",
            vec![user.clone(), asks, r1, r2.clone(), r2],
        ),
        (
            "an empty assistant message",
            vec![user, json!({"role": "assistant", "content": ""})],
        ),
    ];
    for (what, messages) in cases {
        assert!(!openai(&oa_body(messages)).is_empty(), "not caught: {what}");
    }
}

fn text(t: &str) -> Value {
    json!({"type": "text", "text": t})
}

fn tool_use(id: &str) -> Value {
    json!({"type": "tool_use", "id": id, "name": "bash", "input": {}})
}

fn result(id: &str) -> Value {
    json!({"type": "tool_result", "tool_use_id": id, "content": "ok"})
}

fn msg(role: &str, content: Vec<Value>) -> Value {
    json!({"role": role, "content": content})
}

fn an_body(messages: Vec<Value>, tools: bool) -> Value {
    let tools = if tools {
        json!([{"name": "bash", "description": "", "input_schema": {"type": "object"}}])
    } else {
        json!([])
    };
    json!({"model": "m", "max_tokens": 10, "messages": messages, "tools": tools})
}

#[test]
fn anthropic_rules() {
    let good = an_body(
        vec![
            msg("user", vec![text("hi")]),
            msg(
                "assistant",
                vec![text("let me look"), tool_use("t1"), tool_use("t2")],
            ),
            msg("user", vec![result("t1"), result("t2"), text("also this")]),
            msg("assistant", vec![text("done")]),
        ],
        true,
    );
    assert_eq!(anthropic(&good), Vec::<String>::new());

    for (what, messages, tools) in broken_anthropic_conversations() {
        assert!(
            !anthropic(&an_body(messages, tools)).is_empty(),
            "not caught: {what}"
        );
    }
}

/// Conversations that each break one Anthropic rule: what they break, the messages, whether the
/// request defines tools.
fn broken_anthropic_conversations() -> [(&'static str, Vec<Value>, bool); 8] {
    [
        (
            "the first message is the assistant's",
            vec![msg("assistant", vec![text("hi")])],
            true,
        ),
        (
            "two user messages in a row",
            vec![msg("user", vec![text("a")]), msg("user", vec![text("b")])],
            true,
        ),
        (
            "a call without its result",
            vec![
                msg("user", vec![text("hi")]),
                msg("assistant", vec![tool_use("t1"), tool_use("t2")]),
                msg("user", vec![result("t1")]),
            ],
            true,
        ),
        (
            "a result for a call not just made",
            vec![
                msg("user", vec![text("hi")]),
                msg("assistant", vec![text("no calls")]),
                msg("user", vec![result("t1")]),
            ],
            true,
        ),
        (
            "text before a result",
            vec![
                msg("user", vec![text("hi")]),
                msg("assistant", vec![tool_use("t1")]),
                msg("user", vec![text("first"), result("t1")]),
            ],
            true,
        ),
        (
            "tool blocks without tools",
            vec![
                msg("user", vec![text("hi")]),
                msg("assistant", vec![tool_use("t1")]),
                msg("user", vec![result("t1")]),
            ],
            false,
        ),
        (
            "an empty text block",
            vec![msg("user", vec![text("")])],
            true,
        ),
        (
            "calls left unanswered at the end",
            vec![
                msg("user", vec![text("hi")]),
                msg("assistant", vec![tool_use("t1")]),
            ],
            true,
        ),
    ]
}

/// A request that breaks a rule is answered 400 and recorded.
#[tokio::test]
async fn a_broken_request_is_refused_and_recorded() {
    let server = MockServer::start().await;
    server.allow_invalid();
    server.push(oa::text("never sent", None));
    let resp = support::http_client()
        .post(format!("{}/chat/completions", server.openai_base_url()))
        .json(&oa_body(vec![
            json!({"role": "user", "content": "hi"}),
            json!({"role": "tool", "tool_call_id": "c9", "content": "orphan"}),
        ]))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 400);
    assert!(resp.text().await.unwrap().contains("c9"));
    assert_eq!(server.violations().len(), 1);
    assert_eq!(server.remaining(), 1, "the scripted answer is kept");
}

/// Without `allow_invalid`, the test that sent it fails.
#[tokio::test]
#[should_panic(expected = "broke the wire rules")]
async fn a_broken_request_fails_the_test() {
    let server = MockServer::start().await;
    let _ = support::http_client()
        .post(format!("{}/v1/messages", server.url()))
        .json(&an_body(vec![msg("assistant", vec![text("hi")])], true))
        .send()
        .await
        .unwrap();
    drop(server);
}
