//! The checks of one file's settings, table by table. Each problem carries the span of the key it
//! is about, so the error names the file, line and column.

use std::ops::Range;
use std::path::Path;

use toml::de::{DeTable, DeValue};

use super::{check_model_name, is_env_name, line_col};
use crate::{Config, ProviderConfig};
use pith_protocol::text::one_line;

/// The most a provider timeout or retry wait may be set to, in seconds.
const MAX_TIMEOUT_SECS: u64 = crate::MAX_TIMEOUT_SECS;
/// The most retries a provider may be set to.
const MAX_RETRIES: u64 = 20;

/// A problem at a place in the file: the byte span it is about and what is wrong.
pub(super) struct Problem {
    pub(super) span: Range<usize>,
    pub(super) message: String,
}

impl Problem {
    fn new(span: Range<usize>, message: impl Into<String>) -> Problem {
        Problem {
            span,
            message: message.into(),
        }
    }
}

/// Every check of one file, in order: the first problem found is the one reported.
pub(super) fn check_config(config: &Config, root: &DeTable<'_>) -> Result<(), Problem> {
    check_model(config, root)?;
    check_compaction(config, root)?;
    check_goal(config, root)?;
    check_tool_output(config, root)?;
    check_models(config, root)?;
    check_permission(config, root)?;
    check_max_steps(config, root)?;
    check_sandbox_caps(config, root)?;
    for (name, provider) in &config.provider {
        check_provider(name, provider, root)?;
    }
    check_mcp(config, root)?;
    check_hooks(config, root)?;
    check_ui(config, root)?;
    check_tool_search(config, root)?;
    check_websearch(config, root)
}

/// `[websearch]`: a backend with what it needs.
fn check_websearch(config: &Config, root: &DeTable<'_>) -> Result<(), Problem> {
    config
        .websearch
        .check()
        .map_err(|(key, message)| Problem::new(span_at(root, &["websearch", key]), message))
}

/// `model`.
fn check_model(config: &Config, root: &DeTable<'_>) -> Result<(), Problem> {
    if let Some(model) = &config.model {
        check_model_name(model)
            .map_err(|e| Problem::new(span_at(root, &["model"]), e.to_string()))?;
    }
    Ok(())
}

/// `[compaction]`: its model, threshold, background share and notice point.
fn check_compaction(config: &Config, root: &DeTable<'_>) -> Result<(), Problem> {
    let span_of = |key: &str| span_at(root, &["compaction", key]);
    if let Some(model) = &config.compaction.model {
        check_model_name(model)
            .map_err(|e| Problem::new(span_of("model"), format!("compaction.{e}")))?;
    }
    if let Some(t) = config.compaction.threshold
        && !(t > 0.0 && t <= 1.0)
    {
        return Err(Problem::new(
            span_of("threshold"),
            format!("compaction.threshold must be in (0, 1], got {t}"),
        ));
    }
    if let Some(b) = config.compaction.background
        && !(0.0..1.0).contains(&b)
    {
        return Err(Problem::new(
            span_of("background"),
            format!("compaction.background must be in [0, 1) (0: never), got {b}"),
        ));
    }
    if let Some(n) = config.compaction.notice
        && !(0.0..1.0).contains(&n)
    {
        return Err(Problem::new(
            span_of("notice"),
            format!("compaction.notice must be in [0, 1) (0: never), got {n}"),
        ));
    }
    Ok(())
}

/// `[tool_output]`: both limits at least 1.
fn check_tool_output(config: &Config, root: &DeTable<'_>) -> Result<(), Problem> {
    for (key, value) in [
        ("max_lines", config.tool_output.max_lines),
        ("max_bytes", config.tool_output.max_bytes),
    ] {
        if value == 0 {
            return Err(Problem::new(
                span_at(root, &["tool_output", key]),
                format!("tool_output.{key} must be at least 1"),
            ));
        }
    }
    Ok(())
}

