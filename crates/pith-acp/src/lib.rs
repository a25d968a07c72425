//! `pith acp`: pith as an Agent Client Protocol agent on stdio (ARCHITECTURE.md §1), the third
//! front end beside the TUI and `pith run`. Editors (Zed, JetBrains, Neovim, Emacs) start it and
//! speak JSON-RPC on its stdin and stdout; nothing else is written to stdout (logs go to the
//! log file). The message types are the protocol's own (`agent-client-protocol-schema`); the
//! engine sees only `Op`s and none of them.

mod agent;
pub mod commands;
mod content;
mod files;
mod modes;
mod replay;
mod rpc;
mod session;
mod tools;
mod translate;

use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::mpsc;

use rpc::{Connection, Incoming};

/// Serves one client until it closes stdin. `trust`: `--trust` (every workspace the client
/// opens is trusted).
pub async fn run(config_file: Option<PathBuf>, trust: bool) -> anyhow::Result<i32> {
    if let Ok(dir) = pith_launch::setup::data_dir() {
        pith_launch::setup::init_logging(&dir);
    }
    let (tx, rx) = mpsc::unbounded_channel();
    let conn = Arc::new(Connection::new(tx));
    rpc::spawn_writer(rx, std::io::stdout());
    let agent = Arc::new(agent::Agent::new(conn.clone(), config_file, trust));
    let mut lines = rpc::spawn_reader(std::io::BufReader::new(std::io::stdin()), conn.clone());
    while let Some(line) = lines.recv().await {
        match conn.parse_line(&line) {
            Some(Incoming::Request { id, method, params }) => {
                let agent = agent.clone();
                tokio::spawn(async move { agent.request(id, method, params).await });
            }
            Some(Incoming::Notification { method, params }) => agent.notification(&method, params),
            None => {}
        }
    }
    tracing::info!("acp: the client closed the connection");
    conn.close();
    agent.shutdown().await;
    // the engines stop and save; what is queued is written meanwhile
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    Ok(0)
}
