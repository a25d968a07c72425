//! What a file or search call touches: `.env` files, paths outside the workspace, the
//! tool-output folder, hard links, the file under any alias, where a search looks.

use super::*;

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
    // But not writes, and not the rest of the data dir: pith's own state (issue 37).
    deny(p.check("write", &json!({"file_path": f, "content": ""}), &ws.ctx));
    deny(p.check(
        "read",
        &json!({"file_path": ws.ctx.data_dir.join("pith.db").display().to_string()}),
        &ws.ctx,
    ));
}

#[test]
fn unparsable_input_is_left_to_the_tool() {
    let ws = Ws::new();
    let mut p = defaults_only();
    assert!(is_allow(&p.check("bash", &json!({"cmd": "ls"}), &ws.ctx)));
    assert!(is_allow(&p.check("edit", &json!(null), &ws.ctx)));
}

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

#[test]
fn a_link_in_the_tool_output_folder_to_a_key_asks_like_the_key() {
    // a sandboxed command plants `<data>/tool-output/r.txt -> ~/.ssh/id_rsa` (the folder is
    // writable from the sandbox): reading or grepping it by that name must not be free
    let ws = Ws::new();
    let dir = ws.ctx.data_dir.join("tool-output");
    std::fs::create_dir_all(&dir).unwrap();
    let key = ws.root().join("id_rsa");
    std::fs::write(&key, "PRIVATE KEY").unwrap();
    std::os::unix::fs::symlink(&key, dir.join("r.txt")).unwrap();
    let f = dir.join("r.txt").display().to_string();
    let mut p = defaults_only();
    let r = ask(p.check("read", &json!({"file_path": f}), &ws.ctx));
    assert!(r.title.contains("id_rsa"), "{}", r.title);
    ask(p.check("grep", &json!({"pattern": "K", "path": f}), &ws.ctx));
    // a linked folder there too
    std::os::unix::fs::symlink(ws.root(), dir.join("d")).unwrap();
    let d = dir.join("d").display().to_string();
    ask(p.check("grep", &json!({"pattern": "K", "path": d}), &ws.ctx));
    ask(p.check(
        "read",
        &json!({"file_path": format!("{d}/id_rsa")}),
        &ws.ctx,
    ));
    // and one into the rest of the data dir is pith's own state
    std::fs::write(ws.ctx.data_dir.join("pith.db"), "db").unwrap();
    std::os::unix::fs::symlink(ws.ctx.data_dir.join("pith.db"), dir.join("db")).unwrap();
    let db = dir.join("db").display().to_string();
    deny(p.check("read", &json!({"file_path": db}), &ws.ctx));
}

/// An image a front end saved for a prompt (`<data>/images`, `<data>/acp/images`) is read as
/// its mention; it is not written, and the rest of the data dir stays pith's own.
#[test]
fn saved_prompt_images_are_readable_not_writable() {
    let ws = Ws::new();
    let mut p = defaults_only();
    for dir in [
        pith_config::images::dir(&ws.ctx.data_dir),
        ws.ctx.data_dir.join("acp/images"),
    ] {
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("01j.png");
        std::fs::write(&f, "png").unwrap();
        let f = f.display().to_string();
        assert!(is_allow(&p.check(
            "read",
            &json!({"file_path": f}),
            &ws.ctx
        )));
        deny(p.check("write", &json!({"file_path": f, "content": "x"}), &ws.ctx));
    }
    let beside = ws.ctx.data_dir.join("images-old.png").display().to_string();
    deny(p.check("read", &json!({"file_path": beside}), &ws.ctx));
}

/// A workspace that is `$HOME` (pith started there), with `~/.ssh/id_rsa` and a deny-read file.
fn home_workspace() -> Ws {
    let mut ws = Ws::new();
    let home = ws.ctx.workspace.clone();
    ws.write(".ssh/id_rsa", "-----BEGIN OPENSSH PRIVATE KEY----- b3Bl\n");
    ws.write("vault/secret.txt", "PRIVATE vault\n");
    ws.write("src/main.rs", "// PRIVATE is a word\n");
    let data = ws.ctx.data_dir.clone();
    ws.ctx.policy = std::sync::Arc::new(
        crate::policy::Policy::with_paths(
            &home,
            Some(home.clone()),
            std::slice::from_ref(&data),
            &crate::truncate::output_dir(&data),
        )
        .hiding(&[home.join("vault")]),
    );
    ws
}

#[test]
fn in_a_home_workspace_reading_a_secret_asks_naming_it() {
    let ws = home_workspace();
    let mut p = Permissions::new(&rules("[permission]\nread = \"allow\"\ngrep = \"allow\""));
    let r = ask(p.check("read", &json!({"file_path": ".ssh/id_rsa"}), &ws.ctx));
    assert!(
        r.title.contains("id_rsa") && r.title.contains("hidden"),
        "{}",
        r.title
    );
    ask(p.check("read", &json!({"file_path": "vault/secret.txt"}), &ws.ctx));
    ask(p.check("grep", &json!({"pattern": "x", "path": ".ssh"}), &ws.ctx));
    ask(p.check(
        "grep",
        &json!({"pattern": "x", "path": ".ssh/id_rsa"}),
        &ws.ctx,
    ));
    ask(p.check("list", &json!({"path": "vault"}), &ws.ctx));
    // the rest of the home folder does not
    assert!(is_allow(&p.check(
        "read",
        &json!({"file_path": "src/main.rs"}),
        &ws.ctx
    )));
    assert!(is_allow(&p.check(
        "grep",
        &json!({"pattern": "x"}),
        &ws.ctx
    )));
}

#[tokio::test]
async fn in_a_home_workspace_searches_skip_the_secrets() {
    use crate::Tool;
    let ws = home_workspace();
    let grep = crate::grep::Grep
        .run(json!({"pattern": "PRIVATE", "path": "."}), &ws.ctx)
        .await
        .unwrap();
    assert!(grep.output.contains("src/main.rs"), "{}", grep.output);
    assert!(
        !grep.output.contains("b3Bl") && !grep.output.contains("vault"),
        "{}",
        grep.output
    );
    let glob = crate::glob::Glob
        .run(json!({"pattern": "*"}), &ws.ctx)
        .await
        .unwrap();
    assert!(
        !glob.output.contains("id_rsa") && !glob.output.contains("secret.txt"),
        "{}",
        glob.output
    );
    let list = crate::list::List.run(json!({}), &ws.ctx).await.unwrap();
    assert!(
        !list.output.contains("id_rsa") && !list.output.contains("secret.txt"),
        "{}",
        list.output
    );
    // a search of the secret folder itself (asked for and approved) sees it
    let grep = crate::grep::Grep
        .run(json!({"pattern": "PRIVATE", "path": ".ssh"}), &ws.ctx)
        .await
        .unwrap();
    assert!(grep.output.contains("b3Bl"), "{}", grep.output);
}
