//! OAuth for HTTP MCP servers (ARCHITECTURE.md §12.2): `pith mcp login NAME` signs in (discovery,
//! dynamic client registration, authorization code with PKCE through a loopback listener, or
//! the device flow), the tokens go to `<data dir>/mcp-tokens.json` bound to the server's URL, and
//! a connection sends them through the SDK's `AuthClient`, which refreshes them before they
//! expire and once after a 401. Connecting never starts a sign-in: a server that needs one says
//! so in `/mcp` and `pith mcp list`.

mod account;
mod device;
pub(crate) mod discover;
mod flow;
mod http;
mod listener;
pub(crate) mod session;
pub mod store;

use std::path::Path;
use std::time::Duration;

pub use flow::{LoginOptions, login, login_server};
pub use store::{SignIn, TokenFile, TokenFileError};

/// How long the browser has to come back to the loopback listener.
pub const LOGIN_TIMEOUT: Duration = Duration::from_secs(300);

/// Why a sign-in failed: one line for the user, naming what to do; never a token or secret.
#[derive(Debug, thiserror::Error)]
pub enum LoginError {
    #[error("no MCP server named {name} is configured")]
    Unknown { name: String },
    #[error("{name} is not an HTTP server (OAuth is for servers with a `url`)")]
    NotHttp { name: String },
    #[error("{name} is disabled in the config")]
    Disabled { name: String },
    #[error(
        "[mcp.{name}] sends its own Authorization (bearer_token_env or a header): remove it to sign in with OAuth"
    )]
    OwnAuthorization { name: String },
    #[error("{url}: OAuth endpoints must use https (plain http only on this machine)")]
    NotHttps { url: String },
    #[error("{name} answered without asking for a sign-in: nothing to do")]
    NoSignInNeeded { name: String },
    #[error(
        "{name} publishes no OAuth metadata (no protected-resource or authorization-server metadata); it cannot be signed in to with OAuth"
    )]
    NoMetadata { name: String },
    #[error("OAuth discovery failed: {0}")]
    Discovery(String),
    #[error(
        "the authorization server of {name} offers no dynamic client registration: set `oauth_client_id` (and `oauth_client_secret_env` if the client has a secret) in [mcp.{name}]"
    )]
    NoClient { name: String },
    #[error("client registration failed: {0}")]
    Registration(String),
    #[error("{0}")]
    Callback(String),
    #[error("the token request failed: {0}")]
    Token(String),
    #[error("the authorization server of {name} offers no device flow; sign in without --device")]
    NoDeviceFlow { name: String },
    #[error("the device sign-in failed: {0}")]
    Device(String),
    #[error("{0}")]
    Store(#[from] TokenFileError),
    #[error("cannot make the HTTP client: {0}")]
    Http(String),
    /// The server did not answer (in time), or could not be reached.
    #[error("{0}")]
    Server(String),
}

/// One server signed out of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedOut {
    pub name: String,
    /// Whether the authorization server accepted the revocation of its tokens (RFC 7009);
    /// `None` when it offers none or there were no tokens left.
    pub revoked: Option<bool>,
}

/// The client secret of a server's sign-in: `(server name, client id)` → the secret, when the
/// config names a variable for that client and it is set.
pub type SecretOf<'a> = &'a (dyn Fn(&str, &str) -> Option<String> + Sync);

