//! The transcript's cells: one per message part, notice or permission answer, with what its
//! rendering depends on (its message's header, a compaction's figures, a tool's live output).

use pith_protocol::event::{PermissionReply, PermissionRequest};
use pith_protocol::message::{MessageError, Part, PartKind, Role};

use super::layout::Cached;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoticeLevel {
    Info,
    Warn,
    Error,
}

#[derive(Debug, Clone, PartialEq)]
// Nearly every cell is a part: boxing it would add an allocation to most cells to save bytes on
// the few notices.
#[allow(clippy::large_enum_variant)]
pub enum CellBody {
    Part(Part),
    /// The error an assistant message ended with.
    MessageError(MessageError),
    Notice(NoticeLevel, String),
    Permission {
        req: PermissionRequest,
        reply: PermissionReply,
        note: Option<String>,
    },
}

/// What a cell's rendering depends on besides its body.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MsgMeta {
    pub role: Option<Role>,
    pub summary: bool,
    /// A user message typed while the agent worked.
    pub mid_turn: bool,
    /// The custom command (`/name args`) the message was expanded from.
    pub command: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct CompactionStats {
    pub before: u64,
    pub after: u64,
    pub model_calls: u32,
    /// What the summary requests cost.
    pub cost: pith_protocol::event::CompactionCost,
    /// What the compaction kept for the model and what left the view, in counts.
    pub kept: pith_protocol::carried::Kept,
    pub left: pith_protocol::carried::LeftCounts,
}

/// Where a compaction divider stands.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum CompactionState {
    /// From stored history: done, figures unknown.
    #[default]
    Unknown,
    Running,
    Done(CompactionStats),
}

pub struct Cell {
    pub key: String,
    pub message_id: Option<String>,
    pub body: CellBody,
    pub expanded: bool,
    /// Tool duration reported by `ToolFinished` (used when the part lacks times).
    pub duration_ms: Option<u64>,
    /// Compaction divider: running or done with figures.
    pub compaction: CompactionState,
    /// Created from a live event (not loaded history).
    pub(super) live: bool,
    /// Tool cell: how the user answered its permission question.
    pub decision: Option<PermissionReply>,
    /// Tool cell: the output streamed so far while it runs (the tail, bounded).
    pub live_output: Option<String>,
    /// Tool cell: seconds it has been running, as last drawn (the header shows them).
    pub elapsed_secs: u64,
    pub(super) rev: u64,
    pub(super) cache: Option<Cached>,
}

impl Cell {
    pub(super) fn new(key: String, message_id: Option<String>, body: CellBody) -> Self {
        Cell {
            key,
            message_id,
            body,
            expanded: false,
            duration_ms: None,
            compaction: CompactionState::Unknown,
            live: false,
            decision: None,
            live_output: None,
            elapsed_secs: 0,
            rev: 0,
            cache: None,
        }
    }

    pub fn part(&self) -> Option<&Part> {
        match &self.body {
            CellBody::Part(p) => Some(p),
            _ => None,
        }
    }

    /// Can the user fold/unfold this cell?
    pub fn foldable(&self, meta: &MsgMeta) -> bool {
        match &self.body {
            CellBody::Part(p) => match &p.kind {
                PartKind::Reasoning { .. } | PartKind::Tool { .. } | PartKind::Compaction(_) => {
                    true
                }
                PartKind::Text { .. } => meta.summary,
                _ => false,
            },
            _ => false,
        }
    }
}
