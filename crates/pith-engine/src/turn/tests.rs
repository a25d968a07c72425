use super::*;
use crate::test_parts::{Answer, Parts, Scripted};
use pith_protocol::event::TurnEvent;
use pith_protocol::llm::StreamEvent;

fn prompt(text: &str) -> Prompt {
    Prompt {
        id: "s1".into(),
        text: text.into(),
        label: None,
        pasted: Vec::new(),
    }
}

fn finished(events: &[Event]) -> Vec<TurnEnd> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Turn(TurnEvent::TurnFinished { reason }) => Some(reason.clone()),
            _ => None,
        })
        .collect()
}

/// A turn built from parts alone: the model reads a file, then answers from what it read.
#[tokio::test]
async fn a_step_that_calls_a_tool_then_answers() {
    let provider = Scripted::new(Vec::new());
    let mut parts = Parts::new(provider.clone());
    let file = parts.opts.workspace.join("note.txt");
    std::fs::write(&file, "hello from the note\n").unwrap();
    let args = serde_json::json!({ "file_path": file }).to_string();
    provider.then(Answer::call("c1", "read", &args));
    provider.then(Answer::text("the note says hello"));

    let end = parts.turn().user_turn(vec![prompt("read the note")]).await;

    assert_eq!(end, TurnEnd::Stop);
    let requests = provider.requests();
    assert_eq!(
        requests.len(),
        2,
        "one step for the call, one for the answer"
    );
    let first = format!("{:?}", requests[0].messages);
    let second = format!("{:?}", requests[1].messages);
    assert!(!first.contains("hello from the note"), "{first}");
    assert!(second.contains("hello from the note"), "{second}");
    let view = parts.log.view();
    assert_eq!(view.len(), 3, "the prompt, the call, the answer");
    let output = view[1].parts.iter().find_map(|p| match &p.kind {
        PartKind::Tool {
            state: ToolState::Completed { output, .. },
            ..
        } => Some(output.clone()),
        _ => None,
    });
    assert!(output.is_some_and(|o| o.contains("hello from the note")));
    assert_eq!(view[2].text(), "the note says hello");
    // what the view holds is what the store holds
    let stored = parts.store.load_all(parts.log.session_id()).unwrap();
    assert_eq!(stored.len(), 3);
    assert_eq!(stored[2].text(), "the note says hello");
    assert_eq!(finished(&parts.events()), [TurnEnd::Stop]);
}

/// An interrupt mid-stream ends the turn; what streamed before it is kept and stored.
#[tokio::test]
async fn an_interrupt_keeps_what_streamed() {
    let provider = Scripted::new(vec![Answer::Hang(vec![StreamEvent::TextDelta(
        "half an ans".into(),
    )])]);
    let mut parts = Parts::new(provider.clone());
    let shared = parts.shared.clone();
    let asked = provider.clone();
    let interrupt = tokio::spawn(async move {
        asked.asked.notified().await;
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        shared.cancel_turn();
    });

    let end = parts.turn().user_turn(vec![prompt("go")]).await;
    interrupt.await.unwrap();

    assert_eq!(end, TurnEnd::Interrupted);
    assert_eq!(provider.requests().len(), 1, "an interrupt is not retried");
    let view = parts.log.view();
    assert_eq!(view.len(), 2);
    assert_eq!(view[1].text(), "half an ans");
    let stored = parts.store.load_all(parts.log.session_id()).unwrap();
    assert_eq!(stored.len(), 2);
    assert_eq!(stored[1].text(), "half an ans");
    assert_eq!(finished(&parts.events()), [TurnEnd::Interrupted]);
}

/// A fault the policy retries is retried (once here); the second answer is the step's.
#[tokio::test]
async fn a_retried_fault_starts_the_step_over() {
    let provider = Scripted::new(vec![Answer::unavailable(), Answer::text("after all")]);
    let mut parts = Parts::new(provider.clone());

    let end = parts.turn().user_turn(vec![prompt("hi")]).await;

    assert_eq!(end, TurnEnd::Stop);
    assert_eq!(provider.requests().len(), 2);
    assert_eq!(parts.log.view()[1].text(), "after all");
    let events = parts.events();
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::Turn(TurnEvent::Retrying { attempt: 1, .. })))
    );
}
