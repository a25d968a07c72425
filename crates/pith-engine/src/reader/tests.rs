use super::*;
use crate::test_parts::{Answer, Scripted, model};
use std::sync::Mutex;

/// A listener that keeps what it heard.
struct Heard {
    model: ModelSetup,
    retries: Mutex<Vec<u32>>,
    states: Mutex<Vec<EngineState>>,
}

impl Heard {
    fn new(provider: Arc<Scripted>) -> Heard {
        Heard {
            model: model(provider),
            retries: Mutex::default(),
            states: Mutex::default(),
        }
    }
}

impl Listener for Heard {
    fn model(&self) -> &ModelSetup {
        &self.model
    }

    fn status(&self, state: EngineState, _: Option<String>) {
        self.states.lock().unwrap().push(state);
    }

    fn retrying(&self, attempt: u32, _: Duration, _: &ProviderError) {
        self.retries.lock().unwrap().push(attempt);
    }

    fn breakdown_asked(&self) -> Option<Arc<Shared>> {
        None
    }

    fn answer_breakdown(&mut self) {}
}

fn request() -> ChatRequest {
    ChatRequest {
        model: "test-model".into(),
        system: Vec::new(),
        messages: Vec::new(),
        tools: Vec::new(),
        max_tokens: None,
        temperature: None,
        thinking_budget: None,
        reasoning_effort: None,
    }
}

async fn complete(
    provider: &Arc<Scripted>,
    heard: &mut Heard,
) -> Result<Completion, ProviderError> {
    let cancel = CancellationToken::new();
    complete_text(heard, provider.as_ref(), &request(), "endless", &cancel).await
}

#[tokio::test]
async fn a_retryable_fault_is_retried_and_announced() {
    let provider = Scripted::new(vec![Answer::unavailable(), Answer::text("summary")]);
    let mut heard = Heard::new(provider.clone());
    let (text, usage, finish) = complete(&provider, &mut heard).await.unwrap();
    assert_eq!(text, "summary");
    assert_eq!(usage.map(|u| u.output), Some(10));
    assert_eq!(finish, Some(FinishReason::Stop));
    assert_eq!(provider.requests().len(), 2);
    assert_eq!(*heard.retries.lock().unwrap(), [1]);
    // after the wait, the status says the summary is being read again
    assert_eq!(*heard.states.lock().unwrap(), [EngineState::Compacting]);
}

#[tokio::test]
async fn retries_stop_where_the_policy_does() {
    let provider = Scripted::new(vec![Answer::unavailable(), Answer::unavailable()]);
    let mut heard = Heard::new(provider.clone());
    let err = complete(&provider, &mut heard).await.unwrap_err();
    assert_eq!(err.kind, FaultKind::Server);
    assert_eq!(
        provider.requests().len(),
        2,
        "one try and the one retry allowed"
    );
    assert_eq!(*heard.retries.lock().unwrap(), [1]);
}

#[tokio::test]
async fn a_fault_that_is_not_retryable_comes_back_at_once() {
    let bad = ProviderError::new(FaultKind::BadRequest, "400 no such model");
    let provider = Scripted::new(vec![Answer::Fail(bad), Answer::text("never")]);
    let mut heard = Heard::new(provider.clone());
    let err = complete(&provider, &mut heard).await.unwrap_err();
    assert_eq!(err.kind, FaultKind::BadRequest);
    assert_eq!(err.message, "400 no such model");
    assert_eq!(provider.requests().len(), 1);
    assert!(heard.retries.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_text_that_does_not_end_is_stopped() {
    let chunk = "x".repeat(64 * 1024);
    let events = (0..(MIN_STEP_OUTPUT / chunk.len() as u64 + 2))
        .map(|_| StreamEvent::TextDelta(chunk.clone()))
        .collect();
    let provider = Scripted::new(vec![Answer::Events(events)]);
    let mut heard = Heard::new(provider.clone());
    let err = complete(&provider, &mut heard).await.unwrap_err();
    assert_eq!(err.kind, FaultKind::BadRequest);
    assert_eq!(err.message, "endless");
    assert_eq!(
        provider.requests().len(),
        1,
        "an endless text is not asked again"
    );
}

#[tokio::test]
async fn an_interrupt_while_the_provider_is_silent_stops_reading() {
    let provider = Scripted::new(vec![Answer::Hang(Vec::new())]);
    let mut heard = Heard::new(provider.clone());
    let cancel = CancellationToken::new();
    let stop = cancel.clone();
    let asked = provider.clone();
    tokio::spawn(async move {
        asked.asked.notified().await;
        stop.cancel();
    });
    let err = complete_text(&mut heard, provider.as_ref(), &request(), "x", &cancel)
        .await
        .unwrap_err();
    assert_eq!(err.kind, FaultKind::Cancelled);
}
