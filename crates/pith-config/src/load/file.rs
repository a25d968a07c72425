//! One config file, parsed and checked on its own (so an error names its file, line and column),
//! then turned into plain TOML for merging.

use std::borrow::Cow;
use std::ops::Range;
use std::path::Path;

use serde::Deserialize;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::check::{Problem, check_config, warn_unqualified_models};
use super::{ConfigError, builtin_providers, located};
use crate::Config;

/// One file, checked and turned into plain TOML for merging.
pub(super) struct FileLayer {
    pub(super) table: toml::Table,
    /// Model names of a `[model."p/m"]` table (the alias of `[models]`).
    pub(super) alias_models: Vec<String>,
}

/// `context`: the other files' servers (`layers::check_context`): a `[mcp.NAME]` table over
/// one of them is checked as the server the merge makes (`enabled = false` alone turns it off).
pub(super) fn parse_file(
    path: &Path,
    text: &str,
    context: &toml::Table,
    warnings: &mut Vec<String>,
) -> Result<FileLayer, ConfigError> {
    let at = |span: Range<usize>, message: String| located(path, text, span.start, &message);
    let toml_err = |e: toml::de::Error| at(e.span().unwrap_or(0..0), e.message().to_string());

    let mut root = DeTable::parse(text).map_err(toml_err)?;
    let alias_models = fold_model_alias(root.get_mut()).map_err(|p| at(p.span, p.message))?;

    let plain =
        toml::Table::deserialize(toml::de::Deserializer::from(root.clone())).map_err(toml_err)?;

    // Check the file as a whole config. Built-in providers may be partly overridden, so their
    // required keys are filled in for the check only.
    let mut check = root.clone();
    fill_builtin_providers(check.get_mut());
    let mut config = Config::deserialize(toml::de::Deserializer::from(check)).map_err(toml_err)?;
    complete_mcp_overrides(&mut config, &plain, context);

    check_config(&config, root.get_ref()).map_err(|p| at(p.span, p.message))?;
    warn_unqualified_models(&config, root.get_ref(), path, text, warnings);
    Ok(FileLayer {
        table: plain,
        alias_models,
    })
}

/// Each `[mcp.NAME]` of this file that overrides a server of the other files becomes, for the
/// check, the server the merge makes (the file's keys over theirs).
fn complete_mcp_overrides(config: &mut Config, plain: &toml::Table, context: &toml::Table) {
    let (Some(toml::Value::Table(ours)), Some(toml::Value::Table(theirs))) =
        (plain.get("mcp"), context.get("mcp"))
    else {
        return;
    };
    for (name, over) in ours {
        let (Some(toml::Value::Table(base)), toml::Value::Table(over)) = (theirs.get(name), over)
        else {
            continue;
        };
        let mut merged = base.clone();
        super::layers::deep_merge(&mut merged, over.clone());
        if let Ok(server) = toml::Value::Table(merged).try_into::<crate::McpServerConfig>() {
            config.mcp.insert(name.clone(), server);
        }
    }
}

/// Moves a `[model."provider/model"]` table (an alias of `[models."provider/model"]`) into
/// `[models]`. Returns the model names it held.
fn fold_model_alias(table: &mut DeTable<'_>) -> Result<Vec<String>, Problem> {
    if !table.get("model").is_some_and(|v| v.get_ref().is_table()) {
        return Ok(Vec::new());
    }
    let Some((key, value)) = table.remove_entry("model") else {
        return Ok(Vec::new());
    };
    let value_span = value.span();
    let DeValue::Table(alias) = value.into_inner() else {
        return Ok(Vec::new());
    };
    let alias_models = alias.keys().map(|k| k.get_ref().to_string()).collect();
    match table.get_mut("models").map(Spanned::get_mut) {
        Some(DeValue::Table(models)) => {
            for (k, v) in alias {
                if models.contains_key(k.get_ref().as_ref()) {
                    return Err(Problem {
                        span: k.span(),
                        message: format!(
                            "model \"{}\" is set in both [model] and [models]",
                            k.get_ref()
                        ),
                    });
                }
                models.insert(k, v);
            }
        }
        Some(_) => {
            return Err(Problem {
                span: key.span(),
                message: "`models` must be a table".to_string(),
            });
        }
        None => {
            table.insert(
                Spanned::new(key.span(), Cow::Borrowed("models")),
                Spanned::new(value_span, DeValue::Table(alias)),
            );
        }
    }
    Ok(alias_models)
}

/// Fills in `kind` and `base_url` of each `[provider.NAME]` that overrides a built-in provider
/// and leaves them out, so the file checks as a whole config.
fn fill_builtin_providers(root: &mut DeTable<'_>) {
    let Some(DeValue::Table(providers)) = root.get_mut("provider").map(Spanned::get_mut) else {
        return;
    };
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
