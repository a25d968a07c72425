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

use std::borrow::Cow;
use std::collections::{BTreeMap, HashSet};
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::{Config, ProviderConfig};
use pith_protocol::text::one_line;

mod render;
mod trust;
mod workspace;

pub use render::render_effective;
use workspace::is_listed;

/// Names the config file (same as `--config`).
pub const ENV_CONFIG: &str = "PITH_CONFIG";
/// Overrides `model`.
pub const ENV_MODEL: &str = "PITH_MODEL";
/// `1` sets `compaction.auto = false`.
pub const ENV_DISABLE_AUTOCOMPACT: &str = "PITH_DISABLE_AUTOCOMPACT";
/// `1` sets `compaction.prune = false`.
pub const ENV_DISABLE_PRUNE: &str = "PITH_DISABLE_PRUNE";

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
    /// Settings left out because the directory is not trusted (dotted keys).
    pub ignored: Vec<String>,
}

/// The merged configuration and where each value came from.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub config: Config,
    /// Dotted key (`compaction.auto`, `models."openai/gpt-4.1".context`) → `"default"`, a file
    /// path, or `"env PITH_…"`.
    pub origins: BTreeMap<String, String>,
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
pub fn builtin_providers() -> BTreeMap<String, ProviderConfig> {
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
    let explicit = opts.config_file.clone().or_else(|| {
        env(ENV_CONFIG)
            .filter(|v| !v.trim().is_empty())
            .map(PathBuf::from)
    });
    let workspace_file = opts.workspace.join("pith.toml");
    // Named with --config / PITH_CONFIG, the workspace file is the user's choice: trusted.
    let named = explicit
        .as_ref()
        .is_some_and(|e| same_file(e, &workspace_file));
    let sources = [
        (opts.global_file.clone().or_else(default_global_file), false),
        (Some(workspace_file.clone()), false),
        (explicit, true),
    ];
    let mut workspace_trust = WorkspaceTrust {
        trusted: named,
        ..WorkspaceTrust::default()
    };

    let mut merged = toml::Table::new();
    let builtins =
        toml::Value::try_from(builtin_providers()).map_err(|e| ConfigError::Invalid {
            message: one_line(&e.to_string()),
        })?;
    merged.insert("provider".to_string(), builtins);
    let mut origins = BTreeMap::new();
    let mut warnings = Vec::new();
    let mut files = Vec::new();
    let mut seen = HashSet::new();
    let mut implied_model: Option<(String, String)> = None;
    let mut ambiguous_alias: Option<(PathBuf, usize)> = None;
    let mut hooks = super::HooksConfig::default();

    for (path, required) in sources {
        let Some(path) = path else { continue };
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !required => continue,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(ConfigError::File {
                    path,
                    message: "config file not found".to_string(),
                });
            }
            Err(e) => {
                return Err(ConfigError::File {
                    path,
                    message: format!("cannot read config file: {}", one_line(&e.to_string())),
                });
            }
        };
        if !seen.insert(path.canonicalize().unwrap_or_else(|_| path.clone())) {
            continue;
        }
        let layer = if path == workspace_file && !named {
            let (layer, trust) = workspace::layer(opts, &path, &text, &merged, &mut warnings)?;
            workspace_trust = trust;
            if let Some(w) = workspace::untrusted_warning(&path, &workspace_trust) {
                warnings.push(w);
            }
            match layer {
                Some(layer) => layer,
                None => continue,
            }
        } else {
            parse_file(&path, &text, &mut warnings)?
        };
        let origin = path.display().to_string();
        let mut layer = layer;
        // Hooks add up across files (each remembers its own) instead of replacing each other.
        if let Some(value) = layer.table.remove("hooks") {
            let file_hooks: super::HooksConfig =
                value
                    .try_into()
                    .map_err(|e: toml::de::Error| ConfigError::File {
                        path: path.clone(),
                        message: one_line(e.message()),
                    })?;
            for (event, _) in file_hooks.iter() {
                let key = format!("hooks.{}", event.key());
                let from = match origins.get(&key) {
                    Some(before) if before != &origin => format!("{before}, {origin}"),
                    _ => origin.clone(),
                };
                origins.insert(key, from);
            }
            hooks.append(file_hooks, &path);
        }
        record_origins(&layer.table, "", &origin, &mut origins);
        deep_merge(&mut merged, layer.table);
        match layer.alias_models.as_slice() {
            [only] => implied_model = Some((only.clone(), origin)),
            [] => {}
            many => ambiguous_alias = Some((path.clone(), many.len())),
        }
        tracing::debug!(file = %path.display(), "config file read");
        files.push(path);
    }

    if let Some(model) = env(ENV_MODEL).filter(|v| !v.trim().is_empty()) {
        let model = model.trim().to_string();
        check_model_name(&model).map_err(|message| ConfigError::Env {
            var: ENV_MODEL.to_string(),
            message,
        })?;
        merged.insert("model".to_string(), toml::Value::String(model));
        origins.insert("model".to_string(), format!("env {ENV_MODEL}"));
    }
    for (var, key) in [
        (ENV_DISABLE_AUTOCOMPACT, "auto"),
        (ENV_DISABLE_PRUNE, "prune"),
    ] {
        let Some(value) = env(var) else { continue };
        match value.trim().to_ascii_lowercase().as_str() {
            "1" | "true" | "yes" | "on" => {
                let compaction = merged
                    .entry("compaction")
                    .or_insert_with(|| toml::Value::Table(toml::Table::new()));
                if let toml::Value::Table(t) = compaction {
                    t.insert(key.to_string(), toml::Value::Boolean(false));
                }
                origins.insert(format!("compaction.{key}"), format!("env {var}"));
            }
            "" | "0" | "false" | "no" | "off" => {}
            other => warnings.push(format!(
                "environment variable {var}={other:?} is not 1 or 0; ignored"
            )),
        }
    }
    if !merged.contains_key("model") {
        if let Some((model, origin)) = implied_model {
            merged.insert("model".to_string(), toml::Value::String(model));
            origins.insert("model".to_string(), origin);
        } else if let Some((path, n)) = ambiguous_alias {
            warnings.push(format!(
                "{}: [model] lists {n} models and no default is set; add model = \"provider/model\"",
                path.display()
            ));
        }
    }

    let mut config: Config =
        toml::Value::Table(merged)
            .try_into()
            .map_err(|e: toml::de::Error| ConfigError::Invalid {
                message: one_line(e.message()),
            })?;
    config.hooks = hooks;
    // Each file was checked on its own; limits set in different files meet only here.
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
    // keys set in different files meet only here
    super::keys::Keymap::from_config(&config.keys).map_err(|e| ConfigError::Invalid {
        message: e.to_string(),
    })?;
    let workspace_files_trusted =
        agents_from_files(opts, &mut config, &workspace_trust, &mut warnings)?;
    if let Some(model) = &config.model
        && let Some((provider, _)) = model.split_once('/')
        && !config.provider.contains_key(provider)
    {
        warnings.push(format!(
            "model \"{model}\": no provider \"{provider}\" is configured (known: {})",
            config
                .provider
                .keys()
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }

    // Keep origins for exactly the values the merged config holds; the rest are defaults.
    let mut leaves = Vec::new();
    if let Ok(toml::Value::Table(t)) = toml::Value::try_from(&config) {
        collect_leaves(&t, "", &mut leaves);
    }
    let origins = leaves
        .into_iter()
        .map(|key| {
            let origin = origins
                .get(&key)
                .cloned()
                .unwrap_or_else(|| "default".to_string());
            (key, origin)
        })
        .collect();
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
        || is_listed(&opts.workspace, &listed);
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

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// One file, checked and turned into plain TOML for merging.
struct FileLayer {
    table: toml::Table,
    /// Model names of a `[model."p/m"]` table (the alias of `[models]`).
    alias_models: Vec<String>,
}

fn parse_file(
    path: &Path,
    text: &str,
    warnings: &mut Vec<String>,
) -> Result<FileLayer, ConfigError> {
    let at = |span: Range<usize>, message: String| located(path, text, span.start, &message);
    let toml_err = |e: toml::de::Error| at(e.span().unwrap_or(0..0), e.message().to_string());

    let mut root = DeTable::parse(text).map_err(toml_err)?;
    let table = root.get_mut();

    // `[model."provider/model"]` is an alias of `[models."provider/model"]`.
    let mut alias_models = Vec::new();
    if table.get("model").is_some_and(|v| v.get_ref().is_table())
        && let Some((key, value)) = table.remove_entry("model")
    {
        let value_span = value.span();
        if let DeValue::Table(alias) = value.into_inner() {
            alias_models = alias.keys().map(|k| k.get_ref().to_string()).collect();
            match table.get_mut("models").map(Spanned::get_mut) {
                Some(DeValue::Table(models)) => {
                    for (k, v) in alias {
                        if models.contains_key(k.get_ref().as_ref()) {
                            return Err(at(
                                k.span(),
                                format!(
                                    "model \"{}\" is set in both [model] and [models]",
                                    k.get_ref()
                                ),
                            ));
                        }
                        models.insert(k, v);
                    }
                }
                Some(_) => return Err(at(key.span(), "`models` must be a table".to_string())),
                None => {
                    table.insert(
                        Spanned::new(key.span(), Cow::Borrowed("models")),
                        Spanned::new(value_span, DeValue::Table(alias)),
                    );
                }
            }
        }
    }

    let plain =
        toml::Table::deserialize(toml::de::Deserializer::from(root.clone())).map_err(toml_err)?;

    // Check the file as a whole config. Built-in providers may be partly overridden, so their
    // required keys are filled in for the check only.
    let mut check = root.clone();
    if let Some(DeValue::Table(providers)) =
        check.get_mut().get_mut("provider").map(Spanned::get_mut)
    {
        let builtins = builtin_providers();
        for (name, entry) in providers.iter_mut() {
            let span = entry.span();
            let (Some(builtin), DeValue::Table(t)) =
                (builtins.get(name.get_ref().as_ref()), entry.get_mut())
            else {
                continue;
            };
            let kind = builtin.kind.as_str();
            for (key, value) in [
                ("kind", kind.to_string()),
                ("base_url", builtin.base_url.clone()),
            ] {
                if !t.contains_key(key) {
                    t.insert(
                        Spanned::new(span.clone(), Cow::Borrowed(key)),
                        Spanned::new(span.clone(), DeValue::String(Cow::Owned(value))),
                    );
                }
            }
        }
    }
    let config = Config::deserialize(toml::de::Deserializer::from(check)).map_err(toml_err)?;

    let span_of = |keys: &[&str]| span_at(root.get_ref(), keys);
    if let Some(model) = &config.model {
        check_model_name(model).map_err(|m| at(span_of(&["model"]), m))?;
    }
    if let Some(model) = &config.compaction.model {
        check_model_name(model)
            .map_err(|m| at(span_of(&["compaction", "model"]), format!("compaction.{m}")))?;
    }
    if let Some(t) = config.compaction.threshold
        && !(t > 0.0 && t <= 1.0)
    {
        return Err(at(
            span_of(&["compaction", "threshold"]),
            format!("compaction.threshold must be in (0, 1], got {t}"),
        ));
    }
    if let Some(b) = config.compaction.background
        && !(0.0..1.0).contains(&b)
    {
        return Err(at(
            span_of(&["compaction", "background"]),
            format!("compaction.background must be in [0, 1) (0: never), got {b}"),
        ));
    }
    for (key, value) in [
        ("max_lines", config.tool_output.max_lines),
        ("max_bytes", config.tool_output.max_bytes),
    ] {
        if value == 0 {
            return Err(at(
                span_of(&["tool_output", key]),
                format!("tool_output.{key} must be at least 1"),
            ));
        }
    }
    for (name, model) in &config.models {
        if model.context > 0 && model.output >= model.context {
            return Err(at(
                span_of(&["models", name, "output"]),
                format!(
                    "models.\"{name}\".output ({}) must be less than its context ({}): the output limit is reserved out of the window, so nothing would be left for the conversation",
                    model.output, model.context
                ),
            ));
        }
        if let Some(input) = model.input
            && model.context > 0
            && input > model.context
        {
            return Err(at(
                span_of(&["models", name, "input"]),
                format!(
                    "models.\"{name}\".input ({input}) must not be more than its context ({})",
                    model.context
                ),
            ));
        }
    }
    for (tool, setting) in &config.permission {
        if let super::PermissionSetting::Patterns(patterns) = setting {
            for pattern in patterns.keys() {
                if let Err(e) = super::permission_glob(pattern) {
                    return Err(at(
                        span_of(&["permission", tool, pattern]),
                        format!(
                            "permission.{tool}: \"{pattern}\" is not a valid pattern: {}",
                            glob_error(&e)
                        ),
                    ));
                }
            }
        }
    }
    if config.max_steps == 0 {
        return Err(at(
            span_of(&["max_steps"]),
            "max_steps must be at least 1".to_string(),
        ));
    }
    for (name, provider) in &config.provider {
        let url = provider.base_url.trim();
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(at(
                span_of(&["provider", name, "base_url"]),
                format!(
                    "provider.{name}.base_url must start with http:// or https://, got \"{}\"",
                    provider.base_url
                ),
            ));
        }
        for (key, value, max) in [
            (
                "connect_timeout_secs",
                provider.connect_timeout_secs,
                MAX_TIMEOUT_SECS,
            ),
            (
                "first_byte_timeout_secs",
                provider.first_byte_timeout_secs,
                MAX_TIMEOUT_SECS,
            ),
            (
                "idle_timeout_secs",
                provider.idle_timeout_secs,
                MAX_TIMEOUT_SECS,
            ),
            (
                "max_retry_wait_secs",
                provider.max_retry_wait_secs,
                MAX_TIMEOUT_SECS,
            ),
            (
                "max_retries",
                provider.max_retries.map(u64::from),
                MAX_RETRIES,
            ),
        ] {
            let Some(v) = value else { continue };
            let min = u64::from(key != "max_retries");
            if v < min || v > max {
                // `timeout_secs` is the older name of `first_byte_timeout_secs`.
                let mut span = span_of(&["provider", name, key]);
                let mut shown = key;
                if key == "first_byte_timeout_secs"
                    && span_of(&["provider", name, "timeout_secs"]) != span_of(&["provider", name])
                {
                    span = span_of(&["provider", name, "timeout_secs"]);
                    shown = "timeout_secs";
                }
                return Err(at(
                    span,
                    format!("provider.{name}.{shown} must be between {min} and {max}, got {v}"),
                ));
            }
        }
        if let Some(var) = &provider.api_key_env
            && !var.is_empty()
            && !is_env_name(var)
        {
            // Never echo the value: it is probably the key itself.
            return Err(at(
                span_of(&["provider", name, "api_key_env"]),
                format!(
                    "provider.{name}.api_key_env must name an environment variable (like OPENAI_API_KEY), not hold the key"
                ),
            ));
        }
    }
    for (name, server) in &config.mcp {
        super::mcp::check_server(name, server).map_err(|(keys, message)| {
            let mut path = vec!["mcp", name.as_str()];
            path.extend(keys);
            at(span_of(&path), message)
        })?;
    }
    for event in super::HookEvent::all() {
        for (i, hook) in config.hooks.get(event).iter().enumerate() {
            super::hooks::check_hook(event, hook).map_err(|(key, message)| {
                at(hook_span(root.get_ref(), event.key(), i, key), message)
            })?;
        }
    }
    check_ui(&config, root.get_ref()).map_err(|(span, message)| at(span, message))?;
    let t = config.tool_search.threshold;
    if !(t > 0.0 && t <= 1.0) {
        return Err(at(
            span_of(&["tool_search", "threshold"]),
            format!("tool_search.threshold must be in (0, 1], got {t}"),
        ));
    }
    for name in config.models.keys() {
        if !name.contains('/') {
            let (line, column) = line_col(text, span_of(&["models", name]).start);
            warnings.push(format!(
                "{}:{line}:{column}: [models.\"{name}\"] should be named \"provider/model\"",
                path.display()
            ));
        }
    }
    Ok(FileLayer {
        table: plain,
        alias_models,
    })
}

/// `theme` and `[keys]` of one file: the error's span and message.
fn check_ui(config: &Config, root: &DeTable<'_>) -> Result<(), (Range<usize>, String)> {
    use super::keys::{Keymap, KeymapError};
    if let Some(theme) = &config.theme
        && !super::ui::valid_theme_name(theme)
    {
        return Err((
            span_at(root, &["theme"]),
            format!(
                "theme must be \"dark\", \"light\" or the name of a file in themes/ (letters, digits, '-', '_'), got \"{theme}\""
            ),
        ));
    }
    let Err(e) = Keymap::from_config(&config.keys) else {
        return Ok(());
    };
    let keys = root.get("keys").and_then(|k| k.get_ref().as_table());
    let entry_span = |name: &str, index: usize| key_entry_span(keys, name, index);
    let span = match &e {
        KeymapError::UnknownAction { name } => keys
            .and_then(|t| t.get_key_value(name.as_str()))
            .map(|(k, _)| k.span()),
        KeymapError::BadKey { action, index, .. } => entry_span(action, *index),
        KeymapError::Conflict { second, index, .. } => entry_span(second.name(), *index),
    };
    Err((
        span.unwrap_or_else(|| span_at(root, &["keys"])),
        e.to_string(),
    ))
}

/// The span of the `index`th key of `keys.NAME` (of the whole value when it is one string).
fn key_entry_span(keys: Option<&DeTable<'_>>, name: &str, index: usize) -> Option<Range<usize>> {
    keys.and_then(|t| t.get(name)).map(|v| match v.get_ref() {
        DeValue::Array(items) => items.get(index).map_or(v.span(), |i| i.span()),
        _ => v.span(),
    })
}

/// The most a provider timeout or retry wait may be set to, in seconds.
const MAX_TIMEOUT_SECS: u64 = super::MAX_TIMEOUT_SECS;
/// The most retries a provider may be set to.
const MAX_RETRIES: u64 = 20;

/// A glob error without globset's quoting of the whole pattern.
fn glob_error(e: &globset::Error) -> String {
    match e.kind() {
        globset::ErrorKind::UnclosedClass => "a `[` is never closed".into(),
        globset::ErrorKind::UnopenedAlternates => "a `}` has no `{`".into(),
        globset::ErrorKind::UnclosedAlternates => "a `{` is never closed".into(),
        globset::ErrorKind::NestedAlternates => "`{…}` cannot be nested".into(),
        globset::ErrorKind::DanglingEscape => "it ends with a lone `\\`".into(),
        other => one_line(&other.to_string()),
    }
}

/// `model` values must be `provider/model`.
pub fn check_model_name(model: &str) -> Result<(), String> {
    match model.split_once('/') {
        Some((p, m)) if !p.is_empty() && !m.is_empty() && !model.contains(char::is_whitespace) => {
            Ok(())
        }
        _ => Err(format!("model must be \"provider/model\", got \"{model}\"")),
    }
}

pub(crate) fn is_env_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The span of `key` in the `index`th `[[hooks.EVENT]]` entry (of the entry when it has no such
/// key).
fn hook_span(root: &DeTable<'_>, event: &str, index: usize, key: &str) -> Range<usize> {
    let list = span_at(root, &["hooks", event]);
    let entry = root
        .get("hooks")
        .and_then(|h| h.get_ref().as_table())
        .and_then(|h| h.get(event))
        .and_then(|e| match e.get_ref() {
            DeValue::Array(items) => items.get(index),
            _ => None,
        });
    match entry {
        Some(e) => match e.get_ref().as_table().and_then(|t| t.get(key)) {
            Some(v) => v.span(),
            None => e.span(),
        },
        None => list,
    }
}

/// The span of the value at `keys` (or of the deepest existing key on the way).
fn span_at(table: &DeTable<'_>, keys: &[&str]) -> Range<usize> {
    let mut span = 0..0;
    let mut current = Some(table);
    for key in keys {
        let Some(t) = current else { break };
        let Some(value) = t.get(*key) else { break };
        span = value.span();
        current = value.get_ref().as_table();
    }
    span
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

fn record_origins(
    table: &toml::Table,
    prefix: &str,
    origin: &str,
    origins: &mut BTreeMap<String, String>,
) {
    for (k, v) in table {
        let key = join_key(prefix, k);
        match v {
            toml::Value::Table(t) => record_origins(t, &key, origin, origins),
            _ => {
                origins.insert(key, origin.to_string());
            }
        }
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

/// Merges `over` into `base`: tables key by key, anything else replaced.
fn deep_merge(base: &mut toml::Table, over: toml::Table) {
    for (k, v) in over {
        match (base.get_mut(&k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => deep_merge(b, o),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

#[cfg(test)]
mod tests;
