//! The MCP servers of an engine: started in the background, restarted on the next use after they
//! fail or exit, their tools, prompts and resources kept up to date (`list_changed`).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use rmcp::service::RoleClient;
use rmcp::{Peer, ServiceError};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::connect::{self, Changed, ConnectError, Connection, Handler};
pub use super::requests::CallError;
use pith_config::{Config, McpServerConfig};
use pith_protocol::event::{McpPrompt, McpPromptArg, McpState};

/// Why a server could not be reached or did not answer: one line for the user.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    #[error(transparent)]
    Connect(#[from] ConnectError),
    #[error("the MCP server {server} is disabled")]
    Disabled { server: String },
    #[error("no MCP server named {name}")]
    NoServer { name: String },
    /// `tools/list` failed on a new connection (`why`: the server's error, one line).
    #[error("tools/list failed: {why}")]
    ListFailed { why: String },
    #[error("no answer to tools/list within {secs} s")]
    ListTimeout { secs: u64 },
    #[error("{server} did not answer {method} in time")]
    Timeout {
        server: String,
        method: &'static str,
    },
    /// The server answered a request with an error (`why`: one line).
    #[error("{server}: {why}")]
    Rejected { server: String, why: String },
}

/// One server's live state.
struct Live {
    state: McpState,
    peer: Option<Peer<RoleClient>>,
    stop: Option<CancellationToken>,
    /// The tasks that stop each connection's process (awaited on shutdown).
    watchers: Vec<tokio::task::JoinHandle<()>>,
    /// Bumped on every connection, so the end of an old one changes nothing.
    epoch: u64,
    /// What it offered when last listed (kept after it exits: a call restarts it).
    tools: Vec<rmcp::model::Tool>,
    prompts: Vec<McpPrompt>,
    resources: bool,
}

/// One configured server.
pub struct Server {
    pub name: String,
    pub config: McpServerConfig,
    live: Mutex<Live>,
    /// One (re)connection at a time.
    connecting: tokio::sync::Mutex<()>,
    /// A re-listing is queued (a burst of `list_changed` makes one, not one each).
    relist_queued: std::sync::atomic::AtomicBool,
    /// Its questions to the user: their pace, and how long they kept a call waiting.
    pub(crate) pace: Arc<Mutex<crate::questions::Pace>>,
}

impl Server {
    fn lock(&self) -> std::sync::MutexGuard<'_, Live> {
        self.live.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn state(&self) -> McpState {
        self.lock().state.clone()
    }

    /// Its tools that the config lets through.
    pub fn tools(&self) -> Vec<rmcp::model::Tool> {
        self.lock()
            .tools
            .iter()
            .filter(|t| self.config.offers(&t.name))
            .cloned()
            .collect()
    }

    pub fn prompts(&self) -> Vec<McpPrompt> {
        self.lock().prompts.clone()
    }

    pub fn has_resources(&self) -> bool {
        self.lock().resources
    }

    /// Its connection, when it is ready and offers resources.
    pub(crate) fn resource_peer(&self) -> Option<Peer<RoleClient>> {
        let live = self.lock();
        if live.resources && live.state == McpState::Ready {
            live.peer.clone()
        } else {
            None
        }
    }
}

/// Everything the manager reports to its owner.
pub(crate) type OnChange = Arc<dyn Fn() + Send + Sync>;
/// How the environment is read (the process's, or a test's).
pub type Env = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// The servers of one engine.
pub struct McpManager {
    servers: Vec<Arc<Server>>,
    workspace: PathBuf,
    /// Bumped on every change of a server's state or offer.
    generation: watch::Sender<u64>,
    on_change: OnChange,
    env: Env,
    /// Lists being fetched again after a server said they changed.
    refreshing: std::sync::atomic::AtomicUsize,
    /// Who answers the servers' questions (set before the servers start).
    questions: std::sync::OnceLock<Arc<dyn crate::questions::ServerQuestions>>,
    /// The data dir holding OAuth sign-ins (`mcp-tokens.json`); unset: none are used.
    tokens: std::sync::OnceLock<PathBuf>,
}

impl McpManager {
    /// The configured servers, none started yet. `on_change` is called (from any task) whenever
    /// a server changes state or what it offers.
    pub fn new(config: &Config, workspace: &Path, on_change: OnChange) -> Arc<McpManager> {
        Self::with_env(
            config,
            workspace,
            on_change,
            Arc::new(pith_secrets::env_var),
        )
    }

