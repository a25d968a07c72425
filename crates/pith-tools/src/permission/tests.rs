use std::collections::BTreeMap;

use serde_json::json;

use super::*;
use crate::testutil::Ws;
use pith_config::PermissionSetting;

fn rules(toml_text: &str) -> BTreeMap<String, PermissionSetting> {
    #[derive(serde::Deserialize)]
    struct P {
        permission: BTreeMap<String, PermissionSetting>,
    }
    toml::from_str::<P>(toml_text).unwrap().permission
}

fn defaults_only() -> Permissions {
    Permissions::new(&BTreeMap::new())
}

fn is_allow(d: &Decision) -> bool {
    matches!(d, Decision::Allow)
}

fn ask(d: Decision) -> PermissionRequest {
    match d {
        Decision::Ask(r) => r,
        other => panic!("expected Ask, got {other:?}"),
    }
}

fn deny(d: Decision) -> String {
    match d {
        Decision::Deny { message } => message,
        other => panic!("expected Deny, got {other:?}"),
    }
}

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

#[test]
fn env_files_ask_even_when_reads_are_allowed() {
    let ws = Ws::new();
    let mut p = Permissions::new(&rules("[permission]\nread = \"allow\"\nedit = \"allow\""));
    let r = ask(p.check("read", &json!({"file_path": ".env"}), &ws.ctx));
    assert_eq!(r.patterns, [".env"]);
    ask(p.check("read", &json!({"file_path": "deploy/prod.env"}), &ws.ctx));
    ask(p.check("read", &json!({"file_path": ".env.local"}), &ws.ctx));
    ask(p.check("edit", &json!({"file_path": "app/.env"}), &ws.ctx));
    assert!(is_allow(&p.check(
        "edit",
        &json!({"file_path": "app/main.py"}),
        &ws.ctx
    )));
    assert!(is_allow(&p.check(
        "read",
        &json!({"file_path": "environment.rs"}),
        &ws.ctx
    )));
    // The user can allow them explicitly.
    let mut p = Permissions::new(&rules("[permission.read]\n\"*.env\" = \"allow\""));
    assert!(is_allow(&p.check(
        "read",
        &json!({"file_path": ".env"}),
        &ws.ctx
    )));
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

#[test]
fn external_directory() {
    let ws = Ws::new();
    let ctx = &ws.ctx;
    let outside = ws.root().join("other");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("notes.txt"), "x").unwrap();
    let mut p = defaults_only();

    let r = ask(p.check("read", &json!({"file_path": "../other/notes.txt"}), ctx));
    let abs = outside.join("notes.txt").display().to_string();
    assert_eq!(r.title, format!("{abs} (outside the workspace)"));
    assert_eq!(r.patterns, [format!("{}/*", outside.display())]);

    // A symlink inside the workspace that points out of it is outside too.
    std::os::unix::fs::symlink(&outside, ws.path("link")).unwrap();
    let r = ask(p.check("read", &json!({"file_path": "link/notes.txt"}), ctx));
    assert!(r.title.starts_with(&abs), "{}", r.title);
    ask(p.check("list", &json!({"path": "link"}), ctx));
    ask(p.check("grep", &json!({"pattern": "x", "path": "/etc"}), ctx));
    ask(p.check("glob", &json!({"pattern": "*", "path": "../"}), ctx));

    // Edit outside: one request covering both the directory and the file.
    let r = ask(p.check("edit", &json!({"file_path": abs}), ctx));
    assert_eq!(r.patterns, [format!("{}/*", outside.display()), abs]);

    // Configured: allow one directory, deny elsewhere.
    let cfg = format!(
        "[permission.external_directory]\n\"*\" = \"deny\"\n\"{}/*\" = \"allow\"",
        outside.display()
    );
    let mut p = Permissions::new(&rules(&cfg));
    assert!(is_allow(&p.check(
        "read",
        &json!({"file_path": "../other/notes.txt"}),
        ctx
    )));
    assert!(is_allow(&p.check(
        "list",
        &json!({"path": "../other"}),
        ctx
    )));
    let msg = deny(p.check("read", &json!({"file_path": "/etc/hostname"}), ctx));
    assert!(msg.contains("external_directory"), "{msg}");
}

