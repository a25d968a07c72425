//! Where a runner's events go: straight to the front end, or, for a sub-agent, wrapped in
//! `Event::Subagent` with its session id (ARCHITECTURE.md §13).

use std::sync::Arc;

use tokio::sync::mpsc;

use pith_protocol::event::{Event, EventMsg, SubagentEvent, TurnEvent};

/// Who a sub-agent's events come from.
#[derive(Debug)]
pub(super) struct Tag {
    pub session_id: String,
    pub parent_session_id: String,
    pub agent: String,
    /// The parent's `task` call.
    pub call_id: String,
}

#[derive(Clone)]
pub(super) struct Emitter {
    tx: mpsc::UnboundedSender<EventMsg>,
    tag: Option<Arc<Tag>>,
}

impl Emitter {
    pub fn direct(tx: mpsc::UnboundedSender<EventMsg>) -> Emitter {
        Emitter { tx, tag: None }
    }

    /// Events of a sub-agent, to the same front end as this emitter's (flat: a grandchild's
    /// events are tagged with its own session, not wrapped twice).
    pub fn child(&self, tag: Tag) -> Emitter {
        Emitter {
            tx: self.tx.clone(),
            tag: Some(Arc::new(tag)),
        }
    }

    /// Sends an event; false when the front end is gone. A sub-agent's event is wrapped; the
    /// op it answers stays on the envelope.
    pub fn send(&self, msg: impl Into<EventMsg>) -> bool {
        let EventMsg { submission, event } = msg.into();
        let Some(tag) = &self.tag else {
            return self.tx.send(EventMsg { submission, event }).is_ok();
        };
        let event = match event {
            // the same user answers, through the same pump: a plain question naming the agent
            Event::Turn(TurnEvent::PermissionAsked(mut request)) => {
                request.agent = Some(tag.agent.clone());
                Event::Turn(TurnEvent::PermissionAsked(request))
            }
            event => Event::Subagent(SubagentEvent {
                session_id: tag.session_id.clone(),
                parent_session_id: tag.parent_session_id.clone(),
                agent: tag.agent.clone(),
                call_id: tag.call_id.clone(),
                event: Box::new(event),
            }),
        };
        self.tx.send(EventMsg { submission, event }).is_ok()
    }
}