    /// [`McpManager::new`] with the environment as a lookup (tests).
    pub(crate) fn with_env(
        config: &Config,
        workspace: &Path,
        on_change: OnChange,
        env: Env,
    ) -> Arc<McpManager> {
        let servers = config
            .mcp
            .iter()
            .map(|(name, c)| {
                Arc::new(Server {
                    name: name.clone(),
                    config: c.clone(),
                    live: Mutex::new(Live {
                        state: if c.enabled {
                            McpState::Starting
                        } else {
                            McpState::Disabled
                        },
                        peer: None,
                        stop: None,
                        watchers: Vec::new(),
                        epoch: 0,
                        tools: Vec::new(),
                        prompts: Vec::new(),
                        resources: false,
                    }),
                    connecting: tokio::sync::Mutex::new(()),
                    relist_queued: Default::default(),
                    pace: Default::default(),
                })
            })
            .collect();
        Arc::new(McpManager {
            servers,
            workspace: workspace.to_path_buf(),
            generation: watch::Sender::new(0),
            on_change,
            env,
            refreshing: Default::default(),
            questions: Default::default(),
            tokens: std::sync::OnceLock::new(),
        })
    }

    /// Who answers the servers' questions (elicitation, sampling): connections made from now
    /// on offer them. Set once, before [`McpManager::start_all`].
    pub fn set_questions(&self, questions: Arc<dyn crate::questions::ServerQuestions>) {
        let _ = self.questions.set(questions);
    }

    /// Servers signed in with `pith mcp login` send the tokens stored in `data_dir` (set before
    /// [`McpManager::start_all`]).
    pub fn use_sign_ins(&self, data_dir: &Path) {
        let _ = self.tokens.set(data_dir.to_path_buf());
    }

    /// `server`'s OAuth sign-in as `/mcp` shows it (`signed in, token expires in 50 min`);
    /// `None` when it has none or sign-ins are not used.
    pub fn sign_in(&self, server: &Server) -> Option<String> {
        let (dir, url) = (self.sign_ins()?, server.config.url.as_deref()?);
        crate::oauth::describe(&server.name, &crate::oauth::sign_in(dir, &server.name, url))
    }

    /// `sign-in expired — …` when the stored sign-in of `server` was refused.
    pub(crate) fn expired_sign_in(&self, server: &Server) -> Option<String> {
        let (dir, url) = (self.sign_ins()?, server.config.url.as_deref()?);
        let state = crate::oauth::sign_in(dir, &server.name, url);
        (state == crate::oauth::SignIn::Expired)
            .then(|| crate::oauth::describe(&server.name, &state))
            .flatten()
    }

    /// The data dir of the stored sign-ins, if they are used.
    pub fn sign_ins(&self) -> Option<&Path> {
        self.tokens.get().map(PathBuf::as_path)
    }

    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    pub fn servers(&self) -> &[Arc<Server>] {
        &self.servers
    }

    pub fn server(&self, name: &str) -> Option<&Arc<Server>> {
        self.servers.iter().find(|s| s.name == name)
    }

    /// Changes with every change of state or offer.
    pub fn generation(&self) -> u64 {
        *self.generation.borrow()
    }

    fn changed(&self) {
        self.generation.send_modify(|g| *g += 1);
        (self.on_change)();
    }

    /// Starts every enabled server in the background.
    pub fn start_all(self: &Arc<Self>) {
        for server in &self.servers {
            if server.config.enabled {
                let me = self.clone();
                let server = server.clone();
                tokio::spawn(async move {
                    let _ = me.ensure(&server).await;
                });
            }
        }
    }

    /// Whether some server is still starting.
    pub fn starting(&self) -> Vec<String> {
        self.servers
            .iter()
            .filter(|s| s.state() == McpState::Starting)
            .map(|s| s.name.clone())
            .collect()
    }

    /// Some server said its tools changed and they are being listed again.
    pub fn refreshing(&self) -> bool {
        self.refreshing.load(std::sync::atomic::Ordering::SeqCst) > 0
    }

    /// Waits until no server is starting or being listed again (each bounded by its startup
    /// timeout), or `cancel`.
    pub async fn settle(&self, cancel: &CancellationToken) {
        let mut rx = self.generation.subscribe();
        loop {
            if self.starting().is_empty() && !self.refreshing() {
                return;
            }
            tokio::select! {
                r = rx.changed() => if r.is_err() { return },
                _ = cancel.cancelled() => return,
            }
        }
    }

