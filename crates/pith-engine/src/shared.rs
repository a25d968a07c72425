//! State shared between the op pump and the runner.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use tokio::sync::{Notify, mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::error::EngineError;
use pith_protocol::event::{
    Event, EventMsg, Op, PermissionReply, SessionEvent, Submission, SubmissionId,
};
use pith_store::{PAGE_MESSAGES, Store};

/// A user message waiting for the runner.
#[derive(Debug, Clone, PartialEq)]
pub struct Prompt {
    /// The front end's id (`Op::UserTurn::id`), stored on the message as `submission_id`.
    pub id: String,
    pub text: String,
    /// The custom command it was expanded from (`/name args`), stored on the message.
    pub label: Option<String>,
    /// The spans of `text` the user pasted (`Op::UserTurn::pasted`).
    pub pasted: Vec<pith_protocol::message::Span>,
}

/// Runs the `notification` hooks with a message.
pub(crate) type NotifyUser = std::sync::Arc<dyn Fn(String) + Send + Sync>;

/// What a permission waiter receives.
pub(crate) type PermissionAnswer = (PermissionReply, Option<String>);

#[derive(Default)]
pub struct Shared {
    /// User messages not yet taken by the runner (typed mid-turn, or waiting for the runner).
    pub queue: Mutex<VecDeque<Prompt>>,
    /// Cancelled by `Op::Interrupt`; replaced by the runner at the start of each turn.
    pub cancel: Mutex<CancellationToken>,
    /// Questions waiting for the user's reply, by request id: shared with the sub-agents, whose
    /// questions the same user answers through this engine's pump.
    pub permissions: std::sync::Arc<Mutex<HashMap<String, oneshot::Sender<PermissionAnswer>>>>,
    /// A sub-agent's turns are cancelled with its parent's (interrupting the parent interrupts
    /// the children).
    pub parent_cancel: Option<CancellationToken>,
    /// Wakes the runner when something was queued.
    pub notify: Notify,
    /// MCP resources being read for the next user message, in the order they were asked for.
    pub attachments: super::mcp_ops::Attachments,
    /// `/context` was asked for while a turn runs: answered at the next step or tool boundary,
    /// or at once while an answer streams (`breakdown_asked` wakes the stream loop).
    /// The submissions waiting for it, each answered with its own event.
    pub breakdown_wanted: Mutex<Vec<SubmissionId>>,
    pub breakdown_asked: Notify,
    /// `--yes` and permission-mode changes not yet applied, in the order they came: the runner
    /// applies them before it takes a queued prompt, so a prompt sent after a change is judged
    /// by it (the runner reads the queue before its control channel).
    pub settings: Mutex<Vec<Submission>>,
    /// The permission mode the user chose last, shared with every sub-agent (one handle for
    /// the whole tree): a child applies it before each of its calls, so a mode change reaches
    /// children already running (the parent waits inside the `task` call meanwhile).
    pub mode: std::sync::Arc<Mutex<Option<pith_protocol::event::PermissionMode>>>,
    /// The subfolders' instruction files loaded so far, in order (ARCHITECTURE.md §4.3): in
    /// the system prompt from then on, whatever is compacted; a new or resumed session starts
    /// without them.
    pub nested_instructions: Mutex<Vec<crate::instructions::Instruction>>,
    /// What the instruction files were (paths, sizes, times) when the system prompt was built:
    /// one edited since (`/memory`, `/init`) rebuilds it before the next turn.
    pub instructions_stamp: Mutex<u64>,
    /// The instruction files in the prompt under another name than `AGENTS.md`/`CLAUDE.md`
    /// (`@path` imports, the configured ones): protected paths like those, so the model cannot
    /// rewrite what later sessions are told without the user.
    pub imported_instructions: Mutex<Vec<std::path::PathBuf>>,
    /// The background jobs (ARCHITECTURE.md §5.3): one table for the engine, shared with its
    /// sub-agents, answered by the pump while a turn runs; it ends them when the session does.
    pub jobs: std::sync::Arc<pith_tools::jobs::Jobs>,
    /// The MCP servers' forms waiting for the user (ARCHITECTURE.md §12).
    pub forms: std::sync::Arc<crate::server_questions::PendingForms>,
    /// The model of the latest step: what an MCP server's sampling request is answered with.
    pub(crate) sampling_model: Mutex<Option<crate::sampling::SamplingModel>>,
    /// The `notification` hooks as of the latest step: an MCP server's question runs them too.
    pub(crate) notify_user: Mutex<Option<NotifyUser>>,
    /// What MCP sampling took since the runner last added it to the session: tokens and cost.
    pub sampling_spent: Mutex<(pith_protocol::llm::Usage, f64)>,
}

