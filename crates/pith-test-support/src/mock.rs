//! An in-process HTTP server that answers model requests from a script.
//!
//! ```ignore
//! let server = MockServer::start().await;
//! server.push(support::openai::text("hello", Some((10, 2))));
//! // point the provider at format!("{}/v1", server.url())
//! let reqs = server.requests();
//! ```
//!
//! Each server binds its own port on 127.0.0.1, so any number can run in parallel. When the
//! script is exhausted the server answers HTTP 500 `{"error":{"message":"mock script exhausted"}}`
//! so a test that makes an unexpected request fails visibly.
//!
//! Every request body is checked against the rules the real APIs enforce (`super::wire`): a
//! request that breaks one is answered HTTP 400 naming the rule, and the test fails when the
//! server is dropped (unless it called [`MockServer::allow_invalid`]).

use std::collections::{BTreeMap, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::Response;
use axum::routing::post;
use futures_util::stream;
use serde_json::{Value, json};

/// Header names whose values are never recorded (only their presence).
const SECRET_HEADERS: &[&str] = &["authorization", "x-api-key", "api-key"];

/// A secret header value: kept for assertions, never printed by `Debug`.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(pub String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(REDACTED)")
    }
}

/// One request the server received.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    /// Lower-case header names. `authorization`, `x-api-key` and `api-key` values are replaced
    /// by "REDACTED" (present means the client sent one).
    pub headers: BTreeMap<String, String>,
    /// The body parsed as JSON (`Value::Null` if it was empty, a string if it was not JSON).
    pub body: Value,
    /// The real values of the redacted headers, for tests that check the exact credential.
    pub secrets: BTreeMap<String, Secret>,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }

    /// The real value of a redacted header (`authorization`, `x-api-key`, `api-key`).
    pub fn secret(&self, name: &str) -> Option<&str> {
        self.secrets
            .get(&name.to_ascii_lowercase())
            .map(|s| s.0.as_str())
    }
}

#[derive(Debug, Clone)]
enum Payload {
    /// A `text/event-stream` body written in these chunks (one write each).
    Sse(Vec<Bytes>),
    /// A complete body.
    Body { content_type: String, body: String },
    /// The same SSE frame again and again, never ending.
    Endless(String),
}

/// One scripted answer.
#[derive(Debug, Clone)]
pub struct MockResponse {
    status: u16,
    headers: Vec<(String, String)>,
    payload: Payload,
    delay: Duration,
    first_delay: Duration,
    cut_after: Option<usize>,
    hold_open: bool,
}

impl MockResponse {
    /// A 200 `text/event-stream` response made of raw SSE frames, each a full
    /// `data: …\n\n` or `event: x\ndata: …\n\n`.
    pub fn sse(frames: impl IntoIterator<Item = String>) -> Self {
        Self::chunks(frames.into_iter().map(String::into_bytes).collect())
    }

    /// A 200 `text/event-stream` response whose body is written in exactly these chunks (to
    /// split a frame at an awkward byte; give it a `delay_ms` so each arrives on its own).
    pub fn chunks(chunks: Vec<Vec<u8>>) -> Self {
        MockResponse {
            status: 200,
            headers: Vec::new(),
            payload: Payload::Sse(chunks.into_iter().map(Bytes::from).collect()),
            delay: Duration::ZERO,
            first_delay: Duration::ZERO,
            cut_after: None,
            hold_open: false,
        }
    }

    /// A 200 event stream that repeats `frame` forever (a server that never stops).
    pub fn endless(frame: String) -> Self {
        MockResponse {
            payload: Payload::Endless(frame),
            ..MockResponse::sse(Vec::new())
        }
    }

    /// A response with this status and JSON body (e.g. an error body).
    pub fn status(code: u16, body_json: Value) -> Self {
        MockResponse {
            status: code,
            headers: Vec::new(),
            payload: Payload::Body {
                content_type: "application/json".into(),
                body: body_json.to_string(),
            },
            delay: Duration::ZERO,
            first_delay: Duration::ZERO,
            cut_after: None,
            hold_open: false,
        }
    }

    /// A response with this status, content type and raw body.
    pub fn raw(code: u16, content_type: &str, body: impl Into<String>) -> Self {
        MockResponse {
            payload: Payload::Body {
                content_type: content_type.into(),
                body: body.into(),
            },
            ..MockResponse::status(code, Value::Null)
        }
    }

    /// Adds a response header.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    /// Waits this long between SSE frames.
    pub fn delay_ms(mut self, ms: u64) -> Self {
        self.delay = Duration::from_millis(ms);
        self
    }

    /// Waits this long before sending the response headers.
    pub fn first_delay_ms(mut self, ms: u64) -> Self {
        self.first_delay = Duration::from_millis(ms);
        self
    }

    /// Sends only the first `k` frames, then aborts the connection without finishing the
    /// chunked body (the client sees a broken stream).
    pub fn cut_after(mut self, k: usize) -> Self {
        self.cut_after = Some(k);
        self
    }