/// `[models."p/m"]`: the output and input limits fit in the context window.
fn check_models(config: &Config, root: &DeTable<'_>) -> Result<(), Problem> {
    for (name, model) in &config.models {
        if model.context > 0 && model.output >= model.context {
            return Err(Problem::new(
                span_at(root, &["models", name, "output"]),
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
            return Err(Problem::new(
                span_at(root, &["models", name, "input"]),
                format!(
                    "models.\"{name}\".input ({input}) must not be more than its context ({})",
                    model.context
                ),
            ));
        }
    }
    Ok(())
}

/// `[permission]`: every pattern is a valid glob.
fn check_permission(config: &Config, root: &DeTable<'_>) -> Result<(), Problem> {
    for (tool, setting) in &config.permission {
        let crate::PermissionSetting::Patterns(patterns) = setting else {
            continue;
        };
        for pattern in patterns.keys() {
            if let Err(e) = crate::permission_glob(pattern) {
                return Err(Problem::new(
                    span_at(root, &["permission", tool, pattern]),
                    format!(
                        "permission.{tool}: \"{pattern}\" is not a valid pattern: {}",
                        glob_error(&e)
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// `max_steps`.
fn check_max_steps(config: &Config, root: &DeTable<'_>) -> Result<(), Problem> {
    if config.max_steps == 0 {
        return Err(Problem::new(
            span_at(root, &["max_steps"]),
            "max_steps must be at least 1",
        ));
    }
    Ok(())
}

/// `sandbox_max_processes`, `sandbox_memory_max`, `sandbox_tmp_size`: a cap no command could
/// run under is a mistake, said where it is.
fn check_sandbox_caps(config: &Config, root: &DeTable<'_>) -> Result<(), Problem> {
    let caps = [
        (
            "sandbox_max_processes",
            Some(config.sandbox_max_processes),
            8,
            "8",
        ),
        (
            "sandbox_memory_max",
            config.sandbox_memory_max,
            16 << 20,
            "16 MiB (16777216)",
        ),
        (
            "sandbox_tmp_size",
            config.sandbox_tmp_size,
            1 << 20,
            "1 MiB (1048576)",
        ),
    ];
    for (key, value, least, said) in caps {
        if value.is_some_and(|v| v < least) {
            return Err(Problem::new(
                span_at(root, &[key]),
                format!("{key} must be at least {said}"),
            ));
        }
    }
    Ok(())
}

/// `[provider.NAME]`: its URL, timeouts and retries, and the key variable's name.
fn check_provider(
    name: &str,
    provider: &ProviderConfig,
    root: &DeTable<'_>,
) -> Result<(), Problem> {
    let url = provider.base_url.trim();
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(Problem::new(
            span_at(root, &["provider", name, "base_url"]),
            format!(
                "provider.{name}.base_url must start with http:// or https://, got \"{}\"",
                provider.base_url
            ),
        ));
    }
    check_provider_limits(name, provider, root)?;
    if let Some(var) = &provider.api_key_env
        && !var.is_empty()
        && !is_env_name(var)
    {
        // Never echo the value: it is probably the key itself.
        return Err(Problem::new(
            span_at(root, &["provider", name, "api_key_env"]),
            format!(
                "provider.{name}.api_key_env must name an environment variable (like OPENAI_API_KEY), not hold the key"
            ),
        ));
    }
    Ok(())
}

/// A provider's timeouts (at least a second) and retries, each within its bound.
fn check_provider_limits(
    name: &str,
    provider: &ProviderConfig,
    root: &DeTable<'_>,
) -> Result<(), Problem> {
    let span_of = |key: &str| span_at(root, &["provider", name, key]);
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
            let mut span = span_of(key);
            let mut shown = key;
            if key == "first_byte_timeout_secs"
                && span_of("timeout_secs") != span_at(root, &["provider", name])
            {
                span = span_of("timeout_secs");
                shown = "timeout_secs";
            }
            return Err(Problem::new(
                span,
                format!("provider.{name}.{shown} must be between {min} and {max}, got {v}"),
            ));
        }
    }
    Ok(())
}

/// `[mcp.NAME]`: every server entry.
fn check_mcp(config: &Config, root: &DeTable<'_>) -> Result<(), Problem> {
    for (name, server) in &config.mcp {
        crate::mcp::check_server(name, server).map_err(|(keys, message)| {
            let mut path = vec!["mcp", name.as_str()];
            path.extend(keys);
            Problem::new(span_at(root, &path), message)
        })?;
    }
    Ok(())
}

/// `[[hooks.EVENT]]`: every hook of every event.
fn check_hooks(config: &Config, root: &DeTable<'_>) -> Result<(), Problem> {
    for event in crate::HookEvent::all() {
        for (i, hook) in config.hooks.get(event).iter().enumerate() {
            crate::hooks::check_hook(event, hook).map_err(|(key, message)| {
                Problem::new(hook_span(root, event.key(), i, key), message)
            })?;
        }
    }
    Ok(())
}

/// `theme` and `[keys]`.
fn check_ui(config: &Config, root: &DeTable<'_>) -> Result<(), Problem> {
    use crate::keys::{Keymap, KeymapError};
    if let Some(theme) = &config.theme
        && !crate::ui::valid_theme_name(theme)
    {
        return Err(Problem::new(
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
    Err(Problem::new(
        span.unwrap_or_else(|| span_at(root, &["keys"])),
        e.to_string(),
    ))
}

/// `[tool_search]`: its threshold.
fn check_tool_search(config: &Config, root: &DeTable<'_>) -> Result<(), Problem> {
    let t = config.tool_search.threshold;
    if !(t > 0.0 && t <= 1.0) {
        return Err(Problem::new(
            span_at(root, &["tool_search", "threshold"]),
            format!("tool_search.threshold must be in (0, 1], got {t}"),
        ));
    }
    Ok(())
}

/// A warning for each `[models.NAME]` not named `provider/model`.
pub(super) fn warn_unqualified_models(
    config: &Config,
    root: &DeTable<'_>,
    path: &Path,
    text: &str,
    warnings: &mut Vec<String>,
) {
    for name in config.models.keys() {
        if !name.contains('/') {
            let (line, column) = line_col(text, span_at(root, &["models", name]).start);
            warnings.push(format!(
                "{}:{line}:{column}: [models.\"{name}\"] should be named \"provider/model\"",
                path.display()
            ));
        }
    }
}

/// The span of the `index`th key of `keys.NAME` (of the whole value when it is one string).
fn key_entry_span(keys: Option<&DeTable<'_>>, name: &str, index: usize) -> Option<Range<usize>> {
    keys.and_then(|t| t.get(name)).map(|v| match v.get_ref() {
        DeValue::Array(items) => items.get(index).map_or(v.span(), |i| i.span()),
        _ => v.span(),
    })
}

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

/// `[goal]`: a check that is a command, a timeout the bash tool allows, a budget of a turn at
/// least.
fn check_goal(config: &Config, root: &DeTable<'_>) -> Result<(), Problem> {
    let span_of = |key: &str| span_at(root, &["goal", key]);
    let goal = &config.goal;
    if goal.check.as_deref().is_some_and(|c| c.trim().is_empty()) {
        return Err(Problem::new(
            span_of("check"),
            "goal.check is empty; leave it out to have the model judge the goal".to_string(),
        ));
    }
    if !(1..=600).contains(&goal.check_timeout_secs) {
        return Err(Problem::new(
            span_of("check_timeout_secs"),
            format!(
                "goal.check_timeout_secs must be 1 to 600, got {}",
                goal.check_timeout_secs
            ),
        ));
    }
    if goal.max_turns == 0 {
        return Err(Problem::new(
            span_of("max_turns"),
            "goal.max_turns must be at least 1".to_string(),
        ));
    }
    Ok(())
}
