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
    pub(crate) fn direct(tx: mpsc::UnboundedSender<EventMsg>) -> Emitter {
        Emitter { tx, tag: None }
    }

    /// Events of a sub-agent, to the same front end as this emitter's (flat: a grandchild's
    /// events are tagged with its own session, not wrapped twice).
    pub(crate) fn child(&self, tag: Tag) -> Emitter {
        Emitter {
            tx: self.tx.clone(),
            tag: Some(Arc::new(tag)),
        }
    }

    /// Sends an event; false when the front end is gone. A sub-agent's event is wrapped; the
    /// op it answers stays on the envelope.
    pub(crate) fn send(&self, msg: impl Into<EventMsg>) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;
    use pith_protocol::event::{PermissionRequest, TurnEnd};

    fn child(tx: mpsc::UnboundedSender<EventMsg>) -> Emitter {
        Emitter::direct(tx).child(Tag {
            session_id: "C".into(),
            parent_session_id: "P".into(),
            agent: "explore".into(),
            call_id: "t1".into(),
        })
    }

    #[test]
    fn a_sub_agents_events_are_wrapped_and_keep_their_envelope() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let ends = Event::from(TurnEvent::TurnFinished {
            reason: TurnEnd::Stop,
        });
        let answer = EventMsg::from(Event::info("x")).answering(&"A1".to_string());
        assert!(Emitter::direct(tx.clone()).send(answer.clone()));
        assert_eq!(rx.try_recv().unwrap(), answer);
        assert!(child(tx.clone()).send(answer));
        let got = rx.try_recv().unwrap();
        assert_eq!(got.submission().map(String::as_str), Some("A1"));
        let Event::Subagent(SubagentEvent {
            session_id, event, ..
        }) = got.event
        else {
            panic!("not wrapped: {got:?}");
        };
        assert_eq!((session_id.as_str(), *event), ("C", Event::info("x")));
        assert!(child(tx).send(ends.clone()));
        assert!(matches!(rx.try_recv().unwrap().event, Event::Subagent(s) if *s.event == ends));
    }

    /// The user answers a sub-agent's question in the same prompt as the main agent's: it comes
    /// unwrapped, naming the agent.
    #[test]
    fn a_sub_agents_question_comes_plain_naming_it() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let asked = TurnEvent::PermissionAsked(PermissionRequest {
            id: "q".into(),
            tool: "bash".into(),
            call_id: "c".into(),
            title: "ls".into(),
            patterns: vec![],
            agent: None,
        });
        assert!(child(tx).send(asked));
        match rx.try_recv().unwrap().event {
            Event::Turn(TurnEvent::PermissionAsked(r)) => {
                assert_eq!(r.agent.as_deref(), Some("explore"))
            }
            other => panic!("{other:?}"),
        }
        // the front end is gone
        let (gone, _) = mpsc::unbounded_channel();
        assert!(!child(gone).send(Event::info("x")));
    }
}
