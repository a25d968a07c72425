//! Each session's goal (`/goal`, ARCHITECTURE.md §5.2): one row a session, the protocol's
//! `Goal` as JSON, so a resumed session (`pith -c`) goes on with it where it stood.

use rusqlite::{OptionalExtension, params};

use super::{Result, Store};
use pith_protocol::event::Goal;
use pith_protocol::message::now_ms;

impl Store {
    /// The goal of `session_id`, if it has one. A row this build cannot read is no goal (a
    /// warning in the log): a goal is never worth a session that does not open.
    pub fn goal(&self, session_id: &str) -> Result<Option<Goal>> {
        let conn = self.conn();
        let data: Option<String> = conn
            .query_row(
                "SELECT data FROM goals WHERE session_id = ?1",
                [session_id],
                |r| r.get(0),
            )
            .optional()?;
        Ok(data.and_then(|d| match serde_json::from_str(&d) {
            Ok(goal) => Some(goal),
            Err(e) => {
                tracing::warn!(session_id, "a stored goal does not read: {e}");
                None
            }
        }))
    }

    /// Sets (or replaces) the goal of `session_id`.
    pub fn set_goal(&self, session_id: &str, goal: &Goal) -> Result<()> {
        let data = serde_json::to_string(goal)?;
        self.conn().execute(
            "INSERT INTO goals (session_id, data, time) VALUES (?1, ?2, ?3)
             ON CONFLICT (session_id) DO UPDATE SET data = excluded.data, time = excluded.time",
            params![session_id, data, now_ms()],
        )?;
        Ok(())
    }

    /// Removes the goal of `session_id`; whether it had one.
    pub fn clear_goal(&self, session_id: &str) -> Result<bool> {
        let n = self
            .conn()
            .execute("DELETE FROM goals WHERE session_id = ?1", [session_id])?;
        Ok(n > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pith_protocol::event::{BudgetUnit, GoalBudget, GoalStatus};

    fn goal(text: &str) -> Goal {
        Goal {
            text: text.into(),
            status: GoalStatus::Active,
            budget: GoalBudget {
                limit: 20,
                unit: BudgetUnit::Turns,
            },
            turns: 0,
            tokens: 0,
        }
    }

    #[test]
    fn one_goal_a_session_replaced_and_cleared() {
        let s = Store::open_in_memory().unwrap();
        assert_eq!(s.goal("S1").unwrap(), None);
        s.set_goal("S1", &goal("tests pass")).unwrap();
        s.set_goal("S2", &goal("elsewhere")).unwrap();
        let mut g = goal("tests pass and lint is clean");
        g.turns = 3;
        g.status = GoalStatus::Paused;
        s.set_goal("S1", &g).unwrap();
        assert_eq!(s.goal("S1").unwrap(), Some(g));
        assert!(s.clear_goal("S1").unwrap());
        assert!(!s.clear_goal("S1").unwrap());
        assert_eq!(s.goal("S1").unwrap(), None);
        assert_eq!(s.goal("S2").unwrap().unwrap().text, "elsewhere");
    }

    #[test]
    fn a_goal_survives_reopening_and_goes_with_its_session() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let session = store.create_session("/w", "m/m").unwrap();
        store.set_goal(&session.id, &goal("ship it")).unwrap();
        drop(store);
        let again = Store::open(dir.path()).unwrap();
        assert_eq!(again.goal(&session.id).unwrap().unwrap().text, "ship it");
        again.delete_session(&session.id).unwrap();
        assert_eq!(again.goal(&session.id).unwrap(), None);
    }

    #[test]
    fn a_row_that_does_not_read_is_no_goal() {
        let s = Store::open_in_memory().unwrap();
        s.conn()
            .execute(
                "INSERT INTO goals (session_id, data, time) VALUES ('S1', '{\"x\":1}', 0)",
                [],
            )
            .unwrap();
        assert_eq!(s.goal("S1").unwrap(), None);
    }
}
