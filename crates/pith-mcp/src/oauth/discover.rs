//! Discovery, as the MCP authorization spec orders it (the SDK does the fetching): the server's
//! 401 challenge → its protected-resource metadata (RFC 9728, or the well-known fallbacks) →
//! the authorization server's metadata (RFC 8414, then OpenID Connect discovery), the issuer
//! checked. pith adds its own rules for a hostile server: every endpoint it will send a code,
//! a secret or a token to is `https` (plain `http` only on this machine), and a server that
//! publishes no metadata is not guessed at.

use std::path::Path;

use rmcp::transport::auth::{
    AuthorizationManager, AuthorizationMetadata, AuthorizationMetadataSource,
};

use super::LoginError;
use super::http::{Probe, probe};
use super::store::FileStore;

/// `url` is `https`, or plain `http` to this machine.
pub(crate) fn check_endpoint(url: &str) -> Result<(), LoginError> {
    let parsed = url::Url::parse(url.trim()).map_err(|_| LoginError::NotHttps {
        url: url.to_string(),
    })?;
    let ok = match parsed.scheme() {
        "https" => true,
        "http" => is_loopback(&parsed),
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(LoginError::NotHttps {
            url: url.to_string(),
        })
    }
}

/// The URL's host is this machine.
pub(crate) fn is_loopback(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// A manager for `name` at `url` with its metadata resolved, tokens kept in the token file.
pub(crate) async fn manager(
    data_dir: &Path,
    name: &str,
    url: &str,
) -> Result<(AuthorizationManager, AuthorizationMetadata), LoginError> {
    check_endpoint(url)?;
    let http = super::http::client().map_err(|e| LoginError::Http(e.to_string()))?;
    let probed = probe(&http, url)
        .await
        .map_err(|e| LoginError::Server(e.to_string()))?;
    // A server that lets `initialize` through may still guard its tools: its published
    // metadata decides.
    let open = probed == Probe::Open;
    let challenge = match probed {
        Probe::Unauthorized(header) => header,
        Probe::Open | Probe::Other(_) => None,
    };
    check_challenge(url, challenge.as_deref())?;
    pith_http::init_tls();
    let mut manager = AuthorizationManager::new(url.trim())
        .await
        .map_err(|e| LoginError::Discovery(one_line(&e)))?;
    manager.set_credential_store(FileStore::new(data_dir, name, url));
    let started = tokio::time::Instant::now();
    let resolution = manager
        .resolve_metadata_from_challenge(challenge.as_deref())
        .await
        .map_err(|e| {
            let why = one_line(&e);
            LoginError::Discovery(if super::http::timed_out(started) {
                format!(
                    "a metadata request did not answer within {} s ({why})",
                    super::http::TIMEOUT.as_secs()
                )
            } else {
                why
            })
        })?;
    if resolution.source == AuthorizationMetadataSource::LegacyEndpointFallback {
        let name = name.to_string();
        return Err(if open {
            LoginError::NoSignInNeeded { name }
        } else {
            LoginError::NoMetadata { name }
        });
    }
    let m = &resolution.metadata;
    check_endpoint(&m.authorization_endpoint)?;
    check_endpoint(&m.token_endpoint)?;
    for extra in [m.registration_endpoint.as_deref(), device_endpoint(m)]
        .into_iter()
        .flatten()
    {
        check_endpoint(extra)?;
    }
    let metadata = resolution.metadata.clone();
    manager.set_metadata(resolution.metadata);
    Ok((manager, metadata))
}

/// The challenge's `resource_metadata` URL, if any, is `https` (or on this machine): metadata
/// read over plain http from elsewhere could name any authorization server.
pub(crate) fn check_challenge(url: &str, challenge: Option<&str>) -> Result<(), LoginError> {
    let (Some(header), Ok(base)) = (challenge, url::Url::parse(url.trim())) else {
        return Ok(());
    };
    match rmcp::transport::WWWAuthenticateParams::parse(header, &base).resource_metadata_url {
        Some(metadata) => check_endpoint(metadata.as_str()),
        None => Ok(()),
    }
}

/// The authorization server's RFC 8628 endpoint, if it offers the device flow.
pub(crate) fn device_endpoint(m: &AuthorizationMetadata) -> Option<&str> {
    m.additional_fields
        .get("device_authorization_endpoint")
        .and_then(|v| v.as_str())
}

/// An SDK error as one bounded line (secrets scrubbed, should one ever be in it).
pub(crate) fn one_line(e: &dyn std::fmt::Display) -> String {
    let text = pith_protocol::text::one_line(&e.to_string());
    let text: String = text.chars().take(400).collect();
    pith_secrets::scrub(&text).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_must_be_https_but_on_this_machine() {
        for ok in [
            "https://auth.example.com/token",
            "http://127.0.0.1:8080/token",
            "http://localhost/authorize",
            "http://[::1]:9/x",
        ] {
            assert!(check_endpoint(ok).is_ok(), "{ok}");
        }
        for bad in [
            "http://auth.example.com/token",
            "http://10.0.0.1/token",
            "http://localhost.evil.com/token",
            "ftp://127.0.0.1/x",
            "javascript:alert(1)",
            "not a url",
        ] {
            assert!(check_endpoint(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_challenge_may_not_send_discovery_to_plain_http_elsewhere() {
        let url = "https://mcp.example.com/mcp";
        let ok = r#"Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp""#;
        assert!(check_challenge(url, Some(ok)).is_ok());
        let relative = r#"Bearer resource_metadata="/.well-known/oauth-protected-resource""#;
        assert!(check_challenge(url, Some(relative)).is_ok());
        // Plain-http metadata elsewhere is never followed: the SDK drops it (discovery falls
        // back to the server's own origin) or pith refuses it.
        let plain = r#"Bearer error="invalid_token", resource_metadata="http://evil.example/prm""#;
        for base in [url, "http://127.0.0.1:8080/mcp"] {
            let parsed = rmcp::transport::WWWAuthenticateParams::parse(
                plain,
                &url::Url::parse(base).unwrap(),
            );
            assert!(
                parsed.resource_metadata_url.is_none()
                    || matches!(
                        check_challenge(base, Some(plain)),
                        Err(LoginError::NotHttps { .. })
                    ),
                "{base}"
            );
        }
        assert!(check_challenge(url, Some("Bearer")).is_ok());
        assert!(check_challenge(url, None).is_ok());
    }
}
