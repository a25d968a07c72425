//! Connecting to one MCP server with the official SDK (`rmcp`): a child process speaking over
//! its stdin/stdout, or a streamable-HTTP endpoint. The child runs in its own process group
//! (so `npx` and whatever it starts stop together) with a filtered environment; its stderr goes
//! to the log, never to the terminal.

// Roots and logging are deprecated by a newer protocol revision, yet servers of the session
// protocol pith speaks still ask for roots and send log messages.
#![allow(deprecated)]

use std::collections::{HashMap, VecDeque};
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::service::{RoleClient, RunningService};
use rmcp::{Peer, ServiceExt};

pub use crate::handler::{Changed, Handler};
use tokio::io::AsyncBufReadExt;
use tokio_util::sync::CancellationToken;

use pith_config::McpServerConfig;

/// Variables every stdio server gets from pith's environment (besides `env_vars`): what a
/// program needs to find itself, its home and its locale. API keys are never among them.
const BASE_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TERM",
    "TMPDIR",
    "TZ",
    "XDG_CONFIG_HOME",
    "XDG_CACHE_HOME",
    "XDG_DATA_HOME",
    "XDG_RUNTIME_DIR",
];

/// Lines of a server's stderr kept to explain a failure.
const STDERR_TAIL: usize = 8;
/// Longest stderr line kept or logged.
const STDERR_LINE_MAX: usize = 500;
/// How long a stopping server gets between closing its input, SIGTERM and SIGKILL.
const STOP_GRACE: Duration = Duration::from_secs(2);

/// Why a server could not be connected to: one line for the user (a failed server's state).
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error("header name `{name}` is not valid")]
    HeaderName { name: String },
    #[error("the value of header `{name}` has characters a header cannot hold")]
    HeaderValue { name: String },
    #[error("environment variable {var} (for header {header}) is not set")]
    HeaderVarUnset { var: String, header: String },
    #[error("environment variable {var} (the bearer token) is not set")]
    TokenVarUnset { var: String },
    #[error("the token in {var} has characters a header cannot hold")]
    TokenValue { var: String },
    /// The HTTP client could not be built (its error is part of the text).
    #[error("cannot build the HTTP client: {reqwest}")]
    HttpClient { reqwest: reqwest::Error },
    /// The client secret's variable of a confidential client's sign-in is not set.
    #[error("environment variable {var} (the OAuth client secret of [mcp.{name}]) is not set")]
    SecretVarUnset { var: String, name: String },
    /// The HTTP server refused or broke the handshake (`why`: the SDK's error, one line).
    #[error("cannot connect to {url}: {why}")]
    Http { url: String, why: String },
    #[error("{url} did not complete the MCP handshake within {secs} s")]
    HttpTimeout { url: String, secs: u64 },
    /// The server asked for a token pith does not have (or the stored one was refused).
    #[error("{line}")]
    SignIn { line: String },
    /// The child could not be started (its error is part of the text).
    #[error("cannot start `{program}`: {io}")]
    Spawn { program: String, io: std::io::Error },
    #[error("cannot start `{program}`: no pipes")]
    NoPipes { program: String },
    /// The child did not complete the handshake: why, how it exited, the last of its stderr.
    #[error("{why}{exit}{stderr}")]
    Child {
        why: String,
        exit: String,
        stderr: String,
    },
}

/// A live connection.
pub struct Connection {
    pub(crate) peer: Peer<RoleClient>,
    /// The server's `instructions`, if any.
    pub instructions: Option<String>,
    /// `server_info.name version`, for the log.
    pub(crate) server_info: String,
    /// Cancel to close the connection (the child is then stopped). The SDK gets a child token
    /// (it cancels its own when the connection ends), so this one says whether pith stopped it.
    pub stop: CancellationToken,
    /// Resolves with why the connection ended (the child's exit status and last stderr lines).
    pub ended: tokio::sync::oneshot::Receiver<String>,
    /// The task that closes the connection and stops the child: done when both are gone.
    pub(crate) watcher: tokio::task::JoinHandle<()>,
}

