use serde_json::json;

use super::*;

fn feed(frames: &[Value]) -> Vec<Item> {
    let mut p = EventParser::new();
    let mut out = VecDeque::new();
    for f in frames {
        let name = f["type"].as_str().unwrap_or("").to_string();
        if p.on_event(&name, &f.to_string(), &mut out) == Flow::Done {
            break;
        }
    }
    out.into()
}

fn ok(items: Vec<Item>) -> Vec<StreamEvent> {
    items.into_iter().map(Result::unwrap).collect()
}

fn completed(usage: Value) -> Value {
    json!({ "type": "response.completed", "response": { "status": "completed", "usage": usage } })
}

#[test]
fn text_reasoning_and_usage() {
    let out = ok(feed(&[
        json!({"type": "response.created", "response": {}}),
        json!({"type": "response.output_item.added", "item": {"type": "reasoning", "id": "rs_1"}}),
        json!({"type": "response.reasoning_summary_text.delta", "item_id": "rs_1", "summary_index": 0, "delta": "Think"}),
        json!({"type": "response.reasoning_summary_text.delta", "item_id": "rs_1", "summary_index": 1, "delta": "More"}),
        json!({"type": "response.output_item.done", "item": {"type": "reasoning", "id": "rs_1",
               "summary": [{"type": "summary_text", "text": "Think"}], "encrypted_content": "gAAAx"}}),
        json!({"type": "response.output_item.added", "item": {"type": "message", "id": "msg_1"}}),
        json!({"type": "response.output_text.delta", "item_id": "msg_1", "delta": "Hel"}),
        json!({"type": "response.output_text.delta", "item_id": "msg_1", "delta": "lo"}),
        json!({"type": "response.output_item.done", "item": {"type": "message", "id": "msg_1",
               "content": [{"type": "output_text", "text": "Hello"}]}}),
        completed(json!({"input_tokens": 100, "output_tokens": 20,
            "input_tokens_details": {"cached_tokens": 60},
            "output_tokens_details": {"reasoning_tokens": 12}})),
        json!({"type": "response.output_text.delta", "item_id": "x", "delta": "after the end"}),
    ]));
    assert_eq!(
        out,
        vec![
            StreamEvent::ReasoningDelta("Think".into()),
            StreamEvent::ReasoningDelta("\n\nMore".into()),
            StreamEvent::ReasoningSignature(format!("{ENCRYPTED_PREFIX}gAAAx")),
            StreamEvent::TextDelta("Hel".into()),
            StreamEvent::TextDelta("lo".into()),
            StreamEvent::Usage(Usage {
                input: 40,
                output: 20,
                reasoning: 12,
                cache_read: 60,
                cache_write: 0,
            }),
            StreamEvent::Finish(FinishReason::Stop),
        ]
    );
}

#[test]
fn function_calls_take_name_and_id_from_their_items() {
    let out = ok(feed(&[
        json!({"type": "response.output_item.added", "item": {"type": "function_call", "id": "fc_1",
               "call_id": "call_a", "name": "bash", "arguments": ""}}),
        json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "delta": "{\"command\":"}),
        json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "delta": "\"ls\"}"}),
        json!({"type": "response.output_item.added", "item": {"type": "function_call", "id": "fc_2",
               "call_id": "call_b", "name": "read"}}),
        json!({"type": "response.function_call_arguments.done", "item_id": "fc_2", "arguments": "{\"path\":\"a\"}"}),
        json!({"type": "response.output_item.done", "item": {"type": "function_call", "id": "fc_1",
               "call_id": "call_a", "name": "bash", "arguments": "{\"command\":\"ls\"}"}}),
        completed(json!({"input_tokens": 5, "output_tokens": 5})),
    ]));
    assert_eq!(
        out,
        vec![
            StreamEvent::ToolCallStart {
                id: "call_a".into(),
                name: "bash".into()
            },
            StreamEvent::ToolCallStart {
                id: "call_b".into(),
                name: "read".into()
            },
            StreamEvent::ToolCall {
                id: "call_a".into(),
                name: "bash".into(),
                arguments: "{\"command\":\"ls\"}".into()
            },
            StreamEvent::ToolCall {
                id: "call_b".into(),
                name: "read".into(),
                arguments: "{\"path\":\"a\"}".into()
            },
            StreamEvent::Usage(Usage {
                input: 5,
                output: 5,
                ..Usage::default()
            }),
            StreamEvent::Finish(FinishReason::ToolCalls),
        ]
    );
}

#[test]
fn incomplete_at_the_cap_is_length() {
    let out = ok(feed(&[
        json!({"type": "response.output_text.delta", "item_id": "m", "delta": "cut"}),
        json!({"type": "response.incomplete", "response": {"status": "incomplete",
               "incomplete_details": {"reason": "max_output_tokens"}}}),
    ]));
    assert_eq!(out.last(), Some(&StreamEvent::Finish(FinishReason::Length)));
}

#[test]
fn failures_are_classified() {
    let err = |frames: &[Value]| feed(frames).pop().unwrap().unwrap_err();
    let e = err(&[
        json!({"type": "response.failed", "response": {"status": "failed",
        "error": {"code": "server_error", "message": "The model failed"}}}),
    ]);
    assert_eq!(e.kind, FaultKind::Server, "{e:?}");
    assert!(e.message.contains("The model failed"), "{}", e.message);
    let e = err(&[json!({"type": "error", "code": "context_length_exceeded",
        "message": "Your input exceeds the context window of this model.", "param": "input"})]);
    assert_eq!(e.kind, FaultKind::ContextOverflow);
    let e = err(&[json!({"type": "error", "code": "rate_limit_exceeded", "message": "Slow down"})]);
    assert_eq!(e.kind, FaultKind::RateLimit);

    let mut p = EventParser::new();
    let mut out = VecDeque::new();
    assert_eq!(p.on_event("", "{not json", &mut out), Flow::Done);
    assert_eq!(
        out.pop_back().unwrap().unwrap_err().kind,
        FaultKind::Malformed
    );
    p.on_end(None, &mut out);
    let e = out.pop_back().unwrap().unwrap_err();
    assert_eq!(e.kind, FaultKind::Network);
    assert!(e.message.starts_with(ENDED_EARLY));
}

#[test]
fn a_whole_response_object_is_read_too() {
    let body = json!({
        "object": "response", "status": "completed",
        "output": [
            {"type": "message", "id": "m", "content": [{"type": "output_text", "text": "Hi"}]},
            {"type": "function_call", "id": "fc", "call_id": "c1", "name": "ls", "arguments": "{}"},
        ],
        "usage": {"input_tokens": 3, "output_tokens": 2},
    });
    let out = ok(response_events(&body.to_string()));
    assert_eq!(out[0], StreamEvent::TextDelta("Hi".into()));
    assert!(out.contains(&StreamEvent::ToolCall {
        id: "c1".into(),
        name: "ls".into(),
        arguments: "{}".into()
    }));
    assert_eq!(
        out.last(),
        Some(&StreamEvent::Finish(FinishReason::ToolCalls))
    );
}
