//! The session log: the session a runner owns (its row, its lock), the store it is written to,
//! the model's view of its history, and where its events go. Every write to the store goes
//! through here, and so does the event that announces it: a message or part is saved and emitted
//! in one place.
//!
//! Store writes that fail (a full disk, a read-only data directory): the turn goes on streaming
//! to the front end, the first failure is kept, and the turn ends with it as an error the user
//! sees (a non-zero exit headless). What was saved stays consistent: every write is a
//! transaction, and the next start marks a step that was cut short as interrupted.

use std::sync::{Arc, Mutex};

mod edits;

use pith_protocol::event::{EventMsg, OutputEvent};
use pith_protocol::message::{Message, Part, Session, now_ms};
use pith_store::lock::SessionLock;
use pith_store::{Store, StoreError};

use super::emitter::Emitter;
use crate::error::EngineError;

pub(super) struct SessionLog {
    store: Arc<Store>,
    session: Session,
    /// This engine is the session's only writer while it holds this.
    _lock: SessionLock,
    /// The first store write that failed in this turn.
    failure: StoreFailure,
    /// The model's view of the history in model order: from the latest completed compaction
    /// (its message, the summary, the verbatim tail) to the newest message (ARCHITECTURE.md §4.1).
    view: Vec<Message>,
    events: Emitter,
}

/// The first store write that failed in the current turn.
#[derive(Default)]
struct StoreFailure(Mutex<Option<StoreError>>);

