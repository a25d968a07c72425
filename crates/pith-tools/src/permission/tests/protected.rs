//! The policy at the permission check (issue 37): writing a protected path always asks —
//! no allow rule, session grant, mode, `--yes` or hook approves it — and pith's own state is
//! refused to every tool.

use super::*;
use crate::mode;
use crate::policy::Policy;
use pith_protocol::event::PermissionMode;

/// What a question becomes under accept-edits, as the engine applies it.
fn accept_edits(
    p: &Permissions,
    tool: &str,
    input: &Value,
    ctx: &ToolContext,
    d: Decision,
) -> Decision {
    let firm = p.is_firm(&d);
    mode::apply(
        PermissionMode::AcceptEdits,
        tool,
        input,
        &ctx.workspace,
        d,
        firm,
    )
}

const PLANTS: &[&str] = &[
    ".git/config",
    ".git/hooks/post-commit",
    "sub/pith.toml",
    "a/b/.git/config",
    ".pith/commands/x.md",
    "docs/AGENTS.md",
];

#[test]
fn accept_edits_and_allow_rules_still_ask_for_protected_paths() {
    let ws = Ws::new();
    let ctx = &ws.ctx;
    ws.write(".git/config", "[core]\n");
    for rules_text in [
        "[permission]",
        "[permission]\nwrite = \"allow\"\nedit = \"allow\"",
    ] {
        let mut p = Permissions::new(&rules(rules_text));
        for rel in PLANTS {
            let input = json!({"file_path": rel, "content": "[core]\nfsmonitor = evil\n"});
            let d = p.check("write", &input, ctx);
            let d = accept_edits(&p, "write", &input, ctx, d);
            let r = ask(d);
            assert!(r.title.contains("protected"), "{rel}: {}", r.title);
            // --yes, bypass and a hook's approval are refused, naming why
            let why = p.yes_refusal(&r, true).unwrap_or_else(|| panic!("{rel}"));
            assert!(why.contains("protected") && why.contains(rel), "{why}");
            assert!(p.headless_reason(&r).is_some());
        }
        // An ordinary file is still let through.
        let input = json!({"file_path": "src/a.rs", "content": "x"});
        let d = p.check("write", &input, ctx);
        assert!(is_allow(&accept_edits(&p, "write", &input, ctx, d)));
    }
}

#[test]
fn an_always_reply_does_not_grant_a_protected_path_and_a_deny_rule_still_denies() {
    let ws = Ws::new();
    let ctx = &ws.ctx;
    let mut p = defaults_only();
    let input = json!({"file_path": ".git/config", "old_string": "a", "new_string": "b"});
    let r = ask(p.check("edit", &input, ctx));
    assert!(r.patterns.is_empty(), "{:?}", r.patterns);
    p.reply(&r, PermissionReply::Always);
    ask(p.check("edit", &input, ctx));
    let mut p = Permissions::new(&rules("[permission.write]\n\".git/*\" = \"deny\""));
    deny(p.check(
        "write",
        &json!({"file_path": ".git/config", "content": ""}),
        ctx,
    ));
}

#[test]
fn a_command_writing_a_protected_path_is_not_approved_by_yes() {
    let ws = Ws::new();
    let mut p = Permissions::new(&rules("[permission]\nbash = \"allow\"\nwrite = \"allow\""));
    let r = ask(p.check(
        "bash",
        &json!({"command": "echo '[core] fsmonitor = x' >> .git/config"}),
        &ws.ctx,
    ));
    assert!(p.yes_refusal(&r, true).unwrap().contains(".git/config"));
    assert!(is_allow(&p.check(
        "bash",
        &json!({"command": "echo hi > out.txt"}),
        &ws.ctx
    )));
}

