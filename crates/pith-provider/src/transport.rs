//! What every HTTP provider shares around its wire format: the three timeouts (connecting, the
//! first byte of an answer, silence in the middle of one), a bound on the size of one response,
//! recognising a body that is not an event stream (an HTML page), and naming the endpoint in
//! messages without credentials.

use std::pin::Pin;
use std::time::Duration;

use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use tokio::time::Instant;

use super::error::{FaultKind, ProviderError, from_reqwest};
use pith_config::ProviderConfig;

/// Connecting: a hosted API answers in well under a second, a local server at once or not at all.
pub(crate) const DEFAULT_CONNECT: Duration = Duration::from_secs(20);
/// The first byte of an answer: a local server on a CPU may read a long prompt for minutes
/// before it writes anything, and so may a reasoning model before its first token.
pub(crate) const DEFAULT_FIRST_BYTE: Duration = Duration::from_secs(300);
/// Silence in the middle of a streamed answer: once tokens flow, a pause this long means the
/// connection or the server is stuck.
pub(crate) const DEFAULT_IDLE: Duration = Duration::from_secs(120);
/// The most a configured timeout may be.
pub use pith_config::MAX_TIMEOUT_SECS;
/// One response's body, bytes on the wire. An answer of the largest output any model allows is a
/// few MB of events; this bounds a server that never stops.
pub(crate) const MAX_RESPONSE_BYTES: u64 = 64 * 1024 * 1024;

/// How long a provider waits, at each stage of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    pub connect: Duration,
    pub first_byte: Duration,
    pub idle: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            connect: DEFAULT_CONNECT,
            first_byte: DEFAULT_FIRST_BYTE,
            idle: DEFAULT_IDLE,
        }
    }
}

impl Timeouts {
    /// The configured values (validated when the config was loaded), defaults for the rest.
    pub fn from_config(pc: &ProviderConfig) -> Timeouts {
        let secs = |v: Option<u64>, default: Duration| {
            v.filter(|s| *s > 0)
                .map_or(default, |s| Duration::from_secs(s.min(MAX_TIMEOUT_SECS)))
        };
        Timeouts {
            connect: secs(pc.connect_timeout_secs, DEFAULT_CONNECT),
            first_byte: secs(pc.first_byte_timeout_secs, DEFAULT_FIRST_BYTE),
            idle: secs(pc.idle_timeout_secs, DEFAULT_IDLE),
        }
    }

    /// The same wait at every stage (tests).
    pub fn all(d: Duration) -> Timeouts {
        Timeouts {
            connect: d,
            first_byte: d,
            idle: d,
        }
    }
}

/// A URL as shown in messages: scheme, host, port and path; no user, password or query.
pub fn endpoint(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut u) => {
            let _ = u.set_username("");
            let _ = u.set_password(None);
            u.set_query(None);
            u.set_fragment(None);
            u.to_string()
        }
        Err(_) => "the configured base_url".to_string(),
    }
}

/// Seconds as a short figure: `300 s`, `1.5 s`.
fn secs(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}

/// No answer (headers or first byte) within the first-byte timeout.
pub(crate) fn no_answer(endpoint: &str, waited: Duration) -> ProviderError {
    ProviderError::new(
        FaultKind::Network,
        format!(
            "no answer from {endpoint} within {} (first_byte_timeout_secs); the server may be overloaded or stuck",
            secs(waited)
        ),
    )
}

/// Sends a request, waiting at most `timeouts.first_byte` for the response headers.
pub async fn send(
    request: reqwest::RequestBuilder,
    timeouts: &Timeouts,
    endpoint: &str,
) -> Result<reqwest::Response, ProviderError> {
    match tokio::time::timeout(timeouts.first_byte, request.send()).await {
        Ok(r) => r.map_err(from_reqwest),
        Err(_) => Err(no_answer(endpoint, timeouts.first_byte)),
    }
}

pub type ByteStream = Pin<Box<dyn Stream<Item = Result<Bytes, ProviderError>> + Send>>;