    /// After the last frame, keeps the connection open without ending the body (for interrupt
    /// and timeout tests).
    pub fn hold_open(mut self) -> Self {
        self.hold_open = true;
        self
    }
}

/// Answers a request from its body when no scripted answer is queued.
pub(crate) type Responder = Box<dyn Fn(&Value) -> MockResponse + Send + Sync>;

#[derive(Default)]
struct Shared {
    queue: Mutex<VecDeque<MockResponse>>,
    /// Answers requests once the queue is empty (see [`MockServer::respond_with`]).
    responder: Mutex<Option<Arc<Responder>>>,
    /// What `GET /props` answers, like a llama.cpp server (`None`: 404).
    props: Mutex<Option<Value>>,
    requests: Mutex<Vec<Recorded>>,
    /// Broken wire rules, one line per request that broke any.
    violations: Mutex<Vec<String>>,
    allow_invalid: std::sync::atomic::AtomicBool,
}

/// The mock server. Dropping it stops accepting connections.
pub struct MockServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl MockServer {
    /// Starts a server on 127.0.0.1 with an OS-assigned port. Needs a tokio runtime.
    pub async fn start() -> MockServer {
        let shared = Arc::new(Shared::default());
        let app = Router::new()
            .route("/v1/chat/completions", post(handle))
            .route("/v1/messages", post(handle))
            .route("/v1/responses", post(handle))
            .route("/props", axum::routing::get(props))
            .fallback(unknown_route)
            .with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("mock server: bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("mock server: local addr");
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        MockServer { addr, shared, task }
    }

    /// A server with these answers queued.
    pub async fn with(responses: impl IntoIterator<Item = MockResponse>) -> MockServer {
        let server = MockServer::start().await;
        server.push_all(responses);
        server
    }

    /// For tests that send a malformed request on purpose: broken wire rules are still answered
    /// with 400, but do not fail the test.
    pub fn allow_invalid(&self) {
        self.shared
            .allow_invalid
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// The wire rules the requests so far broke.
    pub fn violations(&self) -> Vec<String> {
        lock(&self.shared.violations).clone()
    }

    /// `http://127.0.0.1:PORT` (an openai-kind base_url is `format!("{}/v1", url)`).
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The openai-kind base URL: `http://127.0.0.1:PORT/v1`.
    pub fn openai_base_url(&self) -> String {
        format!("{}/v1", self.url())
    }

    /// Queues the next answer.
    pub fn push(&self, response: MockResponse) {
        lock(&self.shared.queue).push_back(response);
    }

    /// Queues several answers in order.
    pub fn push_all(&self, responses: impl IntoIterator<Item = MockResponse>) {
        lock(&self.shared.queue).extend(responses);
    }

    /// Answers every request with `f(body)` once the scripted queue is empty.
    pub fn respond_with(&self, f: impl Fn(&Value) -> MockResponse + Send + Sync + 'static) {
        *lock(&self.shared.responder) = Some(Arc::new(Box::new(f)));
    }

    /// Makes `GET /props` answer `props` (as a llama.cpp server does).
    pub fn set_props(&self, props: Value) {
        *lock(&self.shared.props) = Some(props);
    }

    /// How many scripted answers have not been used yet.
    pub fn remaining(&self) -> usize {
        lock(&self.shared.queue).len()
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<Recorded> {
        lock(&self.shared.requests).clone()
    }

    /// The body of the `i`-th request (panics with a clear message if there is none).
    pub fn request_body(&self, i: usize) -> Value {
        let reqs = self.requests();
        match reqs.get(i) {
            Some(r) => r.body.clone(),
            None => panic!("mock server: no request #{i} (got {})", reqs.len()),
        }
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.task.abort();
        let allowed = self
            .shared
            .allow_invalid
            .load(std::sync::atomic::Ordering::Relaxed);
        let violations = self.violations();
        if !violations.is_empty() && !allowed && !std::thread::panicking() {
            panic!(
                "mock server: requests broke the wire rules:\n{}",
                violations.join("\n")
            );
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panicking test thread must not poison the mock for the others.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Records the request; returns its body as recorded.
/// `value` with every object's keys in sorted order. serde_json keeps insertion order when a
/// dependency turns on its `preserve_order` feature (the ACP schema crate does); the request
/// snapshots compare content, not the order the engine happened to write keys in.
pub fn sorted(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(String, Value)> = map.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(entries.into_iter().map(|(k, v)| (k, sorted(v))).collect())
        }
        Value::Array(items) => Value::Array(items.into_iter().map(sorted).collect()),
        other => other,
    }
}

fn record(shared: &Shared, method: &Method, uri: &Uri, headers: &HeaderMap, body: &Bytes) -> Value {
    let mut recorded_headers = BTreeMap::new();
    let mut secrets = BTreeMap::new();
    for (name, value) in headers {
        let name = name.as_str().to_ascii_lowercase();
        let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
        if SECRET_HEADERS.contains(&name.as_str()) {
            recorded_headers.insert(name.clone(), "REDACTED".to_string());
            secrets.insert(name, Secret(value));
        } else {
            recorded_headers.insert(name, value);
        }
    }
    let body = if body.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(body)
            .map(sorted)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(body).into_owned()))
    };
    lock(&shared.requests).push(Recorded {
        method: method.to_string(),
        path: uri.path().to_string(),
        headers: recorded_headers,
        body: body.clone(),
        secrets,
    });
    body
}

async fn props(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    record(&shared, &method, &uri, &headers, &body);
    match lock(&shared.props).clone() {
        Some(p) => json_response(200, &p),
        None => json_response(404, &json!({ "error": { "message": "no /props here" } })),
    }
}

async fn unknown_route(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    record(&shared, &method, &uri, &headers, &body);
    let msg = format!("mock server: no route for {method} {}", uri.path());
    json_response(404, &json!({ "error": { "message": msg } }))
}

async fn handle(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let body = record(&shared, &method, &uri, &headers, &body);
    let broken = super::wire::violations(uri.path(), &body);
    if !broken.is_empty() {
        let message = format!(
            "mock server: request #{} to {} breaks the wire rules: {}",
            lock(&shared.requests).len() - 1,
            uri.path(),
            broken.join("; ")
        );
        lock(&shared.violations).push(message.clone());
        return json_response(
            400,
            &json!({ "error": { "message": message, "type": "invalid_request_error" } }),
        );
    }
    let next = lock(&shared.queue).pop_front();
    let responder = lock(&shared.responder).clone();
    let next = next.or_else(|| responder.map(|f| f(&body)));
    let Some(resp) = next else {
        return json_response(
            500,
            &json!({ "error": { "message": "mock script exhausted", "type": "server_error" } }),
        );
    };
    if !resp.first_delay.is_zero() {
        tokio::time::sleep(resp.first_delay).await;
    }
    build(resp)
}

fn json_response(status: u16, body: &Value) -> Response {
    Response::builder()
        .status(StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR))
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .unwrap_or_else(|_| Response::new(Body::empty()))
}