    /// The server's connection, starting it first when it is not running (at start-up, after it
    /// failed or exited, or after a restart was asked for).
    pub(crate) async fn ensure(
        self: &Arc<Self>,
        server: &Arc<Server>,
    ) -> Result<Peer<RoleClient>, McpError> {
        let _one = server.connecting.lock().await;
        {
            let live = server.lock();
            if let (McpState::Ready, Some(peer)) = (&live.state, &live.peer)
                && !peer.is_transport_closed()
            {
                return Ok(peer.clone());
            }
        }
        if !server.config.enabled {
            return Err(McpError::Disabled {
                server: server.name.clone(),
            });
        }
        self.set_state(server, McpState::Starting);
        tracing::info!(server = %server.name, "starting MCP server");
        match self.connect(server).await {
            Ok(peer) => Ok(peer),
            Err(e) => {
                let reason = e.to_string();
                tracing::warn!(server = %server.name, "MCP server failed to start: {reason}");
                self.set_state(server, McpState::Failed { reason });
                Err(e)
            }
        }
    }

    async fn connect(self: &Arc<Self>, server: &Arc<Server>) -> Result<Peer<RoleClient>, McpError> {
        let env = self.env.clone();
        let conn = connect::connect(
            &server.name,
            &server.config,
            &self.workspace,
            self.handler(server),
            &|v| env(v),
            self.sign_ins(),
        )
        .await?;
        let Connection {
            peer,
            instructions: _,
            server_info,
            stop,
            ended,
            watcher,
        } = conn;
        let timeout = server.config.startup_timeout();
        let listed = tokio::time::timeout(timeout, list_offer(&peer)).await;
        let (tools, prompts, resources) = match listed {
            Ok(Ok(offer)) => offer,
            Ok(Err(e)) => {
                stop.cancel();
                return Err(McpError::ListFailed {
                    why: service_error(&e),
                });
            }
            Err(_) => {
                stop.cancel();
                return Err(McpError::ListTimeout {
                    secs: timeout.as_secs(),
                });
            }
        };
        tracing::info!(
            server = %server.name,
            info = %server_info,
            tools = tools.len(),
            "MCP server ready"
        );
        let epoch = {
            let mut live = server.lock();
            live.epoch += 1;
            live.state = McpState::Ready;
            live.peer = Some(peer.clone());
            live.stop = Some(stop);
            live.watchers.retain(|w| !w.is_finished());
            live.watchers.push(watcher);
            live.tools = tools;
            live.prompts = prompts;
            live.resources = resources;
            live.epoch
        };
        self.changed();
        self.watch_end(server, ended, epoch);
        Ok(peer)
    }

    /// The handler of a new connection to `server`: a notification that its tools (prompts,
    /// resources) changed lists them again.
    fn handler(self: &Arc<Self>, server: &Arc<Server>) -> Handler {
        let weak: Weak<McpManager> = Arc::downgrade(self);
        let server_weak = Arc::downgrade(server);
        Handler {
            server: server.name.clone(),
            workspace: self.workspace.to_string_lossy().into_owned(),
            questions: self.questions.get().cloned(),
            pace: server.pace.clone(),
            on_change: Arc::new(move |what| {
                if let (Some(me), Some(server)) = (weak.upgrade(), server_weak.upgrade()) {
                    use std::sync::atomic::Ordering::SeqCst;
                    if what == Changed::Tools && server.relist_queued.swap(true, SeqCst) {
                        return; // the queued re-listing will see this change too
                    }
                    // Counted before the result of the call that caused it is returned, so the
                    // next step waits for the new list.
                    me.refreshing.fetch_add(1, SeqCst);
                    tokio::spawn(async move {
                        me.clone().refresh(&server, what).await;
                        me.refreshing
                            .fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
                        me.changed();
                    });
                }
            }),
        }
    }

    /// When the connection of `epoch` ends, says so (unless a newer one replaced it).
    fn watch_end(
        self: &Arc<Self>,
        server: &Arc<Server>,
        ended: tokio::sync::oneshot::Receiver<String>,
        epoch: u64,
    ) {
        let me = Arc::downgrade(self);
        let srv = server.clone();
        tokio::spawn(async move {
            let why = ended
                .await
                .unwrap_or_else(|_| "the connection ended".into());
            let Some(me) = me.upgrade() else { return };
            let current = {
                let mut live = srv.lock();
                let current = live.epoch == epoch && live.state == McpState::Ready;
                if current {
                    live.peer = None;
                    live.stop = None;
                    live.state = match me.expired_sign_in(&srv) {
                        // The server refused the token and its refresh: say what to do.
                        Some(reason) => McpState::Failed { reason },
                        None => McpState::Exited {
                            reason: why.clone(),
                        },
                    };
                }
                current
            };
            if current {
                tracing::warn!(server = %srv.name, "MCP server exited: {why}");
                me.changed();
            }
        });
    }

    /// A 401 mid-session: the connection is closed, the state says what to do (`line`).
    pub(crate) fn refused_sign_in(&self, server: &Server, line: String) {
        let mut live = server.lock();
        if let Some(stop) = live.stop.take() {
            stop.cancel();
        }
        (live.peer, live.state) = (None, McpState::Failed { reason: line });
        drop(live);
        self.changed();
    }

