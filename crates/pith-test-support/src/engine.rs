//! The engine driven in process as the TUI drives it: ops in, events out, against the mock
//! provider (openai wire format).

use std::sync::Arc;
use std::time::Duration;

use pith_config::{Config, ModelConfig, PermissionSetting, ProviderConfig, ProviderKind};
use pith_engine::{EngineHandle, EngineOptions};
use pith_protocol::event::{Event, EventMsg, Op, PermissionRequest, TurnEnd, TurnEvent};
use pith_store::Store;

use super::MockServer;

pub const MODEL: &str = "mock/test-model";

pub struct Harness {
    pub server: MockServer,
    pub handle: EngineHandle,
    pub workspace: tempfile::TempDir,
    pub data: tempfile::TempDir,
    pub session_id: String,
}

/// An engine on a fresh session with these permission rules; `headless`: no one answers
/// questions.
pub async fn harness(permission: Vec<(&str, PermissionSetting)>, headless: bool) -> Harness {
    harness_with(permission, headless, |_| {}).await
}

/// [`harness`] with the configuration changed by `edit` before the engine starts.
pub async fn harness_with(
    permission: Vec<(&str, PermissionSetting)>,
    headless: bool,
    edit: impl FnOnce(&mut Config),
) -> Harness {
    let server = MockServer::start().await;
    let workspace = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let mut config = mock_config(&server);
    for (k, v) in permission {
        config.permission.insert(k.into(), v);
    }
    edit(&mut config);
    let store = Arc::new(Store::open(data.path()).unwrap());
    let ws = workspace.path().canonicalize().unwrap();
    let session = store.create_session(&ws.to_string_lossy(), MODEL).unwrap();
    let session_id = session.id.clone();
    let handle =
        pith_engine::spawn(options(config, &ws, data.path(), headless), store, session).unwrap();
    Harness {
        server,
        handle,
        workspace,
        data,
        session_id,
    }
}

/// [`harness_with`] with the engine's options changed by `opts` too (skills, …).
pub async fn harness_with_options(
    headless: bool,
    edit: impl FnOnce(&mut Config),
    opts: impl FnOnce(&mut EngineOptions, &std::path::Path),
) -> Harness {
    let server = MockServer::start().await;
    let workspace = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let mut config = mock_config(&server);
    edit(&mut config);
    let store = Arc::new(Store::open(data.path()).unwrap());
    let ws = workspace.path().canonicalize().unwrap();
    let session = store.create_session(&ws.to_string_lossy(), MODEL).unwrap();
    let session_id = session.id.clone();
    let mut o = options(config, &ws, data.path(), headless);
    opts(&mut o, &ws);
    let handle = pith_engine::spawn(o, store, session).unwrap();
    Harness {
        server,
        handle,
        workspace,
        data,
        session_id,
    }
}

/// The options the harness starts its engine with: no `--yes`, the disk's files, empty
/// sessions kept.
pub fn options(
    config: Config,
    workspace: &std::path::Path,
    data_dir: &std::path::Path,
    headless: bool,
) -> EngineOptions {
    EngineOptions {
        config,
        workspace: workspace.to_path_buf(),
        data_dir: data_dir.to_path_buf(),
        headless,
        auto_yes: false,
        allow_unsandboxed: false,
        editor: None,
        remove_empty_sessions: false,
        user_dirs: Default::default(),
        skills: Default::default(),
    }
}

/// A configuration whose model, [`MODEL`], is served by `server` (openai wire format) with a
/// 128k window.
pub fn mock_config(server: &MockServer) -> Config {
    let mut config = Config {
        model: Some(MODEL.into()),
        ..Config::default()
    };
    // the request snapshots were made without them
    config.webfetch.enabled = false;
    config.memory.tool = false;
    // nor with background jobs (`job_output`, `job_kill`, bash's `background`)
    config.jobs.max = 0;
    config.provider.insert(
        "mock".into(),
        ProviderConfig {
            kind: ProviderKind::Openai,
            base_url: format!("{}/v1", server.url()),
            api_key_env: None,
            headers: Default::default(),
            max_retries: Some(1),
            ..Default::default()
        },
    );
    config.models.insert(
        MODEL.into(),
        ModelConfig {
            context: 128_000,
            output: 8_000,
            ..ModelConfig::default()
        },
    );
    config
}

impl Harness {
    /// Receives events until `pred` matches one (answering nothing), with a time limit.
    pub async fn until(&mut self, what: &str, pred: impl Fn(&Event) -> bool) -> Event {
        self.until_msg(what, |m| pred(&m.event)).await.event
    }

    /// Receives events until `pred` matches one, envelope and all (the op it answers), with a
    /// time limit.
    pub async fn until_msg(&mut self, what: &str, pred: impl Fn(&EventMsg) -> bool) -> EventMsg {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        loop {
            let msg = tokio::time::timeout_at(deadline, self.handle.events.recv())
                .await
                .unwrap_or_else(|_| panic!("timed out waiting for {what}"))
                .expect("engine alive");
            if pred(&msg) {
                return msg;
            }
        }
    }

    pub async fn turn_finished(&mut self) -> TurnEnd {
        match self
            .until("turn_finished", |e| {
                matches!(e, Event::Turn(TurnEvent::TurnFinished { .. }))
            })
            .await
        {
            Event::Turn(TurnEvent::TurnFinished { reason }) => reason,
            _ => unreachable!(),
        }
    }

    pub async fn permission_asked(&mut self) -> PermissionRequest {
        match self
            .until("permission_asked", |e| {
                matches!(e, Event::Turn(TurnEvent::PermissionAsked(_)))
            })
            .await
        {
            Event::Turn(TurnEvent::PermissionAsked(r)) => r,
            _ => unreachable!(),
        }
    }

    pub fn send(&self, op: Op) {
        self.handle.ops.send(op.into()).unwrap();
    }

    /// The tool results the model received in request `i`.
    pub fn tool_results(&self, i: usize) -> Vec<String> {
        let body = self.server.request_body(i);
        body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "tool")
            .map(|m| m["content"].as_str().unwrap_or_default().to_string())
            .collect()
    }
}
