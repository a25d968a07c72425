//! A server asking something of pith's user: a form (MCP elicitation) or a model answer (MCP
//! sampling). The connection's handler reads and bounds the request here and hands it to the
//! [`ServerQuestions`] its owner gave (the engine, which asks the front end); without one,
//! neither capability is offered. The server is hostile: its form is refused whole when its
//! shape is not MCP's flat one, it may ask one question at a time and few in a row, and what
//! goes back is only what the user accepted, checked against the form again.

#![allow(deprecated)] // sampling is deprecated by a newer protocol revision, yet servers use it

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

use pith_protocol::elicitation::{Answers, ElicitationAction, Form};
use rmcp::model::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult, Role,
    SamplingMessage, SamplingMessageContentBlock,
};
use tokio_util::sync::CancellationToken;

/// Questions one server may ask within [`BURST_WINDOW`]; more are declined at once.
pub const MAX_QUESTIONS_IN_A_ROW: usize = 5;
const BURST_WINDOW: Duration = Duration::from_secs(60);
/// Most messages in one sampling request, and most characters of their text together.
pub const MAX_SAMPLING_MESSAGES: usize = 100;
pub const MAX_SAMPLING_CHARS: usize = 200_000;
/// Largest image in a sampling message (base64 characters).
const MAX_SAMPLING_IMAGE: usize = 8 * 1024 * 1024;

/// A sampling request as pith reads it: provider-neutral, bounded.
#[derive(Debug, Clone, PartialEq)]
pub struct SampleRequest {
    pub system: Option<String>,
    pub messages: Vec<SampleMessage>,
    pub max_tokens: u32,
    pub temperature: Option<f32>,
    pub stop: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SampleMessage {
    /// The model's own earlier turn (else the user's).
    pub assistant: bool,
    pub text: String,
    /// Images as (media type, base64 data).
    pub images: Vec<(String, String)>,
}

/// The model's answer to a sampling request.
#[derive(Debug, Clone, PartialEq)]
pub struct SampleReply {
    pub text: String,
    pub model: String,
    /// It stopped at the token cap.
    pub cut: bool,
}

/// What answers a server's questions: the engine, through its front end.
#[async_trait::async_trait]
pub trait ServerQuestions: Send + Sync {
    /// Asks the user `message` with `form`; resolves with what they did (a withdrawn or
    /// unanswerable question is `Cancel`). `stop` ends the wait (the server gave up).
    async fn elicit(
        &self,
        server: &str,
        message: String,
        form: Form,
        stop: CancellationToken,
    ) -> (ElicitationAction, Option<Answers>);

    /// A form that was not shown, and why (one line for the user).
    fn refused(&self, server: &str, why: &str);

    /// Whether sampling is offered at all.
    fn samples(&self) -> bool;

    /// Asks permission, then the model; `Err`: why not (the server is told).
    async fn sample(
        &self,
        server: &str,
        request: SampleRequest,
        stop: CancellationToken,
    ) -> Result<SampleReply, String>;
}

/// One server's pace of questions, and how long the user has been asked in all (a call's
/// timeout does not run while its server waits for the user).
#[derive(Default)]
pub struct Pace {
    open: bool,
    recent: Vec<Instant>,
    /// Since when the server has been waiting on the user (a question or a sampling request).
    since: Option<Instant>,
    total: Duration,
    /// The question and sampling requests in progress.
    waiting: usize,
}

impl Pace {
    /// How long questions have been open in all, until `now`.
    fn asked(&self, now: Instant) -> Duration {
        self.total + self.since.map_or(Duration::ZERO, |s| now.duration_since(s))
    }

    fn close(&mut self, now: Instant) {
        self.open = false;
        self.end_wait(now);
    }

    fn start_wait(&mut self, now: Instant) {
        if self.waiting == 0 {
            self.since = Some(now);
        }
        self.waiting += 1;
    }

    fn end_wait(&mut self, now: Instant) {
        self.waiting = self.waiting.saturating_sub(1);
        if self.waiting == 0 {
            self.total = self.asked(now);
            self.since = None;
        }
    }

