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
    #[error("{url} did not answer within {secs} s")]
    Stalled { url: String, secs: u64 },
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
    post_form_as(http, url, params, None).await
}

/// [`post_form`], the client authenticated with HTTP Basic (`client_secret_basic`, RFC 6749
/// §2.3.1: the id and secret form-encoded first) when `basic` holds its id and secret.
pub(crate) async fn post_form_as(
    http: &reqwest::Client,
    url: &str,
    params: &[(&str, &str)],
    basic: Option<(&str, &str)>,
) -> Result<(reqwest::StatusCode, Vec<u8>), FormError> {
    let body = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(params)
        .finish();
    let mut request = http
        .post(url)
        .header("Content-Type", "application/x-www-form-urlencoded")
        .header("Accept", "application/json")
        .body(body);
    if let Some((id, secret)) = basic {
        let enc = |v: &str| url::form_urlencoded::byte_serialize(v.as_bytes()).collect::<String>();
        request = request.basic_auth(enc(id), Some(enc(secret)));
    }
    send(request, url).await
}

/// Sends `request` and reads a bounded answer, all within [`TIMEOUT`].
pub(crate) async fn send(
    request: reqwest::RequestBuilder,
    url: &str,
) -> Result<(reqwest::StatusCode, Vec<u8>), FormError> {
    within(TIMEOUT, url, send_unbounded(request, url)).await
}

/// `work`, or [`FormError::Stalled`] once `limit` has passed.
pub(crate) async fn within<T>(
    limit: Duration,
    url: &str,
    work: impl Future<Output = Result<T, FormError>>,
) -> Result<T, FormError> {
    tokio::time::timeout(limit, work)
        .await
        .unwrap_or_else(|_| Err(stalled(url, limit)))
}

/// A request of the SDK's that failed once [`TIMEOUT`] (nearly) passed: its own time limit,
/// which its error does not name.
pub(crate) fn timed_out(started: tokio::time::Instant) -> bool {
    started.elapsed() + Duration::from_secs(1) >= TIMEOUT
}

fn stalled(url: &str, limit: Duration) -> FormError {
    FormError::Stalled {
        url: url.to_string(),
        secs: limit.as_secs().max(1),
    }
}

/// A transport error as one plain line: a stall says so, else why the server was not reached.
fn unreachable(url: &str, e: reqwest::Error) -> FormError {
    if e.is_timeout() {
        return stalled(url, TIMEOUT);
    }
    let why = if e.is_connect() {
        "the connection was refused or could not be made".to_string()
    } else {
        // The innermost cause names the problem; reqwest's own text ("error sending request")
        // does not.
        let mut cause: &dyn std::error::Error = &e;
        while let Some(next) = cause.source() {
            cause = next;
        }
        pith_protocol::text::one_line(&cause.to_string())
    };
    FormError::Unreachable {
        url: url.to_string(),
        why,
    }
}

async fn send_unbounded(
    request: reqwest::RequestBuilder,
    url: &str,
) -> Result<(reqwest::StatusCode, Vec<u8>), FormError> {
    let unreachable = |e: reqwest::Error| unreachable(url, e);
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

/// Sends an unauthenticated `initialize` to `url` and reads the challenge, within [`TIMEOUT`].
pub(crate) async fn probe(http: &reqwest::Client, url: &str) -> Result<Probe, FormError> {
    within(TIMEOUT, url, probe_unbounded(http, url)).await
}

async fn probe_unbounded(http: &reqwest::Client, url: &str) -> Result<Probe, FormError> {
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
    let unreachable = |e: reqwest::Error| unreachable(url, e);
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
/// A client with a secret authenticates as at the token endpoint (RFC 7009 §2.1): HTTP Basic,
/// then the secret in the form (`client_secret_post`) if Basic is refused.
pub(crate) async fn revoke(entry: &super::store::Entry, secret: Option<&str>) -> Option<bool> {
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
    let id = creds.client_id.as_str();
    for (token, hint) in refresh.into_iter().chain(access) {
        let params = [
            ("token", token.as_str()),
            ("token_type_hint", hint),
            ("client_id", id),
        ];
        let status = match secret {
            Some(secret) => revoke_confidential(&http, endpoint, &params, id, secret).await,
            None => revoke_public(&http, endpoint, &params).await,
        };
        all &= status.is_some_and(|s| (200..300).contains(&s));
    }
    Some(all)
}

/// A public client's revocation.
async fn revoke_public(
    http: &reqwest::Client,
    endpoint: &str,
    params: &[(&str, &str)],
) -> Option<u16> {
    let status = revoke_one(http, endpoint, params, None).await;
    // The Python SDK (2.3.0) answers a public client's request 400 unless an (empty)
    // `client_secret` is present: asked once more with it.
    if status != Some(400) {
        return status;
    }
    let mut with_secret = params.to_vec();
    with_secret.push(("client_secret", ""));
    revoke_one(http, endpoint, &with_secret, None).await
}

/// A confidential client's revocation: Basic, then `client_secret_post`.
async fn revoke_confidential(
    http: &reqwest::Client,
    endpoint: &str,
    params: &[(&str, &str)],
    id: &str,
    secret: &str,
) -> Option<u16> {
    let status = revoke_one(http, endpoint, params, Some((id, secret))).await;
    if !matches!(status, Some(400 | 401)) {
        return status;
    }
    let mut posted = params.to_vec();
    posted.push(("client_secret", secret));
    revoke_one(http, endpoint, &posted, None).await
}

/// One revocation request's status, within 10 s.
async fn revoke_one(
    http: &reqwest::Client,
    endpoint: &str,
    params: &[(&str, &str)],
    basic: Option<(&str, &str)>,
) -> Option<u16> {
    let sent = tokio::time::timeout(
        Duration::from_secs(10),
        post_form_as(http, endpoint, params, basic),
    );
    match sent.await {
        Ok(Ok((status, _))) => Some(status.as_u16()),
        _ => None,
    }
}

#[cfg(test)]
#[path = "http_tests.rs"]
mod tests;
