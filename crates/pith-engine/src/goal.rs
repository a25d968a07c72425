//! The session's goal (`/goal`, ARCHITECTURE.md §5.2): an objective stored with the session
//! (the store's `goals` table), carried in every request as a block of the system prompt (so no
//! compaction or forgetful summary loses it), and worked toward turn after turn. After a turn
//! that ended with the model stopping, a check (`goal/check.rs`: the configured command, or the
//! model asked in a side request) decides; while the goal is not met and its budget allows,
//! the turn goes on with a note naming the goal and what the check found — the path a `stop`
//! hook takes. The budget always stops it; an interrupt pauses it.

use tokio_util::sync::CancellationToken;

use crate::error::EngineError;
use crate::shared::Prompt;
use crate::turn_context::Turn;
use pith_protocol::event::{
    BudgetUnit, Goal, GoalAction, GoalBudget, GoalStatus, SessionEvent, TurnEvent,
};
use pith_protocol::llm::Usage;

mod check;

pub(crate) use check::Verdict;
#[cfg(test)]
pub(crate) use check::parse_verdict;

/// What comes after a turn toward the goal.
pub(crate) enum GoalNext {
    /// No active goal, met (said), its budget spent (said), or the check could not run (said).
    Stop,
    /// Not met: this note sends the model back to work.
    Continue(String),
    /// Interrupted while it was checked.
    Interrupted,
}

/// The first line of the system block the goal travels in (`prompts/goal-system.md`).
pub(crate) const GOAL_HEADER: &str = "## The user's goal (/goal)";

const SYSTEM_BLOCK: &str = include_str!("../../../prompts/goal-system.md");
const CONTINUE_NOTE: &str = include_str!("../../../prompts/goal-continue.md");
const RESUME_NOTE: &str = include_str!("../../../prompts/goal-resume.md");

/// Characters of a check's findings the continuation note carries (its last lines).
pub(crate) const NOTE_CHARS: usize = 2_000;

/// The system block that carries an active goal; `None` for any other (a paused, met or spent
/// goal is not worked toward). `check`: the configured check command.
pub(crate) fn block(goal: &Goal, check: Option<&str>) -> Option<String> {
    if goal.status != GoalStatus::Active {
        return None;
    }
    let check = match check {
        Some(c) => format!("the command `{c}`: exit code 0 means met"),
        None => "you will be asked".to_string(),
    };
    Some(
        SYSTEM_BLOCK
            .trim_end()
            .replace("{check}", &check)
            .replace("{goal}", goal.text.trim()),
    )
}

/// The note that sends the model back to work: the goal, where its budget stands and what the
/// check found (bounded).
pub(crate) fn continuation(goal: &Goal, check: &str) -> String {
    let (turn, limit) = match goal.budget.unit {
        BudgetUnit::Turns => ((goal.turns + 1).to_string(), goal.budget.limit.to_string()),
        BudgetUnit::Tokens => (
            (goal.turns + 1).to_string(),
            format!(
                "a budget of {} tokens, {} left",
                goal.budget.limit,
                goal.budget.limit.saturating_sub(goal.tokens)
            ),
        ),
    };
    CONTINUE_NOTE
        .trim_end()
        .replace("{turn}", &turn)
        .replace("{limit}", &limit)
        .replace("{goal}", goal.text.trim())
        .replace("{check}", &tail(check, NOTE_CHARS))
}

/// The last `max` characters of `text`, from a line's start when it was cut.
pub(crate) fn tail(text: &str, max: usize) -> String {
    let text = text.trim();
    let count = text.chars().count();
    if count <= max {
        return text.to_string();
    }
    let cut: String = text.chars().skip(count - max).collect();
    let from_line = cut.find('\n').map_or(cut.as_str(), |i| &cut[i + 1..]);
    format!("[…]\n{from_line}")
}

