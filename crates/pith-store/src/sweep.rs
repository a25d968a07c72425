//! Sessions opened and left without a single message are not kept.

use std::path::Path;

use super::lock::SessionLock;
use super::{Result, Store};

impl Store {
    /// Removes the sessions of `directory` that have no message and that no process holds (one
    /// held may have just been opened by another pith); returns how many went.
    pub fn remove_empty_sessions(&self, directory: &str, data_dir: &Path) -> Result<usize> {
        let mut removed = 0;
        for s in self.list_sessions()? {
            if s.directory == directory
                && self.message_count(&s.id)? == 0
                && !SessionLock::is_held(data_dir, &s.id)
            {
                self.delete_session(&s.id)?;
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
        let left: Vec<String> = store
            .list_sessions()
            .unwrap()
            .into_iter()
            .map(|s| s.id)
            .collect();
        assert!(!left.contains(&empty.id));
        for kept in [&held.id, &elsewhere.id, &used.id] {
            assert!(left.contains(kept), "{kept} was removed");
        }
    }
}
