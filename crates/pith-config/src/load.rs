//! Loading and merging configuration sources.
//!
//! Order, later wins, tables merged key by key: built-in providers, the global file
//! (`<config dir>/pith/config.toml`), `<workspace>/pith.toml`, the `--config` / `PITH_CONFIG` file,
//! then the environment (`PITH_MODEL`, `PITH_DISABLE_AUTOCOMPACT`, `PITH_DISABLE_PRUNE`).
//!
//! Each file is parsed and checked on its own first, so an error names the file, line and column.
//!
//! The workspace file comes from the repository pith runs in: until the directory is trusted
//! (`LoadOptions::trust`, or listed in the global `trusted_directories`) only harmless keys of it
//! are used (see `trust.rs`).
//!
//! Here: the sources in order and what is checked once they are merged. `layers.rs` reads and
//! merges the files, `file.rs` parses one, `check.rs` checks one table by table, `env.rs` applies
//! the environment, `workspace.rs` and `trust.rs` decide what the workspace file may set, and
//! `render.rs` writes the effective configuration for `pith config`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{Config, ProviderConfig};
use pith_protocol::text::one_line;

mod check;
mod env;
mod file;
mod layers;
mod render;
mod trust;
mod usable;
mod workspace;

use file::{FileLayer, parse_file};
use layers::Merged;
pub use render::render_effective;
use workspace::{Listed, listed_for_workspace};

/// Names the config file (same as `--config`).
pub(crate) const ENV_CONFIG: &str = "PITH_CONFIG";
/// Overrides `model`.
pub(crate) const ENV_MODEL: &str = "PITH_MODEL";
/// `1` sets `compaction.auto = false`.
pub(crate) const ENV_DISABLE_AUTOCOMPACT: &str = "PITH_DISABLE_AUTOCOMPACT";
/// `1` sets `compaction.prune = false`.
pub(crate) const ENV_DISABLE_PRUNE: &str = "PITH_DISABLE_PRUNE";

/// Where to look for configuration.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// The workspace root; `<workspace>/pith.toml` is read when it exists.
    pub workspace: PathBuf,
    /// `--config FILE`; when `None`, `PITH_CONFIG`. Must exist when given.
    pub config_file: Option<PathBuf>,
    /// Overrides the global file (default: `directories` config dir `/config.toml`).
    pub global_file: Option<PathBuf>,
    /// What the user decided about trusting the workspace.
    pub trust: Trust,
    /// pith's data dir, where it records when it first saw each `trusted_directories` entry:
    /// with one, a listed directory trusts only the config files it held then. `None` (tests,
    /// tools that only read the config): a listing trusts everything below it.
    pub data_dir: Option<PathBuf>,
    /// Whether a provider has a key to send (the environment or a stored one): an untrusted
    /// file's `model` whose provider has none is left out, so it cannot stop pith. `None`: not
    /// checked.
    pub has_key: Option<fn(&str, &ProviderConfig) -> bool>,
}

/// The user's decision about a workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Trust {
    /// Never asked: untrusted until the user says otherwise.
    #[default]
    Unknown,
    Trusted,
    Untrusted,
}

/// How the workspace's own `pith.toml` was used.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkspaceTrust {
    /// Its settings were used in full (decided, or listed in `trusted_directories`).
    pub trusted: bool,
    /// The decision came from `trusted_directories` rather than the user's answer.
    pub listed: bool,
    /// The workspace lies in a listed directory, but its file was created or changed since
    /// pith first saw the listing, so the listing does not trust it.
    pub(crate) newer_than_listing: bool,
    /// Settings left out because the directory is not trusted (dotted keys).
    pub ignored: Vec<String>,
}

/// The merged configuration and where each value came from.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub config: Config,
    /// Dotted key (`compaction.auto`, `models."openai/gpt-4.1".context`) → `"default"`, a file
    /// path, or `"env PITH_…"`.
    pub(crate) origins: BTreeMap<String, String>,
    pub warnings: Vec<String>,
    /// The files that were read, in merge order.
    pub files: Vec<PathBuf>,
    pub workspace_trust: WorkspaceTrust,
    /// The workspace's own files beside its `pith.toml` (`.pith/agents`, `.pith/commands`) may
    /// be used: the user trusted it, or it lies in `trusted_directories`.
    pub workspace_files_trusted: bool,
}

