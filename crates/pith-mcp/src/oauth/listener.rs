//! The loopback redirect listener of the authorization-code flow: one HTTP request on
//! `127.0.0.1`, answered with a short page. Only a request to the callback path carrying the
//! `state` pith sent is taken; anything else is answered 400 and the listener keeps waiting,
//! until the deadline.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The redirect's path.
pub(crate) const CALLBACK_PATH: &str = "/callback";
/// Longest request head read from the browser.
const MAX_REQUEST: usize = 16 * 1024;
/// How long one browser connection may take to send its request.
const READ_TIMEOUT: Duration = Duration::from_secs(10);

/// What the authorization server sent back through the browser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Callback {
    pub code: String,
    pub state: String,
    /// RFC 9207 `iss`, checked against the server's issuer by the SDK.
    pub issuer: Option<String>,
}

/// Why no usable callback arrived.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum CallbackError {
    #[error("no answer from the browser within {0} s; run the sign-in again")]
    Timeout(u64),
    /// The server refused (`error`, `error_description`), e.g. the user denied access.
    #[error("the authorization server refused: {0}")]
    Refused(String),
    #[error("the redirect listener failed: {0}")]
    Io(String),
}

/// The browser's connection that brought the callback, not answered yet: its page says how
/// the sign-in ended, so it is answered once the code is exchanged for tokens.
#[derive(Debug)]
pub(crate) struct Pending {
    stream: TcpStream,
}

impl Pending {
    /// Answers the browser: signed in, or failed (why is said in the terminal, not here).
    /// Bounded: a browser that does not read is not waited for.
    pub(crate) async fn answer(mut self, signed_in: bool) {
        let (status, text) = if signed_in {
            (200, "Signed in. You can close this tab and return to pith.")
        } else {
            (400, "Sign-in failed; pith says why in the terminal.")
        };
        let _ = tokio::time::timeout(READ_TIMEOUT, respond(&mut self.stream, status, text)).await;
    }
}

/// Waits for the browser's redirect to `listener`, until `timeout`. The callback's connection
/// is handed back unanswered ([`Pending::answer`]).
pub(crate) async fn wait(
    listener: TcpListener,
    state: &str,
    timeout: Duration,
) -> Result<(Callback, Pending), CallbackError> {
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let accepted = tokio::time::timeout_at(deadline, listener.accept()).await;
        let (stream, _) = match accepted {
            Err(_) => return Err(CallbackError::Timeout(timeout.as_secs())),
            Ok(Err(e)) => return Err(CallbackError::Io(e.to_string())),
            Ok(Ok(s)) => s,
        };
        if let Some(done) = serve_one(stream, state).await {
            return done;
        }
    }
}

/// Reads one request and answers it, but for the callback; `None` when it was not the callback
/// (keep waiting).
async fn serve_one(
    mut stream: TcpStream,
    state: &str,
) -> Option<Result<(Callback, Pending), CallbackError>> {
    let target = match tokio::time::timeout(READ_TIMEOUT, request_target(&mut stream)).await {
        Ok(Some(t)) => t,
        _ => {
            let _ = respond(&mut stream, 400, "Bad request.").await;
            return None;
        }
    };
    let (outcome, text) = match parse_target(&target, state) {
        Some(Ok(callback)) => return Some(Ok((callback, Pending { stream }))),
        Some(Err(e)) => (
            Some(Err(e)),
            "Sign-in failed; pith says why in the terminal.",
        ),
        None => (None, "Not a sign-in callback of this pith."),
    };
    let _ = tokio::time::timeout(READ_TIMEOUT, respond(&mut stream, 400, text)).await;
    outcome
}

/// The request target of `GET TARGET HTTP/1.1`, read up to the end of the head.
async fn request_target(stream: &mut TcpStream) -> Option<String> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 2048];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
        if buf.len() > MAX_REQUEST {
            return None;
        }
    }
    let head = String::from_utf8_lossy(&buf);
    let line = head.lines().next()?;
    let mut parts = line.split(' ');
    (parts.next()? == "GET").then_some(())?;
    parts.next().map(str::to_string)
}

/// The callback's parameters, if `target` is the callback path with the expected `state`:
/// `None` for anything else (a favicon, a stray or forged request).
pub(crate) fn parse_target(target: &str, state: &str) -> Option<Result<Callback, CallbackError>> {
    let url = url::Url::parse(&format!("http://127.0.0.1{target}")).ok()?;
    if url.path() != CALLBACK_PATH {
        return None;
    }
    let get = |k: &str| {
        url.query_pairs()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.into_owned())
    };
    if get("state").as_deref() != Some(state) {
        return None;
    }
    if let Some(error) = get("error") {
        let why = match get("error_description") {
            Some(d) => format!("{error} ({d})"),
            None => error,
        };
        let why: String = pith_protocol::text::one_line(&why)
            .chars()
            .take(300)
            .collect();
        return Some(Err(CallbackError::Refused(why)));
    }
    let code = get("code")?;
    Some(Ok(Callback {
        code,
        state: state.to_string(),
        issuer: get("iss"),
    }))
}

