//! How the sources layer: defaults, files in order, the environment, built-in providers
//! under the user's, origins shown by `pith config`.

use super::*;

#[test]
fn defaults_without_any_file() {
    let f = Fixture::new();
    let l = f.load().unwrap();
    assert!(l.files.is_empty());
    assert_eq!(l.config.model, None);
    assert_eq!(l.config.compaction, crate::CompactionConfig::default());
    assert_eq!(l.config.provider, builtin_providers());
    assert_eq!(l.origin("compaction.auto"), "default");
    assert_eq!(l.origin("provider.openai.base_url"), "default");
    assert_eq!(l.origins["max_steps"], "default");
    assert!(l.warnings.is_empty(), "{:?}", l.warnings);
}

#[test]
fn later_sources_win_and_tables_merge_key_by_key() {
    let f = Fixture::new()
        .global("model = \"openai/gpt-4.1\"\nmax_steps = 5\n[compaction]\nreserved = 1000\nthreshold = 0.5\n")
        .workspace("model = \"anthropic/claude-sonnet-4-5\"\n[compaction]\nauto = false\nthreshold = 0.7\n")
        .explicit("model = \"ollama/qwen2.5-coder\"\n");
    let l = f.load().unwrap();
    let (g, w, x) = (
        f.global_path().display().to_string(),
        f.workspace_path().display().to_string(),
        f.explicit.unwrap().display().to_string(),
    );
    assert_eq!(l.files.len(), 3);
    assert_eq!(l.config.model.as_deref(), Some("ollama/qwen2.5-coder"));
    assert_eq!(l.origin("model"), x);
    assert_eq!(l.config.max_steps, 5);
    assert_eq!(l.origin("max_steps"), g);
    assert_eq!(l.config.compaction.reserved, Some(1000));
    assert_eq!(l.origin("compaction.reserved"), g);
    assert_eq!(l.config.compaction.threshold, Some(0.7));
    assert_eq!(l.origin("compaction.threshold"), w);
    assert!(!l.config.compaction.auto);
    assert_eq!(l.origin("compaction.auto"), w);
    assert!(l.config.compaction.prune);
    assert_eq!(l.origin("compaction.prune"), "default");
}

#[test]
fn environment_overrides_files() {
    let f = Fixture::new()
        .workspace("model = \"openai/gpt-4.1\"\n[compaction]\nauto = true\nprune = true\n")
        .env("PITH_MODEL", "anthropic/claude-haiku-4-5")
        .env("PITH_DISABLE_AUTOCOMPACT", "1")
        .env("PITH_DISABLE_PRUNE", "true");
    let l = f.load().unwrap();
    assert_eq!(
        l.config.model.as_deref(),
        Some("anthropic/claude-haiku-4-5")
    );
    assert_eq!(l.origin("model"), "env PITH_MODEL");
    assert!(!l.config.compaction.auto);
    assert_eq!(l.origin("compaction.auto"), "env PITH_DISABLE_AUTOCOMPACT");
    assert!(!l.config.compaction.prune);
    assert_eq!(l.origin("compaction.prune"), "env PITH_DISABLE_PRUNE");

    // "0" leaves the file's value alone.
    let f = Fixture::new()
        .workspace("[compaction]\nauto = true\n")
        .env("PITH_DISABLE_AUTOCOMPACT", "0");
    assert!(f.load().unwrap().config.compaction.auto);

    let f = Fixture::new().env("PITH_MODEL", "gpt-4");
    assert_eq!(
        err_of(&f),
        "environment variable PITH_MODEL: model must be \"provider/model\", got \"gpt-4\""
    );
}

