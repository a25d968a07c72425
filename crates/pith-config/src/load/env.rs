//! The environment over the files: `PITH_MODEL`, `PITH_DISABLE_AUTOCOMPACT`, `PITH_DISABLE_PRUNE`.

use super::layers::Merged;
use super::{ConfigError, ENV_DISABLE_AUTOCOMPACT, ENV_DISABLE_PRUNE, ENV_MODEL, check_model_name};

/// Sets what the environment variables say over the merged files.
pub(super) fn apply(
    merged: &mut Merged,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(), ConfigError> {
    if let Some(model) = env(ENV_MODEL).filter(|v| !v.trim().is_empty()) {
        set_model(merged, model.trim())?;
    }
    for (var, key) in [
        (ENV_DISABLE_AUTOCOMPACT, "auto"),
        (ENV_DISABLE_PRUNE, "prune"),
    ] {
        if let Some(value) = env(var) {
            switch_compaction_off(merged, var, key, &value);
        }
    }
    Ok(())
}

/// `PITH_MODEL`: the model, which must be `provider/model`.
fn set_model(merged: &mut Merged, model: &str) -> Result<(), ConfigError> {
    check_model_name(model).map_err(|e| ConfigError::Env {
        var: ENV_MODEL.to_string(),
        message: e.to_string(),
    })?;
    merged
        .table
        .insert("model".to_string(), toml::Value::String(model.to_string()));
    merged
        .origins
        .insert("model".to_string(), format!("env {ENV_MODEL}"));
    Ok(())
}

/// `var` (`1`, `true`, `yes`, `on`) sets `compaction.KEY = false`; a value that is neither on nor
/// off is a warning.
fn switch_compaction_off(merged: &mut Merged, var: &str, key: &str, value: &str) {
    match value.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => {
            let compaction = merged
                .table
                .entry("compaction")
                .or_insert_with(|| toml::Value::Table(toml::Table::new()));
            if let toml::Value::Table(t) = compaction {
                t.insert(key.to_string(), toml::Value::Boolean(false));
            }
            merged
                .origins
                .insert(format!("compaction.{key}"), format!("env {var}"));
        }
        "" | "0" | "false" | "no" | "off" => {}
        other => merged.warnings.push(format!(
            "environment variable {var}={other:?} is not 1 or 0; ignored"
        )),
    }
}
