use std::os::unix::fs::PermissionsExt;

use rmcp::transport::auth::{CredentialStore as _, OAuthTokenResponse, StoredCredentials};

use super::store::{FileStore, TokenFile, now_secs, path};
use super::*;

const ACCESS: &str = "access-token-abcdef123456";
const REFRESH: &str = "refresh-token-zyxwvu987654";

fn token(expires_in: u64) -> OAuthTokenResponse {
    serde_json::from_value(serde_json::json!({
        "access_token": ACCESS,
        "token_type": "Bearer",
        "expires_in": expires_in,
        "refresh_token": REFRESH,
    }))
    .unwrap()
}

fn creds(expires_in: u64) -> StoredCredentials {
    StoredCredentials::new(
        "client-1".into(),
        Some(token(expires_in)),
        vec![],
        Some(now_secs()),
    )
}

#[tokio::test]
async fn tokens_are_written_private_and_bound_to_the_url() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let store = FileStore::new(&data, "linear", "https://mcp.linear.app/mcp");
    store.save(creds(3600)).await.unwrap();
    let meta = std::fs::metadata(path(&data)).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    assert_eq!(
        std::fs::metadata(&data).unwrap().permissions().mode() & 0o777,
        0o700
    );
    // The same name and URL (a trailing slash aside) gets the token back.
    let same = FileStore::new(&data, "linear", "https://mcp.linear.app/mcp/");
    assert!(same.load().await.unwrap().is_some());
    // The same name pointed elsewhere (a workspace's config, say) gets nothing.
    let moved = FileStore::new(&data, "linear", "https://evil.example/mcp");
    assert!(moved.load().await.unwrap().is_none());
    // ... and clearing it there does not remove the real sign-in.
    moved.clear().await.unwrap();
    assert!(same.load().await.unwrap().is_some());
    // The token is registered as a secret: scrubbed from whatever pith writes.
    let line = format!("sent Authorization: Bearer {ACCESS} and {REFRESH}");
    let scrubbed = pith_secrets::scrub(&line);
    assert!(
        !scrubbed.contains(ACCESS) && !scrubbed.contains(REFRESH),
        "{scrubbed}"
    );
}

#[test]
fn a_token_file_others_can_read_or_a_link_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    TokenFile::default().write(data).unwrap();
    std::fs::set_permissions(path(data), std::fs::Permissions::from_mode(0o644)).unwrap();
    let err = TokenFile::read(data).unwrap_err();
    assert!(
        matches!(err, TokenFileError::ReadableByOthers { .. }),
        "{err}"
    );
    assert!(err.to_string().contains("chmod 600"));

    std::fs::remove_file(path(data)).unwrap();
    let elsewhere = data.join("elsewhere.json");
    std::fs::write(&elsewhere, "{}").unwrap();
    std::fs::set_permissions(&elsewhere, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::os::unix::fs::symlink(&elsewhere, path(data)).unwrap();
    let err = TokenFile::read(data).unwrap_err();
    assert!(matches!(err, TokenFileError::NotAFile { .. }), "{err}");

    // A broken file's error says what to do and quotes nothing of it.
    std::fs::remove_file(path(data)).unwrap();
    std::fs::write(path(data), format!("{{\"servers\": {ACCESS}")).unwrap();
    std::fs::set_permissions(path(data), std::fs::Permissions::from_mode(0o600)).unwrap();
    let err = TokenFile::read(data).unwrap_err().to_string();
    assert!(
        err.contains("sign in again") && !err.contains(ACCESS),
        "{err}"
    );
}

#[tokio::test]
async fn a_refused_refresh_token_leaves_an_expired_sign_in() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let url = "https://mcp.example.com/mcp";
    let store = FileStore::new(data, "ex", url);
    let stale = creds(3600);
    store.save(stale.clone()).await.unwrap();
    assert!(matches!(sign_in(data, "ex", url), SignIn::SignedIn { .. }));
    store.on_refresh_token_rejected(&stale).await.unwrap();
    assert_eq!(sign_in(data, "ex", url), SignIn::Expired);
    assert!(store.load().await.unwrap().is_none());
    assert_eq!(
        describe("ex", &SignIn::Expired).unwrap(),
        "sign-in expired — `pith mcp login ex`"
    );
}

