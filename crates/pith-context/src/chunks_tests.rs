use super::*;
use crate::testutil::words;
use serde_json::json;

fn est() -> Estimator {
    Estimator::for_model("gpt-4o")
}

fn user(t: &str) -> ChatMessage {
    ChatMessage::User {
        content: vec![UserContent::Text { text: t.into() }],
    }
}

fn call(id: &str, input: Value) -> ChatMessage {
    ChatMessage::Assistant {
        content: vec![AssistantContent::ToolCall {
            id: id.into(),
            name: "read".into(),
            input,
        }],
    }
}

fn result(id: &str, t: &str) -> ChatMessage {
    ChatMessage::ToolResult {
        call_id: id.into(),
        content: t.into(),
        is_error: false,
    }
}

#[test]
fn cut_text_keeps_head_and_end_on_char_boundaries() {
    assert_eq!(cut_text("short", 10), "short");
    let s = "é".repeat(3_000) + "END";
    let c = cut_text(&s, 2_000);
    assert!(c.starts_with(&"é".repeat(1_400)));
    assert!(c.ends_with("END"));
    assert!(c.contains("[… 1003 characters cut for the summary …]"));
    let kept = c.chars().filter(|&ch| ch == 'é').count() + 3;
    assert_eq!(kept, 2_000);
}

#[test]
fn prepare_strips_media_reasoning_and_cuts_tool_output() {
    let long = "x".repeat(10_000);
    let msgs = vec![
        ChatMessage::User {
            content: vec![
                UserContent::Text { text: "see".into() },
                UserContent::Image {
                    mime: "image/png".into(),
                    data_base64: "AAAA".repeat(1000),
                },
            ],
        },
        ChatMessage::Assistant {
            content: vec![
                AssistantContent::Reasoning {
                    text: "secret thoughts".into(),
                    signature: Some("s".into()),
                    redacted: None,
                },
                AssistantContent::ToolCall {
                    id: "c".into(),
                    name: "write".into(),
                    input: json!({"path": "a.rs", "content": long}),
                },
            ],
        },
        result("c", &long),
        ChatMessage::Assistant {
            content: vec![AssistantContent::Reasoning {
                text: "only thoughts".into(),
                signature: None,
                redacted: None,
            }],
        },
    ];
    let out = prepare(msgs, 2_000);
    assert_eq!(out.len(), 3, "an assistant message left empty is dropped");
    let json = serde_json::to_string(&out).expect("json");
    assert!(json.contains(IMAGE_OMITTED));
    assert!(!json.contains("AAAA"));
    assert!(!json.contains("thoughts"));
    let ChatMessage::ToolResult { content, .. } = &out[2] else {
        panic!("tool result");
    };
    assert!(content.chars().count() < 2_000 + 80);
    assert!(content.contains("characters cut"));
    let ChatMessage::Assistant { content } = &out[1] else {
        panic!("assistant");
    };
    let AssistantContent::ToolCall { input, .. } = &content[0] else {
        panic!("call");
    };
    assert_eq!(input["path"], "a.rs");
    assert!(input["content"].as_str().is_some_and(|s| s.len() < 2_100));
}

#[test]
fn plan_chunks_covers_everything_in_order_and_keeps_pairs() {
    let e = est();
    let mut msgs = Vec::new();
    for i in 0..40 {
        msgs.push(user(&words(100)));
        let id = format!("c{i}");
        msgs.push(call(&id, json!({"path": "x"})));
        msgs.push(result(&id, &words(150)));
    }
    let budget = 1_000;
    let ranges = plan_chunks(&msgs, budget, &e);
    assert!(ranges.len() > 5);
    let mut next = 0;
    for r in &ranges {
        assert_eq!(r.start, next);
        next = r.end;
        assert!(e.chat_messages(&msgs[r.clone()]) <= budget);
        assert!(!matches!(msgs[r.start], ChatMessage::ToolResult { .. }));
    }
    assert_eq!(next, msgs.len());
    assert_eq!(plan_chunks(&msgs, u64::MAX, &e), vec![0..msgs.len()]);
    assert!(plan_chunks(&[], 100, &e).is_empty());
}

#[test]
fn input_larger_than_the_window_is_chunked_to_fit_and_keeps_user_facts() {
    let e = est();
    // One user message of ~60k tokens with facts spread through it, and a huge assistant text.
    let mut big = String::new();
    for i in 0..60 {
        big.push_str(&format!("FACT-{i:03} lives in /srv/app/mod_{i}.rs\n"));
        big.push_str(&words(1_000));
        big.push('\n');
    }
    let msgs = vec![
        user(&big),
        ChatMessage::Assistant {
            content: vec![AssistantContent::Text {
                text: words(30_000),
            }],
        },
        user("short follow-up"),
    ];
    let budget = 8_000;
    let chunks = chunks(msgs, budget, &e);
    assert!(chunks.len() >= 8, "{}", chunks.len());
    for c in &chunks {
        assert!(e.chat_messages(c) <= budget, "{}", e.chat_messages(c));
    }
    let all = serde_json::to_string(&chunks).expect("json");
    for i in 0..60 {
        assert!(all.contains(&format!("FACT-{i:03}")), "FACT-{i:03} lost");
    }
    assert!(all.contains("[Message part 1 of"));
    assert!(all.contains("short follow-up"));
}

#[test]
fn oversized_tool_unit_is_cut_down() {
    let e = est();
    let msgs = vec![
        call("c", json!({"content": words(20_000)})),
        result("c", &words(20_000)),
    ];
    let chunks = chunks(msgs, 2_000, &e);
    assert_eq!(chunks.len(), 1);
    assert_eq!(chunks[0].len(), 2, "call and result stay together");
    assert!(e.chat_messages(&chunks[0]) <= 2_000);
}

#[test]
fn fit_text_reaches_the_target() {
    let e = est();
    let s = words(5_000);
    let f = fit_text(&s, 500, &e);
    assert!(e.text(&f) <= 500);
    assert!(e.text(&f) > 250);
    assert_eq!(fit_text("tiny", 500, &e), "tiny");
}
