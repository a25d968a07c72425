//! What an untrusted file sets that would stop pith later: a `model` whose provider is not
//! configured (an untrusted file cannot add one) or has no key, or model limits that contradict
//! the user's own. Such keys are left out and named in the file's warning, so a repository's `pith.toml`
//! never keeps pith from starting, whatever it holds.

use super::join_key;

/// Removes from `layer` (an untrusted file, already reduced to its harmless keys) the values
/// that could not be used with `merged` (the user's configuration so far); names them in
/// `ignored`.
pub(super) fn drop_unusable(
    layer: &mut toml::Table,
    merged: &toml::Table,
    has_key: Option<fn(&str, &crate::ProviderConfig) -> bool>,
    ignored: &mut Vec<String>,
) {
    let known = |model: &str| {
        let Some((provider, _)) = pith_protocol::model_name::split(model) else {
            return false;
        };
        let Some(section) = merged
            .get("provider")
            .and_then(toml::Value::as_table)
            .and_then(|p| p.get(provider))
        else {
            return false;
        };
        let keyed = || match (has_key, section.clone().try_into()) {
            (Some(check), Ok(config)) => check(provider, &config),
            _ => true,
        };
        super::check_model_name(model).is_ok() && keyed()
    };
    match layer.get_mut("model") {
        Some(toml::Value::String(model)) if !known(model) => {
            ignored.push(format!(
                "model (\"{}\": no such provider, or it has no key)",
                short(model)
            ));
            layer.remove("model");
        }
        // `[model."provider/model"]`: an alias of `[models]`, and the default model
        Some(toml::Value::Table(alias)) => {
            let names: Vec<String> = alias.keys().cloned().collect();
            for name in names.into_iter().filter(|n| !known(n)) {
                alias.remove(&name);
                ignored.push(format!(
                    "model.\"{}\" (no such provider, or it has no key)",
                    short(&name)
                ));
            }
        }
        _ => {}
    }
    let Some(toml::Value::Table(models)) = layer.get_mut("models") else {
        return;
    };
    let before = merged.get("models").and_then(toml::Value::as_table);
    let names: Vec<String> = models.keys().cloned().collect();
    for name in names {
        let limit = |key: &str, table: Option<&toml::Value>| {
            table
                .and_then(|t| t.get(key))
                .and_then(toml::Value::as_integer)
        };
        let here = models.get(&name);
        let there = before.and_then(|b| b.get(&name));
        let context = limit("context", here).or(limit("context", there));
        let output = limit("output", here).or(limit("output", there));
        if let (Some(context), Some(output)) = (context, output)
            && context > 0
            && output >= context
        {
            models.remove(&name);
            ignored.push(join_key("models", &format!("\"{}\"", short(&name))));
        }
    }
}

/// An untrusted value as it may be quoted in a warning: one line, at most 60 characters.
fn short(s: &str) -> String {
    let one: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(60)
        .collect();
    if s.chars().count() > 60 {
        format!("{one}…")
    } else {
        one
    }
}