impl Loaded {
    /// Where the value at `key` came from (`"default"` for anything no source set).
    pub fn origin(&self, key: &str) -> &str {
        self.origins.get(key).map_or("default", String::as_str)
    }
}

/// A configuration error. Its `Display` is always exactly one line.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ConfigError {
    /// A problem at a place in a file: `/path/pith.toml:3:9: unknown field …`.
    #[error("{}:{line}:{column}: {message}", path.display())]
    At {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    /// A file that cannot be read.
    #[error("{}: {message}", path.display())]
    File { path: PathBuf, message: String },
    /// A bad environment variable.
    #[error("environment variable {var}: {message}")]
    Env { var: String, message: String },
    /// A problem only visible after merging.
    #[error("config: {message}")]
    Invalid { message: String },
}

/// The providers that exist without any configuration. A user `[provider.NAME]` of the same name
/// is merged over its built-in (so `[provider.ollama] base_url = "…"` alone is enough).
pub(crate) fn builtin_providers() -> BTreeMap<String, ProviderConfig> {
    super::known::KNOWN_PROVIDERS
        .iter()
        .map(|k| {
            let config = ProviderConfig {
                kind: k.kind.clone(),
                base_url: k.base_url.to_string(),
                api_key_env: k.key_env.map(str::to_string),
                headers: BTreeMap::new(),
                ..Default::default()
            };
            (k.name.to_string(), config)
        })
        .collect()
}

/// The default global config file: `<user config dir>/pith/config.toml`.
pub fn default_global_file() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "pith").map(|d| d.config_dir().join("config.toml"))
}

