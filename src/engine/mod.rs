//! The session loop: ops in, events out. Knows nothing of terminals.

use tokio::sync::mpsc;

use crate::event::{Event, Op};

/// A running engine as a front end sees it.
pub struct EngineHandle {
    pub ops: mpsc::UnboundedSender<Op>,
    pub events: mpsc::UnboundedReceiver<Event>,
}