async fn respond(stream: &mut TcpStream, status: u16, text: &str) -> std::io::Result<()> {
    let reason = if status == 200 { "OK" } else { "Bad Request" };
    let body = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>pith</title></head>\
         <body style=\"font-family:sans-serif\"><p>{text}</p></body></html>"
    );
    let response = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\n\
         Content-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(response.as_bytes()).await?;
    stream.shutdown().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_callback_with_our_state_is_taken() {
        let ok = parse_target("/callback?code=abc&state=S1&iss=https%3A%2F%2Fas", "S1");
        assert_eq!(
            ok,
            Some(Ok(Callback {
                code: "abc".into(),
                state: "S1".into(),
                issuer: Some("https://as".into())
            }))
        );
        // A forged or stale state, another path, a favicon: ignored, the listener keeps waiting.
        assert_eq!(parse_target("/callback?code=abc&state=S2", "S1"), None);
        assert_eq!(parse_target("/callback?code=abc", "S1"), None);
        assert_eq!(parse_target("/other?code=abc&state=S1", "S1"), None);
        assert_eq!(parse_target("/favicon.ico", "S1"), None);
    }

    #[test]
    fn a_refusal_is_reported_in_one_bounded_line() {
        let long = "x".repeat(1000);
        let got = parse_target(
            &format!("/callback?state=S&error=access_denied&error_description=no%0Away{long}"),
            "S",
        );
        let Some(Err(CallbackError::Refused(why))) = got else {
            panic!("{got:?}")
        };
        assert!(why.starts_with("access_denied (no"), "{why}");
        assert!(!why.contains('\n'));
        assert!(why.len() <= 300);
    }

    #[tokio::test]
    async fn the_listener_answers_strays_and_times_out() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let task =
            tokio::spawn(async move { wait(listener, "S", Duration::from_millis(600)).await });
        // A stray request is answered 400 and does not end the wait.
        let mut s = TcpStream::connect(addr).await.unwrap();
        s.write_all(b"GET /callback?code=x&state=WRONG HTTP/1.1\r\n\r\n")
            .await
            .unwrap();
        let mut answer = String::new();
        s.read_to_string(&mut answer).await.unwrap();
        assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
        let got = task.await.unwrap();
        assert!(matches!(got, Err(CallbackError::Timeout(0))), "{got:?}");
    }

    /// Sends the callback; the task's answer and the browser's connection.
    async fn callback(
        timeout: Duration,
    ) -> (
        tokio::task::JoinHandle<Result<(Callback, Pending), CallbackError>>,
        TcpStream,
        std::net::SocketAddr,
    ) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let task = tokio::spawn(async move { wait(listener, "S", timeout).await });
        let mut s = TcpStream::connect(addr).await.unwrap();
        s.write_all(b"GET /callback?code=C&state=S HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .unwrap();
        (task, s, addr)
    }

    #[tokio::test]
    async fn the_callback_is_taken_once_and_answered_after_the_exchange() {
        let (task, mut s, addr) = callback(Duration::from_secs(5)).await;
        let (got, pending) = task.await.unwrap().unwrap();
        assert_eq!(got.code, "C");
        // Nothing is said to the browser before the tokens are in.
        let mut byte = [0u8; 1];
        let early = tokio::time::timeout(Duration::from_millis(200), s.read(&mut byte)).await;
        assert!(early.is_err(), "answered before the exchange: {early:?}");
        pending.answer(true).await;
        let mut answer = String::new();
        s.read_to_string(&mut answer).await.unwrap();
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        assert!(answer.contains("Signed in"));
        // Single use: the listener is gone with the wait.
        assert!(TcpStream::connect(addr).await.is_err());
    }

    #[tokio::test]
    async fn a_failed_exchange_tells_the_browser_it_failed() {
        let (task, mut s, _) = callback(Duration::from_secs(5)).await;
        let (_, pending) = task.await.unwrap().unwrap();
        pending.answer(false).await;
        let mut answer = String::new();
        s.read_to_string(&mut answer).await.unwrap();
        assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
        assert!(answer.contains("Sign-in failed"), "{answer}");
        assert!(!answer.contains("Signed in"), "{answer}");
    }
}