#[test]
fn tool_output_reads_are_allowed() {
    let ws = Ws::new();
    let dir = ws.ctx.data_dir.join("tool-output");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("tool_1"), "x").unwrap();
    let f = dir.join("tool_1").display().to_string();
    let mut p = defaults_only();
    assert!(is_allow(&p.check(
        "read",
        &json!({"file_path": f}),
        &ws.ctx
    )));
    assert!(is_allow(&p.check(
        "grep",
        &json!({"pattern": "x", "path": f}),
        &ws.ctx
    )));
    // But not writes, and not the rest of the data dir.
    ask(p.check("write", &json!({"file_path": f, "content": ""}), &ws.ctx));
    ask(p.check(
        "read",
        &json!({"file_path": ws.ctx.data_dir.join("pith.db").display().to_string()}),
        &ws.ctx,
    ));
}

#[test]
fn always_grants_the_patterns_for_the_session() {
    let ws = Ws::new();
    let ctx = &ws.ctx;
    let mut p = defaults_only();
    let r = ask(p.check("bash", &json!({"command": "git status"}), ctx));
    p.reply(&r, PermissionReply::Once);
    ask(p.check("bash", &json!({"command": "git status"}), ctx));
    let r = ask(p.check("bash", &json!({"command": "git status"}), ctx));
    p.reply(&r, PermissionReply::Always);
    assert!(is_allow(&p.check(
        "bash",
        &json!({"command": "git status -s"}),
        ctx
    )));
    ask(p.check("bash", &json!({"command": "git push"}), ctx));
    ask(p.check("bash", &json!({"command": "git status && git push"}), ctx));

    let r = ask(p.check("edit", &json!({"file_path": "src/a.rs"}), ctx));
    p.reply(&r, PermissionReply::Deny);
    ask(p.check("edit", &json!({"file_path": "src/a.rs"}), ctx));
    let r = ask(p.check("edit", &json!({"file_path": "src/a.rs"}), ctx));
    p.reply(&r, PermissionReply::Always);
    assert!(is_allow(&p.check(
        "edit",
        &json!({"file_path": "src/a.rs"}),
        ctx
    )));
    ask(p.check("edit", &json!({"file_path": "src/b.rs"}), ctx));
    // A grant for edit does not allow write.
    ask(p.check("write", &json!({"file_path": "src/a.rs"}), ctx));

    // Always on an outside path grants its directory for external_directory.
    let outside = ws.root().join("o");
    std::fs::create_dir_all(&outside).unwrap();
    let r = ask(p.check(
        "read",
        &json!({"file_path": outside.join("a.txt").display().to_string()}),
        ctx,
    ));
    p.reply(&r, PermissionReply::Always);
    assert!(is_allow(&p.check(
        "read",
        &json!({"file_path": outside.join("b.txt").display().to_string()}),
        ctx
    )));
    ask(p.check(
        "read",
        &json!({"file_path": ws.root().join("c.txt").display().to_string()}),
        ctx,
    ));
}

#[test]
fn grants_never_override_deny() {
    let ws = Ws::new();
    let mut p = Permissions::new(&rules("[permission.bash]\n\"rm*\" = \"deny\""));
    let req = PermissionRequest {
        id: "unknown".into(),
        tool: "bash".into(),
        call_id: "c".into(),
        title: "rm".into(),
        patterns: vec!["rm*".into()],
        agent: None,
    };
    p.reply(&req, PermissionReply::Always);
    deny(p.check("bash", &json!({"command": "rm x"}), &ws.ctx));
}

#[test]
fn unparsable_input_is_left_to_the_tool() {
    let ws = Ws::new();
    let mut p = defaults_only();
    assert!(is_allow(&p.check("bash", &json!({"cmd": "ls"}), &ws.ctx)));
    assert!(is_allow(&p.check("edit", &json!(null), &ws.ctx)));
}

