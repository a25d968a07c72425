//! What the user pinned in a session (`/pin TEXT`): facts and instructions carried word for word
//! into every request until `/unpin`. The engine bounds them; this keeps them in order.

use rusqlite::params;

use super::{Result, Store};
use pith_protocol::message::now_ms;

impl Store {
    /// Pins `text` in `session_id`, after the pins it holds.
    pub fn add_pin(&self, session_id: &str, text: &str) -> Result<()> {
        self.conn().execute(
            "INSERT INTO pins (session_id, text, time) VALUES (?1, ?2, ?3)",
            params![session_id, text, now_ms()],
        )?;
        Ok(())
    }

    /// The pins of `session_id`, oldest first.
    pub fn pins(&self, session_id: &str) -> Result<Vec<String>> {
        let conn = self.conn();
        let mut stmt =
            conn.prepare_cached("SELECT text FROM pins WHERE session_id = ?1 ORDER BY id")?;
        let out = stmt
            .query_map([session_id], |r| r.get(0))?
            .collect::<rusqlite::Result<Vec<String>>>()?;
        Ok(out)
    }

    /// Removes the `n`th pin of `session_id` (1 is the oldest), or every pin with `None`.
    /// Returns how many went.
    pub fn remove_pins(&self, session_id: &str, n: Option<usize>) -> Result<usize> {
        let conn = self.conn();
        let removed = match n {
            None => conn.execute("DELETE FROM pins WHERE session_id = ?1", [session_id])?,
            Some(0) => 0,
            Some(n) => conn.execute(
                "DELETE FROM pins WHERE id = (
                     SELECT id FROM pins WHERE session_id = ?1 ORDER BY id LIMIT 1 OFFSET ?2)",
                params![session_id, i64::try_from(n - 1).unwrap_or(i64::MAX)],
            )?,
        };
        Ok(removed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins_are_per_session_in_order_and_removed_by_number() {
        let s = Store::open_in_memory().unwrap();
        s.add_pin("S1", "port is 8443").unwrap();
        s.add_pin("S2", "elsewhere").unwrap();
        s.add_pin("S1", "never touch vendor/").unwrap();
        s.add_pin("S1", "use tabs").unwrap();
        assert_eq!(
            s.pins("S1").unwrap(),
            ["port is 8443", "never touch vendor/", "use tabs"]
        );
        assert_eq!(s.remove_pins("S1", Some(2)).unwrap(), 1);
        assert_eq!(s.pins("S1").unwrap(), ["port is 8443", "use tabs"]);
        assert_eq!(s.remove_pins("S1", Some(3)).unwrap(), 0);
        assert_eq!(s.remove_pins("S1", Some(0)).unwrap(), 0);
        assert_eq!(s.remove_pins("S1", None).unwrap(), 2);
        assert!(s.pins("S1").unwrap().is_empty());
        assert_eq!(s.pins("S2").unwrap(), ["elsewhere"]);
    }

    #[test]
    fn pins_survive_reopening_the_database() {
        let dir = tempfile::tempdir().unwrap();
        Store::open(dir.path())
            .unwrap()
            .add_pin("S1", "the db is postgres 16")
            .unwrap();
        let again = Store::open(dir.path()).unwrap();
        assert_eq!(again.pins("S1").unwrap(), ["the db is postgres 16"]);
    }
}