#[test]
fn pith_config_names_the_file_and_must_exist() {
    let f = Fixture::new();
    let path = f.dir.path().join("via-env.toml");
    std::fs::write(&path, "max_steps = 7\n").unwrap();
    let f = f.env("PITH_CONFIG", path.to_str().unwrap());
    let l = f.load().unwrap();
    assert_eq!(l.config.max_steps, 7);
    assert_eq!(l.files, vec![path]);

    let mut f = Fixture::new();
    f.explicit = Some(f.dir.path().join("missing.toml"));
    assert_eq!(
        err_of(&f),
        format!(
            "{}: config file not found",
            f.dir.path().join("missing.toml").display()
        )
    );
}

#[test]
fn builtin_providers_are_present_and_can_be_partly_overridden() {
    let f = Fixture::new().workspace(
        "[provider.ollama]\nbase_url = \"http://gpu:11434/v1\"\n\n[provider.openai]\nheaders = { \"OpenAI-Organization\" = \"org\" }\n\n[provider.vllm]\nkind = \"openai\"\nbase_url = \"http://box:8000/v1\"\n",
    );
    let l = f.load().unwrap();
    let p = &l.config.provider;
    assert_eq!(p["ollama"].base_url, "http://gpu:11434/v1");
    assert_eq!(p["ollama"].kind, ProviderKind::Openai);
    assert_eq!(l.origin("provider.ollama.kind"), "default");
    assert_eq!(
        l.origin("provider.ollama.base_url"),
        f.workspace_path().display().to_string()
    );
    assert_eq!(p["openai"].api_key_env.as_deref(), Some("OPENAI_API_KEY"));
    assert_eq!(p["openai"].headers["OpenAI-Organization"], "org");
    assert_eq!(p["anthropic"].kind, ProviderKind::Anthropic);
    assert_eq!(p["anthropic"].base_url, "https://api.anthropic.com");
    assert_eq!(p["openrouter"].base_url, "https://openrouter.ai/api/v1");
    assert_eq!(p["llamacpp"].base_url, "http://127.0.0.1:8080/v1");
    assert_eq!(p["llamacpp"].api_key_env, None);
    assert_eq!(p["vllm"].base_url, "http://box:8000/v1");

    // A new provider still needs its kind.
    let f = Fixture::new().workspace("[provider.box]\nbase_url = \"http://x\"\n");
    assert!(err_of(&f).contains("missing field `kind`"));
}

#[test]
fn openai_is_pointed_at_the_responses_api_by_its_kind_and_effort_is_per_model() {
    let f = Fixture::new().workspace(
        "[provider.openai]\nkind = \"responses\"\n\n[provider.local]\nkind = \"responses\"\nbase_url = \"http://127.0.0.1:8081/v1\"\nreasoning_effort = true\n\n[models.\"openai/gpt-5\"]\ncontext = 400000\nreasoning_effort = \"high\"\n",
    );
    let l = f.load().unwrap();
    let p = &l.config.provider;
    assert_eq!(p["openai"].kind, ProviderKind::Responses);
    assert_eq!(p["openai"].base_url, "https://api.openai.com/v1");
    assert_eq!(p["local"].reasoning_effort, Some(true));
    assert_eq!(
        l.config.models["openai/gpt-5"].reasoning_effort,
        Some(pith_protocol::llm::ReasoningEffort::High)
    );
    let f = Fixture::new().workspace("[models.\"a/b\"]\nreasoning_effort = \"max\"\n");
    let e = err_of(&f);
    assert!(
        e.contains("unknown variant `max`") && e.contains("`high`"),
        "{e}"
    );
}

