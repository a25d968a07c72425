//! The status bar's notice that a compaction is coming while it can still be steered
//! (ARCHITECTURE.md §6.6): "summary being written" while the background summary is under way,
//! "compaction soon" from `compaction.notice` of the usable window on when none is written
//! ahead. Recomputed where it can change (a step's end, a compaction, `/pin`, a session
//! switched to) and sent only when it changed.

use crate::turn_context::Turn;
use pith_protocol::event::{CompactionNotice, ContextEvent};

/// The default notice point, as a share of the usable window.
pub(crate) const DEFAULT_NOTICE: f64 = 0.8;

/// The notice for a context at `used` of `usable` tokens: a summary ahead being written
/// (`ahead` is `Some(false)`) or written (`Some(true)`), else soon from `point` of the usable
/// window on (`None`: never).
pub(crate) fn notice(
    ahead: Option<bool>,
    used: u64,
    usable: u64,
    point: Option<f64>,
) -> Option<CompactionNotice> {
    match ahead {
        Some(false) => return Some(CompactionNotice::Writing),
        Some(true) => return Some(CompactionNotice::Ready),
        None => {}
    }
    let point = point.filter(|p| *p > 0.0 && *p < 1.0)?;
    (usable > 0 && used < usable && used as f64 >= point * usable as f64)
        .then_some(CompactionNotice::Soon)
}

impl Turn<'_> {
    /// Sends the notice when it changed.
    pub(crate) fn update_compaction_notice(&mut self) {
        let c = &self.opts.config.compaction;
        let point = if c.auto && self.model.limits.context > 0 && self.role.depth == 0 {
            Some(c.notice.unwrap_or(DEFAULT_NOTICE))
        } else {
            None
        };
        let ahead = self.compactor.background_written();
        let now = notice(ahead, self.meter.used(), self.usable(), point);
        if self.compactor.set_notice(now) {
            self.emit(ContextEvent::CompactionAhead { notice: now });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writing_wins_and_soon_is_from_the_point_to_the_threshold() {
        let soon = Some(CompactionNotice::Soon);
        assert_eq!(
            notice(Some(false), 0, 1_000, None),
            Some(CompactionNotice::Writing)
        );
        assert_eq!(
            notice(Some(true), 0, 1_000, None),
            Some(CompactionNotice::Ready)
        );
        assert_eq!(notice(None, 799, 1_000, Some(0.8)), None);
        assert_eq!(notice(None, 800, 1_000, Some(0.8)), soon);
        assert_eq!(notice(None, 999, 1_000, Some(0.8)), soon);
        // at the threshold the compaction is under way
        assert_eq!(notice(None, 1_000, 1_000, Some(0.8)), None);
        assert_eq!(notice(None, 900, 1_000, Some(0.0)), None);
        assert_eq!(notice(None, 900, 1_000, None), None);
        assert_eq!(notice(None, 900, 0, Some(0.8)), None);
    }
}