/// The last lines a child wrote to stderr.
#[derive(Clone, Default)]
pub(crate) struct StderrTail(Arc<Mutex<VecDeque<String>>>);

impl StderrTail {
    fn push(&self, line: String) {
        if let Ok(mut q) = self.0.lock() {
            if q.len() == STDERR_TAIL {
                q.pop_front();
            }
            q.push_back(line);
        }
    }

    /// `"; stderr: a | b"`, or nothing.
    pub(crate) fn suffix(&self) -> String {
        let lines: Vec<String> = self
            .0
            .lock()
            .map(|q| q.iter().rev().take(3).rev().cloned().collect())
            .unwrap_or_default();
        if lines.is_empty() {
            String::new()
        } else {
            format!("; stderr: {}", lines.join(" | "))
        }
    }
}

/// Connects to `config`, within its startup timeout. `Err` is one line for the user. `tokens`:
/// the data dir whose `mcp-tokens.json` holds OAuth sign-ins (`None`: none are used).
pub async fn connect(
    name: &str,
    config: &McpServerConfig,
    workspace: &Path,
    handler: Handler,
    env: &(dyn Fn(&str) -> Option<String> + Sync),
    tokens: Option<&Path>,
) -> Result<Connection, ConnectError> {
    let timeout = config.startup_timeout();
    let stop = CancellationToken::new();
    let started = match &config.url {
        Some(url) => {
            let serving = serve_http(name, url, config, handler, env, tokens, &stop);
            match tokio::time::timeout(timeout, serving).await {
                Ok(Ok(running)) => Ok((running, None)),
                Ok(Err(e)) => Err(e),
                Err(_) => Err(ConnectError::HttpTimeout {
                    url: url.clone(),
                    secs: timeout.as_secs(),
                }),
            }
        }
        None => {
            let (child, stdout, stdin, tail) = spawn_child(name, config, workspace, env)?;
            let serving = handler.serve_with_ct((stdout, stdin), stop.child_token());
            let result = tokio::time::timeout(timeout, serving).await;
            match result {
                Ok(Ok(running)) => Ok((running, Some((child, tail)))),
                other => {
                    let mut child = child;
                    let status = stop_child(&mut child).await;
                    // Give the stderr reader a moment to take the last lines.
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    let why = match other {
                        Ok(Err(e)) => crate::error_line::init_error(&e),
                        _ => format!(
                            "no answer to the MCP handshake within {} s",
                            timeout.as_secs()
                        ),
                    };
                    Err(ConnectError::Child {
                        why,
                        exit: exit_note(status),
                        stderr: tail.suffix(),
                    })
                }
            }
        }
    };
    let (running, child) = started?;
    let peer = running.peer().clone();
    let info = peer.peer_info();
    let instructions = info.as_ref().and_then(|i| i.instructions.clone());
    let server_info = info
        .as_ref()
        .and_then(|i| i.server_info.as_ref())
        .map(|s| format!("{} {}", s.name, s.version))
        .unwrap_or_default();
    let (tx, ended) = tokio::sync::oneshot::channel();
    let watcher = tokio::spawn(watch(running, child, stop.clone(), tx));
    Ok(Connection {
        peer,
        instructions,
        server_info,
        stop,
        ended,
        watcher,
    })
}

