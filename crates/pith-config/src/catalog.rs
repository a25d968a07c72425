//! The built-in model catalog (assets/models.toml): limits and prices of well-known models, and
//! [`resolve`], which finds the figures for a "provider/model" name.

use std::collections::{BTreeMap, HashSet};
use std::sync::LazyLock;

use super::{Config, ModelConfig};

/// Context window assumed for a model nobody knows.
pub(crate) const DEFAULT_CONTEXT: u64 = 32_000;
/// Output limit assumed for a model nobody knows.
pub(crate) const DEFAULT_OUTPUT: u64 = 4_096;

const CATALOG_TOML: &str = include_str!("../../../assets/models.toml");

/// provider section → model id → figures.
type Catalog = BTreeMap<String, BTreeMap<String, ModelConfig>>;

static CATALOG: LazyLock<Catalog> = LazyLock::new(|| match parse_catalog() {
    Ok(c) => c,
    Err(e) => {
        // Guarded by a unit test; never fatal at run time.
        tracing::error!(error = %e, "built-in model catalog does not parse");
        Catalog::new()
    }
});

fn parse_catalog() -> Result<Catalog, toml::de::Error> {
    toml::from_str(CATALOG_TOML)
}

/// The figures for one model and, when they are guesses, a warning for the user.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    pub info: ModelConfig,
    pub warning: Option<String>,
    /// The context window is not known from the config or the catalog (a default guess, or 0):
    /// a local server may be asked for it, and a window learned from a server replaces it.
    pub window_guessed: bool,
}

/// A catalog entry: its provider section, model id and figures.
#[derive(Debug, Clone, Copy)]
pub struct CatalogEntry {
    pub provider: &'static str,
    pub id: &'static str,
    pub info: &'static ModelConfig,
}

/// Every catalog entry, by provider then id.
pub fn entries() -> impl Iterator<Item = CatalogEntry> {
    CATALOG.iter().flat_map(|(provider, models)| {
        models.iter().map(move |(id, info)| CatalogEntry {
            provider: provider.as_str(),
            id: id.as_str(),
            info,
        })
    })
}

/// Finds a model in the catalog: `provider/id` exactly, then the id alone, then its last path
/// segment (`openrouter/anthropic/claude-sonnet-4-5`), each also with dates, `-latest`, `:tags`
/// and `.`/`-` spelling differences ignored (`claude-sonnet-4.5`, `gpt-4o-2024-08-06`).
pub fn lookup(model: &str) -> Option<CatalogEntry> {
    let (provider, id) = match pith_protocol::model_name::split(model) {
        Some((p, rest)) => (Some(p), rest),
        None => (None, model),
    };
    let last = id.rsplit('/').next().unwrap_or(id);
    let exact = |name: &str| {
        let mut found = entries().filter(|e| e.id == name);
        let first = found.next()?;
        Some(
            std::iter::once(first)
                .chain(found)
                .find(|e| Some(e.provider) == provider)
                .unwrap_or(first),
        )
    };
    let fuzzy = |name: &str| {
        let norm = normalize(name);
        entries().find(|e| normalize(e.id) == norm)
    };
    exact(id)
        .or_else(|| exact(last))
        .or_else(|| fuzzy(id))
        .or_else(|| fuzzy(last))
}

/// The limits and prices to use for `model` ("provider/model"): `[models."provider/model"]` from
/// the config first (gaps in it filled from the catalog), else the catalog, else conservative
/// defaults with a warning.
pub fn resolve(config: &Config, model: &str) -> Resolved {
    if let Some(own) = config.models.get(model) {
        let mut info = own.clone();
        let known = lookup(model);
        if let Some(entry) = known {
            if info.context == 0 {
                info.context = entry.info.context;
                if info.input.is_none() {
                    info.input = entry.info.input;
                }
            }
            if info.output == 0 {
                info.output = entry.info.output;
            }
        }
        let mut warning = None;
        if info.context == 0 {
            warning = Some(format!(
                "[models.\"{model}\"] sets no context size: automatic compaction is off for it; set context"
            ));
        }
        if info.output == 0 {
            info.output = DEFAULT_OUTPUT;
        }
        let window_guessed = info.context == 0;
        return Resolved {
            info,
            warning,
            window_guessed,
        };
    }
    if let Some(entry) = lookup(model) {
        return Resolved {
            info: entry.info.clone(),
            warning: None,
            window_guessed: false,
        };
    }
    Resolved {
        info: ModelConfig {
            context: DEFAULT_CONTEXT,
            output: DEFAULT_OUTPUT,
            ..ModelConfig::default()
        },
        warning: Some(format!(
            "unknown model \"{model}\": assuming a 32k context window; set [models.\"{model}\"] context/output in the config"
        )),
        window_guessed: true,
    }
}

/// Model names for the model picker: the default model, the config's `[models]`, then every
/// catalog model whose provider is configured, without duplicates.
pub fn known_models(config: &Config) -> Vec<String> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    let mut add = |name: String| {
        if seen.insert(name.clone()) {
            out.push(name);
        }
    };
    if let Some(model) = &config.model {
        add(model.clone());
    }
    for name in config.models.keys() {
        add(name.clone());
    }
    for entry in entries() {
        if config.provider.is_empty() || config.provider.contains_key(entry.provider) {
            add(format!("{}/{}", entry.provider, entry.id));
        }
    }
    out
}

