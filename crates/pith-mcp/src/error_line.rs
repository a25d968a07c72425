//! A failed MCP handshake as one plain line that names the problem: no Rust type names, no
//! `Debug` dumps, no reply bodies, and no secret (the scrubber runs over it). The SDK's errors
//! nest a transport's type name (`Transport [rmcp::transport::worker::WorkerTransport<…>]`)
//! and reqwest's own wording ("error sending request") names nothing a user can act on.

use rmcp::service::ClientInitializeError;

/// Longest line kept.
const MAX: usize = 300;

/// The SDK's handshake error as one plain line.
pub(crate) fn init_error(e: &ClientInitializeError) -> String {
    let text = match e {
        ClientInitializeError::ConnectionClosed(_) => {
            return "the server closed the connection during the MCP handshake".to_string();
        }
        ClientInitializeError::TransportError { error, .. } => {
            transport_error(error.error.as_ref())
        }
        ClientInitializeError::JsonRpcError(data) => {
            format!("the server refused the handshake: {}", data.message)
        }
        ClientInitializeError::Cancelled => "the handshake was cancelled".to_string(),
        other => other.to_string(),
    };
    let text = plain(&text);
    if text.contains("connection closed") || text.contains("ConnectionClosed") {
        "the server closed the connection during the MCP handshake".to_string()
    } else {
        text
    }
}

/// A request that could not be sent, as one plain line (no transport type name).
pub(crate) fn send_error(e: &rmcp::transport::DynamicTransportError) -> String {
    plain(&transport_error(e.error.as_ref()))
}

/// A transport's error: a network failure said by what happened, else the innermost message
/// that names something.
pub(crate) fn transport_error(e: &(dyn std::error::Error + 'static)) -> String {
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    let mut current = Some(e);
    while let Some(err) = current {
        if let Some(r) = err.downcast_ref::<reqwest::Error>() {
            return reqwest_line(r);
        }
        match err.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
            Some(StreamableHttpError::Client(r)) => return reqwest_line(r),
            Some(StreamableHttpError::UnexpectedServerResponse(text)) => {
                return unexpected(text);
            }
            _ => {}
        }
        current = err.source();
    }
    e.to_string()
}

/// The SDK's "unexpected server response", without the reply's body it carries
/// (`HTTP 401 Unauthorized: {body}`).
fn unexpected(text: &str) -> String {
    match text.strip_prefix("HTTP ") {
        Some(rest) => {
            let status = rest.split(':').next().unwrap_or_default().trim();
            format!("the server answered HTTP {status}, not an MCP reply")
        }
        None => format!("unexpected server response: {text}"),
    }
}

/// A reqwest failure by its kind.
fn reqwest_line(e: &reqwest::Error) -> String {
    if e.is_timeout() {
        return "the server did not answer in time".to_string();
    }
    if e.is_connect() {
        return "the connection was refused or could not be made".to_string();
    }
    if let Some(status) = e.status() {
        return format!("the server answered HTTP {}", status.as_u16());
    }
    let mut cause: &dyn std::error::Error = e;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause.to_string()
}

/// `text` in one bounded line, without bracketed type names (`[a::b<C>]`) or `Debug` dumps
/// (`Some(…)`, `Object {…}`), secrets scrubbed.
pub(crate) fn plain(text: &str) -> String {
    let one = pith_protocol::text::one_line(text);
    let mut out = String::with_capacity(one.len());
    let mut rest = one.as_str();
    while let Some(open) = rest.find('[') {
        let Some(len) = closing(&rest[open..]) else {
            break;
        };
        let inner = &rest[open + 1..open + len];
        out.push_str(&rest[..open]);
        if !(inner.contains("::") || inner.contains('<')) {
            out.push_str(&rest[open..=open + len]);
        }
        rest = &rest[open + len + 1..];
    }
    out.push_str(rest);
    let out = out
        .replace("Send message error ", "")
        .replace("Transport  error: ", "")
        .replace("Transport error: ", "");
    let out = out
        .split(", when ")
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let out: String = out.chars().take(MAX).collect();
    pith_secrets::scrub(&out).into_owned()
}

/// The offset of the `]` closing the `[` that `s` starts with.
fn closing(s: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in s.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_testers_line_loses_its_type_dump() {
        let raw = "Send message error Transport [rmcp::transport::worker::WorkerTransport<rmcp::transport::streamable_http_client::StreamableHttpClientWorker<rmcp::transport::auth::AuthClient<reqwest::async_impl::client::Client>>>] error: Auth error: OAuth token refresh failed: Server returned error response: invalid_client, when send initialize request";
        assert_eq!(
            plain(raw),
            "Auth error: OAuth token refresh failed: Server returned error response: invalid_client"
        );
        let kept = plain("list [a, b]\nnext");
        assert_eq!(kept, "list [a, b] next");
        assert!(plain(&"x".repeat(1000)).len() <= MAX);
    }

    #[test]
    fn a_transport_error_is_named_by_what_happened() {
        let e = std::io::Error::other("Connection refused (os error 111)");
        assert_eq!(transport_error(&e), "Connection refused (os error 111)");
    }

    #[test]
    fn a_failed_send_names_no_transport_type() {
        let inner: Box<dyn std::error::Error + Send + Sync> = "Transport channel closed".into();
        let e = rmcp::transport::DynamicTransportError::from_parts(
            "rmcp::transport::worker::WorkerTransport<X<Y>>",
            std::any::TypeId::of::<u8>(),
            inner,
        );
        let whole = rmcp::ServiceError::TransportSend(e);
        assert!(whole.to_string().contains("rmcp::transport"), "{whole}");
        assert_eq!(
            crate::manager::service_error(&whole),
            "Transport channel closed"
        );
    }

    #[test]
    fn an_unexpected_answer_loses_its_body() {
        use rmcp::transport::streamable_http_client::StreamableHttpError;
        let e: StreamableHttpError<reqwest::Error> = StreamableHttpError::UnexpectedServerResponse(
            "HTTP 401 Unauthorized: {\"error\": \"invalid_client\", \"secret\": 1}".into(),
        );
        assert_eq!(
            transport_error(&e),
            "the server answered HTTP 401 Unauthorized, not an MCP reply"
        );
    }

    #[tokio::test]
    async fn a_refused_connection_is_plain() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/mcp", l.local_addr().unwrap());
        drop(l);
        pith_http::init_tls();
        let e = reqwest::Client::new().get(&url).send().await.unwrap_err();
        assert_eq!(
            transport_error(&e),
            "the connection was refused or could not be made"
        );
        // As the SDK wraps it, without a source to follow.
        use rmcp::transport::streamable_http_client::StreamableHttpError;
        let e: StreamableHttpError<reqwest::Error> = StreamableHttpError::Client(e);
        assert_eq!(
            transport_error(&e),
            "the connection was refused or could not be made"
        );
    }
}
