//! `pith mcp login NAME`: discovery, then the authorization-code flow with PKCE (S256) through
//! a loopback listener on `127.0.0.1`, or the device flow (`--device`, or a shell without a
//! display when the server offers it). The tokens are saved bound to the server's URL.

use std::path::Path;
use std::time::Duration;

use rmcp::transport::auth::{
    AuthorizationManager, AuthorizationMetadata, AuthorizationRequest, AuthorizationSession,
    CredentialStore as _, StoredCredentials,
};

use pith_config::{Config, McpServerConfig};

use super::LoginError;
use super::discover::{self, device_endpoint, one_line};
use super::listener::{self, CALLBACK_PATH};
use super::store::{FileStore, now_secs};

/// The client name sent when registering.
const CLIENT_NAME: &str = "pith";

/// How a sign-in runs.
pub struct LoginOptions<'a> {
    /// Use the device flow (RFC 8628).
    pub device: bool,
    /// Try to open the authorization URL in a browser (never required: the URL is also said).
    pub open_browser: bool,
    /// How long the browser (or the device approval) may take.
    pub timeout: Duration,
    /// The environment (the client secret's variable, the display).
    pub env: &'a (dyn Fn(&str) -> Option<String> + Sync),
    /// Where the URL and codes the user must act on are said.
    pub say: &'a (dyn Fn(&str) + Sync),
}

/// Signs in to the server `name` of `config`; the line to print when done.
pub async fn login(
    data_dir: &Path,
    config: &Config,
    name: &str,
    opts: &LoginOptions<'_>,
) -> Result<String, LoginError> {
    let server = config.mcp.get(name).ok_or_else(|| LoginError::Unknown {
        name: name.to_string(),
    })?;
    login_server(data_dir, name, server, opts).await
}

/// Signs in to the server `name` configured as `server`; the line to print when done.
pub async fn login_server(
    data_dir: &Path,
    name: &str,
    server: &McpServerConfig,
    opts: &LoginOptions<'_>,
) -> Result<String, LoginError> {
    let url = server.url.as_deref().ok_or_else(|| LoginError::NotHttp {
        name: name.to_string(),
    })?;
    if !server.enabled {
        return Err(LoginError::Disabled {
            name: name.to_string(),
        });
    }
    if super::session::own_authorization(server) {
        return Err(LoginError::OwnAuthorization {
            name: name.to_string(),
        });
    }
    let (manager, metadata) = discover::manager(data_dir, name, url).await?;
    let secret = server
        .oauth_client_secret_env
        .as_deref()
        .and_then(opts.env)
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty());
    if let Some(s) = &secret {
        pith_secrets::register(s);
    }
    let client = Client {
        name,
        url,
        server,
        secret: secret.as_deref(),
    };
    let has_device = device_endpoint(&metadata).is_some();
    let device = if opts.device {
        if !has_device {
            return Err(LoginError::NoDeviceFlow {
                name: name.to_string(),
            });
        }
        true
    } else {
        has_device && super::remote_shell(opts.env)
    };
    if device {
        device_flow(data_dir, manager, &metadata, &client, opts).await?;
    } else {
        code_flow(manager, &metadata, &client, has_device, opts).await?;
    }
    let revocation = metadata
        .additional_fields
        .get("revocation_endpoint")
        .and_then(|v| v.as_str())
        .filter(|e| discover::check_endpoint(e).is_ok())
        .map(str::to_string);
    FileStore::new(data_dir, name, url)
        .set_revocation_endpoint(revocation)
        .map_err(|e| LoginError::Token(one_line(&e)))?;
    let state = super::sign_in(data_dir, name, url);
    Ok(format!(
        "Signed in to {name}{}.",
        super::signed_in_details(&state)
    ))
}

/// The server being signed in to, and its client settings.
struct Client<'a> {
    name: &'a str,
    url: &'a str,
    server: &'a McpServerConfig,
    secret: Option<&'a str>,
}

impl Client<'_> {
    /// No client id configured and no registration offered: nothing to sign in as.
    fn check_registration(&self, metadata: &AuthorizationMetadata) -> Result<(), LoginError> {
        if self.server.oauth_client_id.is_none() && metadata.registration_endpoint.is_none() {
            return Err(LoginError::NoClient {
                name: self.name.to_string(),
            });
        }
        Ok(())
    }
}

