//! `pith auth login|list|logout`.

use std::io::{BufRead as _, IsTerminal as _};
use std::path::Path;

use pith_auth::{Credential, Credentials, masked};
use pith_config::load::Loaded;

/// Stores `key` for `provider`, bound to the provider's `base_url` as the user's own
/// configuration has it. Returns what to tell the user.
pub fn store_key(
    loaded: &Loaded,
    workspace: &Path,
    data_dir: &Path,
    provider: &str,
    key: &str,
) -> anyhow::Result<String> {
    let Some(pc) = loaded.config.provider.get(provider) else {
        let known: Vec<&str> = loaded.config.provider.keys().map(String::as_str).collect();
        anyhow::bail!(
            "unknown provider \"{provider}\" (configured: {}); add a [provider.{provider}] section first",
            known.join(", ")
        );
    };
    let origin = loaded.origin(&format!("provider.{provider}.base_url"));
    if origin == workspace.join("pith.toml").display().to_string() {
        anyhow::bail!(
            "the base_url of provider \"{provider}\" comes from this workspace's pith.toml ({}); a key is only stored for an address your own configuration sets — log in from another directory",
            pc.base_url
        );
    }
    let key = key.trim();
    if key.is_empty() {
        anyhow::bail!("no key given");
    }
    if key.chars().any(|c| c.is_whitespace() || c.is_control()) {
        anyhow::bail!("the key holds spaces or control characters; paste just the key");
    }
    let mut creds = Credentials::read(data_dir)?;
    creds.providers.insert(
        provider.to_string(),
        Credential {
            key: key.to_string(),
            base_url: pc.base_url.clone(),
        },
    );
    creds.write(data_dir)?;
    let mut msg = format!(
        "stored the key of {provider} ({}) in {}; it is sent only to {}",
        masked(key),
        pith_auth::path(data_dir).display(),
        pc.base_url
    );
    if let Some(var) = pc.api_key_env.as_deref()
        && pith_secrets::env_var(var).is_some_and(|v| !v.trim().is_empty())
    {
        msg.push_str(&format!(
            "\nnote: {var} is set in this environment and wins over the stored key"
        ));
    }
    Ok(msg)
}

/// Each provider that takes a key, and where its key comes from (never the key itself).
pub fn list(
    loaded: &Loaded,
    data_dir: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> anyhow::Result<String> {
    let creds = Credentials::read(data_dir)?;
    let mut out = format!(
        "credentials file: {}\n",
        pith_auth::path(data_dir).display()
    );
    let rows: Vec<(String, String)> = loaded
        .config
        .provider
        .iter()
        .filter(|(name, p)| p.api_key_env.is_some() || creds.providers.contains_key(*name))
        .map(|(name, p)| {
            let from_env = p
                .api_key_env
                .as_deref()
                .and_then(|var| env(var).filter(|v| !v.trim().is_empty()).map(|v| (var, v)));
            let stored = creds.key_for(name, &p.base_url);
            let source = match (from_env, stored) {
                (Some((var, v)), _) => format!("env {var} ({})", masked(&v)),
                (None, Ok(Some(k))) => format!("credentials file ({})", masked(&k)),
                (None, Err(pith_auth::Refused::OtherUrl { stored })) => format!(
                    "credentials file, not used: stored for {stored}, base_url is now {}",
                    p.base_url
                ),
                (None, Ok(None)) => match &p.api_key_env {
                    Some(var) => format!("no key: set {var} or run `pith auth login {name}`"),
                    None => format!("no key: run `pith auth login {name}`"),
                },
            };
            (name.clone(), source)
        })
        .collect();
    let w = rows.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
    for (name, source) in rows {
        out.push_str(&format!("{name:<w$}  {source}\n"));
    }
    for name in creds.providers.keys() {
        if !loaded.config.provider.contains_key(name) {
            out.push_str(&format!(
                "{name:<w$}  credentials file (no such provider is configured)\n"
            ));
        }
    }
    Ok(out)
}

/// Removes the key of `provider`, or every key when `None`.
pub fn logout(data_dir: &Path, provider: Option<&str>) -> anyhow::Result<String> {
    let mut creds = Credentials::read(data_dir)?;
    let removed: Vec<String> = match provider {
        Some(p) => match creds.providers.remove(p) {
            Some(_) => vec![p.to_string()],
            None => anyhow::bail!("no key is stored for {p} (see `pith auth list`)"),
        },
        None => std::mem::take(&mut creds.providers).into_keys().collect(),
    };
    if removed.is_empty() {
        return Ok("no keys are stored".into());
    }
    creds.write(data_dir)?;
    Ok(format!("removed the stored key of {}", removed.join(", ")))
}

/// Reads a line from the terminal without showing it (or a line from a piped stdin).
pub fn read_secret(prompt: &str) -> anyhow::Result<String> {
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        let mut line = String::new();
        stdin.lock().read_line(&mut line)?;
        return Ok(line.trim().to_string());
    }
    crate::output::print_err(format_args!("{prompt}"));
    crossterm::terminal::enable_raw_mode()?;
    let result = read_hidden();
    let _ = crossterm::terminal::disable_raw_mode();
    crate::output::print_err(format_args!("\n"));
    result
}

