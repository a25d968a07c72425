//! For unit tests: a session's parts ([`SessionParts`], what a `Turn` borrows), built without a
//! runner over a store in memory and a temporary workspace, and a provider that answers from a
//! script.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;

use crate::EngineOptions;
use crate::agent::{AgentRole, ChildSpec};
use crate::emitter::Emitter;
use crate::error::EngineError;
use crate::model::ModelSetup;
use crate::session_log::SessionLog;
use crate::session_parts::SessionParts;
use crate::shared::Shared;
use crate::turn_context::ChildAgent;
use pith_config::{Config, ModelConfig};
use pith_context::overflow::Limits;
use pith_protocol::event::{Event, EventMsg};
use pith_protocol::llm::{ChatRequest, FinishReason, StreamEvent};
use pith_protocol::message::Usage;
use pith_provider::retry::RetryPolicy;
use pith_provider::{EventStream, FaultKind, Provider, ProviderError};
use pith_store::Store;
use pith_store::lock::SessionLock;

/// What the scripted provider does with one request.
pub(crate) enum Answer {
    /// Streams these events, then ends.
    Events(Vec<StreamEvent>),
    /// Fails before the stream opens.
    Fail(ProviderError),
    /// Streams these events, then stays silent until the turn is interrupted.
    Hang(Vec<StreamEvent>),
}

impl Answer {
    /// A text answer that stops.
    pub(crate) fn text(text: &str) -> Answer {
        Answer::Events(vec![
            StreamEvent::TextDelta(text.into()),
            StreamEvent::Usage(Usage {
                input: 100,
                output: 10,
                ..Usage::default()
            }),
            StreamEvent::Finish(FinishReason::Stop),
        ])
    }

    /// One tool call, asking for its result.
    pub(crate) fn call(id: &str, name: &str, arguments: &str) -> Answer {
        Answer::Events(vec![
            StreamEvent::ToolCall {
                id: id.into(),
                name: name.into(),
                arguments: arguments.into(),
            },
            StreamEvent::Finish(FinishReason::ToolCalls),
        ])
    }

    /// A fault the retry policy retries.
    pub(crate) fn unavailable() -> Answer {
        Answer::Fail(ProviderError::new(FaultKind::Server, "503 overloaded"))
    }
}

/// A provider that answers the requests it gets from a script, in order, and keeps them.
#[derive(Default)]
pub(crate) struct Scripted {
    answers: Mutex<VecDeque<Answer>>,
    pub requests: Mutex<Vec<ChatRequest>>,
    /// Wakes a test waiting for a request to arrive.
    pub asked: tokio::sync::Notify,
}

impl Scripted {
    pub(crate) fn new(answers: Vec<Answer>) -> Arc<Scripted> {
        Arc::new(Scripted {
            answers: Mutex::new(answers.into()),
            ..Scripted::default()
        })
    }

    /// Adds an answer to the script.
    pub(crate) fn then(&self, answer: Answer) {
        self.answers.lock().unwrap().push_back(answer);
    }

    pub(crate) fn requests(&self) -> Vec<ChatRequest> {
        self.requests.lock().unwrap().clone()
    }
}

#[async_trait::async_trait]
impl Provider for Scripted {
    async fn stream(&self, request: &ChatRequest) -> Result<EventStream, ProviderError> {
        self.requests.lock().unwrap().push(request.clone());
        self.asked.notify_one();
        let answer = self.answers.lock().unwrap().pop_front();
        let ok = |e: Vec<StreamEvent>| e.into_iter().map(Ok).collect::<Vec<_>>();
        match answer {
            Some(Answer::Events(events)) => Ok(Box::pin(futures_util::stream::iter(ok(events)))),
            Some(Answer::Hang(events)) => {
                let head = futures_util::stream::iter(ok(events));
                Ok(Box::pin(futures_util::StreamExt::chain(
                    head,
                    futures_util::stream::pending(),
                )))
            }
            Some(Answer::Fail(e)) => Err(e),
            None => Err(ProviderError::new(
                FaultKind::BadRequest,
                "the script has no answer left",
            )),
        }
    }
}

