//! `/mcp login NAME` (`Op::McpLogin`, ARCHITECTURE.md §12.2): the OAuth sign-in of an HTTP MCP
//! server, run beside the session. What the user must act on (the URL to open, or the device
//! code) is an `Info` answering the op, so a front end shows it in its transcript; a browser is
//! opened only where there is a display. Signed in, the server is restarted with the token.

use std::sync::Arc;

use tokio::sync::mpsc;

use crate::error::EngineError;
use crate::mcp_error::McpOpError;
use pith_mcp::McpManager;
use pith_protocol::event::{Event, EventMsg, SubmissionId};

/// Signs in to `name`, saying each step as an `Info` answering `id`.
pub(crate) async fn run(
    id: SubmissionId,
    name: String,
    manager: Arc<McpManager>,
    events: mpsc::UnboundedSender<EventMsg>,
) {
    let fail = |cause: McpOpError| {
        let _ = events.send(EngineError::from(cause).event_for(Some(id.clone())));
    };
    let Some(server) = manager.server(&name).cloned() else {
        return fail(McpOpError::NoServer(name));
    };
    let Some(data_dir) = manager.sign_ins().map(std::path::Path::to_path_buf) else {
        return fail(McpOpError::NotConfigured);
    };
    let env = |v: &str| pith_secrets::env_var(v);
    let say_to = events.clone();
    let say_id = id.clone();
    let say = move |line: &str| {
        let _ = say_to.send(EventMsg::from(Event::info(line.to_string())).answering(&say_id));
    };
    let opts = pith_mcp::oauth::LoginOptions {
        device: false,
        open_browser: !pith_mcp::oauth::remote_shell(&env),
        timeout: pith_mcp::oauth::LOGIN_TIMEOUT,
        env: &env,
        say: &say,
    };
    match pith_mcp::oauth::login_server(&data_dir, &name, &server.config, &opts).await {
        Ok(done) => {
            say(&done);
            // A failure shows as the server's state.
            let _ = manager.restart(&name).await;
        }
        Err(cause) => fail(McpOpError::Login { name, cause }),
    }
}