/// Does a model take images? `configured` is what the config (or the catalog) says
/// (`images`); without it, a provider whose models all do (`provider_default`: Anthropic's
/// wire), else the model id's family. The engine and the TUI ask the same question here.
pub fn takes_images(configured: Option<bool>, provider_default: bool, model_id: &str) -> bool {
    configured.unwrap_or_else(|| {
        let id = model_id.to_ascii_lowercase();
        provider_default
            || [
                "gpt-4o", "gpt-4.1", "gpt-5", "o3", "o4", "vision", "claude", "gemini",
            ]
            .iter()
            .any(|k| id.contains(k))
    })
}

/// [`takes_images`] for a "provider/model" name of `config` (what a front end without an
/// engine's model can ask).
pub fn model_takes_images(config: &Config, name: &str) -> bool {
    let Some((provider, model_id)) = pith_protocol::model_name::split(name) else {
        return false;
    };
    let anthropic = config
        .provider
        .get(provider)
        .is_some_and(|p| p.kind == super::ProviderKind::Anthropic);
    takes_images(resolve(config, name).info.images, anthropic, model_id)
}

/// Lower case, `:tag` and `-latest` dropped, dates dropped, `.` spelled `-`.
fn normalize(id: &str) -> String {
    let mut s = id.to_ascii_lowercase();
    if let Some(i) = s.find(':') {
        s.truncate(i);
    }
    if let Some(stripped) = s.strip_suffix("-latest") {
        s = stripped.to_string();
    }
    // -20250929
    if let Some(i) = s.rfind('-') {
        let tail = &s[i + 1..];
        if tail.len() == 8 && tail.bytes().all(|b| b.is_ascii_digit()) {
            s.truncate(i);
        }
    }
    // -2024-08-06
    if s.len() > 11 {
        let i = s.len() - 11;
        let tail = s.as_bytes();
        let is_date = tail[i] == b'-'
            && tail[i + 5] == b'-'
            && tail[i + 8] == b'-'
            && [1, 2, 3, 4, 6, 7, 9, 10]
                .iter()
                .all(|&k| tail[i + k].is_ascii_digit());
        if is_date {
            s.truncate(i);
        }
    }
    s.replace('.', "-")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalog_parses_and_has_the_promised_models() {
        let catalog = parse_catalog().expect("assets/models.toml parses");
        let want = [
            ("openai", "gpt-4.1"),
            ("openai", "gpt-4.1-mini"),
            ("openai", "gpt-4.1-nano"),
            ("openai", "gpt-4o"),
            ("openai", "gpt-4o-mini"),
            ("openai", "o3"),
            ("openai", "o4-mini"),
            ("openai", "gpt-5"),
            ("openai", "gpt-5-mini"),
            ("openai", "gpt-5-nano"),
            ("anthropic", "claude-opus-4-1"),
            ("anthropic", "claude-opus-4-5"),
            ("anthropic", "claude-sonnet-4-5"),
            ("anthropic", "claude-sonnet-4"),
            ("anthropic", "claude-haiku-4-5"),
            ("anthropic", "claude-3-5-haiku"),
        ];
        for (p, id) in want {
            let m = &catalog[p][id];
            assert!(m.context >= 100_000, "{p}/{id}");
            assert!(m.output > 0 && m.output < m.context, "{p}/{id}");
            assert!(
                m.cost_input > 0.0 && m.cost_output > m.cost_input,
                "{p}/{id}"
            );
            assert!(
                m.cost_cache_read.is_some_and(|c| c < m.cost_input),
                "{p}/{id}"
            );
            if let Some(input) = m.input {
                assert!(input + m.output <= m.context, "{p}/{id}");
            }
        }
        assert_eq!(entries().count(), want.len());
    }

    #[test]
    fn which_models_take_images() {
        let mut config = Config::default();
        assert!(model_takes_images(&config, "openai/gpt-4.1"));
        assert!(!model_takes_images(&config, "ollama/qwen3-coder"));
        assert!(!model_takes_images(&config, "no-slash"));
        config.models.insert(
            "ollama/llava".into(),
            ModelConfig {
                images: Some(true),
                ..ModelConfig::default()
            },
        );
        config.models.insert(
            "openai/gpt-4o".into(),
            ModelConfig {
                images: Some(false),
                ..ModelConfig::default()
            },
        );
        assert!(
            model_takes_images(&config, "ollama/llava"),
            "the config says"
        );
        assert!(
            !model_takes_images(&config, "openai/gpt-4o"),
            "the config wins"
        );
        assert!(takes_images(None, true, "some-model"), "Anthropic's wire");
    }

    #[test]
    fn resolves_from_the_catalog() {
        let config = Config::default();
        let r = resolve(&config, "openai/gpt-4.1");
        assert_eq!(r.warning, None);
        assert_eq!(r.info.context, 1_047_576);
        assert_eq!(r.info.cost_input, 2.0);
        let r = resolve(&config, "anthropic/claude-sonnet-4-5");
        assert_eq!((r.info.context, r.info.output), (200_000, 64_000));
        assert_eq!(r.info.cost_cache_write, Some(3.75));
        assert_eq!(resolve(&config, "openai/gpt-5").info.input, Some(272_000));
    }

    #[test]
    fn resolves_by_last_segment_and_spelling_variants() {
        let config = Config::default();
        let sonnet = resolve(&config, "anthropic/claude-sonnet-4-5").info;
        for name in [
            "openrouter/anthropic/claude-sonnet-4-5",
            "openrouter/anthropic/claude-sonnet-4.5",
            "anthropic/claude-sonnet-4-5-20250929",
            "claude-sonnet-4-5",
        ] {
            let r = resolve(&config, name);
            assert_eq!(r.warning, None, "{name}");
            assert_eq!(r.info, sonnet, "{name}");
        }
        assert_eq!(
            resolve(&config, "openai/gpt-4o-2024-08-06").info.context,
            128_000
        );
        assert_eq!(
            resolve(&config, "anthropic/claude-3-5-haiku-latest")
                .info
                .output,
            8192
        );
        // gpt-4.1-mini must not be mistaken for gpt-4.1.
        assert_eq!(
            resolve(&config, "openrouter/openai/gpt-4.1-mini")
                .info
                .cost_input,
            0.40
        );
    }

    #[test]
    fn config_entry_wins_and_gaps_are_filled() {
        let mut config = Config::default();
        config.models.insert(
            "openai/gpt-4.1".into(),
            ModelConfig {
                context: 100_000,
                cost_input: 1.0,
                ..ModelConfig::default()
            },
        );
        let r = resolve(&config, "openai/gpt-4.1");
        assert_eq!(r.warning, None);
        assert_eq!(r.info.context, 100_000);
        assert_eq!(r.info.output, 32_768); // from the catalog
        assert_eq!(r.info.cost_input, 1.0);

        config.models.insert(
            "ollama/qwen2.5-coder".into(),
            ModelConfig {
                context: 65_536,
                output: 8192,
                ..ModelConfig::default()
            },
        );
        let r = resolve(&config, "ollama/qwen2.5-coder");
        assert_eq!(
            (r.info.context, r.info.output, r.warning),
            (65_536, 8192, None)
        );

        config
            .models
            .insert("ollama/tiny".into(), ModelConfig::default());
        let r = resolve(&config, "ollama/tiny");
        assert_eq!(r.info.context, 0);
        assert_eq!(r.info.output, DEFAULT_OUTPUT);
        assert!(r.warning.unwrap().contains("automatic compaction is off"));
    }

    #[test]
    fn unknown_model_gets_defaults_and_a_warning() {
        let r = resolve(&Config::default(), "ollama/mystery-7b");
        assert_eq!(r.info.context, DEFAULT_CONTEXT);
        assert_eq!(r.info.output, DEFAULT_OUTPUT);
        assert_eq!(r.info.cost_input, 0.0);
        assert_eq!(
            r.warning.as_deref(),
            Some(
                "unknown model \"ollama/mystery-7b\": assuming a 32k context window; set [models.\"ollama/mystery-7b\"] context/output in the config"
            )
        );
    }

    #[test]
    fn known_models_lists_config_then_catalog() {
        let mut config = Config {
            model: Some("ollama/qwen2.5-coder".into()),
            ..Config::default()
        };
        config
            .models
            .insert("ollama/qwen2.5-coder".into(), ModelConfig::default());
        config
            .models
            .insert("llamacpp/local".into(), ModelConfig::default());
        let all = known_models(&config);
        assert_eq!(all[0], "ollama/qwen2.5-coder");
        assert_eq!(all[1], "llamacpp/local");
        assert!(all.contains(&"anthropic/claude-opus-4-5".to_string()));
        assert!(all.contains(&"openai/o3".to_string()));
        assert_eq!(all.len(), 2 + entries().count());

        // Only providers the config knows.
        let mut only_openai = config.clone();
        only_openai.provider.insert(
            "openai".into(),
            crate::ProviderConfig {
                kind: crate::ProviderKind::Openai,
                base_url: "https://api.openai.com/v1".into(),
                api_key_env: None,
                headers: BTreeMap::new(),
                ..Default::default()
            },
        );
        let some = known_models(&only_openai);
        assert!(some.contains(&"openai/gpt-5".to_string()));
        assert!(!some.iter().any(|m| m.starts_with("anthropic/")));
    }

    #[test]
    fn normalize_handles_dates_tags_and_dots() {
        assert_eq!(normalize("claude-sonnet-4-5-20250929"), "claude-sonnet-4-5");
        assert_eq!(normalize("gpt-4o-2024-08-06"), "gpt-4o");
        assert_eq!(normalize("Claude-3.5-Haiku-latest"), "claude-3-5-haiku");
        assert_eq!(normalize("qwen2.5-coder:7b"), "qwen2-5-coder");
        assert_eq!(normalize("o3"), "o3");
        assert_eq!(normalize("gpt-4.1"), "gpt-4-1");
    }
}
