//! `/goal` in the TUI (ARCHITECTURE.md §5.2): the command sent to the engine, and what the
//! transcript says of the goal as it changes. The status bar shows where it stands.

use pith_protocol::event::{Goal, GoalAction, GoalCheckBy, GoalStatus, Op};

use crate::app::App;
use crate::transcript::{NoticeLevel, PendingPrompt};

/// What the transcript last said of the goal, so it speaks only when something changed (or
/// when `/goal` asked).
#[derive(Default)]
pub(crate) struct GoalNotes {
    /// `/goal` alone was sent: its answer is said whatever it is.
    asked: bool,
    /// The goal's text and status as last said.
    seen: Option<(String, GoalStatus)>,
}

/// The transcript's line for `goal` as it stands.
pub(crate) fn describe(goal: Option<&Goal>) -> String {
    let Some(g) = goal else {
        return "no goal · /goal TEXT [--budget N turns|N tokens] sets one".into();
    };
    let budget = match g.budget.unit {
        pith_protocol::event::BudgetUnit::Turns => {
            format!("turn {} of {}", g.turns, g.budget.limit)
        }
        pith_protocol::event::BudgetUnit::Tokens => format!(
            "{} of {} tokens",
            crate::format::tokens(g.tokens),
            crate::format::tokens(g.budget.limit)
        ),
    };
    let (state, hint) = match g.status {
        GoalStatus::Active => ("active", "/goal pause · /goal clear"),
        GoalStatus::Paused => ("paused", "/goal resume · /goal clear"),
        GoalStatus::Met => ("met", "/goal clear"),
        GoalStatus::BudgetReached => ("budget spent", "/goal resume gives it another"),
    };
    format!("goal ({state}, {budget}): {} · {hint}", g.text)
}

impl App {
    /// `/goal [ARGS]`. While a turn runs, `/goal` alone is answered from what the bar knows,
    /// and `pause` or `clear` stop the turn first (an interrupt pauses the goal's loop).
    pub(crate) fn goal_command(&mut self, arg: Option<String>) {
        let action = match pith_commands::goal_args::goal_action(arg.as_deref()) {
            Ok(a) => a,
            Err(why) => return self.transcript.notice(NoticeLevel::Error, why),
        };
        let id = pith_protocol::message::new_id();
        match &action {
            GoalAction::Show if self.busy() => {
                let line = describe(self.status.goal());
                return self.transcript.notice(NoticeLevel::Info, line);
            }
            GoalAction::Show => self.goal.asked = true,
            GoalAction::Pause | GoalAction::Clear if self.busy() => {
                if self.status.interrupt() {
                    self.send(Op::Interrupt);
                }
            }
            GoalAction::Set { text, .. } => {
                // one goal a session: a new one takes the place of one not met
                if let Some(old) = self
                    .status
                    .goal()
                    .filter(|g| !matches!(g.status, GoalStatus::Met))
                {
                    let line = format!("replacing the goal: {}", old.text);
                    self.transcript.notice(NoticeLevel::Info, line);
                }
                self.transcript.add_pending(PendingPrompt {
                    id: id.clone(),
                    text: format!("/goal {text}"),
                    queued: self.busy(),
                })
            }
            GoalAction::Resume => self.transcript.add_pending(PendingPrompt {
                id: id.clone(),
                text: "/goal resume".into(),
                queued: self.busy(),
            }),
            GoalAction::Pause | GoalAction::Clear => {}
        }
        self.send(Op::Goal { id, action });
        self.transcript.follow();
    }

    /// The engine's goal changed (the bar has it already): said when asked, set, cleared,
    /// met, paused or spent.
    pub(crate) fn goal_changed(&mut self, goal: Option<Goal>) {
        let now = goal.as_ref().map(|g| (g.text.clone(), g.status));
        let asked = std::mem::take(&mut self.goal.asked);
        let changed = now != self.goal.seen;
        let had = self.goal.seen.is_some();
        self.goal.seen = now;
        if !(asked || changed) || (goal.is_none() && !had && !asked) {
            return;
        }
        let level = match goal.as_ref().map(|g| g.status) {
            Some(GoalStatus::BudgetReached) => NoticeLevel::Warn,
            _ => NoticeLevel::Info,
        };
        let line = match &goal {
            None if had && !asked => "goal cleared".to_string(),
            _ => describe(goal.as_ref()),
        };
        self.transcript.notice(level, line);
    }

    /// A turn toward the goal was checked: what the check found, in one line.
    pub(crate) fn goal_checked(&mut self, met: bool, by: GoalCheckBy, detail: &str) {
        let by = match by {
            GoalCheckBy::Command => "check command",
            GoalCheckBy::Model => "model",
        };
        let verdict = if met { "met" } else { "not met yet" };
        let detail = crate::format::truncate(detail, 160);
        self.transcript.notice(
            NoticeLevel::Info,
            format!("goal check ({by}): {verdict} · {detail}"),
        );
    }
}