/// Loads and merges every source; `env` looks up environment variables (pith's own lookup,
/// which sees the keys it took out of its environment; a map in tests).
pub fn load_with_env(
    opts: &LoadOptions,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Loaded, ConfigError> {
    let mut merged = Merged::read_files(opts, env)?;
    env::apply(&mut merged, env)?;
    merged.imply_model();
    let mut config = merged.config()?;
    config.config_file = explicit_file(opts, env);
    let Merged {
        origins,
        mut warnings,
        files,
        workspace_trust,
        ..
    } = merged;
    check_limits_across_files(&config, &origins)?;
    // keys set in different files meet only here
    super::keys::Keymap::from_config(&config.keys).map_err(|e| ConfigError::Invalid {
        message: e.to_string(),
    })?;
    let workspace_files_trusted =
        agents_from_files(opts, &mut config, &workspace_trust, &mut warnings)?;
    if let Some(w) = unknown_provider_warning(&config) {
        warnings.push(w);
    }
    let origins = origins_of_values(&config, &origins);
    for w in &warnings {
        tracing::warn!("{w}");
    }
    Ok(Loaded {
        config,
        origins,
        warnings,
        files,
        workspace_trust,
        workspace_files_trusted,
    })
}

/// The `--config` / `PITH_CONFIG` file, made absolute.
fn explicit_file(opts: &LoadOptions, env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let file = opts.config_file.clone().or_else(|| {
        env(ENV_CONFIG)
            .filter(|v| !v.trim().is_empty())
            .map(PathBuf::from)
    })?;
    // the real file: commands may not change it (sandbox/paths.rs binds it read-only)
    let file = std::path::absolute(&file).unwrap_or(file);
    Some(file.canonicalize().unwrap_or(file))
}

/// Each file was checked on its own; limits set in different files meet only here.
fn check_limits_across_files(
    config: &Config,
    origins: &BTreeMap<String, String>,
) -> Result<(), ConfigError> {
    for (name, model) in &config.models {
        if model.context > 0 && model.output >= model.context {
            let key = |k: &str| format!("models.{}.{k}", key_str(name));
            let from = |k: &str| {
                origins
                    .get(&key(k))
                    .map_or("default", String::as_str)
                    .to_string()
            };
            return Err(ConfigError::Invalid {
                message: format!(
                    "models.\"{name}\".output ({}, from {}) must be less than its context ({}, from {}): the output limit is reserved out of the window",
                    model.output,
                    from("output"),
                    model.context,
                    from("context")
                ),
            });
        }
    }
    Ok(())
}

/// The warning for a default model whose provider is not configured.
fn unknown_provider_warning(config: &Config) -> Option<String> {
    let model = config.model.as_ref()?;
    let (provider, _) = pith_protocol::model_name::split(model)?;
    if config.provider.contains_key(provider) {
        return None;
    }
    Some(format!(
        "model \"{model}\": no provider \"{provider}\" is configured (known: {})",
        config
            .provider
            .keys()
            .cloned()
            .collect::<Vec<_>>()
            .join(", ")
    ))
}

/// The origins of exactly the values the merged config holds; the rest are defaults.
fn origins_of_values(
    config: &Config,
    origins: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let mut leaves = Vec::new();
    if let Ok(toml::Value::Table(t)) = toml::Value::try_from(config) {
        collect_leaves(&t, "", &mut leaves);
    }
    leaves
        .into_iter()
        .map(|key| {
            let origin = origins
                .get(&key)
                .cloned()
                .unwrap_or_else(|| "default".to_string());
            (key, origin)
        })
        .collect()
}

/// Adds the sub-agents of Markdown files (`agents/*.md` beside the global config, and
/// `.pith/agents/*.md` in a trusted workspace) and checks every agent's name. Returns whether
/// the workspace's files are trusted.
fn agents_from_files(
    opts: &LoadOptions,
    config: &mut Config,
    workspace_trust: &WorkspaceTrust,
    warnings: &mut Vec<String>,
) -> Result<bool, ConfigError> {
    let global_dir = opts
        .global_file
        .clone()
        .or_else(default_global_file)
        .and_then(|f| f.parent().map(Path::to_path_buf));
    let mut listed = toml::Table::new();
    if let Ok(dirs) = toml::Value::try_from(&config.trusted_directories) {
        listed.insert("trusted_directories".into(), dirs);
    }
    let trusted = workspace_trust.trusted
        || opts.trust == Trust::Trusted
        || listed_for_workspace(opts, &listed) == Listed::Covered;
    super::agents::merge_markdown(
        &mut config.agent,
        global_dir.as_deref(),
        &opts.workspace,
        trusted,
        warnings,
    )?;
    if let Some(name) = config.agent.keys().find(|n| !super::agents::valid_name(n)) {
        return Err(ConfigError::Invalid {
            message: format!(
                "agent.\"{name}\": an agent's name must be letters, digits, '-' or '_'"
            ),
        });
    }
    Ok(trusted)
}

/// A `model` value that is not `provider/model`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("model must be \"provider/model\", got \"{model}\"")]
pub struct BadModelName {
    pub model: String,
}

/// `model` values must be `provider/model`.
pub fn check_model_name(model: &str) -> Result<(), BadModelName> {
    match pith_protocol::model_name::split(model) {
        Some(_) if !model.contains(char::is_whitespace) => Ok(()),
        _ => Err(BadModelName {
            model: model.to_string(),
        }),
    }
}

pub(crate) fn is_env_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn located(path: &Path, text: &str, offset: usize, message: &str) -> ConfigError {
    let (line, column) = line_col(text, offset);
    ConfigError::At {
        path: path.to_path_buf(),
        line,
        column,
        message: one_line(message),
    }
}

/// 1-based line and column (in characters) of a byte offset.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    (line, column)
}

/// A TOML key, quoted when it is not bare.
pub(crate) fn key_str(key: &str) -> String {
    let bare = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare {
        key.to_string()
    } else {
        toml::Value::String(key.to_string()).to_string()
    }
}

pub(crate) fn join_key(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key_str(key)
    } else {
        format!("{prefix}.{}", key_str(key))
    }
}

fn collect_leaves(table: &toml::Table, prefix: &str, out: &mut Vec<String>) {
    for (k, v) in table {
        let key = join_key(prefix, k);
        match v {
            toml::Value::Table(t) => collect_leaves(t, &key, out),
            _ => out.push(key),
        }
    }
}

#[cfg(test)]
mod tests;
