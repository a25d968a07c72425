//! Stored API keys: `pith auth login` writes a provider's key to `<data dir>/credentials.json`
//! (mode 0600, in a 0700 directory, written atomically) so a user need not export variables.
//!
//! An environment variable named by the provider's `api_key_env` always wins. A stored key is
//! bound to the provider *and* the `base_url` it was stored for: a configuration that later
//! points that provider somewhere else (a workspace's `pith.toml`, say) does not get it. A file
//! other users can read is refused with a one-line error saying how to fix it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::RwLock;

use serde::{Deserialize, Serialize};

const FILE: &str = "credentials.json";

/// Why the credentials file could not be read or written. Each text names the file (or its
/// directory) first and says what to do; the I/O error is part of the text, not a cause.
#[derive(Debug, thiserror::Error)]
pub enum CredentialsError {
    #[error("{}: cannot read the credentials file: {io}", file.display())]
    Read { file: PathBuf, io: std::io::Error },
    #[error(
        "{}: the credentials file must be a regular file (not a symlink); remove it and run `pith auth login` again",
        file.display()
    )]
    NotAFile { file: PathBuf },
    #[error(
        "{}: the credentials file can be read by other users; run `chmod 600 {}` (and consider replacing the keys in it)",
        file.display(),
        file.display()
    )]
    ReadableByOthers { file: PathBuf },
    #[error(
        "{}:{line}:{column}: the credentials file is not valid ({category:?} error); fix or remove it",
        file.display()
    )]
    Invalid {
        file: PathBuf,
        line: usize,
        column: usize,
        category: serde_json::error::Category,
    },
    #[error("{}: cannot create the directory: {io}", dir.display())]
    CreateDir { dir: PathBuf, io: std::io::Error },
    #[error("{}: cannot make it private: {io}", dir.display())]
    MakePrivate { dir: PathBuf, io: std::io::Error },
    #[error("{}: cannot write the credentials file: {io}", file.display())]
    Write { file: PathBuf, io: std::io::Error },
}

/// One stored key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Credential {
    pub key: String,
    /// The provider's `base_url` when the key was stored: the only place it is sent.
    pub base_url: String,
}

/// The credentials file's content.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Credentials {
    #[serde(default)]
    pub providers: BTreeMap<String, Credential>,
}

/// The credentials file in `data_dir`.
pub fn path(data_dir: &Path) -> PathBuf {
    data_dir.join(FILE)
}

impl Credentials {
    /// Reads the file (missing: none stored). Refuses one that group or others can read.
    pub fn read(data_dir: &Path) -> Result<Credentials, CredentialsError> {
        let file = path(data_dir);
        let meta = match std::fs::symlink_metadata(&file) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Credentials::default());
            }
            Err(io) => return Err(CredentialsError::Read { file, io }),
        };
        if !meta.is_file() {
            return Err(CredentialsError::NotAFile { file });
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            if meta.permissions().mode() & 0o077 != 0 {
                return Err(CredentialsError::ReadableByOthers { file });
            }
        }
        let bytes = match std::fs::read(&file) {
            Ok(bytes) => bytes,
            Err(io) => return Err(CredentialsError::Read { file, io }),
        };
        serde_json::from_slice(&bytes).map_err(|e| CredentialsError::Invalid {
            line: e.line(),
            column: e.column(),
            category: e.classify(),
            file,
        })
    }

    /// Writes the file: the directory made 0700, a temp file made 0600 renamed into place.
    pub fn write(&self, data_dir: &Path) -> Result<(), CredentialsError> {
        let file = path(data_dir);
        std::fs::create_dir_all(data_dir).map_err(|io| CredentialsError::CreateDir {
            dir: data_dir.to_path_buf(),
            io,
        })?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(data_dir, std::fs::Permissions::from_mode(0o700)).map_err(
                |io| CredentialsError::MakePrivate {
                    dir: data_dir.to_path_buf(),
                    io,
                },
            )?;
        }
        let tmp = data_dir.join(format!(".{FILE}.{}", std::process::id()));
        let _ = std::fs::remove_file(&tmp);
        let result = (|| -> std::io::Result<()> {
            use std::io::Write as _;
            let mut opts = std::fs::OpenOptions::new();
            opts.write(true).create_new(true);
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
            let mut f = opts.open(&tmp)?;
            f.write_all(&serde_json::to_vec_pretty(self)?)?;
            f.sync_all()?;
            std::fs::rename(&tmp, &file)
        })();
        if let Err(io) = result {
            let _ = std::fs::remove_file(&tmp);
            return Err(CredentialsError::Write { file, io });
        }
        Ok(())
    }
}

/// The stored keys of this run (installed by the front end at start).
static INSTALLED: RwLock<Option<Credentials>> = RwLock::new(None);

/// Makes `creds` the keys providers may fall back to, and registers each as a secret so it is
/// scrubbed from logs, sessions and exports.
pub fn install(creds: Credentials) {
    for c in creds.providers.values() {
        pith_secrets::register(&c.key);
    }
    if let Ok(mut slot) = INSTALLED.write() {
        *slot = Some(creds);
    }
}

/// Reads the data directory's file and installs it; an unreadable one is reported, not fatal
/// (keys from the environment still work).
pub fn install_from(data_dir: &Path) -> Option<String> {
    match Credentials::read(data_dir) {
        Ok(c) => {
            install(c);
            None
        }
        Err(e) => Some(format!("{e:#}")),
    }
}

/// Why a stored key is not used.
#[derive(Debug, Clone, PartialEq)]
pub enum Refused {
    /// Stored for another `base_url` than the provider now has.
    OtherUrl { stored: String },
}

/// The stored key of `provider`, if it was stored for `base_url`.
pub fn stored_key(provider: &str, base_url: &str) -> Result<Option<String>, Refused> {
    let Ok(slot) = INSTALLED.read() else {
        return Ok(None);
    };
    match slot.as_ref() {
        Some(c) => c.key_for(provider, base_url),
        None => Ok(None),
    }
}

impl Credentials {
    /// The key of `provider`, if it was stored for `base_url`.
    pub fn key_for(&self, provider: &str, base_url: &str) -> Result<Option<String>, Refused> {
        let Some(c) = self.providers.get(provider) else {
            return Ok(None);
        };
        if same_url(&c.base_url, base_url) {
            Ok(Some(c.key.clone()))
        } else {
            Err(Refused::OtherUrl {
                stored: c.base_url.clone(),
            })
        }
    }
}

/// The stored key of the known provider whose key variable is `var` (the first-run model
/// choice treats it as if the variable were set; the provider checks its address when built).
pub fn stored_for_env(var: &str) -> Option<String> {
    let known = pith_config::known::KNOWN_PROVIDERS
        .iter()
        .find(|p| p.key_env == Some(var))?;
    let slot = INSTALLED.read().ok()?;
    slot.as_ref()?
        .providers
        .get(known.name)
        .map(|c| c.key.clone())
}

fn same_url(a: &str, b: &str) -> bool {
    a.trim().trim_end_matches('/') == b.trim().trim_end_matches('/')
}

/// `…abcd`: the last four characters of a long key, nothing of a short one.
pub fn masked(key: &str) -> String {
    let n = key.chars().count();
    if n < 16 {
        return "…".into();
    }
    let tail: String = key.chars().skip(n - 4).collect();
    format!("…{tail}")
}

#[cfg(test)]
mod tests;