#[tokio::test]
async fn a_rejection_of_an_older_token_keeps_a_newer_sign_in() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let url = "https://mcp.example.com/mcp";
    let store = FileStore::new(data, "ex", url);
    let older: StoredCredentials = StoredCredentials::new(
        "client-1".into(),
        Some(
            serde_json::from_value(serde_json::json!({
                "access_token": "older-access-0000",
                "token_type": "Bearer",
                "refresh_token": "older-refresh-0000",
            }))
            .unwrap(),
        ),
        vec![],
        None,
    );
    // Another pith signed in again meanwhile: its tokens stay.
    store.save(creds(3600)).await.unwrap();
    store.on_refresh_token_rejected(&older).await.unwrap();
    assert!(store.load().await.unwrap().is_some());
}

#[tokio::test]
async fn status_lines_and_logout() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let url = "https://a.example/mcp";
    assert_eq!(sign_in(data, "a", url), SignIn::None);
    assert_eq!(describe("a", &SignIn::None), None);
    FileStore::new(data, "a", url)
        .save(creds(7200))
        .await
        .unwrap();
    FileStore::new(data, "b", url)
        .save(creds(30).with_issuer(Some("https://auth.example.com/".into())))
        .await
        .unwrap();
    let a = sign_in(data, "a", url);
    assert!(
        describe("a", &a)
            .unwrap()
            .starts_with("signed in, token expires in "),
        "{a:?}"
    );
    assert_eq!(
        describe("b", &sign_in(data, "b", url)).unwrap(),
        "signed in at auth.example.com, token expires in 30 s"
    );
    assert_eq!(needs_sign_in("a"), "needs sign-in: `pith mcp login a`");

    let out = |name: &str| SignedOut {
        name: name.into(),
        revoked: None,
    };
    assert_eq!(
        logout(data, Some("a"), &|_, _| None).await.unwrap(),
        vec![out("a")]
    );
    assert_eq!(sign_in(data, "a", url), SignIn::None);
    assert!(
        logout(data, Some("a"), &|_, _| None)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        logout(data, None, &|_, _| None).await.unwrap(),
        vec![out("b")]
    );
    assert!(TokenFile::read(data).unwrap().servers.is_empty());
}

#[test]
fn a_remote_shell_is_an_ssh_session_or_no_display() {
    let env = |vars: &'static [(&'static str, &'static str)]| {
        move |k: &str| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    };
    assert!(remote_shell(&env(&[
        ("SSH_CONNECTION", "1 2 3 4"),
        ("DISPLAY", ":0")
    ])));
    if cfg!(target_os = "linux") {
        assert!(remote_shell(&env(&[])));
        assert!(!remote_shell(&env(&[("DISPLAY", ":0")])));
        assert!(!remote_shell(&env(&[("WAYLAND_DISPLAY", "wayland-0")])));
    }
}

#[tokio::test]
async fn refreshes_are_serialized_by_a_lock_file() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let store = FileStore::new(data, "a", "https://a.example/mcp");
    let first = store.acquire_refresh_guard().await.unwrap();
    assert!(first.is_some());
    // A second refresher (another pith) waits while the first holds it...
    let other = FileStore::new(data, "b", "https://b.example/mcp");
    let waiting =
        tokio::spawn(async move { other.acquire_refresh_guard().await.map(|g| g.is_some()) });
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert!(!waiting.is_finished());
    // ... and goes on once it is released.
    drop(first);
    assert!(waiting.await.unwrap().unwrap());
    let lock = data.join(".mcp-tokens.lock");
    assert_eq!(
        std::fs::metadata(lock).unwrap().permissions().mode() & 0o777,
        0o600
    );
}

#[test]
fn a_401_and_a_403_are_told_apart_from_other_failures() {
    use rmcp::transport::streamable_http_client::{
        AuthRequiredError, InsufficientScopeError, StreamableHttpError,
    };
    use session::{is_auth_required, is_insufficient_scope};
    let unauthorized: StreamableHttpError<std::io::Error> =
        StreamableHttpError::AuthRequired(AuthRequiredError::new("Bearer".into()));
    let forbidden: StreamableHttpError<std::io::Error> = StreamableHttpError::InsufficientScope(
        InsufficientScopeError::new("Bearer error=\"insufficient_scope\"".into(), None),
    );
    let other: StreamableHttpError<std::io::Error> = StreamableHttpError::SessionExpired;
    assert!(is_auth_required(&unauthorized));
    assert!(!is_insufficient_scope(&unauthorized));
    assert!(is_insufficient_scope(&forbidden));
    assert!(!is_auth_required(&forbidden));
    assert!(!is_auth_required(&other) && !is_insufficient_scope(&other));
}

