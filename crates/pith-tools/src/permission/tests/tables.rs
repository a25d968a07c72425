//! The rule tables: the defaults, the user's rules over them, the longest pattern winning, a
//! whole tool set at once, the example config's block, a fetch judged by its host.

use super::*;

#[test]
fn defaults() {
    let ws = Ws::new();
    let ctx = &ws.ctx;
    let mut p = defaults_only();
    for (tool, input) in [
        ("read", json!({"file_path": "src/main.rs"})),
        ("glob", json!({"pattern": "**/*.rs"})),
        ("grep", json!({"pattern": "fn", "path": "src"})),
        ("list", json!({})),
        ("todowrite", json!({"todos": []})),
        ("read", json!({"file_path": "config/.env.example"})),
    ] {
        assert!(is_allow(&p.check(tool, &input, ctx)), "{tool} {input}");
    }
    let r = ask(p.check("bash", &json!({"command": "git status --short"}), ctx));
    assert_eq!(r.tool, "bash");
    assert_eq!(r.title, "git status --short");
    assert_eq!(r.patterns, ["git status*"]);
    assert_eq!(r.call_id, "call_test");
    let r = ask(p.check(
        "edit",
        &json!({"file_path": "src/lib.rs", "old_string": "a", "new_string": "b"}),
        ctx,
    ));
    assert_eq!(
        (r.title.as_str(), r.patterns.clone()),
        ("src/lib.rs", vec!["src/lib.rs".to_string()])
    );
    let r = ask(p.check(
        "write",
        &json!({"file_path": "./a/../new.txt", "content": ""}),
        ctx,
    ));
    assert_eq!(r.patterns, ["new.txt"]);
    // Unknown tools ask.
    ask(p.check("frobnicate", &json!({"url": "x"}), ctx));
    // So does a web page, by host.
    let r = ask(p.check("webfetch", &json!({"url": "https://Docs.rs/tokio"}), ctx));
    assert_eq!(r.patterns, ["docs.rs"]);
    ask(p.check("webfetch", &json!({"url": "file:///etc/passwd"}), ctx));
}

#[test]
fn a_stricter_user_star_overrides_lenient_defaults() {
    let ws = Ws::new();
    let mut p = Permissions::new(&rules("[permission]\nread = \"deny\""));
    deny(p.check("read", &json!({"file_path": "a.env.example"}), &ws.ctx));
    let msg = deny(p.check("read", &json!({"file_path": "src/x.rs"}), &ws.ctx));
    assert!(
        msg.contains("deny read for `src/x.rs`") && msg.contains("rule `*`"),
        "{msg}"
    );
}

#[test]
fn bash_patterns_longest_match_wins() {
    let ws = Ws::new();
    let ctx = &ws.ctx;
    let mut p = Permissions::new(&rules(
        r#"
        [permission.bash]
        "*" = "ask"
        "git *" = "allow"
        "git push*" = "deny"
        "git push --dry-run*" = "allow"
        "rm*" = "deny"
        "#,
    ));
    assert!(is_allow(&p.check(
        "bash",
        &json!({"command": "git status"}),
        ctx
    )));
    let r = ask(p.check(
        "bash",
        &json!({"command": "git log --oneline | head -5 && git diff"}),
        ctx,
    ));
    assert_eq!(r.patterns, ["head*"]);
    let msg = deny(p.check("bash", &json!({"command": "git push origin main"}), ctx));
    assert!(msg.contains("git push*"), "{msg}");
    assert!(is_allow(&p.check(
        "bash",
        &json!({"command": "git push --dry-run"}),
        ctx
    )));
    // Every simple command in a line must pass: an allowed prefix does not smuggle others in.
    deny(p.check("bash", &json!({"command": "git status && rm -rf /"}), ctx));
    deny(p.check("bash", &json!({"command": "git status $(rm -rf ~)"}), ctx));
    let r = ask(p.check(
        "bash",
        &json!({"command": "git status; cargo build --release; ls -la"}),
        ctx,
    ));
    assert_eq!(r.patterns, ["cargo build*", "ls*"]);
    assert_eq!(r.title, "git status; cargo build --release; ls -la");
}

