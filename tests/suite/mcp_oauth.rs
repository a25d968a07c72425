//! MCP OAuth end to end (ARCHITECTURE.md §12.2), against servers pith did not write: the Python
//! SDK's authorization + resource server (`pith-test-support/mcp/oauth_server.py`) and a
//! device-flow stub (`pith-test-support/mcp/device_stub.py`). `pith mcp login` runs as a real
//! process; the test is the browser (it follows the authorization URL to pith's loopback
//! listener) or the user approving a device code. Then a session uses the server's tools, the
//! token is refreshed after it expires, a revoked token leaves "sign-in expired", `logout`
//! removes it, and no token is written anywhere but the token file.

use std::io::BufRead as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::support;

use pith_config::{PermissionAction, PermissionSetting};
use pith_mcp::oauth::TokenFile;
use pith_protocol::event::{Event, McpServerStatus, McpState, Op, SettingsEvent, TurnEnd};
use serde_json::{Value, json};
use support::mcp::{self, HttpServer};
use support::openai;

/// The directories of one pith: data, workspace, home, and the config naming the server.
pub(super) struct Pith {
    pub(super) data: tempfile::TempDir,
    workspace: tempfile::TempDir,
    home: tempfile::TempDir,
    pub(super) config: PathBuf,
}

impl Pith {
    pub(super) fn new(name: &str, url: &str) -> Pith {
        let home = tempfile::tempdir().unwrap();
        let config = home.path().join("pith-config.toml");
        std::fs::write(&config, format!("[mcp.{name}]\nurl = \"{url}\"\n")).unwrap();
        Pith {
            data: tempfile::tempdir().unwrap(),
            workspace: tempfile::tempdir().unwrap(),
            home,
            config,
        }
    }

    /// `pith ARGS` with this pith's directories, no display and no browser.
    pub(super) fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_pith"));
        cmd.args(args)
            .current_dir(self.workspace.path())
            .env("PITH_DATA_DIR", self.data.path())
            .env("PITH_CONFIG", &self.config)
            .env("HOME", self.home.path())
            .env("PITH_NO_BROWSER", "1")
            // Everything the SDK and pith log, so a token logged anywhere is caught.
            .env("PITH_LOG", "debug")
            .env_remove("DISPLAY")
            .env_remove("WAYLAND_DISPLAY")
            .stdin(Stdio::null());
        cmd
    }

    fn run(&self, args: &[&str]) -> String {
        let out = self.command(args).output().unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "pith {args:?}: {text}");
        text
    }

    pub(super) fn tokens(&self) -> TokenFile {
        TokenFile::read(self.data.path()).unwrap()
    }
}

/// Runs `pith ARGS`, hands each stdout line to `act` until it returns true, then waits for the
/// exit. Returns the whole output.
async fn interact(
    pith: &Pith,
    args: &[&str],
    act: impl AsyncFnMut(&str) -> bool,
) -> (bool, String) {
    interact_cmd(pith.command(args), act).await
}