/// The handshake with an HTTP server: through the SDK's `AuthClient` when an OAuth sign-in is
/// stored for this name and URL (ARCHITECTURE.md §12.2), else with the configured headers.
async fn serve_http(
    name: &str,
    url: &str,
    config: &McpServerConfig,
    handler: Handler,
    env: &(dyn Fn(&str) -> Option<String> + Sync),
    tokens: Option<&Path>,
    stop: &CancellationToken,
) -> Result<RunningService<RoleClient, Handler>, ConnectError> {
    use crate::oauth::session;
    let (client, transport_config) = http_transport(url, config, env)?;
    let manager = match tokens {
        Some(dir) => session::stored_manager(dir, name, url, config, env).await?,
        None => None,
    };
    let served = match manager {
        Some(manager) => {
            let client = rmcp::transport::AuthClient::new(client, manager);
            let transport = rmcp::transport::StreamableHttpClientTransport::with_client(
                client,
                transport_config,
            );
            handler.serve_with_ct(transport, stop.child_token()).await
        }
        None => {
            let transport = rmcp::transport::StreamableHttpClientTransport::with_client(
                client,
                transport_config,
            );
            handler.serve_with_ct(transport, stop.child_token()).await
        }
    };
    served.map_err(|e| {
        if session::is_auth_required(&e) {
            ConnectError::SignIn {
                line: session::sign_in_line(tokens, name, url),
            }
        } else if session::is_insufficient_scope(&e) {
            ConnectError::SignIn {
                line: format!(
                    "the sign-in lacks a scope the server needs: `pith mcp login {name}` (or set oauth_scopes)"
                ),
            }
        } else {
            ConnectError::Http {
                url: url.to_string(),
                why: crate::error_line::init_error(&e),
            }
        }
    })
}

/// Waits for the connection to end (the server exited, the transport broke, or `stop`), stops the
/// child, and says why.
async fn watch(
    running: RunningService<RoleClient, Handler>,
    child: Option<(tokio::process::Child, StderrTail)>,
    stop: CancellationToken,
    tx: tokio::sync::oneshot::Sender<String>,
) {
    let quit = running.waiting().await;
    let mut why = match quit {
        Ok(reason) => format!("{reason:?}").to_lowercase(),
        Err(e) => e.to_string(),
    };
    if let Some((mut child, tail)) = child {
        let status = stop_child(&mut child).await;
        tokio::time::sleep(Duration::from_millis(50)).await;
        why = format!(
            "the connection closed{}{}",
            exit_note(status),
            tail.suffix()
        );
    }
    if stop.is_cancelled() {
        why = "stopped".into();
    }
    let _ = tx.send(why);
}

fn exit_note(status: Option<std::process::ExitStatus>) -> String {
    match status {
        Some(s) => match s.code() {
            Some(code) => format!(" (exit status {code})"),
            None => " (killed by a signal)".to_string(),
        },
        None => String::new(),
    }
}

type ChildParts = (
    tokio::process::Child,
    tokio::process::ChildStdout,
    tokio::process::ChildStdin,
    StderrTail,
);

fn spawn_child(
    name: &str,
    config: &McpServerConfig,
    workspace: &Path,
    env: &(dyn Fn(&str) -> Option<String> + Sync),
) -> Result<ChildParts, ConnectError> {
    let program = config.command.as_deref().unwrap_or_default();
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(&config.args)
        .current_dir(match &config.cwd {
            Some(dir) if dir.is_absolute() => dir.clone(),
            Some(dir) => workspace.join(dir),
            None => workspace.to_path_buf(),
        })
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    for var in BASE_ENV
        .iter()
        .copied()
        .chain(config.env_vars.iter().map(String::as_str))
    {
        if let Some(v) = env(var) {
            cmd.env(var, v);
        }
    }
    cmd.envs(&config.env);
    #[cfg(unix)]
    cmd.process_group(0);
    let mut child = cmd.spawn().map_err(|io| ConnectError::Spawn {
        program: program.to_string(),
        io,
    })?;
    let (Some(stdout), Some(stdin), Some(stderr)) =
        (child.stdout.take(), child.stdin.take(), child.stderr.take())
    else {
        return Err(ConnectError::NoPipes {
            program: program.to_string(),
        });
    };
    let tail = StderrTail::default();
    tokio::spawn(log_stderr(name.to_string(), stderr, tail.clone()));
    Ok((child, stdout, stdin, tail))
}

