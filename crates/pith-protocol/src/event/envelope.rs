//! The envelope an event travels in, engine to front end: the event and the op it answers.
//! On the wire (`pith run --format json`) it is the event's flat object with a `submission`
//! field when it answers one, as every earlier build printed it.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::groups::{Event, TurnEvent};
use super::{ErrorKind, SubmissionId};
use crate::message::MessageId;

/// An event, and the op it answers when it answers one (§2): a front end waiting for its
/// answer matches on `submission`, never on the event's text.
#[derive(Debug, Clone, PartialEq)]
pub struct EventMsg {
    pub submission: Option<SubmissionId>,
    pub event: Event,
}

impl EventMsg {
    /// This event as the answer to submission `id`: the events that answer an op (and errors)
    /// name it, unless they name one already; the others are unchanged.
    pub fn answering(mut self, id: &SubmissionId) -> EventMsg {
        if self.submission.is_none() && self.event.answers_op() {
            self.submission = Some(id.clone());
        }
        self
    }

    /// The op this event answers, for the events that answer one.
    pub fn submission(&self) -> Option<&SubmissionId> {
        self.submission.as_ref()
    }
}

impl<E: Into<Event>> From<E> for EventMsg {
    /// An event that answers no op.
    fn from(event: E) -> EventMsg {
        EventMsg {
            submission: None,
            event: event.into(),
        }
    }
}

/// An answering event: the event's fields, then the submission.
#[derive(Serialize)]
struct Answer<'a> {
    #[serde(flatten)]
    event: &'a Event,
    submission: &'a SubmissionId,
}

/// An answering error, its fields in the order they always were.
#[derive(Serialize)]
#[serde(tag = "type", rename = "error")]
struct AnswerError<'a> {
    kind: &'a ErrorKind,
    message: &'a str,
    submission: &'a SubmissionId,
    #[serde(skip_serializing_if = "Option::is_none")]
    failed_message: Option<&'a MessageId>,
}

impl Serialize for EventMsg {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let Some(submission) = &self.submission else {
            return self.event.serialize(s);
        };
        match &self.event {
            Event::Turn(TurnEvent::Error {
                kind,
                message,
                failed_message,
            }) => AnswerError {
                kind,
                message,
                submission,
                failed_message: failed_message.as_ref(),
            }
            .serialize(s),
            event => Answer { event, submission }.serialize(s),
        }
    }
}

#[derive(Deserialize)]
struct Wire {
    #[serde(default)]
    submission: Option<SubmissionId>,
    #[serde(flatten)]
    event: Event,
}

impl<'de> Deserialize<'de> for EventMsg {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<EventMsg, D::Error> {
        let Wire { submission, event } = Wire::deserialize(d)?;
        Ok(EventMsg { submission, event })
    }
}
