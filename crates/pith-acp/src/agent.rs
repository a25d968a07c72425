//! The ACP methods: `initialize`, `session/new`, `session/load`, `session/prompt`,
//! `session/set_mode` and the `session/cancel` notification. Bad params are JSON-RPC errors.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use agent_client_protocol_schema::ProtocolVersion;
use agent_client_protocol_schema::v1::{
    AgentCapabilities, CancelNotification, FileSystemCapabilities, Implementation,
    InitializeRequest, InitializeResponse, LoadSessionRequest, McpCapabilities, McpServer,
    NewSessionRequest, NewSessionResponse, PermissionOption, PermissionOptionKind,
    PromptCapabilities, PromptRequest, PromptResponse, RequestPermissionOutcome,
    RequestPermissionRequest, RequestPermissionResponse, SetSessionModeRequest, ToolCallUpdate,
    ToolCallUpdateFields, ToolKind,
};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::modes::modes;
use super::rpc::{Connection, RpcError};
use super::session::Session;
use super::{commands, content, replay, translate};
use pith_config::mcp::McpServerConfig;
use pith_launch::{FirstModel, Setup};
use pith_protocol::event::Op;
use pith_protocol::event::PermissionMode;
use pith_protocol::launch::TrustQuestion;

pub(crate) struct Agent {
    conn: Arc<Connection>,
    config_file: Option<PathBuf>,
    trust: bool,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    /// What the client offers of its file system (`initialize`); its terminal is never used.
    fs: Mutex<FileSystemCapabilities>,
}

fn parse<T: DeserializeOwned>(params: Value) -> Result<T, RpcError> {
    serde_json::from_value(params)
        .map_err(|e| RpcError::invalid_params(format!("invalid params: {e}")))
}

fn to_json(value: impl serde::Serialize) -> Result<Value, RpcError> {
    serde_json::to_value(value).map_err(|e| RpcError::internal(e.to_string()))
}

fn internal(e: impl Into<anyhow::Error>) -> RpcError {
    RpcError::internal(format!("{:#}", e.into()))
}

/// The client's MCP servers as pith's server configuration.
fn mcp_config(servers: &[McpServer]) -> Result<Vec<(String, McpServerConfig)>, RpcError> {
    let mut out = Vec::new();
    for s in servers {
        let (name, config) = match s {
            McpServer::Stdio(s) => (
                s.name.clone(),
                McpServerConfig {
                    command: Some(s.command.to_string_lossy().into_owned()),
                    args: s.args.clone(),
                    env: s
                        .env
                        .iter()
                        .map(|e| (e.name.clone(), e.value.clone()))
                        .collect(),
                    ..McpServerConfig::default()
                },
            ),
            McpServer::Http(h) => (
                h.name.clone(),
                McpServerConfig {
                    url: Some(h.url.clone()),
                    headers: h
                        .headers
                        .iter()
                        .map(|e| (e.name.clone(), e.value.clone()))
                        .collect(),
                    ..McpServerConfig::default()
                },
            ),
            _ => {
                return Err(RpcError::invalid_params(
                    "pith takes MCP servers over stdio and HTTP",
                ));
            }
        };
        if name.trim().is_empty() {
            return Err(RpcError::invalid_params("an MCP server without a name"));
        }
        out.push((name, config));
    }
    Ok(out)
}

impl Agent {
    pub(crate) fn new(conn: Arc<Connection>, config_file: Option<PathBuf>, trust: bool) -> Agent {
        Agent {
            conn,
            config_file,
            trust,
            sessions: Mutex::new(HashMap::new()),
            fs: Mutex::new(FileSystemCapabilities::default()),
        }
    }

    pub(crate) async fn request(self: Arc<Self>, id: Value, method: String, params: Value) {
        let mut announce = None;
        let result = match method.as_str() {
            "initialize" => self.initialize(params),
            "authenticate" => Ok(json!({})),
            "session/new" => self.new_session(params).await.map(|(v, s)| {
                announce = Some(s);
                v
            }),
            "session/load" => self.load_session(params).await.map(|(v, s)| {
                announce = Some(s);
                v
            }),
            "session/prompt" => self.prompt(params).await,
            "session/set_mode" => self.set_mode(params),
            _ => Err(RpcError {
                code: RpcError::METHOD_NOT_FOUND,
                message: format!("method not found: {method}"),
            }),
        };
        if let Err(e) = &result {
            tracing::info!("acp: {method} answered with an error: {}", e.message);
        }
        self.conn.respond(id, result);
        if let Some(session) = announce {
            commands::announce(&session).await;
        }
    }