/// The body of a response as a stream of chunks, bounded: the first chunk must arrive within
/// `first_byte` of `started` (when the request was sent), each later one within `idle` of the
/// previous, and the whole body must stay under [`MAX_RESPONSE_BYTES`]. A bound that is passed
/// ends the stream with an error (a timeout is a `Network` fault and is retried; an oversized
/// body is not).
pub(crate) fn guarded<S, E>(
    body: S,
    timeouts: Timeouts,
    started: Instant,
    endpoint: String,
    max_bytes: u64,
) -> ByteStream
where
    S: Stream<Item = Result<Bytes, E>> + Send + 'static,
    E: Into<ProviderError>,
{
    let guard = Guard {
        body: Box::pin(body),
        deadline: started + timeouts.first_byte,
        seen_bytes: false,
        total: 0,
        done: false,
        timeouts,
        endpoint,
        max_bytes,
    };
    // Fused: reading on after the end (an error body read after a peek) yields nothing more.
    Box::pin(StreamExt::fuse(futures_util::stream::unfold(
        guard,
        |mut guard| async move {
            let item = guard.next_chunk().await?;
            Some((item, guard))
        },
    )))
}

/// A body being read under [`guarded`]'s bounds.
struct Guard<S> {
    body: Pin<Box<S>>,
    /// When the next chunk must have arrived.
    deadline: Instant,
    seen_bytes: bool,
    total: u64,
    /// A bound was passed (or the body failed): nothing more is read.
    done: bool,
    timeouts: Timeouts,
    endpoint: String,
    max_bytes: u64,
}

impl<S, E> Guard<S>
where
    S: Stream<Item = Result<Bytes, E>>,
    E: Into<ProviderError>,
{
    /// The next chunk, or the error that ends the body; `None` at its end.
    async fn next_chunk(&mut self) -> Option<Result<Bytes, ProviderError>> {
        if self.done {
            return None;
        }
        let next = tokio::time::timeout_at(self.deadline, self.body.next()).await;
        match next {
            Err(_) => {
                self.done = true;
                Some(Err(self.timed_out()))
            }
            Ok(None) => None,
            Ok(Some(Err(e))) => {
                self.done = true;
                Some(Err(e.into()))
            }
            Ok(Some(Ok(chunk))) => Some(self.take(chunk)),
        }
    }

    /// Nothing came by the deadline: no answer at all, or an answer that stalled.
    fn timed_out(&self) -> ProviderError {
        if self.seen_bytes {
            ProviderError::new(
                FaultKind::Network,
                format!(
                    "the answer from {} stalled: nothing for {} (idle_timeout_secs)",
                    self.endpoint,
                    secs(self.timeouts.idle)
                ),
            )
        } else {
            no_answer(&self.endpoint, self.timeouts.first_byte)
        }
    }

    /// Counts a chunk against the size bound and moves the deadline on.
    fn take(&mut self, chunk: Bytes) -> Result<Bytes, ProviderError> {
        self.total += chunk.len() as u64;
        if self.total > self.max_bytes {
            self.done = true;
            return Err(ProviderError::new(
                FaultKind::BadRequest,
                format!(
                    "the answer from {} passed {} MiB without ending; stopped reading it",
                    self.endpoint,
                    self.max_bytes / (1024 * 1024)
                ),
            ));
        }
        if !chunk.is_empty() {
            self.seen_bytes = true;
            self.deadline = Instant::now() + self.timeouts.idle;
        }
        Ok(chunk)
    }
}

/// The body of a successful response, bounded (see [`guarded`]).
pub fn body(
    response: reqwest::Response,
    timeouts: Timeouts,
    started: Instant,
    endpoint: String,
) -> ByteStream {
    guarded(
        response.bytes_stream(),
        timeouts,
        started,
        endpoint,
        MAX_RESPONSE_BYTES,
    )
}

impl From<reqwest::Error> for ProviderError {
    fn from(e: reqwest::Error) -> Self {
        from_reqwest(e)
    }
}

impl From<std::convert::Infallible> for ProviderError {
    fn from(e: std::convert::Infallible) -> Self {
        match e {}
    }
}

/// Whether the start of a body is an HTML (or XML) page rather than events or JSON.
pub(crate) fn looks_like_html(start: &[u8]) -> bool {
    let text = String::from_utf8_lossy(&start[..start.len().min(512)]);
    let t = text
        .trim_start_matches('\u{feff}')
        .trim_start()
        .to_ascii_lowercase();
    t.starts_with("<!doctype")
        || t.starts_with("<html")
        || t.starts_with("<?xml")
        || t.starts_with("<head")
        || t.starts_with("<body")
}

/// The `<title>` of an HTML page, else its first words, one line and short.
pub(crate) fn html_summary(body: &str) -> String {
    let lower = body.to_ascii_lowercase();
    let title = lower.find("<title").and_then(|start| {
        let open_end = start + lower[start..].find('>')? + 1;
        let close = open_end + lower[open_end..].find("</title")?;
        Some(body.get(open_end..close)?.to_string())
    });
    let text = match title {
        Some(t) if !t.trim().is_empty() => t,
        _ => strip_tags(body),
    };
    let words: Vec<&str> = text.split_whitespace().collect();
    let mut out = words.join(" ");
    if out.chars().count() > 120 {
        out = out.chars().take(120).collect::<String>() + "…";
    }
    out
}

