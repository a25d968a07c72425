//! Secrets pith knows: the API keys and secret header values of the configured providers.
//!
//! They are registered once read and scrubbed from everything pith writes or shows: provider
//! errors, the log file, the session store, exports and tool results (a command that prints one
//! does not put it in the model's context). The environment variables that hold them, and any
//! variable named like a secret, are kept from the commands pith runs (see [`EnvPolicy`]).

use std::borrow::Cow;
use std::sync::RwLock;

use serde_json::Value;

use pith_config::Config;
pub use pith_config::is_secret_name;

mod process;
pub use process::{env_var, seal};

/// What a secret is replaced with.
pub const REDACTED: &str = "[REDACTED]";
/// Shorter values are not treated as secrets: replacing them would mangle ordinary text.
const MIN_LEN: usize = 8;

static KNOWN: RwLock<Vec<String>> = RwLock::new(Vec::new());

/// Remembers `value` as a secret (and the credential after a `Bearer ` / `Basic ` prefix).
pub fn register(value: &str) {
    let value = value.trim();
    let mut new = vec![value.to_string()];
    for prefix in ["Bearer ", "Basic ", "bearer ", "Token ", "token "] {
        if let Some(rest) = value.strip_prefix(prefix) {
            new.push(rest.trim().to_string());
        }
    }
    let Ok(mut known) = KNOWN.write() else {
        return;
    };
    for v in new {
        if v.chars().count() >= MIN_LEN && !known.contains(&v) {
            known.push(v);
        }
    }
    // Longest first, so a secret that contains another is replaced whole.
    known.sort_by_key(|s| std::cmp::Reverse(s.len()));
}

/// Registers the key of every provider whose key variable is set, and every header value whose
/// name looks secret.
pub fn register_config(config: &Config, env: &dyn Fn(&str) -> Option<String>) {
    for provider in config.provider.values() {
        if let Some(value) = provider.api_key_env.as_deref().and_then(env) {
            register(&value);
        }
        for (name, value) in &provider.headers {
            if is_secret_name(name) {
                register(value);
            }
        }
    }
    // the web search service's key
    if let Some(value) = config.websearch.key_env.as_deref().and_then(env) {
        register(&value);
    }
    // MCP OAuth client secrets
    for server in config.mcp.values() {
        if let Some(value) = server.oauth_client_secret_env.as_deref().and_then(env) {
            register(&value);
        }
    }
}

/// `text` with every known secret replaced by `[REDACTED]`.
pub fn scrub(text: &str) -> Cow<'_, str> {
    let Ok(known) = KNOWN.read() else {
        return Cow::Borrowed(text);
    };
    let mut out = Cow::Borrowed(text);
    for secret in known.iter() {
        if out.contains(secret.as_str()) {
            out = Cow::Owned(out.replace(secret.as_str(), REDACTED));
        }
        // As it appears inside a JSON string.
        let escaped = serde_json::to_string(secret).unwrap_or_default();
        let escaped = escaped.trim_matches('"');
        if escaped != secret && out.contains(escaped) {
            out = Cow::Owned(out.replace(escaped, REDACTED));
        }
    }
    out
}

