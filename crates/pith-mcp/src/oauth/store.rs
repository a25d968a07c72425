//! The OAuth tokens of MCP servers: `<data dir>/mcp-tokens.json`, beside `credentials.json` and
//! with its protections (mode 0600 in a 0700 directory, written atomically, a symlink or a file
//! others can read refused). Each entry is bound to the server's name *and* the URL it was
//! issued for: a configuration that points the same name somewhere else gets nothing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rmcp::transport::auth::{
    AuthError, CredentialRefreshGuard, CredentialStore, StoredCredentials,
};
use serde::{Deserialize, Serialize};

const FILE: &str = "mcp-tokens.json";
/// The lock that serializes refreshes between pith processes.
const LOCK: &str = ".mcp-tokens.lock";
/// A token file larger than this is refused (a few servers' tokens take a few kB).
const MAX_FILE: u64 = 1 << 20;

/// Why the token file could not be read or written: one line naming the file, never a token.
#[derive(Debug, thiserror::Error)]
pub enum TokenFileError {
    #[error("{}: cannot read the MCP token file: {io}", file.display())]
    Read { file: PathBuf, io: std::io::Error },
    #[error(
        "{}: the MCP token file must be a regular file (not a symlink); remove it and sign in again",
        file.display()
    )]
    NotAFile { file: PathBuf },
    #[error(
        "{}: the MCP token file can be read by other users; run `chmod 600 {}` (and sign in again)",
        file.display(),
        file.display()
    )]
    ReadableByOthers { file: PathBuf },
    #[error("{}: the MCP token file is not valid; remove it and sign in again", file.display())]
    Invalid { file: PathBuf },
    #[error("{}: cannot write the MCP token file: {io}", file.display())]
    Write { file: PathBuf, io: std::io::Error },
}

/// One server's sign-in.
#[derive(Clone, Serialize, Deserialize)]
pub struct Entry {
    /// The server's URL when it was signed in to: the only place its token is sent.
    pub url: String,
    /// The client and tokens; `None` once the sign-in expired (the refresh token was refused).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials: Option<StoredCredentials>,
    /// The authorization server's RFC 7009 revocation endpoint, told at `pith mcp logout`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revocation_endpoint: Option<String>,
    /// Who is signed in, as the token response named them (`account.rs`; display only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<String>,
}

impl std::fmt::Debug for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Entry")
            .field("url", &self.url)
            .field("credentials", &self.credentials)
            .field("account", &self.account)
            .finish()
    }
}

/// The file's content.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct TokenFile {
    #[serde(default)]
    pub servers: BTreeMap<String, Entry>,
}

/// The token file in `data_dir`.
pub fn path(data_dir: &Path) -> PathBuf {
    data_dir.join(FILE)
}

impl TokenFile {
    /// Reads the file (missing: nothing stored). Refuses a link, a file others can read, and
    /// one too large to be pith's.
    pub fn read(data_dir: &Path) -> Result<TokenFile, TokenFileError> {
        let file = path(data_dir);
        let meta = match std::fs::symlink_metadata(&file) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(TokenFile::default()),
            Err(io) => return Err(TokenFileError::Read { file, io }),
        };
        if !meta.is_file() || meta.len() > MAX_FILE {
            return Err(TokenFileError::NotAFile { file });
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            if meta.permissions().mode() & 0o077 != 0 {
                return Err(TokenFileError::ReadableByOthers { file });
            }
        }
        let bytes = std::fs::read(&file).map_err(|io| TokenFileError::Read {
            file: file.clone(),
            io,
        })?;
        let parsed: TokenFile =
            serde_json::from_slice(&bytes).map_err(|_| TokenFileError::Invalid { file })?;
        parsed.register_secrets();
        Ok(parsed)
    }

    /// Writes the file: the directory made 0700, a temp file made 0600 renamed into place.
    pub fn write(&self, data_dir: &Path) -> Result<(), TokenFileError> {
        let file = path(data_dir);
        let result = (|| -> std::io::Result<()> {
            use std::io::Write as _;
            std::fs::create_dir_all(data_dir)?;
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(data_dir, std::fs::Permissions::from_mode(0o700))?;
            }
            let tmp = data_dir.join(format!(
                ".{FILE}.{}.{}",
                std::process::id(),
                ulid::Ulid::new()
            ));
            let mut opts = std::fs::OpenOptions::new();
            opts.write(true).create_new(true);
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
            let written = (|| {
                let mut f = opts.open(&tmp)?;
                f.write_all(&serde_json::to_vec_pretty(self)?)?;
                f.sync_all()?;
                std::fs::rename(&tmp, &file)
            })();
            if written.is_err() {
                let _ = std::fs::remove_file(&tmp);
            }
            written
        })();
        result.map_err(|io| TokenFileError::Write { file, io })?;
        self.register_secrets();
        Ok(())
    }

    /// Every token in the file becomes a secret: scrubbed from logs, sessions and exports.
    fn register_secrets(&self) {
        for entry in self.servers.values() {
            if let Some(t) = entry
                .credentials
                .as_ref()
                .and_then(|c| c.token_response.as_ref())
            {
                register_token(t);
            }
        }
    }

    /// `name`'s entry when it was stored for `url`.
    pub fn entry_for(&self, name: &str, url: &str) -> Option<&Entry> {
        self.servers.get(name).filter(|e| same_url(&e.url, url))
    }
}