fn build(resp: MockResponse) -> Response {
    let status = StatusCode::from_u16(resp.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut builder = Response::builder().status(status);
    let body = match resp.payload {
        Payload::Body { content_type, body } => {
            builder = builder.header("content-type", content_type);
            Body::from(body)
        }
        Payload::Sse(frames) => {
            builder = builder
                .header("content-type", "text/event-stream")
                .header("cache-control", "no-cache");
            sse_body(frames, resp.delay, resp.cut_after, resp.hold_open)
        }
        Payload::Endless(frame) => {
            builder = builder.header("content-type", "text/event-stream");
            let frame = Bytes::from(frame);
            Body::from_stream(stream::repeat_with(move || {
                Ok::<_, std::io::Error>(frame.clone())
            }))
        }
    };
    for (name, value) in &resp.headers {
        builder = builder.header(name.as_str(), value.as_str());
    }
    builder
        .body(body)
        .unwrap_or_else(|e| json_response(500, &json!({ "error": { "message": e.to_string() } })))
}

enum Step {
    Frame(usize),
    Cut,
    Hold,
    End,
}

fn sse_body(
    frames: Vec<Bytes>,
    delay: Duration,
    cut_after: Option<usize>,
    hold_open: bool,
) -> Body {
    let limit = cut_after.unwrap_or(frames.len()).min(frames.len());
    let frames = Arc::new(frames);
    let s = stream::unfold(0usize, move |i| {
        let frames = frames.clone();
        async move {
            let step = if i < limit {
                Step::Frame(i)
            } else if cut_after.is_some() {
                Step::Cut
            } else if hold_open {
                Step::Hold
            } else {
                Step::End
            };
            match step {
                Step::Frame(i) => {
                    if i > 0 && !delay.is_zero() {
                        tokio::time::sleep(delay).await;
                    }
                    Some((Ok(frames[i].clone()), i + 1))
                }
                Step::Cut => {
                    // Let the server flush what it has written, then fail the body: hyper
                    // aborts the connection without the final chunk.
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    Some((
                        Err(std::io::Error::new(
                            std::io::ErrorKind::ConnectionAborted,
                            "mock: stream cut",
                        )),
                        usize::MAX,
                    ))
                }
                Step::Hold => {
                    std::future::pending::<()>().await;
                    None
                }
                Step::End => None,
            }
        }
    });
    // After a cut, end the stream (hyper stops polling after the error anyway).
    let s = futures_util::StreamExt::take_while(s, {
        let mut failed = false;
        move |item: &Result<Bytes, std::io::Error>| {
            let go = !failed;
            failed |= item.is_err();
            std::future::ready(go)
        }
    });
    Body::from_stream(s)
}

/// A plain reqwest client for tests that talk to the mock directly (installs the TLS provider
/// reqwest needs first).
pub fn http_client() -> reqwest::Client {
    pith_provider::openai::init_tls();
    reqwest::Client::new()
}
