//! Persistent storage: SQLite sessions, messages and parts.
