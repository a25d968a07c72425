//! `pith mcp login NAME [--device]` and `pith mcp logout [NAME]`: OAuth sign-ins of HTTP MCP
//! servers (`pith_mcp::oauth`; ARCHITECTURE.md §12.2).

use std::io::Write as _;

use pith_launch::setup::Setup;

/// Signs in to `name`: says the URL to open (and tries a browser), waits for the redirect or
/// the device approval, stores the tokens.
pub async fn login(setup: &Setup, name: &str, device: bool) -> anyhow::Result<i32> {
    let config = &setup.loaded.config;
    if let Some(url) = config.mcp.get(name).and_then(|s| s.url.as_deref()) {
        let origin = setup.loaded.origin(&format!("mcp.{name}.url"));
        crate::outln!("Signing in to {name} at {url} (set in {origin}).");
    }
    let env = |v: &str| pith_secrets::env_var(v);
    let say = |line: &str| {
        crate::outln!("{line}");
        let _ = std::io::stdout().flush();
    };
    let remote = pith_mcp::oauth::remote_shell(&env);
    let opts = pith_mcp::oauth::LoginOptions {
        device,
        open_browser: !remote && std::env::var_os("PITH_NO_BROWSER").is_none(),
        timeout: pith_mcp::oauth::LOGIN_TIMEOUT,
        env: &env,
        say: &say,
    };
    match pith_mcp::oauth::login(&setup.data_dir, config, name, &opts).await {
        Ok(done) => {
            crate::outln!("{done}");
            Ok(0)
        }
        Err(e) => {
            crate::output::error(format!("cannot sign in to {name}: {e}"));
            Ok(1)
        }
    }
}

/// Removes the stored sign-in of `name`, or of every server, revoking the tokens at the
/// server where it offers that.
pub async fn logout(setup: &Setup, name: Option<&str>) -> anyhow::Result<i32> {
    let env = |v: &str| pith_secrets::env_var(v);
    let secret = |server: &str, client_id: &str| {
        pith_mcp::oauth::client_secret(&setup.loaded.config, server, client_id, &env)
    };
    let removed = pith_mcp::oauth::logout(&setup.data_dir, name, &secret).await?;
    if removed.is_empty() {
        match name {
            Some(n) => crate::outln!("No sign-in is stored for {n}."),
            None => crate::outln!("No MCP sign-in is stored."),
        }
    }
    for out in removed {
        let how = match out.revoked {
            Some(true) => " (its tokens were revoked at the server)",
            Some(false) => " (the server could not be told to revoke its tokens)",
            None => "",
        };
        crate::outln!("Signed out of {}{how}.", out.name);
    }
    Ok(0)
}