/// [`interact`] with a command of one's own.
pub(super) async fn interact_cmd(
    mut cmd: Command,
    act: impl AsyncFnMut(&str) -> bool,
) -> (bool, String) {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut act = act;
    let mut out = String::new();
    let mut acted = false;
    while let Ok(Some(line)) = tokio::time::timeout(Duration::from_secs(60), rx.recv()).await {
        out.push_str(&line);
        out.push('\n');
        if !acted {
            acted = act(&line).await;
        }
    }
    let status = tokio::task::spawn_blocking(move || child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    out.push_str(&String::from_utf8_lossy(&status.stderr));
    (status.status.success(), out)
}

pub(super) fn http() -> reqwest::Client {
    pith_provider::init_tls();
    reqwest::Client::builder()
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap()
}

async fn get_json(url: &str) -> Value {
    http().get(url).send().await.unwrap().json().await.unwrap()
}

/// The server's base (`http://127.0.0.1:PORT`).
pub(super) fn base(server: &HttpServer) -> String {
    server.url.trim_end_matches("/mcp").to_string()
}

/// Signs in as a browser would: follows the printed authorization URL through the
/// authorization server's redirect to pith's loopback listener.
async fn login_with_browser(pith: &Pith, name: &str) -> String {
    let (ok, out) = interact(pith, &["mcp", "login", name], async |line: &str| {
        let Some(url) = line.trim().strip_prefix("http").map(|u| format!("http{u}")) else {
            return false;
        };
        assert!(url.contains("/authorize?"), "{url}");
        for part in [
            "code_challenge_method=S256",
            "response_type=code",
            "resource=",
            "state=",
        ] {
            assert!(url.contains(part), "{part} missing from {url}");
        }
        let page = http().get(&url).send().await.unwrap();
        assert!(page.url().as_str().starts_with("http://127.0.0.1:"));
        assert_eq!(page.url().path(), "/callback");
        let text = page.text().await.unwrap();
        assert!(text.contains("Signed in"), "{text}");
        true
    })
    .await;
    assert!(ok, "{out}");
    out
}

/// Waits for a status in which `name` is no longer starting.
pub(super) async fn settled(h: &mut support::engine::Harness, name: &str) -> McpServerStatus {
    loop {
        let ev = h
            .until("mcp status", |e| {
                matches!(e, Event::Settings(SettingsEvent::McpStatus { .. }))
            })
            .await;
        let Event::Settings(SettingsEvent::McpStatus { servers }) = ev else {
            unreachable!()
        };
        let s = servers.into_iter().find(|s| s.name == name).unwrap();
        if s.state != McpState::Starting {
            return s;
        }
    }
}

/// The access and refresh token stored for `name`.
fn stored_tokens(pith: &Pith, name: &str) -> Vec<String> {
    let file = std::fs::read_to_string(pith_mcp::oauth::store::path(pith.data.path())).unwrap();
    let v: Value = serde_json::from_str(&file).unwrap();
    let t = &v["servers"][name]["credentials"]["token_response"];
    ["access_token", "refresh_token"]
        .iter()
        .filter_map(|k| t[k].as_str().map(str::to_string))
        .collect()
}

/// Every file under `dir` but the token file holds none of `secrets`.
fn assert_nowhere(dir: &Path, secrets: &[String]) {
    for entry in walk(dir) {
        if entry.file_name().is_some_and(|n| n == "mcp-tokens.json") {
            continue;
        }
        let bytes = std::fs::read(&entry).unwrap_or_default();
        let text = String::from_utf8_lossy(&bytes);
        for s in secrets {
            assert!(
                !text.contains(s.as_str()),
                "{} holds a token",
                entry.display()
            );
        }
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

pub(super) fn call(id: &str, tool: &str, args: Value) -> support::MockResponse {
    let args = args.to_string();
    openai::tool_calls(&[(id, tool, args.as_str())], Some((1000, 10)))
}

/// One turn in which the model calls `tool`; the result it got.
async fn use_tool(h: &mut support::engine::Harness, n: usize, tool: &str, args: Value) -> String {
    h.server.push(call(&format!("c{n}"), tool, args));
    h.server.push(openai::text("done", Some((1100, 2))));
    h.send(Op::user_turn("use the tool"));
    assert_eq!(h.turn_finished().await, TurnEnd::Stop);
    h.tool_results(2 * n + 1).pop().unwrap_or_default()
}

/// `pith mcp list` says a sign-in is needed, `pith mcp login` signs in; the stored tokens.
async fn first_sign_in(server: &HttpServer, pith: &Pith) -> Vec<String> {
    // Before signing in: connecting says so, and opens no browser.
    let list = pith.run(&["mcp", "list"]);
    assert!(
        list.contains("needs sign-in: `pith mcp login secure`"),
        "{list}"
    );

    let out = login_with_browser(pith, "secure").await;
    assert!(out.contains("Signed in to secure"), "{out}");
    let stats = get_json(&format!("{}/test/stats", base(server))).await;
    assert_eq!(stats["by_code"], 1, "{stats}");
    // RFC 8707: the token was asked for this server.
    assert_eq!(stats["resources"], json!([server.url]), "{stats}");
    let mode = std::fs::metadata(pith_mcp::oauth::store::path(pith.data.path()))
        .unwrap()
        .permissions();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777,
        0o600
    );
    let secrets = stored_tokens(pith, "secure");
    assert_eq!(secrets.len(), 2);

    secrets
}

/// An engine whose config names the server, with the sign-ins of `pith`'s data dir; ready.
async fn session(server: &HttpServer, pith: &Pith) -> support::engine::Harness {
    // A session uses the server with the stored token.
    let data = pith.data.path().to_path_buf();
    let config = pith_config::McpServerConfig {
        url: Some(server.url.clone()),
        ..Default::default()
    };
    let mut h = support::engine::harness_with_options(
        true,
        move |c| {
            c.mcp.insert("secure".into(), config);
            c.permission.insert(
                "secure".into(),
                PermissionSetting::Action(PermissionAction::Allow),
            );
        },
        move |o, _| o.data_dir = data,
    )
    .await;
    let status = settled(&mut h, "secure").await;
    assert_eq!(status.state, McpState::Ready, "{status:?}");
    let sign_in = status.sign_in.clone().unwrap_or_default();
    assert!(sign_in.starts_with("signed in"), "{status:?}");
    h
}

#[tokio::test]
async fn sign_in_use_refresh_revoke_and_logout_against_the_sdk_server() {
    let Some(py) = mcp::python() else { return };
    // Access tokens live 3 s: the session's second call needs a refresh.
    let server =
        HttpServer::start_script(&py, &mcp::named_script("oauth_server.py"), &[], &["3"]).await;
    let pith = Pith::new("secure", &server.url);

    let mut secrets = first_sign_in(&server, &pith).await;
    let mut h = session(&server, &pith).await;
    let who = use_tool(&mut h, 0, "secure_whoami", json!({})).await;
    assert!(who.starts_with("signed in as client "), "{who}");

    // After the access token expired: refreshed, saved, and the call goes through.
    tokio::time::sleep(Duration::from_millis(3500)).await;
    let sum = use_tool(&mut h, 1, "secure_add", json!({"a": 1, "b": 2})).await;
    assert_eq!(sum, "3");
    let stats = get_json(&format!("{}/test/stats", base(&server))).await;
    assert!(stats["by_refresh"].as_u64().unwrap() >= 1, "{stats}");
    let refreshed = stored_tokens(&pith, "secure");
    assert_ne!(refreshed, secrets, "the refreshed tokens were saved");
    secrets.extend(refreshed);

    // Revoked at the server: the next call fails, nothing hangs, and the sign-in is expired.
    http()
        .post(format!("{}/test/revoke-all", base(&server)))
        .send()
        .await
        .unwrap();
    let failed = tokio::time::timeout(
        Duration::from_secs(60),
        use_tool(&mut h, 2, "secure_add", json!({"a": 1, "b": 2})),
    )
    .await
    .expect("a revoked token does not hang the call");
    assert!(
        failed.contains("sign-in expired — `pith mcp login secure`"),
        "{failed}"
    );
    let tokens = pith.tokens();
    let entry = tokens.servers.get("secure").unwrap();
    assert!(
        entry.credentials.is_none(),
        "the refused tokens were removed"
    );
    let list = pith.run(&["mcp", "list"]);
    assert!(
        list.contains("sign-in expired — `pith mcp login secure`"),
        "{list}"
    );

    // No token in the session store, the log or anything else pith wrote.
    h.send(Op::Shutdown);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_nowhere(h.data.path(), &secrets);
    assert_nowhere(pith.data.path(), &secrets);

    // Signed in again, then out: the tokens are revoked at the server (RFC 7009) and forgotten.
    let out = login_with_browser(&pith, "secure").await;
    assert!(out.contains("Signed in to secure"), "{out}");
    let out = pith.run(&["mcp", "logout", "secure"]);
    assert!(
        out.contains("Signed out of secure (its tokens were revoked at the server)."),
        "{out}"
    );
    let stats = get_json(&format!("{}/test/stats", base(&server))).await;
    assert_eq!(stats["revoked"], 2, "refresh and access token: {stats}");
    assert!(pith.tokens().servers.is_empty());
    let list = pith.run(&["mcp", "list"]);
    assert!(
        list.contains("needs sign-in: `pith mcp login secure`"),
        "{list}"
    );
}

#[tokio::test]
async fn device_flow_polls_through_pending_and_slow_down() {
    let Some(py) = mcp::python() else { return };
    let server =
        HttpServer::start_script(&py, &mcp::named_script("device_stub.py"), &[], &[]).await;
    let pith = Pith::new("dev", &server.url);
    let approve = format!("{}/test/approve?user_code=", base(&server));
    let (ok, out) = interact(
        &pith,
        &["mcp", "login", "dev", "--device"],
        async |line: &str| {
            let Some((_, code)) = line.split_once("enter the code ") else {
                return false;
            };
            assert!(line.contains("/activate"), "{line}");
            http()
                .get(format!("{approve}{}", code.trim()))
                .send()
                .await
                .unwrap();
            true
        },
    )
    .await;
    assert!(ok, "{out}");
    assert!(out.contains("Signed in to dev"), "{out}");
    let stats = get_json(&format!("{}/test/stats", base(&server))).await;
    assert_eq!(stats["slowed"], true, "{stats}");
    assert_eq!(stats["issued"], 1, "{stats}");
    // The interval the server gave (1 s), then 5 s more after its `slow_down`.
    let at: Vec<f64> = stats["poll_times"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_f64().unwrap())
        .collect();
    assert_eq!(at.len(), 3, "{stats}");
    assert!(at[1] - at[0] >= 0.9, "{stats}");
    assert!(at[2] - at[1] >= 5.9, "{stats}");
    // Every request named the server as the resource (RFC 8707).
    for r in stats["resources"].as_array().unwrap() {
        assert_eq!(r, &json!(server.url));
    }
    assert_eq!(stored_tokens(&pith, "dev").len(), 2);
}

#[tokio::test]
async fn a_server_without_oauth_is_not_signed_in_to() {
    let Some(py) = mcp::python() else { return };
    let server = HttpServer::start(&py).await;
    let pith = Pith::new("open", &server.url);
    let out = pith.command(&["mcp", "login", "open"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        text.contains("open answered without asking for a sign-in: nothing to do"),
        "{text}"
    );
    assert!(pith.tokens().servers.is_empty());
    // And a name that is not configured says so.
    let out = pith.command(&["mcp", "login", "nope"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(
        text.contains("no MCP server named nope is configured"),
        "{text}"
    );
    // A server given its own token gets no sign-in (it would never be sent).
    std::fs::write(
        &pith.config,
        format!(
            "[mcp.open]\nurl = \"{}\"\nbearer_token_env = \"OPEN_TOKEN\"\n",
            server.url
        ),
    )
    .unwrap();
    let out = pith.command(&["mcp", "login", "open"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(text.contains("sends its own Authorization"), "{text}");
}

/// `/mcp login NAME` in a session (`Op::McpLogin`): the URL arrives as an `Info`, the browser
/// comes back, and the server is restarted signed in — no shell needed. The server is an OpenID
/// provider: its `id_token` names who signed in, and the status says so.
#[tokio::test]
async fn sign_in_from_the_session() {
    let Some(py) = mcp::python() else { return };
    let server = HttpServer::start_script(
        &py,
        &mcp::named_script("oauth_server.py"),
        &[],
        &["3600", "--account", "alice@example.com"],
    )
    .await;
    let pith = Pith::new("secure", &server.url);
    let data = pith.data.path().to_path_buf();
    let config = pith_config::McpServerConfig {
        url: Some(server.url.clone()),
        ..Default::default()
    };
    let mut h = support::engine::harness_with_options(
        true,
        move |c| {
            c.mcp.insert("secure".into(), config);
        },
        move |o, _| o.data_dir = data,
    )
    .await;
    let status = settled(&mut h, "secure").await;
    assert_eq!(
        status.state,
        McpState::Failed {
            reason: "needs sign-in: `pith mcp login secure`".into()
        }
    );
    h.send(Op::McpLogin {
        name: "secure".into(),
    });
    let info = h
        .until("the sign-in URL", |e| {
            matches!(e, Event::Turn(pith_protocol::event::TurnEvent::Info { message }) if message.contains("/authorize?"))
        })
        .await;
    let Event::Turn(pith_protocol::event::TurnEvent::Info { message }) = info else {
        unreachable!()
    };
    let url = message.split_whitespace().last().unwrap().to_string();
    let page = http().get(&url).send().await.unwrap().text().await.unwrap();
    assert!(page.contains("Signed in"), "{page}");
    let done = h
        .until("signed in", |e| {
            matches!(e, Event::Turn(pith_protocol::event::TurnEvent::Info { message }) if message.starts_with("Signed in to secure"))
        })
        .await;
    let Event::Turn(pith_protocol::event::TurnEvent::Info { message }) = done else {
        unreachable!()
    };
    assert!(
        message.starts_with(
            "Signed in to secure as alice@example.com at 127.0.0.1, token expires in "
        ),
        "{message}"
    );
    let status = settled(&mut h, "secure").await;
    assert_eq!(status.state, McpState::Ready, "{status:?}");
    let sign_in = status.sign_in.unwrap_or_default();
    assert!(
        sign_in.starts_with("signed in as alice@example.com at 127.0.0.1, token expires in "),
        "{sign_in}"
    );
    let tokens = pith.tokens();
    assert_eq!(
        tokens.servers["secure"].account.as_deref(),
        Some("alice@example.com")
    );
    let out = pith.run(&["mcp", "list"]);
    assert!(out.contains("signed in as alice@example.com"), "{out}");
}

/// A client registered beforehand (`oauth_client_id`, with its fixed redirect port): no dynamic
/// registration, the redirect where the client was registered for. `--device` where the server
/// offers no device flow says so.
#[tokio::test]
async fn a_pre_registered_client_signs_in_without_registering() {
    let Some(py) = mcp::python() else { return };
    let server =
        HttpServer::start_script(&py, &mcp::named_script("oauth_server.py"), &[], &[]).await;
    let (port, registered) = register_client(&server, "none", "registered by hand").await;
    let client_id = registered["client_id"].as_str().unwrap().to_string();
    let pith = Pith::new("corp", &server.url);
    std::fs::write(
        &pith.config,
        format!(
            "[mcp.corp]\nurl = \"{}\"\noauth_client_id = \"{client_id}\"\noauth_callback_port = {port}\noauth_scopes = [\"mcp\"]\n",
            server.url
        ),
    )
    .unwrap();

    let out = pith
        .command(&["mcp", "login", "corp", "--device"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(text.contains("offers no device flow"), "{text}");

    let out = login_with_browser(&pith, "corp").await;
    assert!(out.contains(&format!("client_id={client_id}")), "{out}");
    assert!(
        out.contains(&format!(
            "redirect_uri=http%3A%2F%2F127.0.0.1%3A{port}%2Fcallback"
        )),
        "{out}"
    );
    let tokens = pith.tokens();
    let stored = tokens.servers["corp"].credentials.as_ref().unwrap();
    assert_eq!(stored.client_id, client_id);
}

/// A client registered by hand at `server` (RFC 7591) for a free loopback port's redirect, as an
/// administrator would before configuring `oauth_client_id`: the port and the registration.
pub(super) async fn register_client(
    server: &HttpServer,
    auth_method: &str,
    name: &str,
) -> (u16, Value) {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let registered: Value = http()
        .post(format!("{}/register", base(server)))
        .json(&json!({
            "redirect_uris": [format!("http://127.0.0.1:{port}/callback")],
            "token_endpoint_auth_method": auth_method,
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "client_name": name
        }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    (port, registered)
}
