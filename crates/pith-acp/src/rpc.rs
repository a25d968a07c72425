//! JSON-RPC 2.0 over newline-delimited JSON, as ACP frames it on stdio: one message a line.
//! Incoming requests and notifications go to the agent; responses to the requests the agent
//! sends (`session/request_permission`, `fs/read_text_file`, `fs/write_text_file`) are matched to
//! their waiters here.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;
use serde_json::{Value, json};
use std::io::{BufRead, Read, Write};
use tokio::sync::{mpsc, oneshot};

/// The longest line read from the client (an image is sent inline, base64).
const MAX_LINE: usize = 64 * 1024 * 1024;

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
}

impl RpcError {
    pub const PARSE: i64 = -32700;
    pub const INVALID_REQUEST: i64 = -32600;
    pub const METHOD_NOT_FOUND: i64 = -32601;
    pub const INVALID_PARAMS: i64 = -32602;
    pub const INTERNAL: i64 = -32603;

    pub fn invalid_params(message: impl Into<String>) -> RpcError {
        RpcError {
            code: Self::INVALID_PARAMS,
            message: message.into(),
        }
    }

    pub fn internal(message: impl Into<String>) -> RpcError {
        RpcError {
            code: Self::INTERNAL,
            message: message.into(),
        }
    }

    fn to_json(&self) -> Value {
        json!({"code": self.code, "message": self.message})
    }
}

/// What the client sent that the agent must handle.
#[derive(Debug)]
pub enum Incoming {
    Request {
        id: Value,
        method: String,
        params: Value,
    },
    Notification {
        method: String,
        params: Value,
    },
}

/// The sending half, shared by every task of the agent.
pub struct Connection {
    out: mpsc::UnboundedSender<String>,
    pending: Mutex<HashMap<u64, oneshot::Sender<Result<Value, RpcError>>>>,
    next_id: AtomicU64,
}

impl Connection {
    /// A connection whose lines go to `out` (written by [`write_lines`]).
    pub fn new(out: mpsc::UnboundedSender<String>) -> Connection {
        Connection {
            out,
            pending: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(0),
        }
    }

    fn send(&self, value: &Value) {
        let _ = self.out.send(value.to_string());
    }

    pub fn notify(&self, method: &str, params: impl Serialize) {
        match serde_json::to_value(params) {
            Ok(params) => {
                self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
            }
            Err(e) => tracing::error!("acp: cannot serialise {method}: {e}"),
        }
    }

    pub fn respond(&self, id: Value, result: Result<Value, RpcError>) {
        let message = match result {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err(e) => json!({"jsonrpc": "2.0", "id": id, "error": e.to_json()}),
        };
        self.send(&message);
    }

    /// Sends a request to the client and waits for its answer (an error when the client goes
    /// away first).
    pub async fn request(&self, method: &str, params: impl Serialize) -> Result<Value, RpcError> {
        let params = serde_json::to_value(params).map_err(|e| RpcError::internal(e.to_string()))?;
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        if let Ok(mut p) = self.pending.lock() {
            p.insert(id, tx);
        }
        // a request given up (its future dropped: a timeout, an interrupt) leaves no waiter
        let _forget = Forget { conn: self, id };
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        rx.await
            .unwrap_or_else(|_| Err(RpcError::internal("the client closed the connection")))
    }

    /// Routes a response from the client to the request waiting for it.
    fn resolve(&self, id: &Value, result: Result<Value, RpcError>) {
        let waiter = id
            .as_u64()
            .and_then(|id| self.pending.lock().ok()?.remove(&id));
        match waiter {
            Some(tx) => {
                let _ = tx.send(result);
            }
            None => tracing::warn!("acp: a response to no request of ours (id {id})"),
        }
    }

    /// Ends every request still waiting (the client is gone).
    pub fn close(&self) {
        if let Ok(mut p) = self.pending.lock() {
            p.clear();
        }
    }

    /// Reads one line of the client: a request or notification for the agent, or `None` when
    /// the line was a response (routed) or bad (answered with an error here).
    pub fn parse_line(&self, line: &str) -> Option<Incoming> {
        if line.trim().is_empty() {
            return None;
        }
        let value: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(e) => {
                let e = RpcError {
                    code: RpcError::PARSE,
                    message: format!("parse error: {e}"),
                };
                self.respond(Value::Null, Err(e));
                return None;
            }
        };
        let id = value.get("id").cloned();
        match (value.get("method").and_then(Value::as_str), id) {
            (Some(method), Some(id)) => Some(Incoming::Request {
                id,
                method: method.to_string(),
                params: value.get("params").cloned().unwrap_or(Value::Null),
            }),
            (Some(method), None) => Some(Incoming::Notification {
                method: method.to_string(),
                params: value.get("params").cloned().unwrap_or(Value::Null),
            }),
            (None, Some(id)) if value.get("result").is_some() || value.get("error").is_some() => {
                let result = match value.get("error") {
                    Some(e) => Err(RpcError {
                        code: e.get("code").and_then(Value::as_i64).unwrap_or(0),
                        message: e
                            .get("message")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string(),
                    }),
                    None => Ok(value.get("result").cloned().unwrap_or(Value::Null)),
                };
                self.resolve(&id, result);
                None
            }
            (None, id) => {
                let e = RpcError {
                    code: RpcError::INVALID_REQUEST,
                    message: "invalid request: no method".into(),
                };
                self.respond(id.unwrap_or(Value::Null), Err(e));
                None
            }
        }
    }
}

