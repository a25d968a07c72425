//! The engine's answer to an MCP server's questions (ARCHITECTURE.md §12): a form (elicitation)
//! goes to the front end as `ElicitationAsked` and waits for `Op::ElicitationReply`, bounded by
//! the turn's interrupt, the server giving up and [`ANSWER_WAIT`]; headless no one is asked: it
//! is declined with a note, or with `--yes` accepted with its defaults when every required field
//! has one. Sampling is `sampling.rs`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::shared::Shared;
use pith_protocol::elicitation::{Answers, ElicitationAction, ElicitationRequest, Form};
use pith_protocol::event::{Event, EventMsg, TurnEvent};

/// How long a question waits for the user before it is withdrawn (answered `cancel`).
pub(crate) const ANSWER_WAIT: Duration = Duration::from_secs(15 * 60);

pub(crate) type ElicitAnswer = (ElicitationAction, Option<Answers>);

/// The forms waiting for the user's answer, by id.
#[derive(Default)]
pub struct PendingForms(Mutex<HashMap<String, oneshot::Sender<ElicitAnswer>>>);

impl PendingForms {
    /// Hands the user's answer to form `id`; false when it is no longer pending.
    pub(crate) fn answer(&self, id: &str, answer: ElicitAnswer) -> bool {
        let waiter = self.0.lock().ok().and_then(|mut m| m.remove(id));
        waiter.is_some_and(|tx| tx.send(answer).is_ok())
    }

    /// `Op::ElicitationReply`, from the pump; dropped when its form is no longer pending.
    pub(crate) fn reply(&self, op: pith_protocol::event::Op) {
        if let pith_protocol::event::Op::ElicitationReply {
            id,
            action,
            content,
        } = op
            && !self.answer(&id, (action, content))
        {
            tracing::debug!(%id, "an answer to a form no longer pending: dropped");
        }
    }

    fn wait(self: &Arc<Self>, id: &str) -> FormWait {
        let (tx, rx) = oneshot::channel();
        if let Ok(mut m) = self.0.lock() {
            m.insert(id.to_string(), tx);
        }
        FormWait {
            id: id.to_string(),
            pending: self.clone(),
            rx: Some(rx),
        }
    }
}

/// A form waiting; dropping it withdraws it (a late answer finds nothing).
struct FormWait {
    id: String,
    pending: Arc<PendingForms>,
    rx: Option<oneshot::Receiver<ElicitAnswer>>,
}

impl Drop for FormWait {
    fn drop(&mut self) {
        if let Ok(mut m) = self.pending.0.lock() {
            m.remove(&self.id);
        }
    }
}

/// What answers the servers of one engine.
pub(crate) struct EngineQuestions {
    pub(crate) events: mpsc::UnboundedSender<EventMsg>,
    pub(crate) shared: Arc<Shared>,
    pub(crate) headless: bool,
    pub(crate) auto_yes: bool,
    pub(crate) sampling: crate::sampling::Sampling,
}

/// What answers the servers of an engine started with `opts`.
pub(crate) fn for_engine(
    opts: &crate::EngineOptions,
    events: &mpsc::UnboundedSender<EventMsg>,
    shared: &Arc<Shared>,
) -> Arc<EngineQuestions> {
    Arc::new(EngineQuestions {
        events: events.clone(),
        shared: shared.clone(),
        headless: opts.headless,
        auto_yes: opts.auto_yes,
        sampling: crate::sampling::Sampling {
            rule: opts
                .config
                .permission
                .get(crate::sampling::SAMPLING_RULE)
                .cloned(),
            ..Default::default()
        },
    })
}

/// `server asked: "message"` for a note, the message on one line and bounded.
fn asked(server: &str, message: &str) -> String {
    format!(
        "MCP server {server} asked: \"{}\"",
        pith_protocol::text::one_line_max(message, 200)
    )
}

impl EngineQuestions {
    pub(crate) fn note(&self, text: String) {
        let _ = self.events.send(EventMsg::from(Event::info(text)));
    }

    /// Headless: no one to ask.
    fn decide_alone(&self, server: &str, message: &str, form: &Form) -> ElicitAnswer {
        match form.defaults().filter(|_| self.auto_yes) {
            Some(defaults) => {
                let values: Vec<String> =
                    defaults.iter().map(|(k, v)| format!("{k}={v}")).collect();
                let values = if values.is_empty() {
                    "no fields".to_string()
                } else {
                    values.join(", ")
                };
                self.note(format!(
                    "{}; accepted with its defaults (--yes): {}",
                    asked(server, message),
                    pith_protocol::text::one_line_max(&values, 300)
                ));
                (ElicitationAction::Accept, Some(defaults))
            }
            None => {
                let why = if !self.auto_yes {
                    "this run cannot ask (with --yes, a form whose required fields all have defaults is accepted with them)".to_string()
                } else {
                    format!(
                        "this run cannot ask, and {} has no default (or one its own form refuses)",
                        form.missing_defaults().join(", ")
                    )
                };
                self.note(format!("{}; declined: {why}", asked(server, message)));
                (ElicitationAction::Decline, None)
            }
        }
    }
}

#[async_trait::async_trait]
impl pith_mcp::questions::ServerQuestions for EngineQuestions {
    async fn elicit(
        &self,
        server: &str,
        message: String,
        form: Form,
        stop: CancellationToken,
    ) -> ElicitAnswer {
        if self.headless {
            return self.decide_alone(server, &message, &form);
        }
        let id = pith_protocol::message::new_id();
        let mut wait = self.shared.forms.wait(&id);
        let request = ElicitationRequest {
            id,
            server: server.to_string(),
            message,
            form,
        };
        if self
            .events
            .send(EventMsg::from(Event::Turn(TurnEvent::ElicitationAsked(
                request,
            ))))
            .is_err()
        {
            return (ElicitationAction::Cancel, None);
        }
        self.shared
            .notify_user(format!("MCP server {server} asks you a question"));
        let turn = self.shared.current_cancel();
        let Some(rx) = wait.rx.take() else {
            return (ElicitationAction::Cancel, None);
        };
        let answer = tokio::select! {
            a = rx => a.ok(),
            _ = turn.cancelled() => None,
            _ = stop.cancelled() => None,
            _ = tokio::time::sleep(ANSWER_WAIT) => None,
        };
        drop(wait);
        answer.unwrap_or((ElicitationAction::Cancel, None))
    }

    fn refused(&self, server: &str, why: &str) {
        tracing::warn!(%server, "an MCP question was not shown: {why}");
        self.note(format!(
            "MCP server {server} asked a question pith does not show ({}); declined",
            pith_protocol::text::one_line_max(why, 200)
        ));
    }

    fn samples(&self) -> bool {
        true
    }

    async fn sample(
        &self,
        server: &str,
        request: pith_mcp::questions::SampleRequest,
        stop: CancellationToken,
    ) -> Result<pith_mcp::questions::SampleReply, String> {
        self.sampling.sample(self, server, request, stop).await
    }
}
