//! OpenAI-compatible chat completions (streaming).

/// Installs the ring crypto provider for rustls (reqwest is built with `rustls-no-provider`).
/// Idempotent and never panics; call it before building any `reqwest::Client`.
pub fn init_tls() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}
