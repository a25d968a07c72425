//! The transcript's compaction dividers: running while a compaction runs, then showing its
//! figures; a turn's end settles any still shown running.

use pith_protocol::message::PartKind;

use super::{Cell, CompactionState, CompactionStats, Transcript};

impl Transcript {
    fn is_compaction(c: &Cell) -> bool {
        matches!(c.part().map(|p| &p.kind), Some(PartKind::Compaction(_)))
    }

    pub fn compaction_started(&mut self) {
        self.compacting = true;
        if let Some(i) = self.last_where(|c| {
            Self::is_compaction(c) && c.live && c.compaction == CompactionState::Unknown
        }) {
            self.cells[i].compaction = CompactionState::Running;
            self.touch_at(i);
        }
    }

    /// Puts the figures on the running divider. Returns false when there is none to put them on.
    pub fn compaction_finished(&mut self, stats: CompactionStats) -> bool {
        self.compacting = false;
        let target = self.last_where(|c| {
            Self::is_compaction(c)
                && (c.compaction == CompactionState::Running
                    || (c.live && c.compaction == CompactionState::Unknown))
        });
        match target {
            Some(i) => {
                self.cells[i].compaction = CompactionState::Done(stats);
                self.touch_at(i);
                true
            }
            None => false,
        }
    }

    /// A turn ended: nothing is running any more.
    pub fn settle(&mut self) {
        self.compacting = false;
        for i in 0..self.cells.len() {
            if self.cells[i].compaction == CompactionState::Running {
                self.cells[i].compaction = CompactionState::Unknown;
                self.touch_at(i);
            }
        }
    }
}
