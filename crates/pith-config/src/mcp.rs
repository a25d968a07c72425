//! `[mcp.NAME]`: MCP servers whose tools join the session, and `[tool_search]`: when their
//! definitions are deferred behind the `tool_search` tool.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Seconds a server may take to start and answer `initialize` and `tools/list`.
pub(crate) const DEFAULT_STARTUP_TIMEOUT_SECS: u64 = 30;
/// Seconds one tool call may take.
pub(crate) const DEFAULT_TOOL_TIMEOUT_SECS: u64 = 300;

/// One MCP server: a command pith starts (stdio) or a URL it connects to (streamable HTTP).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpServerConfig {
    /// stdio: the program to run (looked up on `PATH`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// stdio: variables set for the server, as written (not secrets: use `env_vars`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// stdio: variables passed through from pith's environment by name. The server gets only
    /// these, `env` and a few basics (`PATH`, `HOME`, `LANG`, …), never pith's API keys.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env_vars: Vec<String>,
    /// stdio: the working directory (default: the workspace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<PathBuf>,
    /// Streamable HTTP: the endpoint (`https://host/mcp`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// HTTP headers sent as written.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// HTTP headers whose value is read from an environment variable: header → variable name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env_headers: BTreeMap<String, String>,
    /// `Authorization: Bearer $VAR`: the name of the variable holding the token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bearer_token_env: Option<String>,
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Seconds to start and list the tools (default 30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub startup_timeout_secs: Option<u64>,
    /// Seconds one tool call may take (default 300).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_timeout_secs: Option<u64>,
    /// Only these tools (by the server's names) are offered; unset: all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled_tools: Option<Vec<String>>,
    /// These tools (by the server's names) are never offered.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disabled_tools: Vec<String>,
    /// OAuth (`pith mcp login`): a client id registered with the server's authorization
    /// server, for one that offers no dynamic client registration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oauth_client_id: Option<String>,
    /// OAuth: the variable holding that client's secret, if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oauth_client_secret_env: Option<String>,
    /// OAuth: the scopes asked for (default: those the server names).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub oauth_scopes: Vec<String>,
    /// OAuth: the loopback port of the redirect (default: a free one), for a client
    /// registered with a fixed redirect URI `http://127.0.0.1:PORT/callback`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oauth_callback_port: Option<u16>,
}

impl Default for McpServerConfig {
    fn default() -> Self {
        McpServerConfig {
            command: None,
            args: Vec::new(),
            env: BTreeMap::new(),
            env_vars: Vec::new(),
            cwd: None,
            url: None,
            headers: BTreeMap::new(),
            env_headers: BTreeMap::new(),
            bearer_token_env: None,
            enabled: true,
            startup_timeout_secs: None,
            tool_timeout_secs: None,
            enabled_tools: None,
            disabled_tools: Vec::new(),
            oauth_client_id: None,
            oauth_client_secret_env: None,
            oauth_scopes: Vec::new(),
            oauth_callback_port: None,
        }
    }
}

impl McpServerConfig {
    pub fn startup_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs(
            self.startup_timeout_secs
                .unwrap_or(DEFAULT_STARTUP_TIMEOUT_SECS)
                .max(1),
        )
    }

    pub fn tool_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs(
            self.tool_timeout_secs
                .unwrap_or(DEFAULT_TOOL_TIMEOUT_SECS)
                .max(1),
        )
    }

    /// Whether the server offers the tool it calls `name`.
    pub fn offers(&self, name: &str) -> bool {
        self.enabled_tools
            .as_ref()
            .is_none_or(|only| only.iter().any(|t| t == name))
            && !self.disabled_tools.iter().any(|t| t == name)
    }

    /// How pith talks to it: `url` makes it an HTTP server.
    pub fn transport(&self) -> pith_protocol::event::McpTransport {
        if self.url.is_some() {
            pith_protocol::event::McpTransport::Http
        } else {
            pith_protocol::event::McpTransport::Stdio
        }
    }
}

/// When MCP tool definitions are sent whole and when behind `tool_search`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum ToolSearchMode {
    /// Deferred when they would take more than `threshold` of the window.
    #[default]
    Auto,
    /// Always deferred.
    Always,
    /// Never deferred.
    Never,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolSearchConfig {
    #[serde(default)]
    pub mode: ToolSearchMode,
    /// `auto`: the share of the model's window MCP tool definitions may take before they are
    /// deferred.
    #[serde(default = "default_threshold")]
    pub threshold: f64,
}