    /// Takes a slot for a new question, or says why there is none.
    fn take(&mut self, now: Instant) -> Result<(), String> {
        if self.open {
            return Err("it asked a second question while one was open".into());
        }
        self.recent
            .retain(|t| now.duration_since(*t) < BURST_WINDOW);
        if self.recent.len() >= MAX_QUESTIONS_IN_A_ROW {
            return Err(format!(
                "it asked more than {MAX_QUESTIONS_IN_A_ROW} questions within a minute"
            ));
        }
        self.recent.push(now);
        self.open = true;
        self.start_wait(now);
        Ok(())
    }
}

/// Closes the slot when the question ends, however it ends.
struct Slot(Arc<Mutex<Pace>>);

impl Drop for Slot {
    fn drop(&mut self) {
        if let Ok(mut p) = self.0.lock() {
            p.close(Instant::now());
        }
    }
}

/// A sampling request in progress: its server waits on the user's answer and the model, so a
/// call's clock stops meanwhile (as for a question; it takes no question slot).
pub(crate) struct SampleHold(Arc<Mutex<Pace>>);

impl SampleHold {
    pub(crate) fn new(pace: &Arc<Mutex<Pace>>) -> SampleHold {
        if let Ok(mut p) = pace.lock() {
            p.start_wait(Instant::now());
        }
        SampleHold(pace.clone())
    }
}

impl Drop for SampleHold {
    fn drop(&mut self) {
        if let Ok(mut p) = self.0.lock() {
            p.end_wait(Instant::now());
        }
    }
}

/// `fut` within `timeout`, the clock stopped while `pace`'s server waits for the user; `None`
/// when the time ran out.
pub(crate) async fn bounded<F: std::future::Future>(
    fut: F,
    timeout: Duration,
    pace: &Mutex<Pace>,
) -> Option<F::Output> {
    let start = Instant::now();
    let state = |now| {
        pace.lock()
            .map(|p| (p.asked(now), p.waiting > 0))
            .unwrap_or_default()
    };
    let (asked_before, _) = state(start);
    let mut deadline = start + timeout;
    tokio::pin!(fut);
    loop {
        tokio::select! {
            r = &mut fut => return Some(r),
            _ = tokio::time::sleep_until(deadline) => {}
        }
        let now = Instant::now();
        let (asked, open) = state(now);
        let due = start + timeout + asked.saturating_sub(asked_before);
        if open {
            deadline = due.max(now + Duration::from_secs(1));
        } else if due > now {
            deadline = due;
        } else {
            return None;
        }
    }
}

fn decline() -> ElicitResult {
    ElicitResult::new(rmcp::model::ElicitationAction::Decline)
}

/// The question and its form, as pith shows them; `Err`: why it is not shown.
fn form_of(params: ElicitRequestParams) -> Result<(String, Form), String> {
    let ElicitRequestParams::FormElicitationParams {
        message,
        requested_schema,
        ..
    } = params
    else {
        return Err("it asked to open a URL (pith answers forms only)".into());
    };
    // the names in the server's order: a JSON map may not keep it
    let order = requested_schema.property_order.clone().unwrap_or_default();
    let schema = serde_json::to_value(&requested_schema).unwrap_or_default();
    pith_protocol::elicitation::parse_form(&message, &schema, &order).map_err(|why| why.0)
}

/// The question and its form from a request the SDK could not read into its own types (a
/// nested field, an unknown format, a default of the wrong type): pith's reading says why it
/// is not shown — or shows it, when pith can.
pub(crate) fn form_of_raw(params: Option<&serde_json::Value>) -> Result<(String, Form), String> {
    let params = params.ok_or("its question had no parameters")?;
    if params.get("mode").and_then(serde_json::Value::as_str) == Some("url") {
        return Err("it asked to open a URL (pith answers forms only)".into());
    }
    let message = params
        .get("message")
        .and_then(serde_json::Value::as_str)
        .unwrap_or_default();
    let schema = params
        .get("requestedSchema")
        .cloned()
        .unwrap_or(serde_json::Value::Null);
    let order: Vec<String> = schema
        .get("properties")
        .and_then(serde_json::Value::as_object)
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default();
    pith_protocol::elicitation::parse_form(message, &schema, &order)
        .map_err(|why| why.0)
        // what the SDK cannot read, pith does not send an answer to either
        .and_then(|_| Err("its form is not one MCP allows".to_string()))
}

/// The handler's `elicitation/create`.
pub(crate) async fn elicit(
    server: &str,
    questions: Option<&Arc<dyn ServerQuestions>>,
    pace: &Arc<Mutex<Pace>>,
    params: ElicitRequestParams,
    stop: CancellationToken,
) -> ElicitResult {
    elicit_form(server, questions, pace, form_of(params), stop).await
}

/// Asks `parsed` (or says why it is not asked) and answers the server.
pub(crate) async fn elicit_form(
    server: &str,
    questions: Option<&Arc<dyn ServerQuestions>>,
    pace: &Arc<Mutex<Pace>>,
    parsed: Result<(String, Form), String>,
    stop: CancellationToken,
) -> ElicitResult {
    let Some(questions) = questions else {
        return decline();
    };
    let (message, form) = match parsed {
        Ok(parsed) => parsed,
        Err(why) => {
            questions.refused(server, &why);
            return decline();
        }
    };
    let taken = match pace.lock() {
        Ok(mut p) => p.take(Instant::now()),
        Err(_) => Err("its question slot is broken".into()),
    };
    if let Err(why) = taken {
        questions.refused(server, &why);
        return decline();
    }
    let _slot = Slot(pace.clone());
    let (action, content) = questions.elicit(server, message, form.clone(), stop).await;
    use rmcp::model::ElicitationAction as Wire;
    match action {
        ElicitationAction::Accept => match form.check(&content.unwrap_or_default()) {
            Ok(answers) => {
                ElicitResult::new(Wire::Accept).with_content(serde_json::Value::Object(answers))
            }
            // never send what the form does not allow
            Err(_) => ElicitResult::new(Wire::Cancel),
        },
        ElicitationAction::Decline => decline(),
        ElicitationAction::Cancel => ElicitResult::new(Wire::Cancel),
    }
}

/// Reads a sampling request: text and images of the user's and the model's turns; tool use is
/// refused (not offered).
pub fn read_sampling(params: &CreateMessageRequestParams) -> Result<SampleRequest, String> {
    if params.tools.as_ref().is_some_and(|t| !t.is_empty()) {
        return Err("pith does not offer tools to a server's sampling request".into());
    }
    if params.messages.is_empty() || params.messages.len() > MAX_SAMPLING_MESSAGES {
        return Err(format!(
            "a sampling request takes 1 to {MAX_SAMPLING_MESSAGES} messages"
        ));
    }
    let mut total = params.system_prompt.as_deref().map_or(0, str::len);
    let mut messages = Vec::with_capacity(params.messages.len());
    for m in &params.messages {
        let mut text = String::new();
        let mut images = Vec::new();
        for block in m.content.iter() {
            match block {
                SamplingMessageContentBlock::Text(t) => {
                    if !text.is_empty() {
                        text.push('\n');
                    }
                    text.push_str(&t.text);
                }
                SamplingMessageContentBlock::Image(i) => {
                    if i.data.len() > MAX_SAMPLING_IMAGE {
                        return Err("an image of the sampling request is too large".into());
                    }
                    images.push((i.mime_type.clone(), i.data.clone()));
                }
                _ => return Err("pith samples only text and images".into()),
            }
        }
        total += text.len();
        messages.push(SampleMessage {
            assistant: m.role == Role::Assistant,
            text,
            images,
        });
    }
    if total > MAX_SAMPLING_CHARS {
        return Err(format!(
            "the sampling request is longer than {MAX_SAMPLING_CHARS} characters"
        ));
    }
    Ok(SampleRequest {
        system: params.system_prompt.clone(),
        messages,
        max_tokens: params.max_tokens,
        temperature: params.temperature,
        stop: params.stop_sequences.clone().unwrap_or_default(),
    })
}

/// The reply as the protocol sends it.
pub(crate) fn sampling_result(reply: SampleReply) -> CreateMessageResult {
    let stop = if reply.cut {
        CreateMessageResult::STOP_REASON_END_MAX_TOKEN
    } else {
        CreateMessageResult::STOP_REASON_END_TURN
    };
    CreateMessageResult::new(SamplingMessage::assistant_text(reply.text), reply.model)
        .with_stop_reason(stop)
}

#[cfg(test)]
#[path = "questions_tests.rs"]
mod tests;
