//! The HTTP clients pith talks to providers (and HTTP MCP servers) with. The system's TLS roots
//! are loaded only for an `https://` base, once per process: a plain `http://` server on this
//! machine or network (Ollama, llama.cpp, vLLM) gets a client that never reads them, and a
//! redirect from it to `https://` is refused rather than tried without a trust store.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

/// pith's user agent on every request.
const USER_AGENT: &str = concat!("pith/", env!("CARGO_PKG_VERSION"));

/// Most redirects followed on a plain-`http` client (reqwest's default).
const MAX_REDIRECTS: usize = 10;

/// One `https` client per connect timeout: the platform verifier reads the system's roots when a
/// client is built, so they are read once, however many providers share it.
static HTTPS: Mutex<Option<HashMap<Duration, reqwest::Client>>> = Mutex::new(None);

/// Installs the ring crypto provider for rustls (reqwest is built with `rustls-no-provider`).
/// Idempotent and never panics; call it before building any `reqwest::Client`.
pub fn init_tls() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// A client for requests to `base` (a URL), connecting within `connect`.
pub fn for_base(base: &str, connect: Duration) -> reqwest::Result<reqwest::Client> {
    init_tls();
    let plain = base
        .trim()
        .get(..7)
        .is_some_and(|s| s.eq_ignore_ascii_case("http://"));
    if plain {
        return reqwest::Client::builder()
            .connect_timeout(connect)
            .user_agent(USER_AGENT)
            // no trust store: this client is for plain HTTP only
            .tls_certs_only(std::iter::empty())
            .redirect(reqwest::redirect::Policy::custom(|attempt| {
                if attempt.url().scheme() != "http" {
                    attempt.error("the server redirected a plain-http provider to https; set base_url to the https address")
                } else if attempt.previous().len() >= MAX_REDIRECTS {
                    attempt.error("too many redirects")
                } else {
                    attempt.follow()
                }
            }))
            .build();
    }
    let mut cache = HTTPS.lock().unwrap_or_else(|e| e.into_inner());
    let cache = cache.get_or_insert_with(HashMap::new);
    if let Some(c) = cache.get(&connect) {
        return Ok(c.clone());
    }
    let client = reqwest::Client::builder()
        .connect_timeout(connect)
        .user_agent(USER_AGENT)
        .build()?;
    cache.insert(connect, client.clone());
    Ok(client)
}