impl Shared {
    /// Runs the `notification` hooks with `message`, if there are any.
    pub(crate) fn notify_user(&self, message: String) {
        let notify = self.notify_user.lock().ok().and_then(|n| n.clone());
        if let Some(notify) = notify {
            notify(message);
        }
    }

    /// Interrupts whatever the current turn runs.
    pub fn cancel_turn(&self) {
        if let Ok(c) = self.cancel.lock() {
            c.cancel();
        }
    }

    /// Queues a prompt typed while a turn may run, and wakes what waits for one.
    fn enqueue(&self, prompt: Prompt) {
        if let Ok(mut q) = self.queue.lock() {
            q.push_back(prompt);
        }
        self.notify.notify_one();
    }

    /// The setting changes not yet applied, oldest first.
    pub fn take_settings(&self) -> Vec<Submission> {
        self.settings
            .lock()
            .map(|mut s| s.drain(..).collect())
            .unwrap_or_default()
    }

    pub fn take_queue(&self) -> Vec<Prompt> {
        self.queue
            .lock()
            .map(|mut q| q.drain(..).collect())
            .unwrap_or_default()
    }

    /// Something is waiting to be delivered.
    pub fn has_queued(&self) -> bool {
        self.queue.lock().is_ok_and(|q| !q.is_empty())
    }

    pub fn take_attachments(
        &self,
    ) -> Vec<tokio::task::JoinHandle<Option<super::mcp_ops::Attachment>>> {
        self.attachments
            .lock()
            .map(|mut a| std::mem::take(&mut *a))
            .unwrap_or_default()
    }

    /// The token of the turn under way (or of the last one).
    pub fn current_cancel(&self) -> CancellationToken {
        self.cancel
            .lock()
            .map(|c| c.clone())
            .unwrap_or_else(|_| CancellationToken::new())
    }

    pub fn fresh_cancel(&self) -> CancellationToken {
        let token = match &self.parent_cancel {
            Some(parent) => parent.child_token(),
            None => CancellationToken::new(),
        };
        if let Ok(mut c) = self.cancel.lock() {
            *c = token.clone();
        }
        token
    }

    /// Registers question `id` as pending until the returned wait is dropped: a reply that
    /// comes after (the turn was interrupted, the call ended) finds nothing to answer.
    pub fn wait_permission(&self, id: &str) -> PermissionWait {
        let (tx, rx) = oneshot::channel();
        if let Ok(mut map) = self.permissions.lock() {
            map.insert(id.to_string(), tx);
        }
        PermissionWait {
            id: id.to_string(),
            pending: self.permissions.clone(),
            rx,
        }
    }

    /// Hands the user's reply to question `id`; false when no such question is pending (it
    /// ended, or was answered already): the reply is dropped.
    pub fn reply(&self, id: &str, answer: PermissionAnswer) -> bool {
        let waiter = self.permissions.lock().ok().and_then(|mut m| m.remove(id));
        waiter.is_some_and(|tx| tx.send(answer).is_ok())
    }
}

/// A question waiting for its reply; dropping it withdraws the question.
pub struct PermissionWait {
    id: String,
    pending: std::sync::Arc<Mutex<HashMap<String, oneshot::Sender<PermissionAnswer>>>>,
    rx: oneshot::Receiver<PermissionAnswer>,
}

impl PermissionWait {
    /// The reply; `None` if the question was withdrawn without one.
    pub async fn answer(&mut self) -> Option<PermissionAnswer> {
        (&mut self.rx).await.ok()
    }
}

impl Drop for PermissionWait {
    fn drop(&mut self) {
        if let Ok(mut map) = self.pending.lock() {
            map.remove(&self.id);
        }
    }
}