#[test]
fn doom_loop_record() {
    let mut d = DoomLoop::default();
    let a = json!({"command": "ls"});
    let b = json!({"command": "ls -la"});
    assert!(!d.record("bash", &a));
    assert!(!d.record("bash", &a));
    assert!(d.record("bash", &a));
    assert!(d.record("bash", &a), "a fourth identical call still counts");
    assert!(!d.record("bash", &b));
    assert!(
        !d.record("read", &b),
        "same input to another tool breaks the streak"
    );
    assert!(!d.record("read", &b));
    assert!(!d.record("bash", &a));
    d.reset();
    assert!(!d.record("read", &b) && !d.record("read", &b));
    // Object key order does not matter.
    let mut d = DoomLoop::default();
    let x: Value = serde_json::from_str(r#"{"a":1,"b":2}"#).unwrap();
    let y: Value = serde_json::from_str(r#"{"b":2,"a":1}"#).unwrap();
    assert!(!d.record("t", &x) && !d.record("t", &y) && d.record("t", &x));
}

#[test]
fn doom_loop_counts_broken_calls() {
    // The same unparsable arguments three times: stop.
    let mut d = DoomLoop::default();
    let raw = json!("{\"command\": ");
    assert_eq!(d.record_broken("bash", &raw), None);
    assert_eq!(d.record_broken("bash", &raw), None);
    let why = d.record_broken("bash", &raw).unwrap().to_string();
    assert!(
        why.contains("same call to `bash` 3 times") && why.contains("not valid JSON"),
        "{why}"
    );
    // Different broken calls: stop at the limit; a call that runs breaks the streak.
    let mut d = DoomLoop::default();
    for i in 0..BROKEN_CALLS_LIMIT - 1 {
        assert_eq!(d.record_broken("nope", &json!({"i": i})), None);
    }
    assert!(!d.record("bash", &json!({"command": "ls"})));
    for i in 0..BROKEN_CALLS_LIMIT - 1 {
        assert_eq!(d.record_broken("nope", &json!({"i": i})), None);
    }
    let why = d
        .record_broken("nope", &json!({"i": 99}))
        .unwrap()
        .to_string();
    assert!(
        why.contains("5 tool calls in a row") && why.contains("no tool has that name"),
        "{why}"
    );
}

#[test]
fn doom_loop_asks_even_when_allowed() {
    let ws = Ws::new();
    let mut p = defaults_only();
    let mut d = DoomLoop::default();
    let input = json!({"file_path": "a.rs"});
    assert!(is_allow(&p.check_call(&mut d, "read", &input, &ws.ctx)));
    assert!(is_allow(&p.check_call(&mut d, "read", &input, &ws.ctx)));
    let r = ask(p.check_call(&mut d, "read", &input, &ws.ctx));
    assert!(r.title.contains("3 times in a row"), "{}", r.title);
    assert!(r.patterns.is_empty());
    // Configurable.
    let mut p = Permissions::new(&rules("[permission]\ndoom_loop = \"allow\""));
    let mut d = DoomLoop::default();
    for _ in 0..5 {
        assert!(is_allow(&p.check_call(&mut d, "read", &input, &ws.ctx)));
    }
    let mut p = Permissions::new(&rules("[permission]\ndoom_loop = \"deny\""));
    let mut d = DoomLoop::default();
    p.check_call(&mut d, "read", &input, &ws.ctx);
    p.check_call(&mut d, "read", &input, &ws.ctx);
    deny(p.check_call(&mut d, "read", &input, &ws.ctx));
}

fn with_mcp(mut p: Permissions) -> Permissions {
    let mut tools = std::collections::HashMap::new();
    for (full, server, name) in [
        ("github_get_issue", "github", "get_issue"),
        ("github_delete_repo", "github", "delete_repo"),
        ("docs_search", "docs", "search"),
    ] {
        tools.insert(full.to_string(), (server.to_string(), name.to_string()));
    }
    p.set_mcp_tools(tools);
    p
}

#[test]
fn mcp_tools_ask_by_default_and_follow_their_servers_rules() {
    let ws = Ws::new();
    let ctx = &ws.ctx;
    let mut p = with_mcp(defaults_only());
    let r = ask(p.check("github_get_issue", &json!({"n": 1}), ctx));
    assert_eq!(r.patterns, ["get_issue"], "always grants the one tool");
    p.reply(&r, PermissionReply::Always);
    assert!(is_allow(&p.check(
        "github_get_issue",
        &json!({"n": 2}),
        ctx
    )));
    ask(p.check("github_delete_repo", &json!({}), ctx));

    let mut p = with_mcp(Permissions::new(&rules(
        r#"
        [permission]
        docs = "allow"
        [permission.github]
        "*" = "allow"
        "delete_*" = "deny"
        "#,
    )));
    assert!(is_allow(&p.check("docs_search", &json!({}), ctx)));
    assert!(is_allow(&p.check("github_get_issue", &json!({}), ctx)));
    let m = deny(p.check("github_delete_repo", &json!({}), ctx));
    assert!(m.contains("delete_*"), "{m}");
    // A tool no server owns is its own table, as before.
    ask(p.check("unknown_tool", &json!({}), ctx));
}
mod bash_lines;

#[test]
fn writing_a_hard_linked_file_asks_even_when_edits_are_allowed() {
    let ws = Ws::new();
    let ctx = &ws.ctx;
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("profile");
    std::fs::write(&target, "x").unwrap();
    std::fs::hard_link(&target, ctx.workspace.join("linked.txt")).unwrap();
    std::fs::write(ctx.workspace.join("single.txt"), "x").unwrap();
    let mut p = Permissions::new(&rules("[permission]\nedit = \"allow\"\nwrite = \"allow\""));
    let edit = |f: &str| json!({"file_path": f, "old_string": "x", "new_string": "y"});
    assert!(is_allow(&p.check("edit", &edit("single.txt"), ctx)));
    let r = ask(p.check("edit", &edit("linked.txt"), ctx));
    assert!(r.title.contains("hard link"), "{}", r.title);
    let r = ask(p.check(
        "write",
        &json!({"file_path": "linked.txt", "content": "y"}),
        ctx,
    ));
    assert!(r.title.contains("hard link"), "{}", r.title);
    let r = ask(p.check("bash", &json!({"command": "echo y > linked.txt"}), ctx));
    assert!(
        r.patterns.contains(&"linked.txt".to_string()),
        "{:?}",
        r.patterns
    );
    // Reading it is not a change.
    assert!(is_allow(&p.check(
        "read",
        &json!({"file_path": "linked.txt"}),
        ctx
    )));
    let mut p = Permissions::new(&rules(
        "[permission]\nedit = \"allow\"\nhard_link = \"allow\"",
    ));
    assert!(is_allow(&p.check("edit", &edit("linked.txt"), ctx)));
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
    ] {
        assert_eq!(
            verdict(example.check(tool, &input, &ws.ctx)),
            verdict(builtin.check(tool, &input, &ws.ctx)),
            "{tool} {input}: the example's permission block differs from the default"
        );
    }
}

/// A file tool's file is judged under whichever key the call gives it (the aliases the tools
/// take); a call that names it under two keys is refused, never judged by one of them (the
/// user could be asked about one file while the tool was handed another).
#[test]
fn a_file_is_judged_under_any_alias_and_a_call_naming_two_is_refused() {
    let ws = Ws::new();
    let ctx = &ws.ctx;
    let mut p = Permissions::new(&rules(
        "[permission.read]\n\"*\" = \"allow\"\n\"secret.txt\" = \"deny\"\n",
    ));
    for key in ["file_path", "path", "filePath"] {
        deny(p.check("read", &json!({key: "secret.txt"}), ctx));
        assert!(
            is_allow(&p.check("read", &json!({key: "a.txt"}), ctx)),
            "{key}"
        );
    }
    for (a, b) in [
        ("file_path", "path"),
        ("path", "filePath"),
        ("filePath", "file_path"),
    ] {
        for (first, second) in [
            ("a.txt", "secret.txt"),
            ("secret.txt", "a.txt"),
            ("a.txt", "b.txt"),
        ] {
            for tool in ["read", "write", "edit"] {
                let input = json!({a: first, b: second, "content": "", "old_string": "x", "new_string": "y"});
                let msg = deny(p.check(tool, &input, ctx));
                assert!(
                    msg.contains("names its file more than once"),
                    "{tool} {input}: {msg}"
                );
            }
        }
    }
    // a call that names no file is left to the tool, which refuses it
    assert!(is_allow(&p.check(
        "read",
        &json!({"file": "secret.txt"}),
        ctx
    )));
}

/// `list`, `grep` and `glob` are judged by the directory they search: `path`, the one key they
/// take (a `file_path` beside it is not where they look).
#[test]
fn a_search_is_judged_where_the_tool_looks() {
    let ws = Ws::new();
    let ctx = &ws.ctx;
    let mut p = defaults_only();
    let misnamed = json!({"pattern": "x", "file_path": "src", "path": "/etc"});
    for tool in ["grep", "glob", "list"] {
        let r = ask(p.check(tool, &misnamed, ctx));
        assert!(r.title.contains("/etc"), "{tool}: {}", r.title);
    }
}