/// Takes a request's waiter out of the table when the request ends, answered or not.
struct Forget<'a> {
    conn: &'a Connection,
    id: u64,
}

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        if let Ok(mut p) = self.conn.pending.lock() {
            p.remove(&self.id);
        }
    }
}

/// Reads the client's lines on a thread of its own (stdin blocks) until end of input. A line
/// longer than [`MAX_LINE`] is dropped and answered with a parse error.
pub(crate) fn spawn_reader(
    mut input: impl BufRead + Send + 'static,
    conn: std::sync::Arc<Connection>,
) -> mpsc::UnboundedReceiver<String> {
    let (tx, rx) = mpsc::unbounded_channel();
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match (&mut input)
                .take(MAX_LINE as u64 + 1)
                .read_until(b'\n', &mut buf)
            {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            if buf.len() > MAX_LINE && !buf.ends_with(b"\n") {
                let mut sink = Vec::new();
                let _ = input.read_until(b'\n', &mut sink);
                let e = RpcError {
                    code: RpcError::PARSE,
                    message: format!("message longer than {MAX_LINE} bytes"),
                };
                conn.respond(Value::Null, Err(e));
                continue;
            }
            if tx.send(String::from_utf8_lossy(&buf).into_owned()).is_err() {
                break;
            }
        }
    });
    rx
}

/// Writes each line to `out` on a thread of its own, one message a line, until every sender
/// is gone; the thread ends then.
pub(crate) fn spawn_writer(
    mut rx: mpsc::UnboundedReceiver<String>,
    mut out: impl Write + Send + 'static,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        while let Some(line) = rx.blocking_recv() {
            if out.write_all(line.as_bytes()).is_err()
                || out.write_all(b"\n").is_err()
                || out.flush().is_err()
            {
                break;
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conn() -> (Connection, mpsc::UnboundedReceiver<String>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (Connection::new(tx), rx)
    }

    #[test]
    fn bad_lines_are_answered_with_errors() {
        let (c, mut rx) = conn();
        assert!(c.parse_line("{not json").is_none());
        let e: Value = serde_json::from_str(&rx.try_recv().unwrap()).unwrap();
        assert_eq!(e["error"]["code"], RpcError::PARSE);
        assert!(c.parse_line(r#"{"jsonrpc":"2.0","id":3}"#).is_none());
        let e: Value = serde_json::from_str(&rx.try_recv().unwrap()).unwrap();
        assert_eq!(e["error"]["code"], RpcError::INVALID_REQUEST);
        assert_eq!(e["id"], 3);
        assert!(c.parse_line("   ").is_none());
        assert!(rx.try_recv().is_err());
    }

    #[test]
    fn requests_notifications_and_responses() {
        let (c, _rx) = conn();
        let r = c.parse_line(r#"{"jsonrpc":"2.0","id":"a","method":"m","params":{"x":1}}"#);
        assert!(
            matches!(r, Some(Incoming::Request { id, method, .. }) if id == "a" && method == "m")
        );
        let n = c.parse_line(r#"{"jsonrpc":"2.0","method":"session/cancel","params":{}}"#);
        assert!(
            matches!(n, Some(Incoming::Notification { method, .. }) if method == "session/cancel")
        );
    }

    #[tokio::test]
    async fn a_response_reaches_its_request() {
        let (c, mut rx) = conn();
        let c = std::sync::Arc::new(c);
        let c2 = c.clone();
        let waiter = tokio::spawn(async move { c2.request("ask", json!({})).await });
        let sent: Value = serde_json::from_str(&rx.recv().await.unwrap()).unwrap();
        let id = sent["id"].clone();
        assert!(
            c.parse_line(&json!({"jsonrpc":"2.0","id":id,"result":{"ok":true}}).to_string())
                .is_none()
        );
        assert_eq!(waiter.await.unwrap().unwrap(), json!({"ok": true}));
    }

    #[tokio::test]
    async fn a_request_given_up_leaves_no_waiter() {
        let (c, mut rx) = conn();
        let gave_up = tokio::time::timeout(
            std::time::Duration::from_millis(10),
            c.request("fs/read_text_file", json!({})),
        )
        .await;
        assert!(gave_up.is_err());
        assert!(c.pending.lock().unwrap().is_empty());
        // its late answer is dropped
        let sent: Value = serde_json::from_str(&rx.recv().await.unwrap()).unwrap();
        let late = json!({"jsonrpc": "2.0", "id": sent["id"], "result": {"content": "x"}});
        assert!(c.parse_line(&late.to_string()).is_none());
    }
}
