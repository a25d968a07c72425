//! MCP OAuth's error paths (ARCHITECTURE.md §12.2): what the user and the model are told when
//! a sign-in or a signed-in call goes wrong, against servers pith did not write.

use pith_config::{PermissionAction, PermissionSetting};
use pith_protocol::event::{Event, McpState, Op, SettingsEvent, TurnEnd};
use serde_json::json;

use super::mcp_oauth::{Pith, call, http, interact_cmd, register_client, settled};
use crate::support;
use support::mcp::{self, HttpServer};
use support::openai;

/// A confidential client (`oauth_client_secret_env`, registered for `client_secret_basic`)
/// with a wrong secret: the token exchange fails, and the browser's page says the sign-in
/// failed (it is answered after the exchange, not when the redirect arrives).
#[tokio::test]
async fn a_failed_token_exchange_is_told_to_the_browser() {
    let Some(py) = mcp::python() else { return };
    let server =
        HttpServer::start_script(&py, &mcp::named_script("oauth_server.py"), &[], &[]).await;
    let (port, registered) = register_client(&server, "client_secret_basic", "confidential").await;
    let client_id = registered["client_id"].as_str().unwrap().to_string();
    let secret = registered["client_secret"].as_str().unwrap().to_string();
    let pith = Pith::new("corp", &server.url);
    std::fs::write(
        &pith.config,
        format!(
            "[mcp.corp]\nurl = \"{}\"\noauth_client_id = \"{client_id}\"\noauth_client_secret_env = \"CORP_SECRET\"\noauth_callback_port = {port}\noauth_scopes = [\"mcp\"]\n",
            server.url
        ),
    )
    .unwrap();
    let wrong = format!("{secret}-wrong");
    let mut cmd = pith.command(&["mcp", "login", "corp"]);
    cmd.env("CORP_SECRET", &wrong);
    let page = std::sync::Mutex::new(String::new());
    let (ok, out) = interact_cmd(cmd, async |line: &str| {
        let Some(url) = line.trim().strip_prefix("http").map(|u| format!("http{u}")) else {
            return false;
        };
        let answer = http().get(&url).send().await.unwrap();
        *page.lock().unwrap() = answer.text().await.unwrap();
        true
    })
    .await;
    let page = page.into_inner().unwrap();
    assert!(!ok, "{out}");
    assert!(page.contains("Sign-in failed"), "{page}");
    assert!(!page.contains("Signed in"), "{page}");
    assert!(out.contains("the token request failed"), "{out}");
    assert!(!out.contains(&wrong), "{out}");
    assert!(pith.tokens().servers.is_empty());
}

/// A server that guards only its tools (`initialize` and `tools/list` pass, `tools/call` is
/// answered 401 with a challenge): the call's result says to sign in, not that the server
/// stopped, and the server's state says so too.
#[tokio::test]
async fn a_401_on_a_tool_call_asks_for_a_sign_in() {
    let Some(py) = mcp::python() else { return };
    let server =
        HttpServer::start_script(&py, &mcp::named_script("guard_server.py"), &[], &[]).await;
    let config = pith_config::McpServerConfig {
        url: Some(server.url.clone()),
        ..Default::default()
    };
    let data = tempfile::tempdir().unwrap();
    let dir = data.path().to_path_buf();
    let mut h = support::engine::harness_with_options(
        true,
        move |c| {
            c.mcp.insert("guard".into(), config);
            c.permission.insert(
                "guard".into(),
                PermissionSetting::Action(PermissionAction::Allow),
            );
        },
        move |o, _| o.data_dir = dir,
    )
    .await;
    let status = settled(&mut h, "guard").await;
    assert_eq!(status.state, McpState::Ready, "{status:?}");
    h.server.push(call("c0", "guard_echo", json!({})));
    h.server.push(openai::text("done", Some((1100, 2))));
    h.send(Op::user_turn("use the tool"));
    // `/mcp` says so (the state changes during the call, before the turn ends).
    let want = McpState::Failed {
        reason: "needs sign-in: `pith mcp login guard`".into(),
    };
    h.until("guard needs sign-in", |e| match e {
        Event::Settings(SettingsEvent::McpStatus { servers }) => {
            servers.iter().any(|s| s.name == "guard" && s.state == want)
        }
        _ => false,
    })
    .await;
    assert_eq!(h.turn_finished().await, TurnEnd::Stop);
    let result = h.tool_results(1).pop().unwrap_or_default();
    assert!(
        result.contains("needs sign-in: `pith mcp login guard`"),
        "{result}"
    );
    assert!(!result.contains("stopped during the call"), "{result}");
}