/// Copies a server's stderr to the log, a line at a time.
async fn log_stderr(server: String, stderr: tokio::process::ChildStderr, tail: StderrTail) {
    let mut lines = tokio::io::BufReader::new(stderr);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match lines.read_until(b'\n', &mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                let line = String::from_utf8_lossy(&buf);
                let line = line.trim_end();
                if line.is_empty() {
                    continue;
                }
                let line: String = line.chars().take(STDERR_LINE_MAX).collect();
                tracing::info!(server = %server, "mcp stderr: {line}");
                tail.push(line);
            }
        }
    }
}

/// Stops a child and its process group: its input is already closed (the transport is gone),
/// then SIGTERM, then SIGKILL. Returns its exit status when it could be read.
async fn stop_child(child: &mut tokio::process::Child) -> Option<std::process::ExitStatus> {
    if let Ok(Some(status)) = child.try_wait() {
        kill_group(child, libc::SIGKILL);
        return Some(status);
    }
    if let Ok(Ok(status)) = tokio::time::timeout(STOP_GRACE, child.wait()).await {
        kill_group(child, libc::SIGKILL);
        return Some(status);
    }
    kill_group(child, libc::SIGTERM);
    if let Ok(Ok(status)) = tokio::time::timeout(STOP_GRACE, child.wait()).await {
        kill_group(child, libc::SIGKILL);
        return Some(status);
    }
    kill_group(child, libc::SIGKILL);
    let _ = child.kill().await;
    child.wait().await.ok()
}

/// Signals the child's whole process group (it leads its own group), catching what it started.
fn kill_group(child: &tokio::process::Child, signal: i32) {
    #[cfg(unix)]
    if let Some(pid) = child.id() {
        // SAFETY: killpg only sends a signal; the group is the child's own (process_group(0)).
        unsafe {
            libc::killpg(pid as libc::pid_t, signal);
        }
    }
    #[cfg(not(unix))]
    let _ = (child, signal);
}

/// The HTTP client of a server and its transport's settings (headers, bearer token).
type HttpParts = (
    reqwest::Client,
    rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig,
);

fn http_transport(
    url: &str,
    config: &McpServerConfig,
    env: &(dyn Fn(&str) -> Option<String> + Sync),
) -> Result<HttpParts, ConnectError> {
    use reqwest::header::{HeaderName, HeaderValue};
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

    let mut headers: HashMap<HeaderName, HeaderValue> = HashMap::new();
    let mut put = |name: &str, value: &str, secret: bool| -> Result<(), ConnectError> {
        let n = HeaderName::from_bytes(name.as_bytes()).map_err(|_| ConnectError::HeaderName {
            name: name.to_string(),
        })?;
        let mut v = HeaderValue::from_str(value).map_err(|_| ConnectError::HeaderValue {
            name: name.to_string(),
        })?;
        v.set_sensitive(secret);
        headers.insert(n, v);
        Ok(())
    };
    for (name, value) in &config.headers {
        put(name, value, false)?;
    }
    for (name, var) in &config.env_headers {
        let value = env(var).filter(|v| !v.trim().is_empty()).ok_or_else(|| {
            ConnectError::HeaderVarUnset {
                var: var.clone(),
                header: name.clone(),
            }
        })?;
        put(name, value.trim(), true)?;
    }
    let mut transport_config = StreamableHttpClientTransportConfig::with_uri(url.trim());
    if let Some(var) = &config.bearer_token_env {
        let token = env(var)
            .filter(|v| !v.trim().is_empty())
            .ok_or_else(|| ConnectError::TokenVarUnset { var: var.clone() })?;
        if HeaderValue::from_str(&format!("Bearer {}", token.trim())).is_err() {
            return Err(ConnectError::TokenValue { var: var.clone() });
        }
        transport_config = transport_config.auth_header(token.trim().to_string());
    }
    transport_config = transport_config.custom_headers(headers);
    let client = pith_http::for_base(url, Duration::from_secs(10))
        .map_err(|reqwest| ConnectError::HttpClient { reqwest })?;
    Ok((client, transport_config))
}