fn strip_tags(html: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' => {
                in_tag = false;
                out.push(' ');
            }
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out
}

/// A successful (2xx) response whose body is an HTML page: a proxy, a login portal or a wrong
/// `base_url`, never the model's answer. Not retried.
pub(crate) fn html_instead_of_stream(endpoint: &str, status: u16, body: &str) -> ProviderError {
    let summary = html_summary(body);
    let shown = if summary.is_empty() {
        String::new()
    } else {
        format!(" (\"{summary}\")")
    };
    let mut e = ProviderError::new(
        FaultKind::BadRequest,
        format!(
            "{endpoint} answered HTTP {status} with an HTML page{shown} instead of a model's answer; check base_url (an OpenAI-compatible one usually ends in /v1) and any proxy in between"
        ),
    );
    e.status = Some(status);
    e
}

/// The body of a successful response that is to be read as events: when the server did not
/// announce `text/event-stream`, its start is checked first, and an HTML page is an error (see
/// [`html_instead_of_stream`]) rather than a stream that "ended early".
pub(crate) async fn event_body(
    mut body: ByteStream,
    content_type: &str,
    status: u16,
    endpoint: &str,
) -> Result<ByteStream, ProviderError> {
    if content_type.starts_with("text/event-stream") {
        return Ok(body);
    }
    let start = peek(&mut body, 4096).await?;
    if content_type.starts_with("text/html") || looks_like_html(&start) {
        let mut text = String::from_utf8_lossy(&start).into_owned();
        text.push_str(&read_text(&mut body, ERROR_BODY_LIMIT).await);
        let err = html_instead_of_stream(endpoint, status, &text);
        tracing::warn!(content_type, "{}", err.message);
        return Err(err);
    }
    Ok(prepend(start, body))
}

/// Reads the start of a body (up to `limit` bytes, within the stream's own bounds), for
/// recognising what it is; the stream goes on from where this stopped.
pub async fn peek(stream: &mut ByteStream, limit: usize) -> Result<Vec<u8>, ProviderError> {
    let mut buf = Vec::new();
    while buf.len() < limit {
        match stream.next().await {
            Some(Ok(chunk)) => buf.extend_from_slice(&chunk),
            Some(Err(e)) => return Err(e),
            None => break,
        }
        // An event stream announces itself in its first line.
        if buf.contains(&b'\n') {
            break;
        }
    }
    Ok(buf)
}

/// The most of an error body that is read.
pub(crate) const ERROR_BODY_LIMIT: usize = 64 * 1024;

/// Up to `limit` bytes of a body as text (whatever arrived before an error or a timeout).
pub async fn read_text(body: &mut ByteStream, limit: usize) -> String {
    let mut buf = Vec::new();
    while buf.len() < limit {
        match body.next().await {
            Some(Ok(chunk)) => buf.extend_from_slice(&chunk),
            _ => break,
        }
    }
    buf.truncate(limit);
    String::from_utf8_lossy(&buf).into_owned()
}