impl StoreFailure {
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<StoreError>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl SessionLog {
    /// The log of `session`, whose lock this engine holds; its view is empty until loaded.
    pub(crate) fn new(
        store: Arc<Store>,
        session: Session,
        lock: SessionLock,
        events: Emitter,
    ) -> Self {
        SessionLog {
            store,
            session,
            _lock: lock,
            failure: StoreFailure::default(),
            view: Vec::new(),
            events,
        }
    }

    pub(crate) fn store(&self) -> &Arc<Store> {
        &self.store
    }

    pub(crate) fn session(&self) -> &Session {
        &self.session
    }

    /// The session cost `cost` more.
    pub(crate) fn add_cost(&mut self, cost: f64) {
        self.session.cost += cost;
    }

    /// Titles the session, unless it has a title already.
    pub(crate) fn title_if_untitled(&mut self, title: impl FnOnce() -> String) {
        if self.session.title.is_empty() {
            self.session.title = title();
        }
    }

    /// The session goes on with the model `name`.
    pub(crate) fn set_model(&mut self, name: String) {
        self.session.model = name;
    }

    /// The session goes on in `dir`.
    pub(crate) fn set_directory(&mut self, dir: String) {
        self.session.directory = dir;
    }

    /// The view is loaded from the message `id` on.
    pub(crate) fn set_compaction_point(&mut self, id: String) {
        self.session.compaction_point = Some(id);
    }

    pub(crate) fn session_id(&self) -> &str {
        &self.session.id
    }

    /// From now on the runner's events go to `events`.
    pub(crate) fn send_to(&mut self, events: Emitter) {
        self.events = events;
    }

    /// Where the runner's events go.
    pub(crate) fn events(&self) -> &Emitter {
        &self.events
    }

    /// Sends an event; false when the front end is gone.
    pub(crate) fn emit(&self, event: impl Into<EventMsg>) -> bool {
        self.events.send(event)
    }

    pub(crate) fn view(&self) -> &[Message] {
        &self.view
    }

    /// The view is `messages` (in model order), as loaded from the store.
    pub(crate) fn set_view(&mut self, messages: Vec<Message>) {
        self.view = messages;
    }

    /// The view restarts from `head` (a compaction and its summary), followed by the messages
    /// at `tail` it keeps.
    pub(crate) fn restart_view(&mut self, head: Vec<Message>, tail: std::ops::Range<usize>) {
        let kept: Vec<Message> = self.view.drain(tail).collect();
        self.view = head;
        self.view.extend(kept);
    }

    /// Changes the part `pi` of the message at `idx` with `change`, saves it and announces it;
    /// the part as it is now.
    pub(crate) fn update_part(
        &mut self,
        idx: usize,
        pi: usize,
        change: impl FnOnce(&mut Part),
    ) -> Part {
        let part = &mut self.view[idx].parts[pi];
        change(part);
        let part = part.clone();
        self.write_part(&part);
        part
    }

    /// Takes the messages from `first` on out of the view and the store (`/undo` keeps them for
    /// `/redo`). A delete that fails is logged, not recorded: the turn is not the user's.
    pub(crate) fn cut_from(&mut self, first: usize) -> Vec<Message> {
        let removed: Vec<Message> = self.view.drain(first..).collect();
        for m in &removed {
            if let Err(e) = self.store.delete_message(&m.id) {
                tracing::error!("store: cannot delete message {}: {e:#}", m.id);
            }
        }
        removed
    }

    /// Puts back messages [`SessionLog::cut_from`] took (`/redo`), saved, not announced.
    pub(crate) fn put_back(&mut self, messages: &[Message]) {
        for m in messages {
            self.save_message(m);
            self.view.push(m.clone());
        }
    }

    /// Goes on with another session, whose lock is `lock`; its view is to be loaded.
    pub(crate) fn switch(&mut self, session: Session, lock: SessionLock) {
        self._lock = lock;
        self.session = session;
    }

    /// Persists a message header and every part.
    pub(crate) fn save_message(&self, m: &Message) {
        if let Err(e) = self.store.save_message(m) {
            self.failed(&format!("save message {}", m.id), e);
        }
    }

    pub(crate) fn save_part(&self, part: &Part) {
        if let Err(e) = self.store.upsert_part(&self.session.id, part) {
            self.failed(&format!("save part {}", part.id), e);
        }
    }

    /// Saves a part and announces it.
    pub(crate) fn write_part(&self, part: &Part) {
        self.save_part(part);
        self.emit(OutputEvent::PartUpdated { part: part.clone() });
    }

    /// Saves a message and announces it: the message, then every part.
    pub(crate) fn write_message(&self, m: &Message) {
        self.save_message(m);
        self.emit_message(m);
    }

    /// Announces a message, then every part.
    pub(crate) fn emit_message(&self, m: &Message) {
        self.emit(OutputEvent::Message { message: m.clone() });
        for p in &m.parts {
            self.emit(OutputEvent::PartUpdated { part: p.clone() });
        }
    }

    /// Saves a message and announces its header only (its parts were announced as they came).
    pub(crate) fn write_header(&self, m: &Message) {
        self.save_message(m);
        self.emit(OutputEvent::Message { message: m.clone() });
    }

    /// Appends a message to the view, persists it and announces it; its index in the view.
    pub(crate) fn push(&mut self, m: Message) -> usize {
        self.write_message(&m);
        self.view.push(m);
        self.view.len() - 1
    }

    /// Removes a message from the view and the store, and announces it.
    pub(crate) fn remove(&mut self, idx: usize) -> Message {
        let m = self.view.remove(idx);
        self.delete_message(&m.id);
        self.emit(OutputEvent::MessageRemoved {
            message_id: m.id.clone(),
        });
        m
    }

    /// Deletes a message from the store (not from the view).
    pub(crate) fn delete_message(&self, id: &str) {
        if let Err(e) = self.store.delete_message(id) {
            self.failed(&format!("delete message {id}"), e);
        }
    }

    /// Deletes a part from the store (not from the view).
    pub(crate) fn delete_part(&self, id: &str) {
        if let Err(e) = self.store.delete_part(id) {
            self.failed(&format!("delete part {id}"), e);
        }
    }

    /// Writes the session's row: updated now, with `tokens` as its context figure.
    pub(crate) fn touch(&mut self, tokens: u64) {
        self.session.time_updated = now_ms();
        self.session.tokens = tokens;
        if let Err(e) = self.store.update_session(&self.session) {
            self.failed("update the session", e);
        }
    }

    /// Records a failed write (`what`: "save part X"). Only the first of a turn is logged: a
    /// full disk fails every write after it, and the log is on the same disk.
    pub(crate) fn failed(&self, what: &str, e: StoreError) {
        let mut slot = self.failure.lock();
        if slot.is_none() {
            tracing::error!("store: cannot {what}: {e:#}");
            *slot = Some(e);
        }
    }

    /// A write failed in this turn.
    pub(crate) fn failing(&self) -> bool {
        self.failure.lock().is_some()
    }

    /// The error to report for a failed write, once; clears it for the next turn.
    pub(crate) fn take_failure(&self) -> Option<EngineError> {
        let source = self.failure.lock().take()?;
        let db = self
            .store
            .path()
            .map(|p| format!(" to {}", p.display()))
            .unwrap_or_default();
        Some(EngineError::Unsaved {
            db,
            session_id: self.session.id.clone(),
            source: Box::new(source),
        })
    }
}

/// A session title from the first user message.
pub(crate) fn title_from(text: &str) -> String {
    let line = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    let mut title: String = line.chars().take(60).collect();
    if line.chars().count() > 60 {
        title.push('…');
    }
    title
}

#[cfg(test)]
mod tests {
    use super::*;
    use pith_protocol::event::Event;
    use pith_protocol::message::{PartKind, Role};
    use tokio::sync::mpsc;