/// Registers a token response's access and refresh tokens for scrubbing.
pub(crate) fn register_token(t: &rmcp::transport::auth::OAuthTokenResponse) {
    use oauth2::TokenResponse as _;
    pith_secrets::register(t.access_token().secret());
    if let Some(r) = t.refresh_token() {
        pith_secrets::register(r.secret());
    }
    if let Some(id) = t.extra_fields().0.get("id_token").and_then(|v| v.as_str()) {
        pith_secrets::register(id);
    }
}

/// Two server URLs name the same endpoint (a trailing slash and surrounding space aside).
pub(crate) fn same_url(a: &str, b: &str) -> bool {
    a.trim().trim_end_matches('/') == b.trim().trim_end_matches('/')
}

/// Seconds since the epoch.
pub(crate) fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// How long a refresh waits for another pith's.
const LOCK_WAIT: Duration = Duration::from_secs(60);

/// The lock file beside the token file (0600, created if missing, never followed if a link).
fn lock_file(data_dir: &Path) -> std::io::Result<std::fs::File> {
    std::fs::create_dir_all(data_dir)?;
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        opts.mode(0o600).custom_flags(libc::O_NOFOLLOW);
    }
    opts.open(data_dir.join(LOCK))
}

/// Takes the exclusive lock without waiting; released when the file is closed.
fn try_lock(file: &std::fs::File) -> bool {
    #[cfg(unix)]
    {
        use std::os::fd::AsRawFd as _;
        // SAFETY: flock only reads the descriptor, which `file` keeps open.
        unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0 }
    }
    #[cfg(not(unix))]
    {
        let _ = file;
        true
    }
}

/// Where one server's sign-in stands, for `/mcp` and `pith mcp list`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SignIn {
    /// No token stored for this name and URL.
    None,
    /// Signed in; `expires_in`: seconds the access token has left, if the server said.
    SignedIn {
        expires_in: Option<u64>,
        refreshable: bool,
        /// The host of the authorization server that issued the token.
        issuer: Option<String>,
        /// Who is signed in, when the server said (`account.rs`).
        account: Option<String>,
    },
    /// The refresh token was refused (revoked or expired): sign in again.
    Expired,
}

impl Entry {
    pub fn sign_in(&self, now: u64) -> SignIn {
        use oauth2::TokenResponse as _;
        let Some(creds) = self.credentials.as_ref() else {
            return SignIn::Expired;
        };
        let Some(token) = creds.token_response.as_ref() else {
            return SignIn::Expired;
        };
        let received = creds.token_received_at;
        let issuer = creds
            .issuer
            .as_deref()
            .and_then(|i| url::Url::parse(i).ok())
            .and_then(|u| u.host_str().map(pith_protocol::text::one_line));
        let expires_in = match (token.expires_in(), received) {
            (Some(d), Some(at)) => Some((at + d.as_secs()).saturating_sub(now)),
            _ => None,
        };
        SignIn::SignedIn {
            expires_in,
            refreshable: token.refresh_token().is_some(),
            issuer,
            account: self.account.clone(),
        }
    }
}