/// Control messages the pump forwards to the runner.
#[derive(Debug)]
pub enum Control {
    /// Something was queued (a user message).
    Wake,
    /// An MCP server changed state or what it offers.
    McpChanged,
    Op(Submission),
}

/// The events that answer `Op::LoadHistory`: the page of history before `before`. A page that
/// cannot be read is reported, and answered as empty with nothing more, so the front end stops
/// asking.
pub(crate) fn history_page(store: &Store, session_id: &str, before: &str) -> Vec<Event> {
    let (page, error) = match store.load_page(session_id, Some(before), PAGE_MESSAGES) {
        Ok(page) => (page, None),
        Err(e) => {
            tracing::warn!(error = %format!("{e:#}"), "cannot load older history");
            let e = EngineError::OlderMessages(e);
            (Default::default(), Some(e.event()))
        }
    };
    let history = Event::Session(SessionEvent::History {
        session_id: session_id.to_string(),
        messages: page.messages,
        more: page.more,
    });
    error.into_iter().chain([history]).collect()
}

/// What the pump needs to answer requests itself (history pages, MCP resources), even while a
/// turn runs.
pub(crate) struct HistorySource {
    pub store: std::sync::Arc<Store>,
    pub events: mpsc::UnboundedSender<EventMsg>,
    pub mcp: Option<std::sync::Arc<pith_mcp::McpManager>>,
}

/// Reads ops and routes them: interrupts, permission replies and history pages are answered at
/// once, user messages are queued, everything else goes to the runner in order.
pub(crate) async fn pump(
    mut ops: mpsc::UnboundedReceiver<Submission>,
    shared: std::sync::Arc<Shared>,
    ctl: mpsc::UnboundedSender<Control>,
    history: HistorySource,
) {
    while let Some(submission) = ops.recv().await {
        if !route(submission, &shared, &ctl, &history) {
            break;
        }
    }
    // The front end went away: stop whatever runs and let the runner finish.
    shared.cancel_turn();
    let _ = ctl.send(Control::Op(Submission::new(Op::Shutdown)));
}

/// Routes one op (see [`pump`]); false once it was the shutdown.
fn route(
    submission: Submission,
    shared: &Shared,
    ctl: &mpsc::UnboundedSender<Control>,
    history: &HistorySource,
) -> bool {
    let Submission { id, op } = submission;
    // the runner gone, the op goes nowhere: the front end learns it from the closed channel
    let to_runner = |op| {
        let _ = ctl.send(Control::Op(Submission { id: id.clone(), op }));
    };
    let Some(op) = answered_by_store(&id, op, history) else {
        return true;
    };
    match op {
        Op::Interrupt => shared.cancel_turn(),
        Op::PermissionReply { id, reply, message } => {
            if !shared.reply(&id, (reply, message)) {
                tracing::debug!(%id, "a reply to a question no longer pending: dropped");
            }
        }
        Op::ListMcpResources
        | Op::AttachMcpResource { .. }
        | Op::RestartMcpServer { .. }
        | Op::McpLogin { .. } => {
            super::mcp_ops::answer_op(
                id,
                op,
                &shared.attachments,
                &history.events,
                history.mcp.as_ref(),
            );
        }
        Op::ContextBreakdown => {
            shared.want_breakdown(id.clone());
            to_runner(Op::ContextBreakdown);
        }
        op @ (Op::SetAutoYes { .. } | Op::SetPermissionMode { .. }) => {
            queue_setting(Submission { id, op }, shared, ctl);
        }
        Op::UserTurn { id, text, pasted } => {
            shared.enqueue(Prompt {
                id,
                text,
                label: None,
                pasted,
            });
            let _ = ctl.send(Control::Wake);
        }
        Op::ListJobs => {
            let jobs = shared.jobs.list();
            let _ = history
                .events
                .send(EventMsg::from(Event::Session(SessionEvent::Jobs { jobs })).answering(&id));
        }
        Op::KillJob { id: job } => kill_job(id, job, shared.jobs.clone(), history.events.clone()),
        op @ Op::ElicitationReply { .. } => shared.forms.reply(op),
        Op::Shutdown => {
            shared.cancel_turn();
            to_runner(Op::Shutdown);
            return false;
        }
        other => {
            to_runner(other);
        }
    }
    true
}