#[test]
fn model_table_is_an_alias_of_models() {
    let f = Fixture::new()
        .workspace("[model.\"ollama/qwen2.5-coder\"]\ncontext = 32768\noutput = 8192\n");
    let l = f.load().unwrap();
    let ws = f.workspace_path().display().to_string();
    assert_eq!(l.config.models["ollama/qwen2.5-coder"].context, 32768);
    assert_eq!(l.config.model.as_deref(), Some("ollama/qwen2.5-coder"));
    assert_eq!(l.origin("model"), ws);
    assert_eq!(l.origin("models.\"ollama/qwen2.5-coder\".context"), ws);

    // A default set elsewhere wins over the implied one.
    let f = Fixture::new()
        .global("model = \"openai/gpt-4.1\"\n")
        .workspace("[model.\"ollama/qwen2.5-coder\"]\ncontext = 32768\n");
    assert_eq!(
        f.load().unwrap().config.model.as_deref(),
        Some("openai/gpt-4.1")
    );

    // Several entries: no implied default, a warning.
    let f = Fixture::new()
        .workspace("[model.\"ollama/a\"]\ncontext = 1\n[model.\"ollama/b\"]\ncontext = 2\n");
    let l = f.load().unwrap();
    assert_eq!(l.config.model, None);
    assert_eq!(l.config.models.len(), 2);
    assert!(
        l.warnings.iter().any(|w| w.contains("lists 2 models")),
        "{:?}",
        l.warnings
    );

    // Typos inside the alias are still located.
    let f = Fixture::new().workspace("[model.\"ollama/a\"]\ncontxt = 1\n");
    assert!(err_of(&f).contains(":2:1: unknown field `contxt`"));

    // Both spellings in one file merge; the same model in both is an error.
    let f = Fixture::new()
        .workspace("[model.\"ollama/a\"]\ncontext = 1\n[models.\"ollama/b\"]\ncontext = 2\n");
    assert_eq!(f.load().unwrap().config.models.len(), 2);
    let f = Fixture::new()
        .workspace("[model.\"ollama/a\"]\ncontext = 1\n[models.\"ollama/a\"]\ncontext = 2\n");
    assert!(err_of(&f).contains("is set in both [model] and [models]"));
}

#[test]
fn permissions_and_nested_origins() {
    let f = Fixture::new()
        .global("[permission]\nbash = \"ask\"\nedit = \"deny\"\n")
        .workspace("[permission.bash]\n\"git status*\" = \"allow\"\n");
    let l = f.load().unwrap();
    let ws = f.workspace_path().display().to_string();
    assert_eq!(
        l.config.permission["bash"],
        PermissionSetting::Patterns(BTreeMap::from([(
            "git status*".to_string(),
            PermissionAction::Allow
        )]))
    );
    assert_eq!(
        l.config.permission["edit"],
        PermissionSetting::Action(PermissionAction::Deny)
    );
    assert_eq!(l.origin("permission.bash.\"git status*\""), ws);
    // The replaced scalar leaves no stale origin behind.
    assert!(!l.origins.contains_key("permission.bash"));
}

#[test]
fn render_shows_origins_and_redacts_secrets() {
    let f = Fixture::new().workspace(
        "model = \"box/m\"\n[provider.box]\nkind = \"openai\"\nbase_url = \"http://box/v1\"\napi_key_env = \"BOX_KEY\"\n\
         [provider.box.headers]\nAuthorization = \"Bearer sk-very-secret\"\nX-Api-Key = \"abc-secret-1\"\nx-auth-token = \"tok-2\"\nX-Team = \"tools\"\n",
    );
    let l = f.load().unwrap();
    let ws = f.workspace_path().display().to_string();
    let out = render::render_effective(&l, &|var| var == "BOX_KEY");
    for secret in ["sk-very-secret", "abc-secret-1", "tok-2"] {
        assert!(!out.contains(secret), "{secret} leaked:\n{out}");
    }
    assert_eq!(out.matches("\"<redacted>\"").count(), 3, "{out}");
    assert!(
        out.contains(&format!("X-Team = \"tools\"  # from {ws}")),
        "{out}"
    );
    assert!(
        out.contains(&format!("model = \"box/m\"  # from {ws}")),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "api_key_env = \"BOX_KEY\"  # from {ws}; BOX_KEY is set"
        )),
        "{out}"
    );
    assert!(
        out.contains("api_key_env = \"OPENAI_API_KEY\"  # from default; OPENAI_API_KEY is not set"),
        "{out}"
    );
    assert!(
        out.contains("\n[compaction]\nauto = true  # from default\n"),
        "{out}"
    );
    assert!(out.contains("\n[provider.box.headers]\n"), "{out}");
    assert!(out.contains("\n[permission]\n# (none set)\n"), "{out}");
    assert!(out.contains(&format!("#   {ws}")), "{out}");

    // What is rendered is valid TOML that loads back to the same config.
    let path = f.dir.path().join("rendered.toml");
    std::fs::write(&path, out.replace("\"<redacted>\"", "\"x\"")).unwrap();
    let again = load_with_env(
        &LoadOptions {
            workspace: f.dir.path().join("nowhere"),
            config_file: Some(path),
            global_file: Some(f.dir.path().join("none.toml")),
            trust: Trust::Unknown,
            data_dir: None,
            has_key: None,
        },
        &|_| None,
    )
    .unwrap();
    assert_eq!(again.config.model, l.config.model);
    assert_eq!(again.config.provider["box"].base_url, "http://box/v1");
    assert_eq!(again.config.compaction, l.config.compaction);
}

