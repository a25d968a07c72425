//! What both front ends need before the engine starts: workspace, config, store, logging, session.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, bail};

use pith_config::load::Trust;
use pith_config::trusted::TrustStore;
use pith_config::{self as config, Config};
use pith_protocol::message::Session;
use pith_store::Store;

pub struct Setup {
    pub workspace: PathBuf,
    pub data_dir: PathBuf,
    pub loaded: config::load::Loaded,
    pub store: Arc<Store>,
    config_file: Option<PathBuf>,
    /// The user's recorded decision about trusting the workspace.
    pub(crate) trust: Trust,
}

static STARTED: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();

/// Marks the process start (first thing in `main`), for start-up timings in the log.
pub fn mark_start() {
    STARTED.get_or_init(std::time::Instant::now);
}

/// When pith started: [`mark_start`]'s instant (`None` when it was not called: tests, benches).
pub fn started() -> Option<std::time::Instant> {
    STARTED.get().copied()
}

/// The data directory: `PITH_DATA_DIR`, else the platform data dir.
pub fn data_dir() -> anyhow::Result<PathBuf> {
    if let Some(d) = std::env::var_os("PITH_DATA_DIR").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(d));
    }
    directories::ProjectDirs::from("", "", "pith")
        .map(|p| p.data_dir().to_path_buf())
        .context("cannot find a data directory; set PITH_DATA_DIR")
}

/// Sends `tracing` output to `<data dir>/logs/pith.log` (never to the terminal).
pub fn init_logging(data_dir: &Path) {
    let dir = data_dir.join("logs");
    if std::fs::create_dir_all(&dir).is_err() {
        return;
    }
    let Ok(file) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("pith.log"))
    else {
        return;
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("PITH_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        // Nothing pith knows to be a secret reaches the log.
        .with_writer(std::sync::Mutex::new(pith_secrets::ScrubbingWriter(file)))
        .with_ansi(false)
        .try_init();
}

/// The workspace (the current directory) and its configuration, trusted as recorded in the data
/// directory.
pub fn load_config(
    config_file: Option<PathBuf>,
) -> anyhow::Result<(PathBuf, config::load::Loaded)> {
    let workspace = current_workspace()?;
    let data = data_dir().ok();
    if let Some(d) = &data {
        // as `Setup` does: stored keys count when an untrusted file's model is judged
        let _ = pith_auth::install_from(d);
    }
    let trust = data
        .as_ref()
        .map(|d| TrustStore::new(d).get(&workspace))
        .unwrap_or_default();
    let loaded = load_in(&workspace, config_file, trust, data.as_deref())?;
    Ok((workspace, loaded))
}

fn current_workspace() -> anyhow::Result<PathBuf> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    Ok(cwd.canonicalize().unwrap_or(cwd))
}

/// Loads the configuration, registers the secrets it names (for scrubbing) and warns when the
/// configured sandbox is not available here.
fn load_in(
    workspace: &Path,
    config_file: Option<PathBuf>,
    trust: Trust,
    data_dir: Option<&Path>,
) -> anyhow::Result<config::load::Loaded> {
    let mut loaded = config::load::load_with_env(
        &config::load::LoadOptions {
            workspace: workspace.to_path_buf(),
            config_file,
            global_file: None,
            trust,
            data_dir: data_dir.map(Path::to_path_buf),
            has_key: Some(provider_has_key),
        },
        &pith_secrets::env_var,
    )
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    pith_secrets::register_config(&loaded.config, &pith_secrets::env_var);
    let home = std::env::var_os("HOME").map(PathBuf::from);
    if let Some(w) = pith_tools::policy::workspace_warning(workspace, home.as_deref()) {
        loaded.warnings.push(w);
    }
    if let Some(w) =
        pith_tools::sandbox::CommandPolicy::from_config(&loaded.config).unavailable_warning()
    {
        loaded.warnings.push(w);
    }
    Ok(loaded)
}

impl Setup {
    pub fn new(config_file: Option<PathBuf>) -> anyhow::Result<Setup> {
        Setup::with_trust(config_file, false)
    }

    /// `trust`: the user passed `--trust`, which trusts the workspace from now on.
    pub fn with_trust(config_file: Option<PathBuf>, trust: bool) -> anyhow::Result<Setup> {
        Setup::in_workspace(current_workspace()?, config_file, trust)
    }

    /// [`with_trust`](Self::with_trust) for a workspace other than the current directory (an
    /// editor names it per session: `pith acp`). `workspace` is canonicalised here.
    pub fn in_workspace(
        workspace: PathBuf,
        config_file: Option<PathBuf>,
        trust: bool,
    ) -> anyhow::Result<Setup> {
        Setup::in_dirs(workspace, data_dir()?, config_file, trust)
    }

    /// [`in_workspace`](Self::in_workspace) with the data directory given (tests).
    pub fn in_dirs(
        workspace: PathBuf,
        data_dir: PathBuf,
        config_file: Option<PathBuf>,
        trust: bool,
    ) -> anyhow::Result<Setup> {
        let workspace = workspace.canonicalize().unwrap_or(workspace);
        // Before the config's sandbox warning asks for it: remembered until the next boot.
        pith_tools::sandbox::support_in(&data_dir);
        let trust_store = TrustStore::new(&data_dir);
        if trust {
            trust_store
                .set(&workspace, true)
                .with_context(|| format!("cannot record trust in {}", data_dir.display()))?;
        }
        let decision = trust_store.get(&workspace);
        // Before the config: an untrusted file's model is kept only when its provider has a key,
        // a stored one included.
        let auth_warning = pith_auth::install_from(&data_dir);
        let mut loaded = load_in(&workspace, config_file.clone(), decision, Some(&data_dir))?;
        loaded.warnings.extend(auth_warning);
        init_logging(&data_dir);
        for w in &loaded.warnings {
            tracing::warn!("{w}");
        }
        let store = Store::open(&data_dir)
            .with_context(|| format!("cannot open the session store in {}", data_dir.display()))?;
        Ok(Setup {
            workspace,
            data_dir,
            loaded,
            store: Arc::new(store),
            config_file,
            trust: decision,
        })
    }