/// The model of the tests: a 32k window on the scripted provider, retried once at once.
pub(crate) fn model(provider: Arc<Scripted>) -> ModelSetup {
    let info = ModelConfig {
        context: 32_000,
        output: 4_000,
        ..ModelConfig::default()
    };
    ModelSetup {
        name: "mock/test-model".into(),
        provider,
        model_id: "test-model".into(),
        limits: Limits::from(&info),
        info,
        retry: RetryPolicy {
            max_retries: 1,
            base: std::time::Duration::from_millis(1),
            max_delay: std::time::Duration::from_millis(1),
            max_wait: std::time::Duration::from_millis(1),
        },
        timeouts: Default::default(),
        window_guessed: false,
        local: false,
    }
}

/// A session's parts, owned by a test (they deref to [`SessionParts`], so `parts.log` and
/// `parts.turn()` read as on the runner), with what the test watches: the events sent and the
/// store.
pub(crate) struct Parts {
    pub session: SessionParts,
    pub events: mpsc::UnboundedReceiver<EventMsg>,
    pub store: Arc<Store>,
    /// The workspace and the data directory (removed with the parts).
    pub _dir: tempfile::TempDir,
}

impl std::ops::Deref for Parts {
    type Target = SessionParts;

    fn deref(&self) -> &SessionParts {
        &self.session
    }
}

impl std::ops::DerefMut for Parts {
    fn deref_mut(&mut self) -> &mut SessionParts {
        &mut self.session
    }
}

impl Parts {
    /// A new session over a store in memory, on the scripted `provider`, in a temporary
    /// workspace where every `ask` is allowed (headless, `--yes`). It starts no sub-agent: set
    /// `spawn` for a test that does.
    pub(crate) fn new(provider: Arc<Scripted>) -> Parts {
        let dir = tempfile::tempdir().unwrap();
        let workspace = dir.path().join("ws");
        let data_dir = dir.path().join("data");
        std::fs::create_dir_all(&workspace).unwrap();
        std::fs::create_dir_all(&data_dir).unwrap();
        let workspace = workspace.canonicalize().unwrap();
        let mut config = Config {
            model: Some("mock/test-model".into()),
            ..Config::default()
        };
        config.webfetch.enabled = false;
        let store = Arc::new(Store::open_in_memory().unwrap());
        let session = store
            .create_session(&workspace.to_string_lossy(), "mock/test-model")
            .unwrap();
        let lock = SessionLock::acquire(&data_dir, &session.id).unwrap();
        let (tx, events) = mpsc::unbounded_channel();
        let log = SessionLog::new(store.clone(), session, lock, Emitter::direct(tx));
        let opts = EngineOptions {
            config,
            workspace,
            data_dir,
            headless: true,
            auto_yes: true,
            allow_unsandboxed: false,
            editor: None,
            remove_empty_sessions: false,
            user_dirs: Default::default(),
            skills: Default::default(),
        };
        let shared = Arc::new(Shared::default());
        let role = AgentRole::main();
        let session =
            SessionParts::new(opts, log, shared, role, model(provider), None, no_children);
        let mut parts = Parts {
            session,
            events,
            store,
            _dir: dir,
        };
        parts.turn().fit_prompt();
        parts
    }

    /// The events sent so far.
    pub(crate) fn events(&mut self) -> Vec<Event> {
        let mut out = Vec::new();
        while let Ok(e) = self.events.try_recv() {
            out.push(e.event);
        }
        out
    }
}

/// The tests' parts start no sub-agent: a `task` call fails as if its runner could not be built.
fn no_children(spec: ChildSpec) -> Result<Box<dyn ChildAgent>, EngineError> {
    Err(EngineError::NoSession(spec.session.id))
}
