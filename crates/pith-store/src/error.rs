//! What can go wrong with the store. The texts are what users read (with the cause after a `: `
//! where a message shows the chain).

use std::path::PathBuf;

/// A store operation that failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The data directory could not be created.
    #[error("cannot create data directory {}", path.display())]
    CreateDataDir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// SQLite could not open the database file.
    #[error("cannot open database {}", path.display())]
    Open {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    /// The database opened but could not be set up (pragmas, schema).
    #[error("cannot initialise database {}", path.display())]
    Init {
        path: PathBuf,
        #[source]
        source: Box<StoreError>,
    },
    /// A newer pith wrote the database.
    #[error("the database was written by a newer pith (schema {found}, this build knows {known})")]
    NewerSchema { found: i64, known: i64 },
    /// No session has this id.
    #[error("no session with id {0}")]
    NoSession(String),
    /// SQLite failed.
    #[error(transparent)]
    Sqlite(WithCauses<rusqlite::Error>),
    /// A row could not be written as JSON.
    #[error(transparent)]
    Json(WithCauses<serde_json::Error>),
}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        StoreError::Sqlite(WithCauses(e))
    }
}

impl From<serde_json::Error> for StoreError {
    fn from(e: serde_json::Error) -> Self {
        StoreError::Json(WithCauses(e))
    }
}

/// A library's error as the engine's messages show it (`format!("…: {e:#}")`): `{}` is its own
/// text, `{:#}` its text and its causes joined by `: `, as anyhow shows a chain. Its causes are
/// the library error's, so a chain walked through `source()` holds each text once.
#[derive(Debug)]
pub struct WithCauses<E>(pub E);

impl<E: std::error::Error> std::fmt::Display for WithCauses<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)?;
        if f.alternate() {
            let mut cause = self.0.source();
            while let Some(c) = cause {
                write!(f, ": {c}")?;
                cause = c.source();
            }
        }
        Ok(())
    }
}

impl<E: std::error::Error> std::error::Error for WithCauses<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

/// A store result.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;