    fn set_state(&self, server: &Server, state: McpState) {
        let changed = {
            let mut live = server.lock();
            let changed = live.state != state;
            live.state = state;
            changed
        };
        if changed {
            self.changed();
        }
    }

    /// A server said its tools (or prompts, or resources) changed: list them again.
    async fn refresh(self: Arc<Self>, server: &Arc<Server>, what: Changed) {
        if what == Changed::Tools {
            // A change announced from now on needs a listing after this one.
            server
                .relist_queued
                .store(false, std::sync::atomic::Ordering::SeqCst);
        }
        let Some(peer) = server.lock().peer.clone() else {
            return;
        };
        let timeout = server.config.startup_timeout();
        match what {
            Changed::Tools => match tokio::time::timeout(timeout, peer.list_all_tools()).await {
                Ok(Ok(tools)) => {
                    tracing::info!(server = %server.name, tools = tools.len(), "MCP tools changed");
                    server.lock().tools = tools;
                    self.changed();
                }
                Ok(Err(e)) => {
                    tracing::warn!(server = %server.name, "tools/list failed: {}", service_error(&e))
                }
                Err(_) => tracing::warn!(server = %server.name, "tools/list timed out"),
            },
            Changed::Prompts => {
                if let Ok(Ok(prompts)) =
                    tokio::time::timeout(timeout, peer.list_all_prompts()).await
                {
                    server.lock().prompts = prompts.into_iter().map(prompt_info).collect();
                    self.changed();
                }
            }
            Changed::Resources => {}
        }
    }

    /// The server named `name`.
    pub(crate) fn named(&self, name: &str) -> Result<Arc<Server>, McpError> {
        self.server(name)
            .cloned()
            .ok_or_else(|| McpError::NoServer {
                name: name.to_string(),
            })
    }

    /// Stops a server (if it runs) and starts it again.
    pub async fn restart(self: &Arc<Self>, name: &str) -> Result<(), McpError> {
        let server = self.named(name)?;
        {
            let mut live = server.lock();
            if let Some(stop) = live.stop.take() {
                stop.cancel();
            }
            live.peer = None;
            live.epoch += 1;
        }
        self.ensure(&server).await.map(|_| ())
    }

    /// Stops every server and waits (a few seconds at most) for their processes to go.
    pub async fn shutdown(&self) {
        let mut watchers = Vec::new();
        for s in &self.servers {
            let mut live = s.lock();
            live.epoch += 1;
            live.peer = None;
            if let Some(stop) = live.stop.take() {
                stop.cancel();
            }
            watchers.append(&mut live.watchers);
        }
        let all = futures_util::future::join_all(watchers);
        let _ = tokio::time::timeout(Duration::from_secs(5), all).await;
    }
}

impl Drop for McpManager {
    fn drop(&mut self) {
        for s in &self.servers {
            if let Some(stop) = s.lock().stop.take() {
                stop.cancel();
            }
        }
    }
}

/// Tools, prompts and whether resources are offered, as the server lists them.
async fn list_offer(
    peer: &Peer<RoleClient>,
) -> Result<(Vec<rmcp::model::Tool>, Vec<McpPrompt>, bool), ServiceError> {
    let caps = peer.peer_info().map(|i| i.capabilities.clone());
    let has = |f: fn(&rmcp::model::ServerCapabilities) -> bool| caps.as_ref().is_some_and(f);
    let tools = if has(|c| c.tools.is_some()) {
        peer.list_all_tools().await?
    } else {
        Vec::new()
    };
    let prompts = if has(|c| c.prompts.is_some()) {
        // A server whose prompts cannot be listed still serves its tools.
        peer.list_all_prompts()
            .await
            .map(|p| p.into_iter().map(prompt_info).collect())
            .unwrap_or_default()
    } else {
        Vec::new()
    };
    Ok((tools, prompts, has(|c| c.resources.is_some())))
}

fn prompt_info(p: rmcp::model::Prompt) -> McpPrompt {
    McpPrompt {
        name: p.name,
        description: p.description.or(p.title),
        arguments: p
            .arguments
            .unwrap_or_default()
            .into_iter()
            .map(|a| McpPromptArg {
                name: a.name,
                required: a.required.unwrap_or(false),
                description: a.description,
            })
            .collect(),
    }
}

/// A service error as one line.
pub(crate) fn service_error(e: &ServiceError) -> String {
    match e {
        ServiceError::McpError(data) => pith_protocol::text::one_line(&data.message),
        ServiceError::TransportSend(t) => crate::error_line::send_error(t),
        other => crate::error_line::plain(&other.to_string()),
    }
}