/// `peeked` put back in front of `rest`.
pub fn prepend(peeked: Vec<u8>, rest: ByteStream) -> ByteStream {
    if peeked.is_empty() {
        return rest;
    }
    Box::pin(
        futures_util::stream::once(async move { Ok(Bytes::from(peeked)) })
            .chain(rest)
            .fuse(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunks(
        items: Vec<(u64, &'static str)>,
    ) -> impl Stream<Item = Result<Bytes, std::convert::Infallible>> + Send + 'static {
        futures_util::stream::iter(items).then(|(ms, s)| async move {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            Ok(Bytes::from_static(s.as_bytes()))
        })
    }

    async fn collect(s: ByteStream) -> (String, Option<ProviderError>) {
        let items: Vec<_> = s.collect().await;
        let mut text = String::new();
        let mut err = None;
        for i in items {
            match i {
                Ok(b) => text.push_str(&String::from_utf8_lossy(&b)),
                Err(e) => err = Some(e),
            }
        }
        (text, err)
    }

    #[tokio::test(start_paused = true)]
    async fn first_byte_and_idle_bounds() {
        let t = Timeouts {
            connect: Duration::from_secs(1),
            first_byte: Duration::from_secs(300),
            idle: Duration::from_secs(10),
        };
        // A slow first byte within the bound, then steady chunks: all of it.
        let s = guarded(
            chunks(vec![(290_000, "a"), (9_000, "b"), (9_000, "c")]),
            t,
            Instant::now(),
            "http://x/v1".into(),
            1000,
        );
        assert_eq!(collect(s).await, ("abc".into(), None));

        // Nothing at all.
        let s = guarded(
            chunks(vec![(301_000, "a")]),
            t,
            Instant::now(),
            "http://x/v1".into(),
            1000,
        );
        let (text, err) = collect(s).await;
        assert_eq!(text, "");
        let err = err.unwrap();
        assert_eq!(err.kind, FaultKind::Network);
        assert!(
            err.message
                .contains("no answer from http://x/v1 within 300 s"),
            "{}",
            err.message
        );

        // A stall mid-stream.
        let s = guarded(
            chunks(vec![(1, "a"), (11_000, "b")]),
            t,
            Instant::now(),
            "http://x/v1".into(),
            1000,
        );
        let (text, err) = collect(s).await;
        assert_eq!(text, "a");
        let err = err.unwrap();
        assert_eq!(err.kind, FaultKind::Network);
        assert!(
            err.message.contains("stalled: nothing for 10 s"),
            "{}",
            err.message
        );
    }

    #[tokio::test(start_paused = true)]
    async fn an_endless_body_is_cut_and_not_retried() {
        let endless = futures_util::stream::repeat(Ok::<_, std::convert::Infallible>(
            Bytes::from_static(b"data: {}\n\n"),
        ));
        let s = guarded(
            endless,
            Timeouts::default(),
            Instant::now(),
            "http://x/v1".into(),
            1024 * 1024,
        );
        let (text, err) = collect(s).await;
        assert!(text.len() <= 1024 * 1024 && text.len() > 1000 * 1000);
        let err = err.unwrap();
        assert!(!err.kind.is_retryable());
        assert!(err.message.contains("passed 1 MiB"), "{}", err.message);
    }

    #[tokio::test]
    async fn reading_past_the_end_yields_nothing() {
        let mut s = guarded(
            chunks(vec![(0, "only")]),
            Timeouts::default(),
            Instant::now(),
            "x".into(),
            1000,
        );
        assert_eq!(peek(&mut s, 4096).await.unwrap(), b"only");
        assert_eq!(read_text(&mut s, 100).await, "");
        assert!(s.next().await.is_none());
    }

    #[test]
    fn endpoints_drop_credentials_and_queries() {
        assert_eq!(
            endpoint("https://user:pw@api.example.com:8443/v1/chat/completions?key=abc#x"),
            "https://api.example.com:8443/v1/chat/completions"
        );
        assert_eq!(endpoint("nonsense"), "the configured base_url");
    }

    #[test]
    fn html_is_recognised_and_summarised() {
        assert!(looks_like_html(b"  <!DOCTYPE html><html>"));
        assert!(looks_like_html(b"\xef\xbb\xbf<html lang=en>"));
        assert!(!looks_like_html(b"data: {}\n\n"));
        assert!(!looks_like_html(b"{\"error\": 1}"));
        assert_eq!(
            html_summary("<html><head><title>\n  Sign in - Corp Proxy </title></head></html>"),
            "Sign in - Corp Proxy"
        );
        assert_eq!(
            html_summary("<html><body><h1>502</h1> Bad  gateway</body>"),
            "502 Bad gateway"
        );
        let e = html_instead_of_stream(
            "http://x/v1/chat/completions",
            200,
            "<html><title>Login</title>",
        );
        assert_eq!(e.kind, FaultKind::BadRequest);
        assert!(e.message.contains("HTML page (\"Login\")"), "{}", e.message);
        assert!(e.message.contains("base_url"), "{}", e.message);
    }

    #[test]
    fn configured_timeouts() {
        let pc = ProviderConfig {
            first_byte_timeout_secs: Some(30),
            idle_timeout_secs: Some(5),
            ..ProviderConfig::default()
        };
        let t = Timeouts::from_config(&pc);
        assert_eq!(t.first_byte, Duration::from_secs(30));
        assert_eq!(t.idle, Duration::from_secs(5));
        assert_eq!(t.connect, DEFAULT_CONNECT);
        assert_eq!(
            Timeouts::from_config(&ProviderConfig::default()),
            Timeouts::default()
        );
        let d = Timeouts::default();
        assert!(d.first_byte <= Duration::from_secs(300));
        assert!(d.idle * 2 <= d.first_byte);
    }
}