    pub(crate) fn notification(&self, method: &str, params: Value) {
        match method {
            "session/cancel" => match parse::<CancelNotification>(params) {
                Ok(n) => match self.find(&n.session_id.0) {
                    Ok(s) => s.cancel(),
                    Err(e) => tracing::warn!("acp: cancel: {}", e.message),
                },
                Err(e) => tracing::warn!("acp: cancel: {}", e.message),
            },
            other => tracing::debug!("acp: notification {other} ignored"),
        }
    }

    pub(crate) async fn shutdown(&self) {
        let sessions: Vec<Arc<Session>> = self
            .sessions
            .lock()
            .map(|s| s.values().cloned().collect())
            .unwrap_or_default();
        for s in sessions {
            s.shutdown();
        }
    }

    fn client_fs(&self) -> FileSystemCapabilities {
        self.fs.lock().map(|f| f.clone()).unwrap_or_default()
    }

    fn find(&self, id: &str) -> Result<Arc<Session>, RpcError> {
        self.sessions
            .lock()
            .ok()
            .and_then(|s| s.get(id).cloned())
            .ok_or_else(|| RpcError::invalid_params(format!("no session {id}")))
    }

    fn initialize(&self, params: Value) -> Result<Value, RpcError> {
        let req: InitializeRequest = parse(params)?;
        let fs = &req.client_capabilities.fs;
        tracing::info!(
            "acp: the client reads files: {}, writes files: {}, has terminals: {} (not used)",
            fs.read_text_file,
            fs.write_text_file,
            req.client_capabilities.terminal
        );
        if let Ok(mut mine) = self.fs.lock() {
            *mine = fs.clone();
        }
        let version = req.protocol_version.min(ProtocolVersion::LATEST);
        let caps = AgentCapabilities::new()
            .load_session(true)
            .prompt_capabilities(PromptCapabilities::new().image(true).embedded_context(true))
            .mcp_capabilities(McpCapabilities::new().http(true));
        let info = Implementation::new("pith", env!("CARGO_PKG_VERSION")).title("pith".to_string());
        to_json(
            InitializeResponse::new(version)
                .agent_capabilities(caps)
                .agent_info(info),
        )
    }

    /// The workspace `cwd` with its configuration (filtered unless trusted) and the client's
    /// MCP servers.
    async fn open(
        &self,
        cwd: &Path,
        servers: &[McpServer],
    ) -> Result<(Setup, Vec<(String, McpServerConfig)>), RpcError> {
        if !cwd.is_absolute() {
            return Err(RpcError::invalid_params("cwd must be an absolute path"));
        }
        if !cwd.is_dir() {
            return Err(RpcError::invalid_params(format!(
                "{} is not a directory",
                cwd.display()
            )));
        }
        let client_mcp = mcp_config(servers)?;
        let (dir, config_file, trust) = (cwd.to_path_buf(), self.config_file.clone(), self.trust);
        let setup =
            tokio::task::spawn_blocking(move || Setup::in_workspace(dir, config_file, trust))
                .await
                .map_err(|e| RpcError::internal(e.to_string()))?
                .map_err(internal)?;
        Ok((setup, client_mcp))
    }

    fn insert(&self, session: &Arc<Session>) {
        if let Ok(mut s) = self.sessions.lock() {
            s.insert(session.id.clone(), session.clone());
        }
    }

    async fn new_session(&self, params: Value) -> Result<(Value, Arc<Session>), RpcError> {
        let req: NewSessionRequest = parse(params)?;
        let (setup, client_mcp) = self.open(&req.cwd, &req.mcp_servers).await?;
        // No probing for a local server: no one is asked before the prompt would go to it.
        let model = match setup.first_model(None, false, false).await {
            FirstModel::Implied { model, notice, .. } => {
                tracing::info!("acp: {notice}");
                Some(model)
            }
            FirstModel::Named | FirstModel::Unknown => None,
        };
        let row = setup
            .session(None, false, model.as_deref())
            .map_err(internal)?;
        let session = Arc::new(Session::new(
            row.id.clone(),
            self.conn.clone(),
            setup,
            client_mcp,
            self.client_fs(),
        ));
        self.insert(&session);
        if session.setup.lock().await.trust_question().is_none() {
            session.start_engine(false).await?;
        }
        let response = NewSessionResponse::new(row.id).modes(modes("default"));
        Ok((to_json(response)?, session))
    }