#[test]
fn bash_whole_tool_setting() {
    let ws = Ws::new();
    let mut p = Permissions::new(&rules("[permission]\nbash = \"allow\""));
    assert!(is_allow(&p.check(
        "bash",
        &json!({"command": "make && ./run"}),
        &ws.ctx
    )));
    let mut p = Permissions::new(&rules("[permission]\nbash = \"deny\""));
    deny(p.check("bash", &json!({"command": "ls"}), &ws.ctx));
}

/// The example config's permission block is the built-in default: every call is decided the
/// same way.
#[test]
fn the_example_config_permissions_are_the_defaults() {
    use pith_config::load::{LoadOptions, Trust, load_with_env};
    let dir = tempfile::tempdir().unwrap();
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../config.example.toml");
    let l = load_with_env(
        &LoadOptions {
            workspace: dir.path().to_path_buf(),
            config_file: Some(path),
            global_file: Some(dir.path().join("none.toml")),
            trust: Trust::Unknown,
            data_dir: None,
            has_key: None,
        },
        &|_| None,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    // Its permission block is the built-in default: every call is decided the same way.
    let ws = crate::testutil::Ws::new();
    let mut example = crate::Permissions::new(&l.config.permission);
    let mut builtin = crate::Permissions::new(&Default::default());
    let verdict = |d: crate::Decision| match d {
        crate::Decision::Allow => "allow",
        crate::Decision::Ask(_) => "ask",
        crate::Decision::Deny { .. } => "deny",
    };
    for (tool, input) in [
        ("read", serde_json::json!({"file_path": "src/a.rs"})),
        ("read", serde_json::json!({"file_path": ".env"})),
        ("read", serde_json::json!({"file_path": ".env.example"})),
        ("read", serde_json::json!({"file_path": "/etc/hosts"})),
        ("edit", serde_json::json!({"file_path": "a.rs"})),
        ("write", serde_json::json!({"file_path": "x/.env.local"})),
        ("bash", serde_json::json!({"command": "git status"})),
        ("bash", serde_json::json!({"command": "ls -la"})),
        ("bash", serde_json::json!({"command": "rm -rf build"})),
        ("grep", serde_json::json!({"pattern": "x"})),
        ("todowrite", serde_json::json!({"todos": []})),
        ("websearch", serde_json::json!({"query": "tokio"})),
    ] {
        assert_eq!(
            verdict(example.check(tool, &input, &ws.ctx)),
            verdict(builtin.check(tool, &input, &ws.ctx)),
            "{tool} {input}: the example's permission block differs from the default"
        );
    }
}

/// A search is allowed by default (the service is the one the user configured); rules match the
/// query, and "always" after an ask covers every search of the session.
#[test]
fn websearch_rules_match_the_query() {
    let ws = Ws::new();
    let ctx = &ws.ctx;
    let q = |q: &str| json!({ "query": q });
    assert!(is_allow(&defaults_only().check(
        "websearch",
        &q("tokio"),
        ctx
    )));
    let mut p = Permissions::new(&rules(
        "[permission.websearch]\n\"*\" = \"ask\"\n\"*password*\" = \"deny\"\n",
    ));
    deny(p.check("websearch", &q("admin password reset"), ctx));
    let req = ask(p.check("websearch", &q("tokio spawn"), ctx));
    assert_eq!(req.title, "tokio spawn");
    assert_eq!(req.patterns, ["*"]);
    p.reply(&req, pith_protocol::event::PermissionReply::Always);
    assert!(is_allow(&p.check("websearch", &q("serde derive"), ctx)));
}

#[test]
fn webfetch_rules_go_by_host() {
    let ws = Ws::new();
    let ctx = &ws.ctx;
    let mut p = Permissions::new(&rules(
        "[permission.webfetch]\n\"docs.rs\" = \"allow\"\n\"*.evil.example\" = \"deny\"\n",
    ));
    let fetch = |u: &str| json!({ "url": u });
    assert!(is_allow(&p.check(
        "webfetch",
        &fetch("https://docs.rs/serde"),
        ctx
    )));
    // the allowed name inside another host's name or URL does not make it allowed
    deny(p.check("webfetch", &fetch("https://docs.rs.evil.example/x"), ctx));
    ask(p.check("webfetch", &fetch("https://example.com/?docs.rs"), ctx));
    ask(p.check("webfetch", &fetch("https://docs.rs@example.com/"), ctx));
    deny(p.check("webfetch", &fetch("http://a.evil.example/"), ctx));
}