/// A trusted workspace's partial `[mcp.NAME]` over a server of the global config merges into
/// it (`enabled = false` alone turns it off; one key changes one setting) instead of failing
/// as a server with neither `command` nor `url`.
#[test]
fn a_partial_mcp_table_over_a_global_server_merges() {
    let global = "[mcp.who]\nurl = \"https://mcp.example.com/mcp\"\noauth_scopes = [\"read\"]\n\
                  [mcp.local]\ncommand = \"srv\"\n";
    let f = Fixture::new()
        .global(global)
        .workspace("[mcp.who]\nenabled = false\n[mcp.local]\nargs = [\"--quiet\"]\n");
    let l = f.load().unwrap();
    let who = &l.config.mcp["who"];
    assert!(!who.enabled);
    assert_eq!(who.url.as_deref(), Some("https://mcp.example.com/mcp"));
    assert_eq!(who.oauth_scopes, vec!["read".to_string()]);
    assert_eq!(l.config.mcp["local"].command.as_deref(), Some("srv"));
    assert_eq!(l.config.mcp["local"].args, vec!["--quiet".to_string()]);

    // The same through an explicit --config file.
    let f = Fixture::new()
        .global(global)
        .explicit("[mcp.who]\nenabled = false\n");
    assert!(!f.load().unwrap().config.mcp["who"].enabled);

    // A workspace table over a server of the --config file, which is read after it.
    let f = Fixture::new()
        .workspace("[mcp.who]\nenabled = false\n")
        .explicit("[mcp.who]\nurl = \"https://mcp.example.com/mcp\"\n");
    let l = f.load().unwrap();
    assert!(!l.config.mcp["who"].enabled);
    assert!(l.config.mcp["who"].url.is_some());

    // A partial table with nothing beneath it is still an error, and what the merge makes is
    // checked: a url over a stdio server is both transports.
    let f = Fixture::new().workspace("[mcp.who]\nenabled = false\n");
    assert!(
        err_of(&f).contains("mcp.who: set command"),
        "{}",
        err_of(&f)
    );
    let f = Fixture::new()
        .global(global)
        .workspace("[mcp.local]\nurl = \"https://x.example/mcp\"\n");
    assert!(err_of(&f).contains("not both"), "{}", err_of(&f));

    // The rest of the server in a workspace file that is left out (untrusted) does not make
    // the --config file's partial table a server.
    let mut f = Fixture::new()
        .workspace("[mcp.who]\ncommand = \"srv\"\n")
        .explicit("[mcp.who]\nenabled = false\n");
    f.trust = Trust::Untrusted;
    assert!(
        err_of(&f).contains("mcp.who: set command"),
        "{}",
        err_of(&f)
    );
}