    /// A session's log over a store in memory, and the events it sends.
    fn log() -> (
        SessionLog,
        mpsc::UnboundedReceiver<EventMsg>,
        tempfile::TempDir,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(Store::open_in_memory().unwrap());
        let session = store.create_session("/ws", "mock/m").unwrap();
        let lock = SessionLock::acquire(dir.path(), &session.id).unwrap();
        let (tx, rx) = mpsc::unbounded_channel();
        let log = SessionLog::new(store, session, lock, Emitter::direct(tx));
        (log, rx, dir)
    }

    fn user(log: &SessionLog, text: &str) -> Message {
        let mut m = Message::new(log.session_id(), Role::User);
        m.push(PartKind::Text {
            text: text.into(),
            synthetic: false,
        });
        m
    }

    fn stored(log: &SessionLog) -> Vec<String> {
        let all = log.store().load_all(log.session_id()).unwrap();
        all.iter().map(|m| m.text()).collect()
    }

    fn drain(rx: &mut mpsc::UnboundedReceiver<EventMsg>) -> Vec<Event> {
        std::iter::from_fn(|| rx.try_recv().ok().map(|m| m.event)).collect()
    }

    #[test]
    fn a_pushed_message_is_stored_then_announced_with_its_parts() {
        let (mut log, mut rx, _dir) = log();
        let m = user(&log, "first");
        let idx = log.push(m.clone());
        assert_eq!(idx, 0);
        assert_eq!(stored(&log), ["first"]);
        let events = drain(&mut rx);
        assert!(
            matches!(&events[0], Event::Output(OutputEvent::Message { message }) if message.id == m.id)
        );
        assert!(
            matches!(&events[1], Event::Output(OutputEvent::PartUpdated { part }) if part.id == m.parts[0].id)
        );
        assert_eq!(events.len(), 2);
    }

    #[test]
    fn a_removed_message_leaves_the_view_and_the_store() {
        let (mut log, mut rx, _dir) = log();
        log.push(user(&log, "a"));
        log.push(user(&log, "b"));
        drain(&mut rx);
        let gone = log.remove(0);
        assert_eq!(gone.text(), "a");
        assert_eq!(log.view().len(), 1);
        assert_eq!(stored(&log), ["b"]);
        let events = drain(&mut rx);
        assert!(
            matches!(&events[..], [Event::Output(OutputEvent::MessageRemoved { message_id })] if *message_id == gone.id)
        );
    }

    #[test]
    fn undo_cuts_the_messages_and_redo_puts_them_back_unannounced() {
        let (mut log, mut rx, _dir) = log();
        for t in ["a", "b", "c"] {
            log.push(user(&log, t));
        }
        drain(&mut rx);
        let cut = log.cut_from(1);
        assert_eq!(cut.len(), 2);
        assert_eq!(stored(&log), ["a"]);
        log.put_back(&cut);
        assert_eq!(stored(&log), ["a", "b", "c"]);
        assert_eq!(log.view().len(), 3);
        assert!(drain(&mut rx).is_empty());
    }

    #[test]
    fn a_streamed_part_is_stored_as_it_streamed_and_a_restart_drops_it() {
        let (mut log, mut rx, _dir) = log();
        let mut a = Message::new(log.session_id(), Role::Assistant);
        a.push(PartKind::StepStart);
        let idx = log.push(a);
        let text = PartKind::Text {
            text: String::new(),
            synthetic: false,
        };
        let pi = log.open_part(idx, text);
        log.stream_text(idx, pi, "hel".into());
        log.stream_text(idx, pi, "lo".into());
        log.save_part(&log.view()[idx].parts[pi].clone());
        assert_eq!(stored(&log), ["hello"]);
        drain(&mut rx);
        // a retry starts the step over: the streamed part goes from the view and the store
        log.restart_step(idx);
        assert_eq!(log.view()[idx].parts.len(), 1);
        assert_eq!(stored(&log), [""]);
        let events = drain(&mut rx);
        assert!(
            matches!(&events[0], Event::Output(OutputEvent::PartsRemoved { part_ids, .. }) if part_ids.len() == 1)
        );
    }