/// The account the sign-in's `id_token` named is stored with the entry and shown; a refresh
/// that names no one keeps it; the `id_token` is a secret like the tokens.
#[tokio::test]
async fn the_account_named_at_sign_in_is_shown_and_survives_a_refresh() {
    use base64::Engine as _;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let url = "https://a.example/mcp";
    let b64 = |v: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v);
    let id_token = format!(
        "{}.{}.sig-0000",
        b64(r#"{"alg":"none"}"#),
        b64(r#"{"sub":"u-1","email":"alice@example.com"}"#)
    );
    let first: OAuthTokenResponse = serde_json::from_value(serde_json::json!({
        "access_token": ACCESS,
        "token_type": "Bearer",
        "expires_in": 3600,
        "refresh_token": REFRESH,
        "id_token": id_token,
    }))
    .unwrap();
    let store = FileStore::new(data, "a", url);
    let signed = StoredCredentials::new("c".into(), Some(first), vec![], Some(now_secs()))
        .with_issuer(Some("https://auth.example.com".into()));
    store.save(signed).await.unwrap();
    assert_eq!(
        TokenFile::read(data).unwrap().servers["a"]
            .account
            .as_deref(),
        Some("alice@example.com")
    );
    assert!(!pith_secrets::scrub(&format!("got {id_token}")).contains(&id_token));
    let shown = describe("a", &sign_in(data, "a", url)).unwrap();
    assert!(
        shown.starts_with("signed in as alice@example.com at auth.example.com, token expires in "),
        "{shown}"
    );

    // A refresh (opaque tokens, no id_token) keeps the account.
    store
        .save(creds(60).with_issuer(Some("https://auth.example.com".into())))
        .await
        .unwrap();
    assert_eq!(
        describe("a", &sign_in(data, "a", url)).unwrap(),
        "signed in as alice@example.com at auth.example.com, token expires in 1 min"
    );
    // Signed in elsewhere under the same name: the old account is not carried over.
    FileStore::new(data, "a", "https://b.example/mcp")
        .save(creds(60))
        .await
        .unwrap();
    assert_eq!(TokenFile::read(data).unwrap().servers["a"].account, None);
}

/// The code flow's line: the URL last, on a line of its own without indent (copied whole); the
/// device flow suggested only where the server offers one.
#[test]
fn the_sign_in_url_is_alone_on_its_line_and_device_is_offered_only_when_it_exists() {
    let url = "https://auth.example.com/authorize?state=abc";
    let without = super::flow::url_notice("who", url, 5, false);
    assert_eq!(without.lines().last(), Some(url));
    assert!(!without.contains("--device"), "{without}");
    let with = super::flow::url_notice("who", url, 5, true);
    assert_eq!(with.lines().last(), Some(url));
    assert!(with.contains("`pith mcp login who --device`"), "{with}");
}

/// A confidential client's sign-in whose secret variable is unset: the connection says which
/// variable, instead of the token endpoint's `invalid_client` at the next refresh.
#[tokio::test]
async fn an_unset_client_secret_variable_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let url = "http://127.0.0.1:9/mcp";
    let stored = StoredCredentials::new("corp-cli".into(), Some(token(0)), vec![], Some(1));
    FileStore::new(dir.path(), "conf", url)
        .save(stored)
        .await
        .unwrap();
    let config = pith_config::McpServerConfig {
        url: Some(url.into()),
        oauth_client_id: Some("corp-cli".into()),
        oauth_client_secret_env: Some("CONF_SECRET".into()),
        ..Default::default()
    };
    let unset = |_: &str| None;
    let err = session::stored_manager(dir.path(), "conf", url, &config, &unset)
        .await
        .map(|m| m.is_some())
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "environment variable CONF_SECRET (the OAuth client secret of [mcp.conf]) is not set"
    );
    // Set (or for another client id than the configured one), the sign-in goes on to the
    // server's metadata (nothing listens here).
    let not_the_secret = |got: Result<Option<_>, crate::connect::ConnectError>| match got {
        Err(crate::connect::ConnectError::Http { why, .. }) => why.contains("discovery"),
        _ => false,
    };
    let set = |v: &str| (v == "CONF_SECRET").then(|| "s3cret".to_string());
    let got = session::stored_manager(dir.path(), "conf", url, &config, &set).await;
    assert!(not_the_secret(got));
    let other = pith_config::McpServerConfig {
        oauth_client_id: Some("someone-else".into()),
        ..config.clone()
    };
    let got = session::stored_manager(dir.path(), "conf", url, &other, &unset).await;
    assert!(not_the_secret(got));
}