    /// Records the user's answer; when trusted, the configuration is loaded again in full.
    pub fn decide_trust(&mut self, trusted: bool) -> anyhow::Result<()> {
        TrustStore::new(&self.data_dir)
            .set(&self.workspace, trusted)
            .with_context(|| format!("cannot record trust in {}", self.data_dir.display()))?;
        self.trust = if trusted {
            Trust::Trusted
        } else {
            Trust::Untrusted
        };
        if trusted {
            self.loaded = load_in(
                &self.workspace,
                self.config_file.clone(),
                self.trust,
                Some(&self.data_dir),
            )?;
        }
        Ok(())
    }

    /// The custom slash commands: the user's, and the project's when the workspace is trusted.
    /// Files skipped are named in the log.
    pub fn custom_commands(&self) -> pith_commands::custom_commands::Commands {
        let global =
            config::load::default_global_file().and_then(|f| f.parent().map(Path::to_path_buf));
        let commands = pith_commands::custom_commands::Commands::load_with(
            global.as_deref(),
            &self.workspace,
            self.loaded.workspace_files_trusted,
            self.config().skills.enabled,
        );
        for w in &commands.warnings {
            tracing::warn!("{w}");
        }
        commands
    }

    /// The skills: the user's, and the project's when the workspace is trusted (none with
    /// `[skills] enabled = false`)
    /// (ARCHITECTURE.md §4.7). What was skipped is in its warnings (shown with the custom
    /// commands', which load the same skills).
    pub fn skills(&self) -> pith_config::skills::Skills {
        if !self.config().skills.enabled {
            return pith_config::skills::Skills::default();
        }
        let global =
            config::load::default_global_file().and_then(|f| f.parent().map(Path::to_path_buf));
        pith_config::skills::Skills::discover(
            &self.workspace,
            self.loaded.workspace_files_trusted,
            global.as_deref(),
        )
    }

    pub fn config(&self) -> &Config {
        &self.loaded.config
    }

    /// Takes the key variables (every variable commands do not get) out of pith's environment
    /// into memory, wipes them from what `/proc/<pith>/environ` shows, and makes the process
    /// non-dumpable (SECURITY.md). Returns how many variables were taken.
    ///
    /// # Safety
    /// No other thread may exist yet: the process environment is changed.
    pub unsafe fn seal_secrets(&self) -> usize {
        let policy = pith_secrets::EnvPolicy::from_config(&self.loaded.config);
        // SAFETY: the caller guarantees a single thread.
        let taken = unsafe { pith_secrets::seal(&policy) };
        tracing::debug!(
            count = taken.len(),
            "key variables taken out of the environment"
        );
        taken.len()
    }

    /// The session to run: `--session ID`, `--continue` (the last one here), or a new one.
    pub fn session(
        &self,
        id: Option<&str>,
        continue_last: bool,
        model: Option<&str>,
    ) -> anyhow::Result<Session> {
        let dir = self.workspace.to_string_lossy().to_string();
        let mut session = if let Some(id) = id {
            match self.store.find_session(id)? {
                Some(s) => s,
                None => bail!("no session with id {id} (see `pith sessions list`)"),
            }
        } else if continue_last {
            match self.store.latest_session(&dir)? {
                Some(s) => s,
                None => bail!("no session to continue in {dir}"),
            }
        } else {
            let model = self.pick_model(model, None)?;
            return Ok(self.store.create_session(&dir, &model)?);
        };
        let model = self.pick_model(model, Some(&session.model))?;
        if model != session.model {
            session.model = model;
            self.store.update_session(&session)?;
        }
        Ok(session)
    }

    /// `--model`, else the session's, else the config's.
    fn pick_model(&self, flag: Option<&str>, session: Option<&str>) -> anyhow::Result<String> {
        let model = flag
            .map(str::to_string)
            .or_else(|| session.filter(|s| !s.is_empty()).map(str::to_string))
            .or_else(|| self.config().model.clone());
        let Some(model) = model else {
            bail!(
                "no model configured: set model = \"provider/model\" in pith.toml or {}, or pass --model (a local server too: --model llamacpp/NAME or ollama/NAME; it is not looked for)",
                config_hint()
            );
        };
        pith_engine::factory::split_model(&model)?;
        Ok(model)
    }
}

/// Whether the provider `name` has a key to send: none needed, its variable set, or one stored
/// for its `base_url` (what the provider factory will look for).
pub(crate) fn provider_has_key(name: &str, pc: &config::ProviderConfig) -> bool {
    let Some(var) = pc.api_key_env.as_deref().filter(|v| !v.is_empty()) else {
        return true;
    };
    pith_secrets::env_var(var).is_some_and(|v| !v.trim().is_empty())
        || matches!(pith_auth::stored_key(name, &pc.base_url), Ok(Some(_)))
}

fn config_hint() -> String {
    directories::ProjectDirs::from("", "", "pith")
        .map(|p| p.config_dir().join("config.toml").display().to_string())
        .unwrap_or_else(|| "the global config file".into())
}

/// Whether the environment variable `name` is set to something (`pith config` shows it for
/// `api_key_env`, never the value).
pub fn env_is_set(name: &str) -> bool {
    pith_secrets::env_var(name).is_some_and(|v| !v.is_empty())
}
