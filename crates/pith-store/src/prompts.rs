//! The prompts typed in each project (workspace directory), newest kept, so the composer's
//! history walks back through earlier sessions. What is stored is already bounded and scrubbed
//! by the caller; this keeps each project's list de-duplicated and at most [`PER_PROJECT`] long.

use super::Result;
use rusqlite::params;

use super::Store;
use pith_protocol::message::now_ms;

/// Prompts kept per project.
pub(crate) const PER_PROJECT: usize = 1_000;

impl Store {
    /// Records `text` as the newest prompt of `directory`: an equal earlier entry goes, and the
    /// oldest past [`PER_PROJECT`] are dropped.
    pub fn record_prompt(&self, directory: &str, text: &str) -> Result<()> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        tx.execute(
            "DELETE FROM prompt_history WHERE directory = ?1 AND text = ?2",
            params![directory, text],
        )?;
        tx.execute(
            "INSERT INTO prompt_history (directory, text, time) VALUES (?1, ?2, ?3)",
            params![directory, text, now_ms()],
        )?;
        tx.execute(
            "DELETE FROM prompt_history WHERE directory = ?1 AND id NOT IN (
                 SELECT id FROM prompt_history WHERE directory = ?1 ORDER BY id DESC LIMIT ?2)",
            params![directory, PER_PROJECT as i64],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// The prompts of `directory`, oldest first (at most [`PER_PROJECT`]).
    pub fn project_prompts(&self, directory: &str) -> Result<Vec<String>> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(
            "SELECT text FROM prompt_history WHERE directory = ?1 ORDER BY id DESC LIMIT ?2",
        )?;
        let mut out = stmt
            .query_map(params![directory, PER_PROJECT as i64], |r| r.get(0))?
            .collect::<rusqlite::Result<Vec<String>>>()?;
        out.reverse();
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompts_are_per_project_deduplicated_and_bounded() {
        let s = Store::open_in_memory().unwrap();
        s.record_prompt("/a", "one").unwrap();
        s.record_prompt("/b", "elsewhere").unwrap();
        s.record_prompt("/a", "two").unwrap();
        s.record_prompt("/a", "one").unwrap();
        assert_eq!(s.project_prompts("/a").unwrap(), ["two", "one"]);
        assert_eq!(s.project_prompts("/b").unwrap(), ["elsewhere"]);
        for i in 0..PER_PROJECT + 5 {
            s.record_prompt("/a", &format!("p{i}")).unwrap();
        }
        let kept = s.project_prompts("/a").unwrap();
        assert_eq!(kept.len(), PER_PROJECT);
        assert_eq!(kept.first().unwrap(), "p5");
        assert_eq!(kept.last().unwrap(), &format!("p{}", PER_PROJECT + 4));
    }

    #[test]
    fn prompts_survive_reopening_the_database() {
        let dir = tempfile::tempdir().unwrap();
        Store::open(dir.path())
            .unwrap()
            .record_prompt("/a", "!ls")
            .unwrap();
        let again = Store::open(dir.path()).unwrap();
        assert_eq!(again.project_prompts("/a").unwrap(), ["!ls"]);
    }
}