/// The `CredentialStore` the SDK reads and writes for one server: its entry in the token file,
/// bound to the URL it was issued for.
#[derive(Clone)]
pub struct FileStore {
    pub(crate) data_dir: PathBuf,
    pub(crate) name: String,
    pub(crate) url: String,
}

impl FileStore {
    pub fn new(data_dir: &Path, name: &str, url: &str) -> FileStore {
        FileStore {
            data_dir: data_dir.to_path_buf(),
            name: name.to_string(),
            url: url.trim().to_string(),
        }
    }

    /// Records where the tokens can be revoked (after a sign-in).
    pub(crate) fn set_revocation_endpoint(
        &self,
        endpoint: Option<String>,
    ) -> Result<(), AuthError> {
        self.update(|file| {
            if let Some(entry) = file.servers.get_mut(&self.name)
                && same_url(&entry.url, &self.url)
            {
                entry.revocation_endpoint = endpoint;
            }
        })
    }

    fn io_error(e: TokenFileError) -> AuthError {
        AuthError::CredentialStoreError(e.to_string())
    }

    /// Changes this server's entry and writes the file (read again first: another pith may
    /// have changed another server's entry).
    fn update(&self, change: impl FnOnce(&mut TokenFile)) -> Result<(), AuthError> {
        let mut file = TokenFile::read(&self.data_dir).map_err(Self::io_error)?;
        change(&mut file);
        file.write(&self.data_dir).map_err(Self::io_error)
    }
}

#[async_trait::async_trait]
impl CredentialStore for FileStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let file = TokenFile::read(&self.data_dir).map_err(Self::io_error)?;
        Ok(file
            .entry_for(&self.name, &self.url)
            .and_then(|e| e.credentials.clone()))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        if let Some(t) = credentials.token_response.as_ref() {
            register_token(t);
        }
        // A refresh rarely names the account again: the one named at sign-in stays.
        let named = credentials
            .token_response
            .as_ref()
            .and_then(super::account::of_response);
        self.update(|file| {
            let before = file.entry_for(&self.name, &self.url);
            let revocation_endpoint = before.and_then(|e| e.revocation_endpoint.clone());
            let account = named.or_else(|| before.and_then(|e| e.account.clone()));
            file.servers.insert(
                self.name.clone(),
                Entry {
                    url: self.url.clone(),
                    credentials: Some(credentials),
                    revocation_endpoint,
                    account,
                },
            );
        })
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.update(|file| {
            if file.entry_for(&self.name, &self.url).is_some() {
                file.servers.remove(&self.name);
            }
        })
    }

    /// Refreshes of every server are serialized across pith processes by a lock file beside the
    /// token file: with rotating refresh tokens, a second pith refreshing at once would present
    /// a spent token (and be told to sign in again). Held by the SDK through load, exchange and
    /// save; waited for at most [`LOCK_WAIT`].
    async fn acquire_refresh_guard(&self) -> Result<Option<CredentialRefreshGuard>, AuthError> {
        let lock = lock_file(&self.data_dir)
            .map_err(|e| AuthError::CredentialStoreError(format!("cannot lock: {e}")))?;
        let deadline = tokio::time::Instant::now() + LOCK_WAIT;
        loop {
            if try_lock(&lock) {
                return Ok(Some(CredentialRefreshGuard::new(lock)));
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(AuthError::CredentialStoreError(
                    "another pith is refreshing MCP tokens; try again".into(),
                ));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// A refused refresh token (revoked, expired): the tokens are dropped and the entry kept
    /// empty, so the server shows "sign-in expired" rather than "needs sign-in". Tokens another
    /// pith stored meanwhile are left alone.
    async fn on_refresh_token_rejected(
        &self,
        rejected: &StoredCredentials,
    ) -> Result<(), AuthError> {
        use oauth2::TokenResponse as _;
        let refresh_of = |c: &StoredCredentials| {
            c.token_response
                .as_ref()
                .and_then(|t| t.refresh_token().map(|r| r.secret().clone()))
        };
        let rejected_refresh = refresh_of(rejected);
        self.update(|file| {
            if let Some(entry) = file.servers.get_mut(&self.name)
                && same_url(&entry.url, &self.url)
                && entry.credentials.as_ref().map(refresh_of) == Some(rejected_refresh)
            {
                entry.credentials = None;
            }
        })
    }
}
