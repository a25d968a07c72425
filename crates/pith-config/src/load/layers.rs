//! Reading the config files in order and merging them, later over earlier: tables key by key,
//! hooks added up across files, and the origin of every value remembered.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use super::file::{FileLayer, parse_file};
use super::{
    ConfigError, ENV_CONFIG, LoadOptions, WorkspaceTrust, builtin_providers, default_global_file,
    join_key, workspace,
};
use crate::{Config, HooksConfig};
use pith_protocol::text::one_line;

/// The sources merged so far and what was learnt reading them.
pub(super) struct Merged {
    /// The merged values, as plain TOML.
    pub(super) table: toml::Table,
    /// Dotted key → the file (or environment variable) that set it.
    pub(super) origins: BTreeMap<String, String>,
    pub(super) warnings: Vec<String>,
    /// The files read, in merge order.
    pub(super) files: Vec<PathBuf>,
    /// Every file's hooks, in load order.
    pub(super) hooks: HooksConfig,
    pub(super) workspace_trust: WorkspaceTrust,
    /// How many files were judged as the workspace's (its `pith.toml`, a `--config` inside it).
    workspace_files: usize,
    /// The one model of the last `[model."p/m"]` table, and its file: the default when nothing
    /// sets `model`.
    implied_model: Option<(String, String)>,
    /// A file whose `[model]` table lists several models, and how many.
    ambiguous_alias: Option<(PathBuf, usize)>,
}

impl Merged {
    /// The built-in providers, then the files in order: the global file, `<workspace>/pith.toml`
    /// and the `--config` / `PITH_CONFIG` file (which must exist).
    pub(super) fn read_files(
        opts: &LoadOptions,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Merged, ConfigError> {
        let explicit = opts.config_file.clone().or_else(|| {
            env(ENV_CONFIG)
                .filter(|v| !v.trim().is_empty())
                .map(PathBuf::from)
        });
        let workspace_file = opts.workspace.join("pith.toml");
        let sources = [
            (opts.global_file.clone().or_else(default_global_file), false),
            (Some(workspace_file.clone()), false),
            (explicit, true),
        ];
        let mut merged = Merged::builtins()?;
        let mut seen = HashSet::new();
        let mut texts = Vec::new();
        for (path, required) in sources {
            let Some(path) = path else { continue };
            let Some(text) = read_source(&path, required)? else {
                continue;
            };
            if seen.insert(path.canonicalize().unwrap_or_else(|_| path.clone())) {
                texts.push((path, text));
            }
        }
        for (i, (path, text)) in texts.iter().enumerate() {
            let (path, text) = (path.clone(), text.as_str());
            let context = check_context(&merged.table, &texts[i + 1..]);
            // A `--config` file kept where commands write (the workspace, `sandbox_writable`)
            // is judged like the workspace's own file: a command could have written it.
            let layer =
                if path == workspace_file || writable_by_commands(opts, &merged.table, &path) {
                    match merged.workspace_layer(opts, &path, text, &context)? {
                        Some(layer) => layer,
                        None => continue,
                    }
                } else {
                    parse_file(&path, text, &context, &mut merged.warnings)?
                };
            merged.add(path, layer)?;
        }
        Ok(merged)
    }

    /// Only the built-in providers.
    fn builtins() -> Result<Merged, ConfigError> {
        let builtins =
            toml::Value::try_from(builtin_providers()).map_err(|e| ConfigError::Invalid {
                message: one_line(&e.to_string()),
            })?;
        Ok(Merged {
            table: toml::Table::from_iter([("provider".to_string(), builtins)]),
            origins: BTreeMap::new(),
            warnings: Vec::new(),
            files: Vec::new(),
            hooks: HooksConfig::default(),
            workspace_trust: WorkspaceTrust::default(),
            workspace_files: 0,
            implied_model: None,
            ambiguous_alias: None,
        })
    }

    /// The workspace's own file, as far as its trust allows (`None`: left out).
    fn workspace_layer(
        &mut self,
        opts: &LoadOptions,
        path: &Path,
        text: &str,
        context: &toml::Table,
    ) -> Result<Option<FileLayer>, ConfigError> {
        let (layer, trust) =
            workspace::layer(opts, path, text, &self.table, context, &mut self.warnings)?;
        if let Some(w) = workspace::untrusted_warning(path, &trust) {
            self.warnings.push(w);
        }
        // Two such files: the workspace is trusted as far as both are.
        let t = &mut self.workspace_trust;
        if self.workspace_files == 0 {
            *t = trust;
        } else {
            t.trusted &= trust.trusted;
            t.listed &= trust.listed;
            t.newer_than_listing |= trust.newer_than_listing;
            t.ignored.extend(trust.ignored);
        }
        self.workspace_files += 1;
        Ok(layer)
    }

    /// Merges one file's layer over what came before.
    fn add(&mut self, path: PathBuf, mut layer: FileLayer) -> Result<(), ConfigError> {
        let origin = path.display().to_string();
        // Hooks add up across files (each remembers its own) instead of replacing each other.
        if let Some(value) = layer.table.remove("hooks") {
            self.add_hooks(value, &path, &origin)?;
        }
        record_origins(&layer.table, "", &origin, &mut self.origins);
        deep_merge(&mut self.table, layer.table);
        match layer.alias_models.as_slice() {
            [only] => self.implied_model = Some((only.clone(), origin)),
            [] => {}
            many => self.ambiguous_alias = Some((path.clone(), many.len())),
        }
        tracing::debug!(file = %path.display(), "config file read");
        self.files.push(path);
        Ok(())
    }

    /// One file's `[[hooks.EVENT]]` after those of the files before; each event's origin lists
    /// every file that added to it.
    fn add_hooks(
        &mut self,
        value: toml::Value,
        path: &Path,
        origin: &str,
    ) -> Result<(), ConfigError> {
        let file_hooks: HooksConfig =
            value
                .try_into()
                .map_err(|e: toml::de::Error| ConfigError::File {
                    path: path.to_path_buf(),
                    message: one_line(e.message()),
                })?;
        for (event, _) in file_hooks.iter() {
            let key = format!("hooks.{}", event.key());
            let from = match self.origins.get(&key) {
                Some(before) if before != origin => format!("{before}, {origin}"),
                _ => origin.to_string(),
            };
            self.origins.insert(key, from);
        }
        self.hooks.append(file_hooks, path);
        Ok(())
    }

    /// With no `model` set anywhere, the one model of a `[model."p/m"]` table is the default (a
    /// table listing several gets a warning instead).
    pub(super) fn imply_model(&mut self) {
        if self.table.contains_key("model") {
            return;
        }
        if let Some((model, origin)) = self.implied_model.take() {
            self.table
                .insert("model".to_string(), toml::Value::String(model));
            self.origins.insert("model".to_string(), origin);
        } else if let Some((path, n)) = &self.ambiguous_alias {
            self.warnings.push(format!(
                "{}: [model] lists {n} models and no default is set; add model = \"provider/model\"",
                path.display()
            ));
        }
    }

    /// The merged values as a `Config`, with every file's hooks.
    pub(super) fn config(&mut self) -> Result<Config, ConfigError> {
        let table = std::mem::take(&mut self.table);
        let mut config: Config =
            toml::Value::Table(table)
                .try_into()
                .map_err(|e: toml::de::Error| ConfigError::Invalid {
                    message: one_line(e.message()),
                })?;
        // Each file was checked with the others' servers beneath its own; what the merge made
        // is checked too (a file left out may have held the rest of a server).
        for (name, server) in &config.mcp {
            crate::mcp::check_server(name, server)
                .map_err(|(_, message)| ConfigError::Invalid { message })?;
        }
        config.hooks = std::mem::take(&mut self.hooks);
        Ok(config)
    }
}

/// A config file's text; `None` when a file that need not exist does not.
fn read_source(path: &Path, required: bool) -> Result<Option<String>, ConfigError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !required => Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(ConfigError::File {
            path: path.to_path_buf(),
            message: "config file not found".to_string(),
        }),
        Err(e) => Err(ConfigError::File {
            path: path.to_path_buf(),
            message: format!("cannot read config file: {}", one_line(&e.to_string())),
        }),
    }
}