#[test]
fn the_config_file_instructions_and_start_up_files_at_home_are_protected() {
    let mut ws = Ws::new();
    let ctx = &mut ws.ctx;
    // The workspace is the user's home.
    ctx.policy = std::sync::Arc::new(
        Policy::with_paths(
            &ctx.workspace,
            Some(ctx.workspace.clone()),
            std::slice::from_ref(&ctx.data_dir),
            &ctx.data_dir.join("tool-output"),
        )
        .configured(
            Some(&ctx.workspace.join("conf/pith-dev.toml")),
            &["STYLE.md".into()],
        ),
    );
    let mut p = Permissions::new(&rules("[permission]\nwrite = \"allow\""));
    for rel in [
        ".bashrc",
        ".profile",
        ".config/fish/config.fish",
        ".gitconfig",
        "conf/pith-dev.toml",
        "STYLE.md",
    ] {
        let r = ask(p.check("write", &json!({"file_path": rel, "content": "x"}), ctx));
        assert!(p.yes_refusal(&r, false).is_some(), "{rel}");
    }
}

#[test]
fn pith_s_own_state_is_refused_to_every_tool() {
    let ws = Ws::new();
    let ctx = &ws.ctx;
    let data = &ctx.data_dir;
    std::fs::write(data.join("credentials.json"), "{\"key\":\"sk-secret\"}").unwrap();
    std::fs::create_dir_all(data.join("tool-output")).unwrap();
    std::fs::write(data.join("tool-output/call_1.txt"), "saved").unwrap();
    let creds = data.join("credentials.json").display().to_string();
    let trust = data.join("trusted-directories.json").display().to_string();
    // Even with everything allowed.
    let mut p = Permissions::new(&rules(
        "[permission]\nread = \"allow\"\nwrite = \"allow\"\ngrep = \"allow\"\nexternal_directory = \"allow\"",
    ));
    let own = |d: Decision| {
        let m = deny(d);
        assert!(m.contains("pith's own state"), "{m}");
    };
    own(p.check("read", &json!({"file_path": creds}), ctx));
    own(p.check("write", &json!({"file_path": trust, "content": "[]"}), ctx));
    own(p.check(
        "edit",
        &json!({"file_path": creds, "old_string": "a", "new_string": "b"}),
        ctx,
    ));
    own(p.check("grep", &json!({"pattern": "key", "path": data}), ctx));
    own(p.check("grep", &json!({"pattern": "key", "path": creds}), ctx));
    own(p.check("glob", &json!({"pattern": "*", "path": data}), ctx));
    own(p.check("list", &json!({"path": data}), ctx));
    own(p.check(
        "bash",
        &json!({"command": "cat < ".to_string() + &creds}),
        ctx,
    ));
    // Through a link in the workspace.
    std::os::unix::fs::symlink(data, ws.path("d")).unwrap();
    own(p.check("read", &json!({"file_path": "d/credentials.json"}), ctx));
    // Saved tool output stays readable, not writable.
    let saved = data.join("tool-output/call_1.txt").display().to_string();
    assert!(is_allow(&p.check(
        "read",
        &json!({"file_path": saved}),
        ctx
    )));
    own(p.check("write", &json!({"file_path": saved, "content": "x"}), ctx));
}

#[test]
fn the_hard_link_question_is_never_approved_by_a_mode_yes_or_a_hook() {
    let ws = Ws::new();
    let ctx = &ws.ctx;
    let outside = ws.root().join("outside.txt");
    std::fs::write(&outside, "x").unwrap();
    std::fs::hard_link(&outside, ws.path("linked.txt")).unwrap();
    let mut p = defaults_only();
    let input = json!({"file_path": "linked.txt", "content": "y"});
    let d = p.check("write", &input, ctx);
    let r = ask(accept_edits(&p, "write", &input, ctx, d));
    assert!(p.yes_refusal(&r, true).unwrap().contains("hard link"));
    // The user's own rule still decides.
    let mut p = Permissions::new(&rules(
        "[permission]\nwrite = \"allow\"\nhard_link = \"allow\"",
    ));
    assert!(is_allow(&p.check("write", &input, ctx)));
}
