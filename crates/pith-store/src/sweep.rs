//! Sessions opened and left without a single message are not kept.

use std::path::Path;

use super::lock::SessionLock;
use super::{HAS_MESSAGES, Result, Store};

impl Store {
    /// Removes the sessions of `directory` that have no message and that no process holds (one
    /// held may have just been opened by another pith); returns how many went. (The listings
    /// already leave such sessions out: this keeps them from piling up.)
    pub fn remove_empty_sessions(&self, directory: &str, data_dir: &Path) -> Result<usize> {
        let empty: Vec<String> = {
            let conn = self.conn();
            let mut stmt = conn.prepare_cached(&format!(
                "SELECT id FROM sessions WHERE directory = ?1 AND parent_id IS NULL \
                 AND NOT {HAS_MESSAGES}"
            ))?;
            let rows = stmt.query_map([directory], |row| row.get(0))?;
            rows.collect::<rusqlite::Result<_>>()?
        };
        let mut removed = 0;
        for id in empty {
            if !SessionLock::is_held(data_dir, &id) {
                self.delete_session(&id)?;
                removed += 1;
            }
        }
        Ok(removed)
    }
}

#[cfg(test)]
mod tests {
    use pith_protocol::message::{Message, PartKind, Role};

    use super::*;

    #[test]
    fn only_unheld_empty_sessions_of_the_directory_go() {
        let data = tempfile::tempdir().unwrap();
        let store = Store::open_in_memory().unwrap();
        let empty = store.create_session("/w", "m/m").unwrap();
        let held = store.create_session("/w", "m/m").unwrap();
        let elsewhere = store.create_session("/other", "m/m").unwrap();
        let used = store.create_session("/w", "m/m").unwrap();
        let mut m = Message::new(&used.id, Role::User);
        m.push(PartKind::Text {
            text: "hi".into(),
            synthetic: false,
        });
        store.save_message(&m).unwrap();
        let _lock = SessionLock::acquire(data.path(), &held.id).unwrap();

        assert_eq!(store.remove_empty_sessions("/w", data.path()).unwrap(), 1);
        let found = |id: &str| store.find_session(id).unwrap().is_some();
        assert!(!found(&empty.id));
        for kept in [&held.id, &elsewhere.id, &used.id] {
            assert!(found(kept), "{kept} was removed");
        }
    }
}