/// Whether `path` lies where commands may write: the workspace, or a `sandbox_writable`
/// folder of the configuration so far.
fn writable_by_commands(opts: &LoadOptions, merged: &toml::Table, path: &Path) -> bool {
    let real = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let file = real(path);
    let extra = merged
        .get("sandbox_writable")
        .and_then(toml::Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(toml::Value::as_str)
        .map(|d| match (d.strip_prefix("~/"), std::env::var_os("HOME")) {
            (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
            _ => PathBuf::from(d),
        });
    std::iter::once(opts.workspace.clone())
        .chain(extra)
        .any(|root| root.is_absolute() && file.starts_with(real(&root)))
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

/// What a file's `[mcp.NAME]` tables are checked over: the servers of the files merged before
/// it, and of the files after it (a partial table may complete a server defined later, as in
/// the `--config` file read after the workspace's).
fn check_context(below: &toml::Table, later: &[(PathBuf, String)]) -> toml::Table {
    let mut context = toml::Table::new();
    if let Some(mcp) = below.get("mcp") {
        context.insert("mcp".into(), mcp.clone());
    }
    for (_, text) in later {
        let Ok(mut file) = toml::from_str::<toml::Table>(text) else {
            continue;
        };
        if let Some(toml::Value::Table(mcp)) = file.remove("mcp") {
            deep_merge(
                &mut context,
                toml::Table::from_iter([("mcp".into(), mcp.into())]),
            );
        }
    }
    context
}

/// Merges `over` into `base`: tables key by key, anything else replaced.
pub(super) fn deep_merge(base: &mut toml::Table, over: toml::Table) {
    for (k, v) in over {
        match (base.get_mut(&k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => deep_merge(b, o),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}
