//! What both front ends need before the engine starts: workspace, config, store, logging, session.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, bail};

use crate::config::{self, Config};
use crate::message::Session;
use crate::store::Store;

pub struct Setup {
    pub workspace: PathBuf,
    pub data_dir: PathBuf,
    pub loaded: config::load::Loaded,
    pub store: Arc<Store>,
}

static STARTED: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();

/// Marks the process start (first thing in `main`), for start-up timings in the log.
pub fn mark_start() {
    STARTED.get_or_init(std::time::Instant::now);
}

/// Milliseconds since [`mark_start`] (`None` when it was not called: tests, benches).
pub fn ms_since_start() -> Option<f64> {
    STARTED.get().map(|t| t.elapsed().as_secs_f64() * 1000.0)
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
        .with_writer(std::sync::Mutex::new(file))
        .with_ansi(false)
        .try_init();
}

pub fn load_config(
    config_file: Option<PathBuf>,
) -> anyhow::Result<(PathBuf, config::load::Loaded)> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let workspace = cwd.canonicalize().unwrap_or(cwd);
    let loaded = config::load::load(&config::load::LoadOptions {
        workspace: workspace.clone(),
        config_file,
        global_file: None,
    })
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok((workspace, loaded))
}

impl Setup {
    pub fn new(config_file: Option<PathBuf>) -> anyhow::Result<Setup> {
        let (workspace, loaded) = load_config(config_file)?;
        let data_dir = data_dir()?;
        init_logging(&data_dir);
        let store = Store::open(&data_dir)
            .with_context(|| format!("cannot open the session store in {}", data_dir.display()))?;
        Ok(Setup {
            workspace,
            data_dir,
            loaded,
            store: Arc::new(store),
        })
    }

    pub fn config(&self) -> &Config {
        &self.loaded.config
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
            return self.store.create_session(&dir, &model);
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
                "no model configured: set model = \"provider/model\" in pith.toml or {}, or pass --model",
                config_hint()
            );
        };
        crate::provider::factory::split_model(&model)?;
        Ok(model)
    }
}

fn config_hint() -> String {
    directories::ProjectDirs::from("", "", "pith")
        .map(|p| p.config_dir().join("config.toml").display().to_string())
        .unwrap_or_else(|| "the global config file".into())
}