/// Authorization code + PKCE through the loopback listener.
async fn code_flow(
    manager: AuthorizationManager,
    metadata: &AuthorizationMetadata,
    client: &Client<'_>,
    has_device: bool,
    opts: &LoginOptions<'_>,
) -> Result<(), LoginError> {
    client.check_registration(metadata)?;
    let port = client.server.oauth_callback_port.unwrap_or(0);
    let tcp = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .map_err(|e| LoginError::Callback(format!("cannot listen on 127.0.0.1:{port}: {e}")))?;
    let port = tcp
        .local_addr()
        .map_err(|e| LoginError::Callback(e.to_string()))?
        .port();
    let redirect = format!("http://127.0.0.1:{port}{CALLBACK_PATH}");
    let mut request = AuthorizationRequest::new(redirect).with_client_name(CLIENT_NAME);
    if let Some(id) = &client.server.oauth_client_id {
        request = request.with_preregistered_client(id.clone());
        if let Some(s) = client.secret {
            request = request.with_client_secret(s.to_string());
        }
    }
    if !client.server.oauth_scopes.is_empty() {
        request = request.with_scopes(client.server.oauth_scopes.iter().cloned());
    }
    let session = AuthorizationSession::new(manager, request)
        .await
        .map_err(|(_, e)| LoginError::Registration(one_line(&e)))?;
    let auth_url = session.get_authorization_url().to_string();
    let state = url::Url::parse(&auth_url)
        .ok()
        .and_then(|u| {
            u.query_pairs()
                .find(|(k, _)| k == "state")
                .map(|(_, v)| v.into_owned())
        })
        .ok_or_else(|| LoginError::Callback("the authorization URL has no state".into()))?;
    (opts.say)(&url_notice(
        client.name,
        &auth_url,
        opts.timeout.as_secs().div_ceil(60),
        has_device,
    ));
    if opts.open_browser {
        open_browser(&auth_url);
    }
    let (callback, page) = listener::wait(tcp, &state, opts.timeout)
        .await
        .map_err(|e| LoginError::Callback(e.to_string()))?;
    // Single use and bound to this process by PKCE, yet kept out of the log all the same.
    pith_secrets::register(&callback.code);
    let exchange = session.handle_callback_with_issuer(
        &callback.code,
        &callback.state,
        callback.issuer.as_deref(),
    );
    let limit = super::http::TIMEOUT;
    let started = tokio::time::Instant::now();
    let stalled = || {
        LoginError::Token(format!(
            "the token endpoint {} did not answer within {} s",
            metadata.token_endpoint,
            limit.as_secs()
        ))
    };
    let exchanged = match tokio::time::timeout(limit, exchange).await {
        Err(_) => Err(stalled()),
        Ok(Err(_)) if super::http::timed_out(started) => Err(stalled()),
        Ok(done) => done.map_err(|e| LoginError::Token(one_line(&e))),
    };
    // The browser's page says how it ended, not just that the redirect arrived.
    page.answer(exchanged.is_ok()).await;
    exchanged.map(|_| ())
}

/// What the user must do for the code flow: the URL on a line of its own, unindented and last
/// (so it is copied whole); the device flow suggested only where the server offers it.
pub(crate) fn url_notice(name: &str, url: &str, minutes: u64, has_device: bool) -> String {
    let device = if has_device {
        format!(
            " — no browser on this machine? `pith mcp login {name} --device` signs in with a code"
        )
    } else {
        String::new()
    };
    format!(
        "To sign in to {name}, open this URL in a browser (waiting up to {minutes} min){device}:\n{url}"
    )
}

/// The device flow: a code the user enters at an address, then polling.
async fn device_flow(
    data_dir: &Path,
    mut manager: AuthorizationManager,
    metadata: &AuthorizationMetadata,
    client: &Client<'_>,
    opts: &LoginOptions<'_>,
) -> Result<(), LoginError> {
    client.check_registration(metadata)?;
    let endpoint = device_endpoint(metadata).unwrap_or_default().to_string();
    let scopes: Vec<String> = if client.server.oauth_scopes.is_empty() {
        manager.select_scopes(None, &[])
    } else {
        client.server.oauth_scopes.clone()
    };
    let (client_id, secret) = match &client.server.oauth_client_id {
        Some(id) => (id.clone(), client.secret.map(str::to_string)),
        None => {
            let refs: Vec<&str> = scopes.iter().map(String::as_str).collect();
            let registered = manager
                .register_client(CLIENT_NAME, "http://127.0.0.1/callback", &refs)
                .await
                .map_err(|e| LoginError::Registration(one_line(&e)))?;
            (registered.client_id, registered.client_secret)
        }
    };
    if let Some(s) = &secret {
        pith_secrets::register(s);
    }
    let http = super::http::client().map_err(|e| LoginError::Http(e.to_string()))?;
    let dc = super::device::Client {
        client_id: &client_id,
        client_secret: secret.as_deref(),
        resource: client.url.trim(),
    };
    let err = |e: super::device::DeviceError| LoginError::Device(e.to_string());
    let code = super::device::start(&http, &endpoint, &dc, &scopes.join(" "))
        .await
        .map_err(err)?;
    let uri = code
        .verification_uri_complete
        .clone()
        .filter(|u| discover::check_endpoint(u).is_ok())
        .unwrap_or_else(|| code.verification_uri.clone());
    (opts.say)(&format!(
        "To sign in to {}, open {} and enter the code {}",
        client.name,
        pith_protocol::text::one_line(&uri),
        pith_protocol::text::one_line(&code.user_code)
    ));
    let poll = super::device::poll(&http, &metadata.token_endpoint, &dc, &code);
    let token = tokio::time::timeout(opts.timeout.max(Duration::from_secs(1)), poll)
        .await
        .map_err(|_| LoginError::Device("no approval in time; run the sign-in again".into()))?
        .map_err(err)?;
    super::store::register_token(&token);
    let stored = StoredCredentials::new(client_id, Some(token), scopes, Some(now_secs()))
        .with_issuer(metadata.issuer.clone());
    FileStore::new(data_dir, client.name, client.url)
        .save(stored)
        .await
        .map_err(|e| LoginError::Token(one_line(&e)))
}

/// Opens `url` in the user's browser, if there is an opener; never waits for it.
fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    let _ = std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map(|mut child| {
            std::thread::spawn(move || child.wait());
        });
}