    #[test]
    fn a_compaction_restarts_the_view_from_its_messages_and_the_tail() {
        let (mut log, _rx, _dir) = log();
        for t in ["a", "b", "c"] {
            log.push(user(&log, t));
        }
        let head = vec![user(&log, "summary")];
        log.restart_view(head, 2..3);
        let view: Vec<String> = log.view().iter().map(|m| m.text()).collect();
        assert_eq!(view, ["summary", "c"]);
    }

    #[test]
    fn only_the_first_failed_write_of_a_turn_is_kept_and_reported_once() {
        let (log, _rx, _dir) = log();
        assert!(!log.failing());
        log.failed("save part p1", StoreError::NoSession("disk full".into()));
        log.failed("save part p2", StoreError::NoSession("still full".into()));
        assert!(log.failing());
        let e = log.take_failure().unwrap();
        assert_eq!(e.kind(), pith_protocol::event::ErrorKind::Store);
        let text = e.to_string();
        assert!(text.contains(": no session with id disk full."), "{text}");
        let cause = std::error::Error::source(&e).map(|c| c.to_string());
        assert_eq!(cause.as_deref(), Some("no session with id disk full"));
        assert!(!text.contains("still full"), "{text}");
        assert!(log.take_failure().is_none(), "reported once");
        assert!(!log.failing());
    }

    #[test]
    fn titles_are_cut() {
        assert_eq!(title_from("\n  fix the bug  \nmore"), "fix the bug");
        assert_eq!(title_from(&"x".repeat(80)).chars().count(), 61);
    }

    fn tool_call(log: &SessionLog, tool: &str, output: &str) -> Message {
        let mut a = Message::new(log.session_id(), Role::Assistant);
        a.push(PartKind::Tool {
            call_id: "c1".into(),
            tool: tool.into(),
            input: serde_json::json!({}),
            state: pith_protocol::message::ToolState::Completed {
                output: output.into(),
                title: String::new(),
                metadata: serde_json::Value::Null,
                time: pith_protocol::message::ToolTime {
                    start: 1,
                    end: 2,
                    compacted: None,
                },
            },
        });
        a
    }

    /// The stored `compacted` time of every tool output of the session.
    fn pruned(log: &SessionLog) -> Vec<bool> {
        let all = log.store().load_all(log.session_id()).unwrap();
        all.iter()
            .flat_map(|m| &m.parts)
            .filter_map(|p| match &p.kind {
                PartKind::Tool {
                    state: pith_protocol::message::ToolState::Completed { time, .. },
                    ..
                } => Some(time.compacted.is_some()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_prune_clears_old_tool_outputs_in_the_view_and_the_store_once() {
        use pith_context::prune::PruneRules;
        let (mut log, mut rx, _dir) = log();
        // an old turn with a large output, then turns the prune never touches
        log.push(user(&log, "read it"));
        log.push(tool_call(&log, "read", &"line of output\n".repeat(400)));
        for t in ["next", "and next"] {
            log.push(user(&log, t));
            log.push(tool_call(&log, "read", "short"));
        }
        let mut est = pith_context::tokens::Estimator::lazy("test-model");
        let keep_reads = PruneRules {
            protect: 0,
            minimum: 0,
            protected_tools: vec!["read".into()],
        };
        assert_eq!(log.prune(&mut est, &keep_reads), None);
        drain(&mut rx);
        let rules = PruneRules {
            protected_tools: Vec::new(),
            ..keep_reads
        };
        let (parts, tokens) = log.prune(&mut est, &rules).unwrap();
        assert_eq!(parts, 1, "only the output before the protected turns");
        assert!(tokens > 400, "{tokens}");
        assert_eq!(pruned(&log), [true, false, false]);
        assert!(matches!(
            &drain(&mut rx)[..],
            [Event::Output(OutputEvent::PartUpdated { .. })]
        ));
        // what is cleared stays cleared: nothing more to prune
        assert_eq!(log.prune(&mut est, &rules), None);
    }
}
