//! Context windows learned from servers: an overflow error that states the real limit, or a
//! local server asked at start. Kept per model ("provider/model"), so the next session starts
//! from the real window instead of rediscovering it with a failed request.

use super::Result;
use rusqlite::{OptionalExtension, params};

use super::{Store, to_i64};
use pith_protocol::event::WindowSource;
use pith_protocol::message::now_ms;

/// A window pith learned for a model, and where from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LearnedWindow {
    pub window: u64,
    /// Where it came from (stored as its text: "server error", the probe's "llama.cpp …/props").
    pub source: WindowSource,
}

impl Store {
    /// The window learned for `model`, if any.
    pub fn learned_window(&self, model: &str) -> Result<Option<LearnedWindow>> {
        let conn = self.conn();
        let mut stmt =
            conn.prepare_cached("SELECT window, source FROM model_windows WHERE model = ?1")?;
        Ok(stmt
            .query_row([model], |r| {
                Ok(LearnedWindow {
                    window: r.get::<_, i64>(0)?.max(0) as u64,
                    source: WindowSource::from(r.get::<_, String>(1)?),
                })
            })
            .optional()?)
    }

    /// Records the window learned for `model` (replacing an earlier one).
    pub fn set_learned_window(
        &self,
        model: &str,
        window: u64,
        source: &WindowSource,
    ) -> Result<()> {
        self.conn()
            .prepare_cached(
                "INSERT INTO model_windows (model, window, source, time) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (model) DO UPDATE SET window = ?2, source = ?3, time = ?4",
            )?
            .execute(params![model, to_i64(window), source.as_str(), now_ms()])?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_are_kept_per_model_and_replaced() {
        let s = Store::open_in_memory().unwrap();
        assert_eq!(s.learned_window("llamacpp/m").unwrap(), None);
        s.set_learned_window("llamacpp/m", 6_000, &WindowSource::ServerError)
            .unwrap();
        s.set_learned_window(
            "other/m",
            9_000,
            &WindowSource::from("server props".to_string()),
        )
        .unwrap();
        let w = s.learned_window("llamacpp/m").unwrap().unwrap();
        assert_eq!((w.window, w.source), (6_000, WindowSource::ServerError));
        s.set_learned_window(
            "llamacpp/m",
            4_096,
            &WindowSource::from("server props".to_string()),
        )
        .unwrap();
        assert_eq!(
            s.learned_window("llamacpp/m").unwrap().unwrap().window,
            4_096
        );
        assert_eq!(s.learned_window("other/m").unwrap().unwrap().window, 9_000);
    }

    #[test]
    fn a_version_1_database_is_upgraded() {
        let dir = tempfile::tempdir().unwrap();
        {
            let conn = rusqlite::Connection::open(dir.path().join("pith.db")).unwrap();
            conn.execute_batch(&format!(
                "{} PRAGMA user_version = 1;",
                super::super::schema::SCHEMA_V1
            ))
            .unwrap();
        }
        let s = Store::open(dir.path()).unwrap();
        s.set_learned_window("a/b", 8_192, &WindowSource::ServerError)
            .unwrap();
        assert_eq!(s.learned_window("a/b").unwrap().unwrap().window, 8_192);
    }
}