/// Scrubs every string inside `value`.
pub fn scrub_json(value: &mut Value) {
    match value {
        Value::String(s) => {
            if let Cow::Owned(clean) = scrub(s) {
                *s = clean;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(scrub_json),
        Value::Object(map) => map.values_mut().for_each(scrub_json),
        _ => {}
    }
}

/// A writer that scrubs secrets from what passes through it (the log file).
pub struct ScrubbingWriter<W>(pub W);

impl<W: std::io::Write> std::io::Write for ScrubbingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match std::str::from_utf8(buf) {
            Ok(text) => {
                self.0.write_all(scrub(text).as_bytes())?;
                Ok(buf.len())
            }
            Err(_) => self.0.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// Which environment variables the commands pith runs do not get.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EnvPolicy {
    /// Variables pith reads a secret from (the providers' `api_key_env`).
    pub(crate) secret_vars: Vec<String>,
    /// Variables passed although their name looks secret (config `env_allow`).
    pub allow: Vec<String>,
}

impl EnvPolicy {
    pub fn from_config(config: &Config) -> EnvPolicy {
        let mut secret_vars: Vec<String> = config
            .provider
            .values()
            .filter_map(|p| p.api_key_env.clone())
            .chain(config.websearch.key_env.clone())
            // MCP OAuth client secrets (`pith mcp login`)
            .chain(
                config
                    .mcp
                    .values()
                    .filter_map(|m| m.oauth_client_secret_env.clone()),
            )
            .filter(|v| !v.is_empty())
            .collect();
        secret_vars.sort();
        secret_vars.dedup();
        EnvPolicy {
            secret_vars,
            allow: config.env_allow.clone(),
        }
    }

    /// Whether the variable `name` is kept from commands, by its name alone.
    pub(crate) fn withholds(&self, name: &str) -> bool {
        if self.allow.iter().any(|a| a == name) {
            return false;
        }
        self.secret_vars.iter().any(|v| v == name) || looks_secret_var(name)
    }

    /// Whether the variable `name` holding `value` is kept from commands: by its name, or
    /// because its value is a URL that carries credentials (`postgres://u:pw@host/db`). Proxy
    /// variables (`HTTPS_PROXY`, …) are left to the name rule: pith's own HTTP client reads
    /// them, and a sandboxed command has no network to use them on unless it is allowed one.
    pub(crate) fn withholds_var(&self, name: &str, value: &str) -> bool {
        let proxy = name.to_ascii_uppercase().ends_with("_PROXY");
        self.withholds(name)
            || !proxy && !self.allow.iter().any(|a| a == name) && url_with_userinfo(value)
    }

    /// The variables of `vars` (names of the process environment, whose values are read from
    /// it) that commands do not get.
    pub fn withheld<I: IntoIterator<Item = std::ffi::OsString>>(&self, vars: I) -> Vec<String> {
        let mut out: Vec<String> = vars
            .into_iter()
            .filter_map(|v| v.into_string().ok())
            .filter(|v| {
                let value = std::env::var_os(v).unwrap_or_default();
                self.withholds_var(v, &value.to_string_lossy())
            })
            .collect();
        // Key variables are removed even when unset here, in case a parent sets them later.
        for v in &self.secret_vars {
            if !out.contains(v) && self.withholds(v) {
                out.push(v.clone());
            }
        }
        out
    }
}

/// Names that hold secrets: `*_API_KEY`, `*_KEY`, `*_TOKEN`, `*_PAT`, `*_PWD`, anything with
/// `SECRET` or `PASSWORD` in it, every `AWS_*` variable, and the like.
pub(crate) fn looks_secret_var(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    const SUFFIXES: &[&str] = &[
        "_KEY",
        "APIKEY",
        "_TOKEN",
        "_SECRET",
        "_PAT",
        "_PWD",
        "_PASS",
        "_PASSWD",
        "_CREDENTIALS",
        "_CREDENTIAL",
        "_AUTH",
        "_KEY_ID",
    ];
    const INSIDE: &[&str] = &["SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "PRIVATE_KEY"];
    SUFFIXES.iter().any(|s| n.ends_with(s))
        || INSIDE.iter().any(|s| n.contains(s))
        || n.starts_with("AWS_")
        || matches!(n.as_str(), "API_KEY" | "TOKEN" | "KEY" | "PAT")
}

/// Whether `value` holds a URL with userinfo (`scheme://user[:password]@host…`) anywhere in it.
fn url_with_userinfo(value: &str) -> bool {
    let mut rest = value;
    while let Some(at) = rest.find("://") {
        let scheme = &rest[..at];
        let after = &rest[at + 3..];
        let scheme_ok = scheme
            .chars()
            .next_back()
            .is_some_and(|c| c.is_ascii_alphanumeric());
        let authority = after
            .split(|c: char| matches!(c, '/' | '?' | '#') || c.is_whitespace() || c == ',')
            .next()
            .unwrap_or("");
        if scheme_ok && authority.contains('@') {
            return true;
        }
        rest = after;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registered_secrets_are_scrubbed() {
        register("Bearer unit-test-bearer-1234");
        register("short");
        assert_eq!(
            scrub("auth: Bearer unit-test-bearer-1234 and unit-test-bearer-1234").as_ref(),
            "auth: [REDACTED] and [REDACTED]"
        );
        assert_eq!(scrub("short stays"), "short stays");
        let mut v = serde_json::json!({"a": ["x unit-test-bearer-1234"], "b": 1});
        scrub_json(&mut v);
        assert_eq!(v["a"][0], "x [REDACTED]");
        let mut w = ScrubbingWriter(Vec::new());
        std::io::Write::write_all(&mut w, b"log unit-test-bearer-1234\n").unwrap();
        assert_eq!(w.0, b"log [REDACTED]\n");
    }

    #[test]
    fn the_search_key_is_a_secret_and_its_variable_withheld() {
        let mut config = Config::default();
        config.websearch.key_env = Some("SEARCH_SVC_VAR".into());
        let policy = EnvPolicy::from_config(&config);
        assert!(policy.withholds("SEARCH_SVC_VAR"));
        register_config(&config, &|v| {
            (v == "SEARCH_SVC_VAR").then(|| "srch-unit-test-value-42".to_string())
        });
        assert_eq!(scrub("q srch-unit-test-value-42").as_ref(), "q [REDACTED]");
    }

    #[test]
    fn secret_looking_variables_are_withheld_unless_allowed() {
        let policy = EnvPolicy {
            secret_vars: vec!["MY_PROVIDER_CRED".into()],
            allow: vec!["GH_TOKEN".into()],
        };
        for v in [
            "OPENAI_API_KEY",
            "GITHUB_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_SESSION_TOKEN",
            "DB_PASSWORD",
            "MY_PROVIDER_CRED",
            "client_secret",
        ] {
            assert!(policy.withholds(v), "{v}");
        }
        for v in [
            "PATH",
            "HOME",
            "GH_TOKEN",
            "TOKENIZERS_PARALLELISM",
            "KEYMAP",
        ] {
            assert!(!policy.withholds(v), "{v}");
        }
        let withheld = policy.withheld(["PATH".into(), "NPM_TOKEN".into()]);
        assert_eq!(withheld, ["NPM_TOKEN", "MY_PROVIDER_CRED"]);
    }

    /// The wider rule: database passwords, bare `*KEY` names, personal access tokens, every
    /// `AWS_*` variable and a URL carrying credentials are withheld; `PWD` and friends are not.
    #[test]
    fn wider_secret_names_and_credential_urls_are_withheld() {
        let policy = EnvPolicy {
            secret_vars: Vec::new(),
            allow: vec!["AWS_REGION".into(), "CI_DB_URL".into()],
        };
        for v in [
            "PGPASSWORD",
            "OPENAI_KEY",
            "GH_PAT",
            "MYSQL_PWD",
            "AWS_ACCESS_KEY_ID",
            "AWS_PROFILE",
            "SOME_APIKEY",
            "MY_PASSPHRASE",
            "PASSWORD_FILE_CONTENT",
            "VAULT_TOKEN",
        ] {
            assert!(policy.withholds(v), "{v}");
        }
        for v in [
            "PWD",
            "OLDPWD",
            "KEYMAP",
            "AWS_REGION",
            "PATH",
            "PATHEXT",
            "XDG_SESSION_TYPE",
            "MONKEY_PATCH",
        ] {
            assert!(!policy.withholds(v), "{v}");
        }
        for (name, value) in [
            ("DATABASE_URL", "postgres://u:pw@h/db"),
            ("REDIS", "redis://:pw@cache:6379/0"),
            (
                "MIRRORS",
                "https://example.com,https://tok3n@git.example.com/x.git",
            ),
        ] {
            assert!(policy.withholds_var(name, value), "{name}={value}");
        }
        for (name, value) in [
            ("HOMEPAGE", "https://example.com/a@b"),
            ("CONTACT", "me@example.com"),
            ("EDITOR", "vim"),
            ("CI_DB_URL", "postgres://u:pw@h/db"),
            ("https_proxy", "http://u:pw@proxy:3128"),
        ] {
            assert!(!policy.withholds_var(name, value), "{name}={value}");
        }
    }
}
