//! A scripted HTTP server for provider tests: replies are served in order, each either an SSE
//! body written chunk by chunk (optionally cut off) or a status with a body and headers. Every
//! request's path, headers and JSON body are recorded.

#![allow(dead_code)]

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::Response;
use serde_json::Value;

/// One SSE frame: `event: {event}\ndata: {data}\n\n`.
pub fn frame(event: &str, data: &Value) -> String {
    format!("event: {event}\ndata: {data}\n\n")
}

/// A scripted reply.
#[derive(Debug, Clone)]
pub struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    /// Written one at a time (one TCP write each when `delay` is set).
    chunks: Vec<Vec<u8>>,
    delay: Option<Duration>,
    /// Reset the connection after the chunks instead of ending the body.
    abort: bool,
}

impl Reply {
    /// 200 `text/event-stream`, one chunk per frame.
    pub fn sse<I: IntoIterator<Item = String>>(frames: I) -> Self {
        Self::chunks(frames.into_iter().map(String::into_bytes).collect())
    }

    /// 200 `text/event-stream` with the body split exactly into these chunks, written 20 ms
    /// apart so each arrives in its own TCP segment.
    pub fn chunks(chunks: Vec<Vec<u8>>) -> Self {
        Reply {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            chunks,
            delay: None,
            abort: false,
        }
        .delay(Duration::from_millis(20))
    }

    /// A status with a JSON body.
    pub fn status(status: u16, body: &Value) -> Self {
        Reply {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            chunks: vec![body.to_string().into_bytes()],
            delay: None,
            abort: false,
        }
    }

    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    pub fn delay(mut self, delay: Duration) -> Self {
        self.delay = Some(delay);
        self
    }

    /// Send only the first `k` chunks, then reset the connection.
    pub fn cut_after(mut self, k: usize) -> Self {
        self.chunks.truncate(k);
        self.abort = true;
        self
    }
}

/// What the server received.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub path: String,
    /// Lower-case names.
    pub headers: BTreeMap<String, String>,
    /// `Value::Null` when the body was not JSON.
    pub body: Value,
}

#[derive(Default)]
struct Script {
    replies: VecDeque<Reply>,
    requests: Vec<Recorded>,
}

pub struct MockServer {
    /// `http://127.0.0.1:PORT`
    pub url: String,
    script: Arc<Mutex<Script>>,
}

impl MockServer {
    pub async fn start(replies: Vec<Reply>) -> Self {
        let script = Arc::new(Mutex::new(Script {
            replies: replies.into(),
            requests: Vec::new(),
        }));
        let app = axum::Router::new()
            .fallback(handle)
            .with_state(script.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind mock");
        let addr = listener.local_addr().expect("mock address");
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        MockServer {
            url: format!("http://{addr}"),
            script,
        }
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.script.lock().expect("mock lock").requests.clone()
    }
}

async fn handle(
    State(script): State<Arc<Mutex<Script>>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let reply = {
        let mut s = script.lock().expect("mock lock");
        s.requests.push(Recorded {
            path: uri.path().to_string(),
            headers: headers
                .iter()
                .map(|(k, v)| {
                    (
                        k.as_str().to_string(),
                        String::from_utf8_lossy(v.as_bytes()).into_owned(),
                    )
                })
                .collect(),
            body: serde_json::from_slice(&body).unwrap_or(Value::Null),
        });
        s.replies.pop_front()
    };
    let Some(reply) = reply else {
        return Response::builder()
            .status(StatusCode::INTERNAL_SERVER_ERROR)
            .body(Body::from("mock: no reply scripted"))
            .expect("response");
    };
    let mut builder = Response::builder().status(reply.status);
    for (k, v) in &reply.headers {
        builder = builder.header(k, v);
    }
    let state = (VecDeque::from(reply.chunks), reply.delay, reply.abort, true);
    let stream =
        futures_util::stream::unfold(state, |(mut chunks, delay, abort, first)| async move {
            match chunks.pop_front() {
                Some(chunk) => {
                    if let (Some(d), false) = (delay, first) {
                        tokio::time::sleep(d).await;
                    }
                    Some((Ok(Bytes::from(chunk)), (chunks, delay, abort, false)))
                }
                None if abort => {
                    if let Some(d) = delay {
                        tokio::time::sleep(d).await;
                    }
                    let err = std::io::Error::new(std::io::ErrorKind::ConnectionReset, "cut");
                    Some((Err(err), (chunks, delay, false, false)))
                }
                None => None,
            }
        });
    builder.body(Body::from_stream(stream)).expect("response")
}