fn read_hidden() -> anyhow::Result<String> {
    use crossterm::event::{Event, KeyCode, KeyEventKind, KeyModifiers, read};
    let mut key = String::new();
    loop {
        match read()? {
            Event::Key(k) if k.kind != KeyEventKind::Release => match k.code {
                KeyCode::Enter => return Ok(key),
                KeyCode::Char('c' | 'd') if k.modifiers.contains(KeyModifiers::CONTROL) => {
                    anyhow::bail!("cancelled")
                }
                KeyCode::Esc => anyhow::bail!("cancelled"),
                KeyCode::Backspace => {
                    key.pop();
                }
                KeyCode::Char(c) => key.push(c),
                _ => {}
            },
            Event::Paste(text) => key.push_str(&text),
            _ => {}
        }
    }
}

/// Asks which provider, listing those that take a key.
pub fn ask_provider(loaded: &Loaded) -> anyhow::Result<String> {
    let names: Vec<&str> = loaded
        .config
        .provider
        .iter()
        .filter(|(_, p)| p.api_key_env.is_some())
        .map(|(n, _)| n.as_str())
        .collect();
    if !std::io::stdin().is_terminal() {
        anyhow::bail!(
            "name the provider: pith auth login PROVIDER (one of {})",
            names.join(", ")
        );
    }
    crate::output::print_err(format_args!("provider ({}): ", names.join(", ")));
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line)?;
    Ok(line.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pith_config::load::{LoadOptions, Trust, load_with_env};

    fn loaded(ws: &Path, global: &Path) -> Loaded {
        load_with_env(
            &LoadOptions {
                workspace: ws.to_path_buf(),
                config_file: None,
                global_file: Some(global.join("config.toml")),
                trust: Trust::Trusted,
                data_dir: None,
                has_key: None,
            },
            &|_| None,
        )
        .unwrap()
    }

    #[test]
    fn login_list_logout() {
        let ws = tempfile::tempdir().unwrap();
        let global = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let l = loaded(ws.path(), global.path());
        let key = "sk-ant-test-0123456789abcdef";
        let msg = store_key(&l, ws.path(), data.path(), "anthropic", key).unwrap();
        assert!(msg.contains("(…cdef)") && !msg.contains(key), "{msg}");
        let env = |v: &str| (v == "OPENAI_API_KEY").then(|| "sk-env-0123456789wxyz".to_string());
        let out = list(&l, data.path(), &env).unwrap();
        assert!(
            out.contains("anthropic   credentials file (…cdef)"),
            "{out}"
        );
        assert!(
            out.contains("openai      env OPENAI_API_KEY (…wxyz)"),
            "{out}"
        );
        assert!(
            out.contains("openrouter  no key: set OPENROUTER_API_KEY"),
            "{out}"
        );
        assert!(!out.contains(key) && !out.contains("sk-env"), "{out}");
        let e = store_key(&l, ws.path(), data.path(), "nope", key).unwrap_err();
        assert!(
            e.to_string().starts_with("unknown provider \"nope\""),
            "{e}"
        );
        assert!(logout(data.path(), Some("openai")).is_err());
        assert_eq!(
            logout(data.path(), Some("anthropic")).unwrap(),
            "removed the stored key of anthropic"
        );
        assert!(
            list(&l, data.path(), &|_| None)
                .unwrap()
                .contains("anthropic   no key")
        );
    }

    #[test]
    fn no_key_is_stored_for_an_address_the_workspace_sets() {
        let ws = tempfile::tempdir().unwrap();
        let global = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        std::fs::write(
            ws.path().join("pith.toml"),
            "[provider.openai]\nbase_url = \"https://attacker.example/v1\"\n",
        )
        .unwrap();
        let l = loaded(ws.path(), global.path());
        let e = store_key(
            &l,
            ws.path(),
            data.path(),
            "openai",
            "sk-test-0123456789abcdef",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("comes from this workspace's pith.toml"), "{e}");
        assert!(!pith_auth::path(data.path()).exists());
    }
}
