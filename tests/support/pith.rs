//! Running the real `pith` binary against a mock provider, in a temp workspace and data dir.
//! Only an integration test knows where cargo put the binary (`CARGO_BIN_EXE_pith`), so this
//! stays in `tests/`; what reads a run's output is `pith_test_support::output`, re-exported here.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};

use pith_test_support::MockServer;
use pith_test_support::faults::{sleeper_pids, sleepers};
use pith_test_support::openai as oa;
pub use pith_test_support::output::{last_tool_result, normalized, of_type, stderr, stdout};

/// A workspace, a data dir and a config file naming the mock provider.
pub struct PithEnv {
    pub workspace: tempfile::TempDir,
    pub data: tempfile::TempDir,
    pub home: tempfile::TempDir,
    pub config: PathBuf,
}

pub const MODEL: &str = "mock/test-model";

impl PithEnv {
    /// `base_url` is the mock's URL; `context` and `output` are the model's limits; `extra` goes
    /// right after the top-level `model` key (top-level keys first, then any tables).
    pub fn new(base_url: &str, context: u64, output: u64, extra: &str) -> PithEnv {
        Self::with_provider(base_url, context, output, extra, "")
    }

    /// [`new`](Self::new) with `provider` lines added to `[provider.mock]` (timeouts, retries;
    /// `max_retries = 3` unless they set it).
    pub fn with_provider(
        base_url: &str,
        context: u64,
        output: u64,
        extra: &str,
        provider: &str,
    ) -> PithEnv {
        let workspace = tempfile::tempdir().expect("workspace");
        let data = tempfile::tempdir().expect("data dir");
        let home = tempfile::tempdir().expect("home");
        let config = home.path().join("pith-test.toml");
        let retries = if provider.contains("max_retries") {
            ""
        } else {
            "max_retries = 3\n"
        };
        // The request snapshots and token budgets were made without `webfetch` and `remember`:
        // they are off unless a test turns them on with its own `[webfetch]`, `[memory]` table.
        let webfetch = if extra.contains("[webfetch]") {
            ""
        } else {
            "[webfetch]\nenabled = false\n"
        };
        // nor with the `remember` tool
        let webfetch = if extra.contains("[memory]") {
            webfetch.to_string()
        } else {
            format!("{webfetch}\n[memory]\ntool = false\n")
        };
        // nor with background jobs (`job_output`, `job_kill`, bash's `background`)
        let webfetch = if extra.contains("[jobs]") {
            webfetch
        } else {
            format!("{webfetch}\n[jobs]\nmax = 0\n")
        };
        let text = format!(
            r#"model = "{MODEL}"

{extra}

{webfetch}

[provider.mock]
kind = "openai"
base_url = "{base_url}/v1"
{retries}{provider}

[models."{MODEL}"]
context = {context}
output = {output}
cost_input = 1.0
cost_output = 2.0
"#
        );
        std::fs::write(&config, text).expect("write config");
        PithEnv {
            workspace,
            data,
            home,
            config,
        }
    }

    pub fn command(&self, args: &[&str]) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_pith"));
        cmd.args(args)
            .current_dir(self.workspace.path())
            .env("PITH_DATA_DIR", self.data.path())
            .env("PITH_CONFIG", &self.config)
            .env("PITH_RETRY_BASE_MS", "5")
            .env("HOME", self.home.path())
            .env("XDG_CONFIG_HOME", self.home.path().join(".config"))
            .env("XDG_DATA_HOME", self.home.path().join(".local/share"))
            .env_remove("PITH_MODEL")
            .env_remove("PITH_DISABLE_AUTOCOMPACT")
            .env_remove("PITH_DISABLE_PRUNE")
            .stdin(std::process::Stdio::null())
            .kill_on_drop(true);
        cmd
    }

    /// Starts pith with its output captured (for tests that signal or kill it).
    pub fn spawn(&self, args: &[&str]) -> tokio::process::Child {
        self.command(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("pith starts")
    }

    /// Runs pith to completion (with a generous limit so a hang fails the test).
    pub async fn run(&self, args: &[&str]) -> Output {
        let fut = self.command(args).output();
        tokio::time::timeout(std::time::Duration::from_secs(60), fut)
            .await
            .expect("pith did not finish within 60 s")
            .expect("pith runs")
    }

    /// `pith run --format json ARGS…`: the events, one per line.
    pub async fn run_json(&self, args: &[&str]) -> (Output, Vec<Value>) {
        let mut full = vec!["run", "--format", "json"];
        full.extend_from_slice(args);
        let out = self.run(&full).await;
        let events = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad json line {l}: {e}")))
            .collect::<Vec<Value>>();
        if std::env::var_os("PITH_TEST_DUMP").is_some() {
            for e in &events {
                let line = e.to_string();
                eprintln!("EVENT {}", line.chars().take(400).collect::<String>());
            }
        }
        (out, events)
    }

    /// The stored history of the only (or latest) session, via `pith sessions export`.
    pub async fn export_latest(&self) -> Value {
        let id = self
            .latest_session_id()
            .unwrap_or_else(|| panic!("no session stored"));
        let out = self.run(&["sessions", "export", &id]).await;
        assert!(out.status.success(), "export failed: {}", stderr(&out));
        serde_json::from_slice(&out.stdout).expect("export is JSON")
    }

    /// The export of the latest session as text, or "" when there is none yet (for polling
    /// while pith runs).
    pub async fn export_latest_raw(&self) -> String {
        let Some(id) = self.latest_session_id() else {
            return String::new();
        };
        let out = self.run(&["sessions", "export", &id]).await;
        String::from_utf8_lossy(&out.stdout).to_string()
    }

    /// The id of the latest session that holds a message, answered or not (`pith sessions
    /// list` leaves out those no model answered in).
    fn latest_session_id(&self) -> Option<String> {
        let store = pith_store::Store::open(self.data.path()).ok()?;
        Some(store.latest_stored_session().ok()??.id)
    }

    pub fn path(&self) -> &Path {
        self.workspace.path()
    }
}

/// `pith run --yes` on a turn whose bash call starts [`sleepers`]; returns pith and the pids
/// once they all run.
pub async fn run_sleepers(server: &MockServer, env: &PithEnv) -> (tokio::process::Child, Vec<i32>) {
    let pids = env.path().join("pids");
    let call = json!({ "command": sleepers(&pids) }).to_string();
    server.push(oa::tool_calls(&[("c1", "bash", &call)], None));
    let child = env.spawn(&["run", "--yes", "start the sleepers"]);
    let started = sleeper_pids(&pids).await;
    (child, started)
}

/// Four turns with long answers, so that `/compact` has history worth summarising (the first
/// starts the session; the rest continue it).
pub async fn compactable_session(server: &MockServer, env: &PithEnv) {
    for i in 0..4 {
        server.push(oa::text(
            &format!(
                "answer {i}: {}",
                "the quick brown fox jumps over the lazy dog ".repeat(300)
            ),
            Some((3_000 * (i + 1), 2_700)),
        ));
        let prompt = format!("fact-{i}: remember me");
        let mut args = vec!["run"];
        if i > 0 {
            args.push("-c");
        }
        args.push(&prompt);
        let out = env.run(&args).await;
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
