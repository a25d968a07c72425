//! What an engine says when it starts and how it ends: a front end's first two events are the
//! session it opened (with the newest page of its history) and its context figure, before
//! anything building the engine said; at shutdown it names the session it was on, and removes
//! the workspace's empty sessions when asked to.

use std::sync::Arc;

use crate::support;

use pith_protocol::event::{ContextEvent, Event, Op, SessionEvent, TurnEvent};
use pith_protocol::message::{Message, PartKind, Role};
use pith_store::Store;
use support::MockServer;
use support::engine::{MODEL, mock_config, options};

struct Start {
    _server: MockServer,
    workspace: tempfile::TempDir,
    data: tempfile::TempDir,
    store: Arc<Store>,
}

async fn start() -> Start {
    let workspace = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let store = Arc::new(Store::open(data.path()).unwrap());
    Start {
        _server: MockServer::start().await,
        workspace,
        data,
        store,
    }
}

impl Start {
    fn directory(&self) -> String {
        self.workspace
            .path()
            .canonicalize()
            .unwrap()
            .to_string_lossy()
            .into_owned()
    }

    fn spawn(
        &self,
        session: pith_protocol::message::Session,
        remove_empty: bool,
    ) -> pith_engine::EngineHandle {
        let mut opts = options(
            mock_config(&self._server),
            &self.workspace.path().canonicalize().unwrap(),
            self.data.path(),
            false,
        );
        opts.remove_empty_sessions = remove_empty;
        pith_engine::spawn(opts, self.store.clone(), session).unwrap()
    }
}

fn text(session: &str, role: Role, text: &str) -> Message {
    let mut m = Message::new(session, role);
    m.push(PartKind::Text {
        text: text.into(),
        synthetic: false,
    });
    m
}

#[tokio::test]
async fn the_session_and_its_figure_come_first_then_what_the_repair_said() {
    let s = start().await;
    let session = s.store.create_session(&s.directory(), MODEL).unwrap();
    s.store
        .save_message(&text(&session.id, Role::User, "hello"))
        .unwrap();
    // pith was killed in the middle of the answer: the step never finished
    s.store
        .save_message(&text(&session.id, Role::Assistant, "half an ans"))
        .unwrap();
    let mut h = s.spawn(session.clone(), false);

    let Some(Event::Session(SessionEvent::SessionLoaded {
        session: loaded,
        messages,
        more_history,
        ..
    })) = h.events.recv().await.map(|m| m.event)
    else {
        panic!("the first event is not the session");
    };
    assert_eq!(loaded.id, session.id);
    assert_eq!(messages.len(), 2);
    assert!(!more_history);
    // the repaired step, as the store now holds it
    assert!(messages[1].error.is_some(), "{:?}", messages[1]);
    let Some(Event::Context(ContextEvent::ContextUsage(usage))) =
        h.events.recv().await.map(|m| m.event)
    else {
        panic!("the second event is not the context figure");
    };
    assert_eq!(usage.window, 128_000);
    assert!(usage.used > 0);
    match h.events.recv().await.map(|m| m.event) {
        Some(Event::Turn(TurnEvent::Info { message, .. })) => {
            assert!(message.contains("interrupted"), "{message}")
        }
        other => panic!("expected the repair's notice, got {other:?}"),
    }
    h.ops.send(Op::Shutdown.into()).unwrap();
    let ended = h.done.await.unwrap().expect("the engine ended");
    assert_eq!(ended.session_id, session.id);
    assert!(ended.has_messages);
}

#[tokio::test]
async fn an_engine_asked_to_removes_the_empty_sessions_it_leaves() {
    let s = start().await;
    let used = s.store.create_session(&s.directory(), MODEL).unwrap();
    s.store
        .save_message(&text(&used.id, Role::User, "kept"))
        .unwrap();
    let left_before = s.store.create_session(&s.directory(), MODEL).unwrap();
    let session = s.store.create_session(&s.directory(), MODEL).unwrap();
    let h = s.spawn(session.clone(), true);
    h.ops.send(Op::Shutdown.into()).unwrap();
    let ended = h.done.await.unwrap().expect("the engine ended");
    assert_eq!(ended.session_id, session.id);
    assert!(!ended.has_messages);
    let found = |id: &str| s.store.find_session(id).unwrap().is_some();
    assert!(found(&used.id));
    assert!(
        !found(&left_before.id),
        "an empty session left before is still stored"
    );
    assert!(
        !found(&session.id),
        "the engine's own empty session is still stored"
    );
}

#[tokio::test]
async fn an_editor_engine_keeps_its_empty_session() {
    let s = start().await;
    let session = s.store.create_session(&s.directory(), MODEL).unwrap();
    let h = s.spawn(session.clone(), false);
    h.ops.send(Op::Shutdown.into()).unwrap();
    h.done.await.unwrap();
    assert!(s.store.find_session(&session.id).unwrap().is_some());
}