/// The client secret `config` gives `name` signed in as `client_id` (`oauth_client_secret_env`
/// of the same `oauth_client_id`), read through `env`; registered with the scrubber.
pub fn client_secret(
    config: &pith_config::Config,
    name: &str,
    client_id: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Option<String> {
    let server = config.mcp.get(name)?;
    (server.oauth_client_id.as_deref() == Some(client_id)).then_some(())?;
    let secret = env(server.oauth_client_secret_env.as_deref()?)?;
    let secret = secret.trim().to_string();
    (!secret.is_empty()).then(|| {
        pith_secrets::register(&secret);
        secret
    })
}

/// Removes the stored sign-in of `name` (every server's with `None`), revoking its tokens at
/// the authorization server when it offers revocation (best effort, bounded); `secret` gives
/// a confidential client's secret, to authenticate the revocation.
pub async fn logout(
    data_dir: &Path,
    name: Option<&str>,
    secret: SecretOf<'_>,
) -> Result<Vec<SignedOut>, TokenFileError> {
    let mut file = TokenFile::read(data_dir)?;
    let removed: Vec<(String, store::Entry)> = match name {
        Some(n) => file
            .servers
            .remove(n)
            .map(|e| (n.to_string(), e))
            .into_iter()
            .collect(),
        None => std::mem::take(&mut file.servers).into_iter().collect(),
    };
    if !removed.is_empty() {
        file.write(data_dir)?;
    }
    let mut out = Vec::new();
    for (name, entry) in removed {
        let id = entry.credentials.as_ref().map(|c| c.client_id.clone());
        let secret = id.and_then(|id| secret(&name, &id));
        let revoked = http::revoke(&entry, secret.as_deref()).await;
        out.push(SignedOut { name, revoked });
    }
    Ok(out)
}

/// Where `name` at `url` stands: what the token file holds for it.
pub fn sign_in(data_dir: &Path, name: &str, url: &str) -> SignIn {
    match TokenFile::read(data_dir) {
        Ok(file) => file
            .entry_for(name, url)
            .map(|e| e.sign_in(store::now_secs()))
            .unwrap_or(SignIn::None),
        Err(_) => SignIn::None,
    }
}

/// The sign-in as `/mcp` and `pith mcp list` show it; `None` when there is nothing to say.
pub fn describe(name: &str, state: &SignIn) -> Option<String> {
    match state {
        SignIn::None => None,
        SignIn::Expired => Some(format!("sign-in expired — `pith mcp login {name}`")),
        SignIn::SignedIn {
            expires_in,
            refreshable,
            ..
        } => Some(match expires_in {
            Some(0) if !refreshable => format!("token expired — `pith mcp login {name}`"),
            _ => format!("signed in{}", signed_in_details(state)),
        }),
    }
}

/// What follows "signed in" for a sign-in: ` as alice@example.com at auth.example.com, token
/// expires in 50 min` (the account and the host when known).
pub(crate) fn signed_in_details(state: &SignIn) -> String {
    let SignIn::SignedIn {
        expires_in,
        issuer,
        account,
        ..
    } = state
    else {
        return String::new();
    };
    let who = account
        .as_deref()
        .map(|a| format!(" as {a}"))
        .unwrap_or_default();
    let at = issuer
        .as_deref()
        .map(|h| format!(" at {h}"))
        .unwrap_or_default();
    let until = match expires_in {
        Some(0) => " (token refreshed on next use)".to_string(),
        Some(s) => format!(", token expires in {}", duration(*s)),
        None => String::new(),
    };
    format!("{who}{at}{until}")
}

/// The line of a server that asked for a token pith does not have.
pub fn needs_sign_in(name: &str) -> String {
    format!("needs sign-in: `pith mcp login {name}`")
}

/// `45 s`, `12 min`, `3 h`, `2 d`.
fn duration(secs: u64) -> String {
    match secs {
        0..60 => format!("{secs} s"),
        60..3600 => format!("{} min", secs / 60),
        3600..86400 => format!("{} h", secs / 3600),
        _ => format!("{} d", secs / 86400),
    }
}

/// The user's machine has no browser pith could open: an SSH session, or no display.
pub fn remote_shell(env: &dyn Fn(&str) -> Option<String>) -> bool {
    let set = |v: &str| env(v).is_some_and(|x| !x.is_empty());
    if set("SSH_CONNECTION") || set("SSH_TTY") {
        return true;
    }
    cfg!(target_os = "linux") && !set("DISPLAY") && !set("WAYLAND_DISPLAY")
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