impl Turn<'_> {
    /// The session's goal (none when the store cannot be read: said once).
    pub(crate) fn goal(&self) -> Option<Goal> {
        match self.log.store().goal(self.log.session_id()) {
            Ok(g) => g,
            Err(e) => {
                self.report(EngineError::Store(e));
                None
            }
        }
    }

    fn save_goal(&self, goal: &Goal) -> bool {
        match self.log.store().set_goal(self.log.session_id(), goal) {
            Ok(()) => true,
            Err(e) => {
                self.report(EngineError::Store(e));
                false
            }
        }
    }

    /// Puts an active goal in the system prompt, before the pins' block (which stays last);
    /// called wherever the pins are applied.
    pub(crate) fn apply_goal(&mut self) {
        self.system.retain(|b| !b.starts_with(GOAL_HEADER));
        let check = self.opts.config.goal.check.clone();
        let Some(b) = self
            .goal()
            .and_then(|g| block(&g, check.as_deref()))
            .filter(|_| self.role.depth == 0)
        else {
            return;
        };
        let at = match self.system.last() {
            Some(last) if last.starts_with(crate::pins::PIN_HEADER) => self.system.len() - 1,
            _ => self.system.len(),
        };
        self.system.insert(at, b);
    }

    /// The goal changed: the system prompt follows from the next request on, and the front end
    /// is told.
    fn goal_changed(&mut self, goal: Option<Goal>) {
        let before = self.overhead();
        self.apply_goal();
        let after = self.overhead();
        if before != after {
            self.meter.on_overhead_change(before, after);
            self.emit_context();
        }
        self.emit(SessionEvent::GoalChanged { goal });
    }

    /// Tells the front end the goal as it stands (a session loaded or switched to).
    pub(crate) fn announce_goal(&mut self) {
        if self.role.depth == 0
            && let Some(goal) = self.goal()
        {
            self.emit(SessionEvent::GoalChanged { goal: Some(goal) });
        }
    }

    /// `/goal …` (`Op::Goal`): shows, sets, pauses, resumes or clears the goal; setting or
    /// resuming one runs its turns as submission `id`.
    pub(crate) async fn goal_op(&mut self, id: String, action: GoalAction) {
        match action {
            GoalAction::Show => {
                let goal = self.goal();
                self.emit(SessionEvent::GoalChanged { goal });
            }
            GoalAction::Set { text, budget } => self.set_goal(id, text, budget).await,
            GoalAction::Pause => match self.goal() {
                Some(mut g) if g.status == GoalStatus::Active => {
                    g.status = GoalStatus::Paused;
                    if self.save_goal(&g) {
                        self.goal_changed(Some(g));
                    }
                }
                Some(g) => self.emit(SessionEvent::GoalChanged { goal: Some(g) }),
                None => self.no_goal("pause"),
            },
            GoalAction::Resume => self.resume_goal(id).await,
            GoalAction::Clear => match self.log.store().clear_goal(self.log.session_id()) {
                Ok(_) => self.goal_changed(None),
                Err(e) => self.report(EngineError::Store(e)),
            },
        }
    }

    /// A `/goal TEXT` or `/goal resume` that starts no turn ends as a refused one does, so a
    /// front end waiting for the turn's end is answered.
    fn no_goal_turn(&self) {
        self.emit(TurnEvent::TurnFinished {
            reason: pith_protocol::event::TurnEnd::Error,
        });
    }

    fn no_goal(&self, verb: &str) {
        self.report(EngineError::Command(format!(
            "no goal to {verb}: /goal TEXT sets one"
        )));
    }

    /// `/goal TEXT`: replaces any goal and starts its first turn, with the objective as the
    /// user's message.
    async fn set_goal(&mut self, id: String, text: String, budget: Option<GoalBudget>) {
        let budget = budget.unwrap_or(GoalBudget {
            limit: self.opts.config.goal.max_turns.max(1),
            unit: BudgetUnit::Turns,
        });
        let goal = Goal {
            text: text.trim().to_string(),
            status: GoalStatus::Active,
            budget,
            turns: 0,
            tokens: 0,
        };
        if !self.save_goal(&goal) {
            return self.no_goal_turn();
        }
        self.goal_changed(Some(goal.clone()));
        let prompt = Prompt {
            id,
            text: goal.text.clone(),
            label: Some(format!("/goal {}", goal.text)),
            pasted: Vec::new(),
        };
        self.user_turn(vec![prompt]).await;
    }

    /// `/goal resume`: a paused goal goes on; one whose budget ran out gets the same budget
    /// again. Either way a turn toward it starts.
    async fn resume_goal(&mut self, id: String) {
        let Some(mut goal) = self.goal() else {
            self.no_goal("resume");
            return self.no_goal_turn();
        };
        match goal.status {
            GoalStatus::Met => {
                self.report(EngineError::Command(
                    "the goal is met: /goal TEXT sets a new one".into(),
                ));
                return self.no_goal_turn();
            }
            GoalStatus::BudgetReached => {
                goal.turns = 0;
                goal.tokens = 0;
            }
            GoalStatus::Active | GoalStatus::Paused => {}
        }
        goal.status = GoalStatus::Active;
        if !self.save_goal(&goal) {
            return self.no_goal_turn();
        }
        self.goal_changed(Some(goal.clone()));
        let prompt = Prompt {
            id,
            text: RESUME_NOTE.trim_end().replace("{goal}", goal.text.trim()),
            label: Some("/goal resume".into()),
            pasted: Vec::new(),
        };
        self.user_turn(vec![prompt]).await;
    }

    /// What a step of the main agent used counts against an active goal's token budget (input,
    /// output and cache writes: what it cost, not what the cache gave back).
    pub(crate) fn goal_spend(&mut self, usage: Option<&Usage>) {
        let Some(u) = usage.filter(|_| self.role.depth == 0) else {
            return;
        };
        let spent = u.input + u.output + u.cache_write;
        if spent == 0 {
            return;
        }
        if let Some(mut g) = self.goal().filter(|g| g.status == GoalStatus::Active) {
            g.tokens += spent;
            self.save_goal(&g);
        }
    }

    /// An interrupted turn pauses an active goal: it stays, and nothing is started for it until
    /// `/goal resume` (or another prompt, after which it is checked again only once resumed).
    pub(crate) fn pause_goal_on_interrupt(&mut self) {
        if self.role.depth > 0 {
            return;
        }
        if let Some(mut g) = self.goal().filter(|g| g.status == GoalStatus::Active) {
            g.status = GoalStatus::Paused;
            if self.save_goal(&g) {
                self.goal_changed(Some(g));
            }
        }
    }

    /// After a turn the model ended by stopping: with an active goal, the turn is counted and
    /// checked. Not met and within its budget, a note sends the model back to work; a check
    /// that could not run leaves the goal active and the turn ends.
    pub(crate) async fn goal_continue(&mut self, cancel: &CancellationToken) -> GoalNext {
        if self.role.depth > 0 {
            return GoalNext::Stop;
        }
        let Some(mut goal) = self.goal().filter(|g| g.status == GoalStatus::Active) else {
            return GoalNext::Stop;
        };
        let verdict = self.check_goal(&goal, cancel).await;
        // the check's own request counted its tokens in the store
        if let Some(stored) = self.goal() {
            goal.tokens = stored.tokens;
        }
        goal.turns += 1;
        if cancel.is_cancelled() {
            self.save_goal(&goal);
            return GoalNext::Interrupted;
        }
        let Some(Verdict { met, by, detail }) = verdict else {
            self.save_goal(&goal);
            return GoalNext::Stop;
        };
        self.emit(TurnEvent::GoalChecked {
            met,
            by,
            detail: pith_protocol::text::one_line(&tail(&detail, 300)),
        });
        if met {
            goal.status = GoalStatus::Met;
        } else if goal.spent() {
            goal.status = GoalStatus::BudgetReached;
        }
        if !self.save_goal(&goal) {
            return GoalNext::Stop;
        }
        let next = match goal.status {
            GoalStatus::Active => GoalNext::Continue(continuation(&goal, &detail)),
            _ => GoalNext::Stop,
        };
        self.say_where_the_goal_stands(&goal);
        self.goal_changed(Some(goal));
        next
    }

    /// The one line a met or spent goal ends on.
    fn say_where_the_goal_stands(&self, goal: &Goal) {
        let turns = match goal.turns {
            1 => "1 turn".to_string(),
            n => format!("{n} turns"),
        };
        let line = match goal.status {
            GoalStatus::Met => format!("goal met after {turns}"),
            GoalStatus::BudgetReached => format!(
                "goal not met: its budget of {} {} is spent ({turns}, {} tokens); /goal resume gives it another",
                pith_protocol::text::count(goal.budget.limit),
                match goal.budget.unit {
                    BudgetUnit::Turns => "turns",
                    BudgetUnit::Tokens => "tokens",
                },
                pith_protocol::text::count(goal.tokens)
            ),
            GoalStatus::Active | GoalStatus::Paused => return,
        };
        self.emit(pith_protocol::event::Event::info(line));
    }
}

#[cfg(test)]
mod tests;
