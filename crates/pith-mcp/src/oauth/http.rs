//! The few requests pith makes itself around the SDK's OAuth code: the probe that reads a
//! server's `WWW-Authenticate` challenge, the device flow's form posts and the revocation at
//! logout. Each has a timeout, follows no redirect and reads a bounded body.

use std::time::Duration;

use futures_util::StreamExt as _;

/// Every OAuth request's time limit.
pub(crate) const TIMEOUT: Duration = Duration::from_secs(30);
/// The largest answer read.
const MAX_BODY: usize = 256 * 1024;

/// Why a request failed: one line, never a secret (the form's values are not in it).
#[derive(Debug, thiserror::Error)]
pub(crate) enum FormError {
    #[error("cannot reach {url}: {why}")]
    Unreachable { url: String, why: String },
    #[error("the answer of {url} is larger than {MAX_BODY} bytes")]
    TooLarge { url: String },
}

/// A client for OAuth requests: no redirects, a timeout.
pub(crate) fn client() -> reqwest::Result<reqwest::Client> {
    pith_http::init_tls();
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(TIMEOUT)
        .connect_timeout(Duration::from_secs(10))
        .user_agent(concat!("pith/", env!("CARGO_PKG_VERSION")))
        .build()
}

/// Posts `params` as a form to `url`; the status and at most [`MAX_BODY`] bytes of the answer.
pub(crate) async fn post_form(
    http: &reqwest::Client,
    url: &str,
    params: &[(&str, &str)],
) -> Result<(reqwest::StatusCode, Vec<u8>), FormError> {
    let body = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(params)
        .finish();
    let request = http
        .post(url)
        .header("Content-Type", "application/x-www-form-urlencoded")
        .header("Accept", "application/json")
        .body(body);
    send(request, url).await
}

/// Sends `request` and reads a bounded answer.
pub(crate) async fn send(
    request: reqwest::RequestBuilder,
    url: &str,
) -> Result<(reqwest::StatusCode, Vec<u8>), FormError> {
    let unreachable = |e: reqwest::Error| FormError::Unreachable {
        url: url.to_string(),
        why: pith_protocol::text::one_line(&e.without_url().to_string()),
    };
    let response = request.send().await.map_err(unreachable)?;
    let status = response.status();
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(unreachable)?;
        if body.len() + chunk.len() > MAX_BODY {
            return Err(FormError::TooLarge {
                url: url.to_string(),
            });
        }
        body.extend_from_slice(&chunk);
    }
    Ok((status, body))
}

/// What an unauthenticated `initialize` to the server says about sign-in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Probe {
    /// 401, with the `WWW-Authenticate` header when there was one.
    Unauthorized(Option<String>),
    /// The server answered without asking for a token.
    Open,
    /// Another status: discovery is tried anyway.
    Other(u16),
}

/// Sends an unauthenticated `initialize` to `url` and reads the challenge.
pub(crate) async fn probe(http: &reqwest::Client, url: &str) -> Result<Probe, FormError> {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "pith", "version": env!("CARGO_PKG_VERSION")}
        }
    });
    let request = http
        .post(url)
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .body(body.to_string());
    let unreachable = |e: reqwest::Error| FormError::Unreachable {
        url: url.to_string(),
        why: pith_protocol::text::one_line(&e.without_url().to_string()),
    };
    // Only the head is read: a server that streams its answer is not waited for.
    let response = request.send().await.map_err(unreachable)?;
    let status = response.status();
    Ok(if status == reqwest::StatusCode::UNAUTHORIZED {
        let header = response
            .headers()
            .get_all(reqwest::header::WWW_AUTHENTICATE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .find(|v| v.trim_start().to_ascii_lowercase().starts_with("bearer"))
            .map(|v| v.chars().take(4096).collect());
        Probe::Unauthorized(header)
    } else if status.is_success() {
        Probe::Open
    } else {
        Probe::Other(status.as_u16())
    })
}

/// Revokes the entry's refresh and access tokens at its revocation endpoint (RFC 7009):
/// `Some(true)` when the server accepted, `None` when there is nothing to revoke or nowhere.
pub(crate) async fn revoke(entry: &super::store::Entry) -> Option<bool> {
    use oauth2::TokenResponse as _;
    let endpoint = entry.revocation_endpoint.as_deref()?;
    super::discover::check_endpoint(endpoint).ok()?;
    let creds = entry.credentials.as_ref()?;
    let token = creds.token_response.as_ref()?;
    let http = client().ok()?;
    let mut all = true;
    let refresh = token
        .refresh_token()
        .map(|r| (r.secret().clone(), "refresh_token"));
    let access = Some((token.access_token().secret().clone(), "access_token"));
    for (secret, hint) in refresh.into_iter().chain(access) {
        let params = [
            ("token", secret.as_str()),
            ("token_type_hint", hint),
            ("client_id", creds.client_id.as_str()),
        ];
        let mut status = revoke_one(&http, endpoint, &params).await;
        // The Python SDK (2.3.0) answers a public client's request 400 unless an (empty)
        // `client_secret` is present: asked once more with it.
        if status == Some(400) {
            let mut with_secret = params.to_vec();
            with_secret.push(("client_secret", ""));
            status = revoke_one(&http, endpoint, &with_secret).await;
        }
        all &= status.is_some_and(|s| (200..300).contains(&s));
    }
    Some(all)
}

/// One revocation request's status, within 10 s.
async fn revoke_one(
    http: &reqwest::Client,
    endpoint: &str,
    params: &[(&str, &str)],
) -> Option<u16> {
    let sent = tokio::time::timeout(Duration::from_secs(10), post_form(http, endpoint, params));
    match sent.await {
        Ok(Ok((status, _))) => Some(status.as_u16()),
        _ => None,
    }
}
