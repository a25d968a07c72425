//! An `https` provider is verified against the system's trust store — a corporate CA that the
//! system trusts (here through `SSL_CERT_FILE`) included — and a server whose certificate no
//! trusted CA signed is refused. The server is a real TLS server on 127.0.0.1 with a
//! certificate from a test CA (`tests/tls/`), answering one streamed chat completion.

use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};

use crate::support;
use support::pith::{PithEnv, stderr};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/tls");

/// A TLS server that answers every request with one streamed completion; its port.
async fn tls_server() -> u16 {
    let certs: Vec<CertificateDer<'static>> =
        CertificateDer::pem_file_iter(format!("{DIR}/server.pem"))
            .unwrap()
            .map(Result::unwrap)
            .collect();
    let key = PrivateKeyDer::from_pem_file(format!("{DIR}/server.key")).unwrap();
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let config = tokio_rustls::rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(tcp).await else {
                    return; // the client refused the certificate
                };
                let mut buf = vec![0u8; 65536];
                let mut got = Vec::new();
                // headers, then the body by its length
                loop {
                    let n = tls.read(&mut buf).await.unwrap_or(0);
                    if n == 0 {
                        return;
                    }
                    got.extend_from_slice(&buf[..n]);
                    let text = String::from_utf8_lossy(&got);
                    if let Some(end) = text.find("\r\n\r\n") {
                        let len = text[..end]
                            .lines()
                            .find_map(|l| {
                                l.to_ascii_lowercase()
                                    .strip_prefix("content-length:")
                                    .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                            })
                            .unwrap_or(0);
                        if got.len() >= end + 4 + len {
                            break;
                        }
                    }
                }
                let chunk = |delta: &str, finish: &str| {
                    format!(
                        "data: {{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{{\"index\":0,\"delta\":{delta},\"finish_reason\":{finish}}}]}}\n\n"
                    )
                };
                let body = format!(
                    "{}{}data: {{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[],\"usage\":{{\"prompt_tokens\":10,\"completion_tokens\":2,\"total_tokens\":12}}}}\n\ndata: [DONE]\n\n",
                    chunk(r#"{"role":"assistant","content":"over TLS"}"#, "null"),
                    chunk("{}", r#""stop""#),
                );
                let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n";
                let _ = tls.write_all(head.as_bytes()).await;
                let _ = tls.write_all(body.as_bytes()).await;
                let _ = tls.shutdown().await;
            });
        }
    });
    port
}

#[tokio::test]
async fn an_https_provider_is_verified_against_the_system_roots_with_a_custom_ca() {
    let port = tls_server().await;
    let env = PithEnv::new(&format!("https://127.0.0.1:{port}"), 32_000, 2_000, "");
    // The system trusts the test CA (as a corporate CA would be installed): the turn works.
    let mut cmd = env.command(&["run", "hello"]);
    cmd.env("SSL_CERT_FILE", format!("{DIR}/ca.pem"))
        .env("SSL_CERT_DIR", format!("{DIR}/none"));
    let out = cmd.output().await.unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("over TLS"));
    // A trust store without it: the certificate is refused, and the error says so.
    let mut cmd = env.command(&["run", "hello"]);
    cmd.env("SSL_CERT_FILE", format!("{DIR}/server.pem"))
        .env("SSL_CERT_DIR", format!("{DIR}/none"))
        .env("PITH_RETRY_BASE_MS", "1");
    let out = cmd.output().await.unwrap();
    assert!(
        !out.status.success(),
        "an untrusted certificate was accepted"
    );
    let err = stderr(&out).to_lowercase();
    assert!(err.contains("certificate"), "{err}");
}
