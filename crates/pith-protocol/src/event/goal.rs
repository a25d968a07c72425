//! The session's goal (`/goal TEXT [--budget N turns|N tokens]`, ARCHITECTURE.md §5.2): an
//! objective the engine keeps the model working toward, turn after turn, until a check says it
//! is met or its budget runs out.

use serde::{Deserialize, Serialize};

/// Characters a goal may hold (Claude Code's ceiling).
pub const MAX_GOAL_CHARS: usize = 4_000;

/// A session's goal and how far it got.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Goal {
    /// The objective, as the user wrote it.
    pub text: String,
    pub status: GoalStatus,
    /// What stops it when no check says it is met.
    pub budget: GoalBudget,
    /// Turns run toward it (the first one included) since it was set or resumed.
    #[serde(default)]
    pub turns: u64,
    /// Tokens its requests used (input, output and cache writes; cache reads are not counted)
    /// since it was set or resumed, checks included.
    #[serde(default)]
    pub tokens: u64,
}

impl Goal {
    /// What is used of the budget's unit.
    pub fn used(&self) -> u64 {
        match self.budget.unit {
            BudgetUnit::Turns => self.turns,
            BudgetUnit::Tokens => self.tokens,
        }
    }

    /// Whether the budget is spent.
    pub fn spent(&self) -> bool {
        self.used() >= self.budget.limit
    }
}

/// Where a goal stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GoalStatus {
    /// Worked toward: after each turn a check decides whether to go on.
    Active,
    /// Kept, but no turn is started for it (`/goal pause`, or an interrupt).
    Paused,
    /// A check said it is met.
    Met,
    /// Its budget ran out before a check said it is met (`/goal resume` grants another).
    BudgetReached,
}

/// A goal's budget: at most `limit` turns, or tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct GoalBudget {
    pub limit: u64,
    pub unit: BudgetUnit,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BudgetUnit {
    Turns,
    Tokens,
}

/// What `/goal` asks for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum GoalAction {
    /// `/goal`: the goal as it stands.
    Show,
    /// `/goal TEXT [--budget …]`: replaces any goal and starts working toward it. `budget`
    /// unset: `goal.max_turns` turns.
    Set {
        text: String,
        #[serde(default)]
        budget: Option<GoalBudget>,
    },
    /// `/goal pause`: no turn is started for it until `/goal resume`.
    Pause,
    /// `/goal resume`: back to work (a goal whose budget ran out gets the same budget again).
    Resume,
    /// `/goal clear`: the session has no goal.
    Clear,
}

/// What checked a goal after a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GoalCheckBy {
    /// The configured `goal.check` command (exit 0: met).
    Command,
    /// The model, asked in a side request.
    Model,
}
