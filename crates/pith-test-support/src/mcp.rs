//! Real MCP servers for the tests, written with the official Python SDK (`mcp/server.py` in
//! this crate). `.ci/run` installs the SDK; where it is missing a test says so and is skipped —
//! except under CI, where a missing SDK fails the test.

use std::path::PathBuf;
use std::time::Duration;

use pith_config::McpServerConfig;

/// The Python that can import `mcp` (`PITH_TEST_PYTHON`, else `python3`), or `None` with the
/// reason printed.
pub fn python() -> Option<String> {
    static FOUND: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let python = std::env::var("PITH_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
    // Found without importing it (the SDK takes seconds to import).
    let ok = *FOUND.get_or_init(|| {
        std::process::Command::new(&python)
            .args([
                "-c",
                "import importlib.util as u, sys; sys.exit(0 if u.find_spec('mcp') and u.find_spec('mcp_types') else 1)",
            ])
            .output()
            .is_ok_and(|o| o.status.success())
    });
    if ok {
        return Some(python);
    }
    let reason = format!(
        "{python} cannot import the `mcp` package (pip install mcp; see .ci/run): MCP server tests skipped"
    );
    if std::env::var_os("CI").is_some() {
        panic!("{reason}");
    }
    eprintln!("SKIPPED: {reason}");
    None
}

pub fn script() -> PathBuf {
    named_script("server.py")
}

/// A script of this crate's `mcp/` folder (`oauth_server.py`, `device_stub.py`).
pub fn named_script(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("mcp")
        .join(name)
}

/// The test server over stdio.
pub fn stdio(python: &str) -> McpServerConfig {
    McpServerConfig {
        command: Some(python.to_string()),
        args: vec![script().to_string_lossy().into_owned(), "stdio".into()],
        // pyenv shims and user site-packages need these to find the SDK.
        env_vars: ["PYENV_ROOT", "PYENV_VERSION", "PYTHONPATH", "VIRTUAL_ENV"]
            .iter()
            .map(|s| s.to_string())
            .collect(),
        ..McpServerConfig::default()
    }
}

/// The eliciting and sampling test server (`mcp/elicit_server.py`) over stdio.
pub fn elicit_stdio(python: &str) -> McpServerConfig {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("mcp/elicit_server.py");
    McpServerConfig {
        args: vec![script.to_string_lossy().into_owned()],
        ..stdio(python)
    }
}

/// The test server over streamable HTTP, running until dropped.
pub struct HttpServer {
    child: std::process::Child,
    pub url: String,
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl HttpServer {
    pub async fn start(python: &str) -> HttpServer {
        Self::start_script(python, &script(), &["http"], &[]).await
    }

    /// A server of this crate's `mcp/` folder run as `python SCRIPT [first…] PORT [rest…]`,
    /// serving `/mcp` on `127.0.0.1:PORT` (the OAuth test servers).
    pub async fn start_script(
        python: &str,
        script: &std::path::Path,
        first: &[&str],
        rest: &[&str],
    ) -> HttpServer {
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let child = std::process::Command::new(python)
            .arg(script)
            .args(first)
            .arg(port.to_string())
            .args(rest)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let server = HttpServer {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        };
        for _ in 0..200 {
            if tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .is_ok()
            {
                return server;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("the MCP test server did not listen on port {port}");
    }

    pub fn config(&self) -> McpServerConfig {
        McpServerConfig {
            url: Some(self.url.clone()),
            ..McpServerConfig::default()
        }
    }
}
