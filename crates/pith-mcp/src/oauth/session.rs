//! A connection's side of OAuth: the SDK's `AuthorizationManager` over the stored sign-in of a
//! server, for its `AuthClient` (which sends the token, refreshes it before it expires and once
//! after a 401, and saves what it gets). Nothing here opens a browser.

use std::path::Path;

use rmcp::transport::auth::{AuthorizationManager, OAuthClientConfig};

use pith_config::McpServerConfig;

use crate::connect::ConnectError;

use super::discover::one_line;
use super::store::{FileStore, TokenFile};

/// The manager for `name` at `url` when a sign-in is stored for that URL, and the server gets
/// no other credential from the config; `Ok(None)` otherwise. A confidential client whose
/// secret variable is unset is refused here, by name, rather than by the token endpoint.
pub(crate) async fn stored_manager(
    data_dir: &Path,
    name: &str,
    url: &str,
    config: &McpServerConfig,
    env: &(dyn Fn(&str) -> Option<String> + Sync),
) -> Result<Option<AuthorizationManager>, ConnectError> {
    let http = |why: String| ConnectError::Http {
        url: url.to_string(),
        why,
    };
    if own_authorization(config) {
        return Ok(None);
    }
    let file = TokenFile::read(data_dir).map_err(|e| http(e.to_string()))?;
    let Some(entry) = file.entry_for(name, url) else {
        return Ok(None);
    };
    let Some(client_id) = entry.credentials.as_ref().map(|c| c.client_id.clone()) else {
        return Ok(None);
    };
    if super::discover::check_endpoint(url).is_err() {
        return Ok(None);
    }
    let secret = config
        .oauth_client_secret_env
        .as_deref()
        .and_then(env)
        .filter(|s| !s.trim().is_empty());
    let confidential = config.oauth_client_id.as_deref() == Some(client_id.as_str());
    if let (Some(var), None, true) = (&config.oauth_client_secret_env, &secret, confidential) {
        return Err(ConnectError::SecretVarUnset {
            var: var.clone(),
            name: name.to_string(),
        });
    }
    pith_http::init_tls();
    let mut manager = AuthorizationManager::new(url.trim())
        .await
        .map_err(|e| http(one_line(&e)))?;
    manager.set_credential_store(FileStore::new(data_dir, name, url));
    if !manager
        .initialize_from_store()
        .await
        .map_err(|e| http(one_line(&e)))?
    {
        return Ok(None);
    }
    if let (Some(secret), Some(id)) = (secret, config.oauth_client_id.as_deref())
        && confidential
    {
        pith_secrets::register(&secret);
        let client = OAuthClientConfig::new(id, "http://127.0.0.1/callback")
            .with_client_secret(secret.trim());
        manager
            .configure_client(client)
            .map_err(|e| http(one_line(&e)))?;
    }
    Ok(Some(manager))
}

/// The config sends its own `Authorization` (`bearer_token_env`, or the header): a stored
/// sign-in is neither used nor made for it.
pub(crate) fn own_authorization(config: &McpServerConfig) -> bool {
    config.bearer_token_env.is_some()
        || config
            .headers
            .keys()
            .chain(config.env_headers.keys())
            .any(|h| h.eq_ignore_ascii_case("authorization"))
}

/// Whether a failed handshake was the server asking for a token (a 401), or the SDK finding
/// the stored sign-in unusable.
pub(crate) fn is_auth_required(e: &(dyn std::error::Error + 'static)) -> bool {
    use rmcp::transport::auth::AuthError;
    use rmcp::transport::streamable_http_client::AuthRequiredError;
    let mut current = Some(e);
    while let Some(err) = current {
        if err.is::<AuthRequiredError>()
            || matches!(
                err.downcast_ref::<AuthError>(),
                Some(AuthError::AuthorizationRequired | AuthError::TokenRefreshRejected(_))
            )
        {
            return true;
        }
        let text = err.to_string();
        if text.contains("Auth required") || text.contains("OAuth authorization required") {
            return true;
        }
        current = err.source();
    }
    false
}

/// Whether a failed handshake was the server refusing the token's scopes (a 403
/// `insufficient_scope`).
pub(crate) fn is_insufficient_scope(e: &(dyn std::error::Error + 'static)) -> bool {
    use rmcp::transport::streamable_http_client::InsufficientScopeError;
    let mut current = Some(e);
    while let Some(err) = current {
        if err.is::<InsufficientScopeError>() || err.to_string().contains("Insufficient scope") {
            return true;
        }
        current = err.source();
    }
    false
}

/// The line of a server that asked for a token: expired when the stored one was refused.
pub(crate) fn sign_in_line(data_dir: Option<&Path>, name: &str, url: &str) -> String {
    match data_dir.map(|d| super::sign_in(d, name, url)) {
        Some(super::SignIn::Expired) => super::describe(name, &super::SignIn::Expired)
            .unwrap_or_else(|| super::needs_sign_in(name)),
        _ => super::needs_sign_in(name),
    }
}