/// The ops the store answers, with no need to wait for a running turn (history pages, a
/// recalled item, the session lists); any other op is handed back.
fn answered_by_store(id: &SubmissionId, op: Op, history: &HistorySource) -> Option<Op> {
    let id = id.clone();
    match op {
        Op::LoadHistory { session_id, before } => {
            history.answer(id, move |store| history_page(store, &session_id, &before));
        }
        // the store holds what left the view
        Op::Recall {
            session_id,
            id: item,
        } => history.answer(id, move |store| {
            vec![crate::recall::answer(store, &session_id, &item)]
        }),
        Op::ListSessions => history.answer(id, move |store| {
            vec![match store.list_sessions() {
                Ok(sessions) => Event::Session(SessionEvent::Sessions { sessions }),
                Err(e) => EngineError::ListSessions(e).event(),
            }]
        }),
        Op::ListSubagents { session_id } => history.answer(id, move |store| {
            vec![match store.children(&session_id) {
                Ok(sessions) => Event::Session(SessionEvent::Sessions { sessions }),
                Err(e) => EngineError::ListSubagents(e).event(),
            }]
        }),
        other => return Some(other),
    }
    None
}

/// Queues a change of `--yes` or of the permission mode for the runner (a mode is known at
/// once: a question asked meanwhile uses it) and wakes it.
fn queue_setting(submission: Submission, shared: &Shared, ctl: &mpsc::UnboundedSender<Control>) {
    if let Op::SetPermissionMode { mode } = &submission.op
        && let Ok(mut m) = shared.mode.lock()
    {
        *m = Some(*mode);
    }
    if let Ok(mut s) = shared.settings.lock() {
        s.push(submission);
    }
    let _ = ctl.send(Control::Wake);
}

impl Shared {
    /// Notes that `id` asked for the `/context` breakdown and tells the runner's waiter.
    fn want_breakdown(&self, id: SubmissionId) {
        if let Ok(mut wanted) = self.breakdown_wanted.lock() {
            wanted.push(id);
        }
        self.breakdown_asked.notify_one();
    }
}

/// `/ps`'s stop: ends job `job` and answers with the list (or a line when there is no such
/// job), without waiting for a running turn.
fn kill_job(
    id: SubmissionId,
    job: u32,
    jobs: std::sync::Arc<pith_tools::jobs::Jobs>,
    events: mpsc::UnboundedSender<EventMsg>,
) {
    tokio::spawn(async move {
        let event = match jobs.kill(job).await {
            Ok(_) => Event::Session(SessionEvent::Jobs { jobs: jobs.list() }),
            Err(why) => Event::info(why),
        };
        let _ = events.send(EventMsg::from(event).answering(&id));
    });
}

impl HistorySource {
    /// Sends the events `answer` reads from the store, as answers to `id`, off the async
    /// workers (SQLite reads block).
    fn answer(&self, id: SubmissionId, answer: impl FnOnce(&Store) -> Vec<Event> + Send + 'static) {
        let store = self.store.clone();
        let events = self.events.clone();
        tokio::task::spawn_blocking(move || {
            for event in answer(&store) {
                let _ = events.send(EventMsg::from(event).answering(&id));
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_reply_to_a_question_no_longer_pending_does_nothing() {
        let shared = Shared::default();
        // the call was interrupted: its wait ended without an answer
        drop(shared.wait_permission("P1"));
        assert!(
            shared.permissions.lock().is_ok_and(|m| m.is_empty()),
            "the ended question is still pending"
        );
        assert!(!shared.reply("P1", (PermissionReply::Once, None)));
        // the next question is not answered by the late reply either
        let mut next = shared.wait_permission("P2");
        assert!(!shared.reply("P1", (PermissionReply::Always, None)));
        assert!(shared.reply("P2", (PermissionReply::Deny, Some("no".into()))));
        assert_eq!(
            next.answer().await,
            Some((PermissionReply::Deny, Some("no".into())))
        );
        assert!(
            !shared.reply("P2", (PermissionReply::Once, None)),
            "answered twice"
        );
    }
}
