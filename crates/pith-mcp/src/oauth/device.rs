//! The device authorization grant (RFC 8628), for a shell without a browser: pith asks the
//! authorization server for a code, prints it with the address to enter it at, and polls the
//! token endpoint at the interval the server gives (slower after `slow_down`) until the user
//! approves, refuses, or the code expires.

use std::time::Duration;

use rmcp::transport::auth::OAuthTokenResponse;
use serde::Deserialize;

use super::http::{FormError, post_form};

/// The grant type of a device-code token request.
const GRANT: &str = "urn:ietf:params:oauth:grant-type:device_code";
/// The polling interval when the server names none (RFC 8628 §3.2).
const DEFAULT_INTERVAL: u64 = 5;
/// Added to the interval on each `slow_down` (RFC 8628 §3.5).
const SLOW_DOWN: u64 = 5;
/// The longest pith polls, whatever `expires_in` the server claims.
const MAX_WAIT: u64 = 15 * 60;

/// The device authorization response (RFC 8628 §3.2).
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct DeviceCode {
    pub device_code: String,
    pub user_code: String,
    pub verification_uri: String,
    #[serde(default)]
    pub verification_uri_complete: Option<String>,
    #[serde(default)]
    pub expires_in: Option<u64>,
    #[serde(default)]
    pub interval: Option<u64>,
}

/// Why the device flow ended without a token.
#[derive(Debug, thiserror::Error)]
pub(crate) enum DeviceError {
    #[error("{0}")]
    Request(#[from] FormError),
    #[error("the device code expired before it was approved; run the sign-in again")]
    Expired,
    #[error("access was denied")]
    Denied,
    #[error("the authorization server refused: {0}")]
    Refused(String),
    #[error("the authorization server's device answer is not valid: {0}")]
    Invalid(String),
}

/// The parameters every request of the flow carries besides its own.
pub(crate) struct Client<'a> {
    pub client_id: &'a str,
    pub client_secret: Option<&'a str>,
    pub resource: &'a str,
}

impl Client<'_> {
    fn params<'p>(&'p self, extra: &[(&'p str, &'p str)]) -> Vec<(&'p str, &'p str)> {
        let mut p = vec![("client_id", self.client_id), ("resource", self.resource)];
        if let Some(s) = self.client_secret {
            p.push(("client_secret", s));
        }
        p.extend_from_slice(extra);
        p
    }
}

/// Asks `endpoint` for a device code.
pub(crate) async fn start(
    http: &reqwest::Client,
    endpoint: &str,
    client: &Client<'_>,
    scopes: &str,
) -> Result<DeviceCode, DeviceError> {
    let mut extra = Vec::new();
    if !scopes.is_empty() {
        extra.push(("scope", scopes));
    }
    let (status, body) = post_form(http, endpoint, &client.params(&extra)).await?;
    if !status.is_success() {
        return Err(DeviceError::Refused(oauth_error(&body)));
    }
    let code: DeviceCode =
        serde_json::from_slice(&body).map_err(|e| DeviceError::Invalid(e.to_string()))?;
    super::discover::check_endpoint(&code.verification_uri)
        .map_err(|e| DeviceError::Invalid(e.to_string()))?;
    Ok(code)
}

/// Polls `token_endpoint` until the code is approved, refused or expired.
pub(crate) async fn poll(
    http: &reqwest::Client,
    token_endpoint: &str,
    client: &Client<'_>,
    code: &DeviceCode,
) -> Result<OAuthTokenResponse, DeviceError> {
    let mut interval = code.interval.unwrap_or(DEFAULT_INTERVAL).clamp(1, 60);
    let wait = code.expires_in.unwrap_or(MAX_WAIT).min(MAX_WAIT);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(wait);
    loop {
        tokio::time::sleep(Duration::from_secs(interval)).await;
        if tokio::time::Instant::now() >= deadline {
            return Err(DeviceError::Expired);
        }
        let params = client.params(&[("grant_type", GRANT), ("device_code", &code.device_code)]);
        let (status, body) = post_form(http, token_endpoint, &params).await?;
        if status.is_success() {
            let token: OAuthTokenResponse =
                serde_json::from_slice(&body).map_err(|e| DeviceError::Invalid(e.to_string()))?;
            return Ok(token);
        }
        match error_code(&body).as_deref() {
            Some("authorization_pending") => {}
            Some("slow_down") => interval = (interval + SLOW_DOWN).min(60),
            Some("expired_token") => return Err(DeviceError::Expired),
            Some("access_denied") => return Err(DeviceError::Denied),
            _ => return Err(DeviceError::Refused(oauth_error(&body))),
        }
    }
}

/// The `error` of an OAuth error answer.
fn error_code(body: &[u8]) -> Option<String> {
    let v: serde_json::Value = serde_json::from_slice(body).ok()?;
    v.get("error")?.as_str().map(str::to_string)
}

/// An OAuth error answer as one bounded line: `error (description)`, never the raw body.
pub(crate) fn oauth_error(body: &[u8]) -> String {
    let v: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
    let error = v
        .get("error")
        .and_then(|e| e.as_str())
        .unwrap_or("an error");
    let text = match v.get("error_description").and_then(|d| d.as_str()) {
        Some(d) => format!("{error} ({d})"),
        None => error.to_string(),
    };
    pith_protocol::text::one_line(&text)
        .chars()
        .take(300)
        .collect()
}