impl Default for ToolSearchConfig {
    fn default() -> Self {
        ToolSearchConfig {
            mode: ToolSearchMode::Auto,
            threshold: default_threshold(),
        }
    }
}

fn default_threshold() -> f64 {
    0.1
}

fn yes() -> bool {
    true
}

/// Names a server may not have: the permission tables of the built-in tools (a server's rules
/// live in `[permission.NAME]`), `tool` (its tool `search` would be `tool_search`) and `job` (its `output` would be `job_output`).
const RESERVED: &[&str] = &[
    "tool",
    "bash",
    "read",
    "write",
    "edit",
    "glob",
    "grep",
    "list",
    "todowrite",
    "recall",
    "tool_search",
    "external_directory",
    "unsandboxed",
    "hard_link",
    "webfetch",
    "doom_loop",
    "job",
    "job_output",
    "job_kill",
];

/// A problem with a server entry: the key path under `[mcp.NAME]` it is about, and the message.
type ServerProblem = (Vec<&'static str>, String);

/// Checks one server entry. `Err((keys, message))`: the key path the message is about.
pub(crate) fn check_server(name: &str, server: &McpServerConfig) -> Result<(), ServerProblem> {
    check_name(name)?;
    check_transport(name, server)?;
    check_transport_keys(name, server)?;
    check_variable_names(name, server)?;
    for (key, value) in [
        ("startup_timeout_secs", server.startup_timeout_secs),
        ("tool_timeout_secs", server.tool_timeout_secs),
    ] {
        if value == Some(0) {
            return Err((vec![key], format!("mcp.{name}.{key} must be at least 1")));
        }
    }
    Ok(())
}

/// A server's name: short, plain, and not a built-in tool's.
fn check_name(name: &str) -> Result<(), ServerProblem> {
    let valid_name = !name.is_empty()
        && name.len() <= 32
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
    if !valid_name {
        return Err((
            vec![],
            format!(
                "mcp server name \"{name}\" must be 1 to 32 letters, digits or '-' (its tools are named {name}_TOOL)"
            ),
        ));
    }
    if RESERVED.contains(&name.to_ascii_lowercase().as_str()) {
        return Err((
            vec![],
            format!("mcp server name \"{name}\" is taken by a built-in tool; choose another"),
        ));
    }
    Ok(())
}

/// Exactly one of `command` (stdio) and `url` (http), and a usable one.
fn check_transport(name: &str, server: &McpServerConfig) -> Result<(), ServerProblem> {
    match (&server.command, &server.url) {
        (Some(_), Some(_)) => Err((
            vec!["url"],
            format!("mcp.{name}: set either command (stdio) or url (http), not both"),
        )),
        (None, None) => Err((
            vec![],
            format!("mcp.{name}: set command (a stdio server) or url (an http server)"),
        )),
        (Some(c), None) if c.trim().is_empty() => {
            Err((vec!["command"], format!("mcp.{name}.command is empty")))
        }
        (None, Some(u)) => {
            let u = u.trim();
            if !(u.starts_with("http://") || u.starts_with("https://")) {
                return Err((
                    vec!["url"],
                    format!("mcp.{name}.url must start with http:// or https://, got \"{u}\""),
                ));
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// No http settings on a stdio server, no stdio settings on an http one.
fn check_transport_keys(name: &str, server: &McpServerConfig) -> Result<(), ServerProblem> {
    if server.url.is_none()
        && (!server.headers.is_empty()
            || !server.env_headers.is_empty()
            || server.bearer_token_env.is_some())
    {
        return Err((
            vec!["command"],
            format!("mcp.{name}: headers, env_headers and bearer_token_env are for http servers"),
        ));
    }
    if server.url.is_none()
        && (server.oauth_client_id.is_some()
            || server.oauth_client_secret_env.is_some()
            || !server.oauth_scopes.is_empty()
            || server.oauth_callback_port.is_some())
    {
        return Err((
            vec!["command"],
            format!("mcp.{name}: the oauth_ settings are for http servers"),
        ));
    }
    if server.oauth_client_secret_env.is_some() && server.oauth_client_id.is_none() {
        return Err((
            vec!["oauth_client_secret_env"],
            format!("mcp.{name}.oauth_client_secret_env needs oauth_client_id"),
        ));
    }
    if server.url.is_some()
        && (!server.args.is_empty()
            || !server.env.is_empty()
            || !server.env_vars.is_empty()
            || server.cwd.is_some())
    {
        return Err((
            vec!["url"],
            format!("mcp.{name}: args, env, env_vars and cwd are for stdio servers"),
        ));
    }
    Ok(())
}

/// `env_vars`, `env_headers` and `bearer_token_env` name variables rather than hold secrets.
fn check_variable_names(name: &str, server: &McpServerConfig) -> Result<(), ServerProblem> {
    let vars = server
        .env_vars
        .iter()
        .chain(server.env_headers.values())
        .chain(server.bearer_token_env.iter())
        .chain(server.oauth_client_secret_env.iter());
    for var in vars {
        if !super::load::is_env_name(var) {
            // Never echo the value: it is probably the secret itself.
            return Err((
                vec![],
                format!(
                    "mcp.{name}: env_vars, env_headers, bearer_token_env and oauth_client_secret_env name environment variables (like GITHUB_TOKEN), not hold their values"
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stdio() -> McpServerConfig {
        McpServerConfig {
            command: Some("npx".into()),
            ..McpServerConfig::default()
        }
    }

    #[test]
    fn oauth_keys_are_for_http_servers_and_name_variables() {
        let on_stdio = McpServerConfig {
            oauth_client_id: Some("c".into()),
            ..stdio()
        };
        assert!(
            check_server("s", &on_stdio)
                .unwrap_err()
                .1
                .contains("oauth_")
        );
        let http = |f: fn(&mut McpServerConfig)| {
            let mut c = McpServerConfig {
                url: Some("https://mcp.example.com/mcp".into()),
                ..McpServerConfig::default()
            };
            f(&mut c);
            check_server("s", &c)
        };
        assert!(http(|c| c.oauth_client_id = Some("client".into())).is_ok());
        let secret_alone = http(|c| c.oauth_client_secret_env = Some("SECRET".into()));
        assert!(
            secret_alone
                .unwrap_err()
                .1
                .contains("needs oauth_client_id")
        );
        // A secret's value where its variable's name belongs is refused, and not echoed.
        let value = http(|c| {
            c.oauth_client_id = Some("client".into());
            c.oauth_client_secret_env = Some("s3cr3t-value-with-dashes".into());
        })
        .unwrap_err()
        .1;
        assert!(!value.contains("s3cr3t"), "{value}");
    }

    #[test]
    fn names_and_transports_are_checked() {
        assert!(check_server("github", &stdio()).is_ok());
        assert!(check_server("chrome-devtools", &stdio()).is_ok());
        for bad in [
            "",
            "my_server",
            "a b",
            "read",
            "Bash",
            "tool",
            &"x".repeat(33),
        ] {
            assert!(check_server(bad, &stdio()).is_err(), "{bad:?}");
        }
        let none = McpServerConfig::default();
        assert!(
            check_server("x", &none)
                .unwrap_err()
                .1
                .contains("set command")
        );
        let both = McpServerConfig {
            url: Some("http://h/mcp".into()),
            ..stdio()
        };
        assert!(check_server("x", &both).unwrap_err().1.contains("not both"));
        let ftp = McpServerConfig {
            url: Some("ftp://h".into()),
            ..McpServerConfig::default()
        };
        assert!(check_server("x", &ftp).is_err());
        let headers_on_stdio = McpServerConfig {
            bearer_token_env: Some("TOKEN".into()),
            ..stdio()
        };
        assert!(check_server("x", &headers_on_stdio).is_err());
    }

    #[test]
    fn a_secret_in_place_of_a_variable_name_is_refused_without_echoing_it() {
        let s = McpServerConfig {
            url: Some("https://h/mcp".into()),
            bearer_token_env: Some("ghp_secretvalue123-x".into()),
            ..McpServerConfig::default()
        };
        let (_, message) = check_server("gh", &s).unwrap_err();
        assert!(!message.contains("ghp_secret"), "{message}");
    }

    #[test]
    fn tool_filters() {
        let s = McpServerConfig {
            enabled_tools: Some(vec!["a".into(), "b".into()]),
            disabled_tools: vec!["b".into()],
            ..stdio()
        };
        assert!(s.offers("a"));
        assert!(!s.offers("b"));
        assert!(!s.offers("c"));
        assert!(stdio().offers("anything"));
    }
}
