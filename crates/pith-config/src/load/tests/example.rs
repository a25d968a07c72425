//! `config.example.toml` parses and documents every key.

use super::*;

/// Keys the example documents besides those `Config::default()` serializes: settings whose
/// default is unset, and the keys of tables it gives as examples.
const EXAMPLE_ALSO_DOCUMENTS: &[&str] = &[
    "model",
    "reserved",
    "threshold",
    "background",
    "notice",
    "check",
    "preserve_recent_tokens",
    "prune_protect",
    "prune_minimum",
    "instructions",
    "kind",
    "base_url",
    "api_key_env",
    "headers",
    "max_retries",
    "connect_timeout_secs",
    "first_byte_timeout_secs",
    "idle_timeout_secs",
    "max_retry_wait_secs",
    "output_cap",
    "context",
    "input",
    "output",
    "cost_input",
    "cost_output",
    "cost_cache_read",
    "cost_cache_write",
    "thinking_budget",
    "max_tokens",
    "images",
    "instructions",
    "external_directory",
    "unsandboxed",
    "hard_link",
    "theme",
    "matcher",
    "command",
    "timeout",
    "sandbox_memory_max",
    "sandbox_tmp_size",
    "backend",
    "url",
    "key_env",
];

/// Loads `config.example.toml` as the `--config` file of an undecided workspace.
fn load_example(path: &Path) -> Loaded {
    let f = Fixture::new();
    load_with_env(
        &LoadOptions {
            workspace: f.dir.path().join("ws"),
            config_file: Some(path.to_path_buf()),
            global_file: Some(f.global_path()),
            trust: Trust::Unknown,
            data_dir: None,
            has_key: None,
        },
        &|_| None,
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

/// Every key of the config and every hook event appears in the example's `text`.
fn assert_example_documents_every_key(text: &str) {
    let mut keys = Vec::new();
    if let Ok(toml::Value::Table(t)) = toml::Value::try_from(Config::default()) {
        collect_leaves(&t, "", &mut keys);
    }
    assert!(keys.len() >= 7, "{keys:?}");
    keys.extend(EXAMPLE_ALSO_DOCUMENTS.iter().map(|k| k.to_string()));
    for key in keys {
        let last = key.rsplit('.').next().unwrap();
        assert!(
            text.contains(&format!("{last} =")) || text.contains(&format!("{last}  ")),
            "{key} undocumented"
        );
    }
    for event in crate::HookEvent::all() {
        let table = format!("[[hooks.{}]]", event.key());
        assert!(text.contains(&table), "{table} undocumented");
    }
}

#[test]
fn example_config_parses_and_documents_every_key() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../config.example.toml");
    let l = load_example(&path);
    assert!(l.warnings.is_empty(), "{:?}", l.warnings);
    // The sandbox keeps the file named with --config read-only (sandbox/paths.rs).
    assert_eq!(l.config.config_file, Some(path.canonicalize().unwrap()));
    // Copied as it is, the example starts nothing: every server in it is commented out.
    assert!(
        l.config.mcp.is_empty(),
        "the example starts MCP servers: {:?}",
        l.config.mcp.keys().collect::<Vec<_>>()
    );
    assert!(l.config.models.contains_key("ollama/qwen2.5-coder"));
    assert!(l.config.permission.contains_key("external_directory"));
    assert_eq!(
        l.config.provider["llamacpp"].base_url,
        "http://127.0.0.1:8080/v1"
    );
    // The example's values are the defaults (apart from the examples it gives).
    assert_eq!(l.config.compaction, crate::CompactionConfig::default());
    assert_eq!(l.config.tool_output, crate::ToolOutputConfig::default());
    assert_eq!(l.config.max_steps, Config::default().max_steps);
    let text = std::fs::read_to_string(&path).unwrap();
    assert_example_documents_every_key(&text);
    assert!(l.config.hooks.is_empty(), "the example runs no hook");
}