    /// Replays the stored session as updates, then answers. The history is the engine's: the
    /// running engine's pages, or, while the workspace's trust is unanswered (the engine starts
    /// once it is), the same pages read as the engine reads them.
    async fn load_session(&self, params: Value) -> Result<(Value, Arc<Session>), RpcError> {
        let req: LoadSessionRequest = parse(params)?;
        let id = req.session_id.0.to_string();
        if let Ok(existing) = self.find(&id) {
            existing.shutdown();
        }
        let (setup, client_mcp) = self.open(&req.cwd, &req.mcp_servers).await?;
        let row = setup
            .store
            .find_session(&id)
            .map_err(internal)?
            .ok_or_else(|| RpcError::invalid_params(format!("no session {id}")))?;
        let stored = setup
            .trust_question()
            .map(|_| replay::stored_pages(&setup.store, row));
        let session = Arc::new(Session::new(
            id,
            self.conn.clone(),
            setup,
            client_mcp,
            self.client_fs(),
        ));
        self.insert(&session);
        match stored {
            Some(pages) => session.replay(pages.messages()),
            None => session.start_engine(true).await?,
        }
        Ok((json!({"modes": to_json(modes("default"))?}), session))
    }

    async fn prompt(&self, params: Value) -> Result<Value, RpcError> {
        let req: PromptRequest = parse(params)?;
        let session = self.find(&req.session_id.0)?;
        let Some(_busy) = session.begin() else {
            return Err(RpcError::invalid_params(
                "a prompt is already running in this session",
            ));
        };
        let images = session
            .setup
            .lock()
            .await
            .data_dir
            .join("acp")
            .join("images");
        let text = content::to_text(&req.prompt, &images)?;
        settle_trust(&session).await?;
        let stop = match commands::route(&session, &text).await {
            Ok((op, awaiting)) => session.run(op, awaiting).await?,
            Err(refused) => {
                session.update(translate::message_chunk(refused.to_string()));
                agent_client_protocol_schema::v1::StopReason::EndTurn
            }
        };
        to_json(PromptResponse::new(stop))
    }

    fn set_mode(&self, params: Value) -> Result<Value, RpcError> {
        let req: SetSessionModeRequest = parse(params)?;
        let session = self.find(&req.session_id.0)?;
        let (on, mode) = match &*req.mode_id.0 {
            "default" => (false, PermissionMode::Default),
            "yes" => (true, PermissionMode::Default),
            "plan" => (false, PermissionMode::Plan),
            "accept-edits" => (false, PermissionMode::AcceptEdits),
            other => return Err(RpcError::invalid_params(format!("no mode {other}"))),
        };
        session
            .auto_yes
            .store(on, std::sync::atomic::Ordering::Relaxed);
        if let Ok(mut m) = session.mode.lock() {
            *m = mode;
        }
        if session.engine_started() {
            session.send(Op::SetAutoYes { on })?;
            session.send(Op::SetPermissionMode { mode })?;
        }
        Ok(json!({}))
    }
}

/// Before the first prompt of a workspace whose `pith.toml` needs trust and was never
/// answered: the question goes to the user through the client. Unanswered, the workspace stays
/// untrusted for this run and nothing is recorded. Then the engine starts.
async fn settle_trust(session: &Arc<Session>) -> Result<(), RpcError> {
    if session.engine_started() {
        return Ok(());
    }
    let question = session.setup.lock().await.trust_question();
    if let Some(q) = question {
        if let Some(trusted) = ask_trust(session, &q).await {
            session
                .setup
                .lock()
                .await
                .decide_trust(trusted)
                .map_err(internal)?;
        }
        commands::announce(session).await;
    }
    session.start_engine(false).await
}

async fn ask_trust(session: &Session, q: &TrustQuestion) -> Option<bool> {
    // The path and the keys come from the repository: escaped, on one line, bounded.
    let title = format!(
        "Trust {}? Its pith.toml sets {}, which only a trusted workspace may set.",
        q.folder(),
        q.settings_line(6)
    );
    let fields = ToolCallUpdateFields::new()
        .title(title)
        .kind(ToolKind::Other);
    let options = vec![
        PermissionOption::new(
            "trust",
            "Trust this workspace",
            PermissionOptionKind::AllowAlways,
        ),
        PermissionOption::new(
            "dont_trust",
            "Don't trust",
            PermissionOptionKind::RejectAlways,
        ),
    ];
    let params = RequestPermissionRequest::new(
        session.id.clone(),
        ToolCallUpdate::new("pith-trust", fields),
        options,
    );
    let answer = session
        .conn
        .request("session/request_permission", params)
        .await
        .ok()?;
    let answer: RequestPermissionResponse = serde_json::from_value(answer).ok()?;
    match answer.outcome {
        RequestPermissionOutcome::Selected(s) => match &*s.option_id.0 {
            "trust" => Some(true),
            "dont_trust" => Some(false),
            _ => None,
        },
        _ => None,
    }
}
