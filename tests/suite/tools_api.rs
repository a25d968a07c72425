//! The tools' public API as the engine uses it: Registry + Permissions + DoomLoop, no engine.

use std::collections::BTreeMap;
use std::sync::Arc;

use pith_config::{PermissionAction, PermissionSetting, ToolOutputConfig};
use pith_protocol::event::PermissionReply;
use pith_tools::{
    Decision, DoomLoop, Permissions, Registry, SessionToolState, ToolContext, truncate,
};
use serde_json::json;
use tokio_util::sync::CancellationToken;

struct Fixture {
    _dir: tempfile::TempDir,
    ctx: ToolContext,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join("ws")).unwrap();
    let ctx = ToolContext {
        workspace: root.join("ws"),
        data_dir: root.join("data"),
        session_id: "ses_1".into(),
        call_id: "call_1".into(),
        cancel: CancellationToken::new(),
        state: Arc::new(SessionToolState::default()),
        output: ToolOutputConfig {
            max_lines: 50,
            max_bytes: 4096,
        },
        outputs: None,
        progress: None,
        editor: None,
        policy: Arc::new(pith_tools::policy::Policy::new(
            &root.join("ws"),
            &root.join("data"),
        )),
        read_only_commands: false,
    };
    Fixture { _dir: dir, ctx }
}

/// Why a call gave no output.
#[derive(Debug, PartialEq)]
enum CallError {
    /// A permission rule denied it (the rule's message).
    Denied(String),
    /// The user said no to the question with this title.
    Refused(String),
    /// The tool ran and failed.
    Failed(String),
}

/// What the engine does for one call: check, (ask), run.
async fn call(
    reg: &Registry,
    perms: &mut Permissions,
    doom: &mut DoomLoop,
    tool: &str,
    input: serde_json::Value,
    ctx: &ToolContext,
    answer: PermissionReply,
) -> Result<String, CallError> {
    match perms.check_call(doom, tool, &input, ctx) {
        Decision::Allow => {}
        Decision::Deny { message } => return Err(CallError::Denied(message)),
        Decision::Ask(req) => {
            perms.reply(&req, answer);
            if answer == PermissionReply::Deny {
                return Err(CallError::Refused(req.title));
            }
        }
    }
    reg.execute(tool, input, ctx)
        .await
        .map(|o| o.output)
        .map_err(|e| CallError::Failed(e.to_string()))
}

#[tokio::test]
async fn read_edit_run_cycle() {
    let f = fixture();
    let ctx = &f.ctx;
    let reg = Registry::builtin();
    let mut perms = Permissions::new(&BTreeMap::new());
    let mut doom = DoomLoop::default();
    let once = PermissionReply::Once;

    let out = call(
        &reg,
        &mut perms,
        &mut doom,
        "write",
        json!({"file_path": "hello.sh", "content": "echo hello\n"}),
        ctx,
        once,
    )
    .await
    .unwrap();
    assert!(out.starts_with("Created hello.sh"));
    let out = call(
        &reg,
        &mut perms,
        &mut doom,
        "read",
        json!({"file_path": "hello.sh"}),
        ctx,
        once,
    )
    .await
    .unwrap();
    assert!(out.starts_with("     1\techo hello\n"));
    let out = call(
        &reg,
        &mut perms,
        &mut doom,
        "edit",
        json!({"file_path": "hello.sh", "old_string": "hello", "new_string": "world"}),
        ctx,
        once,
    )
    .await
    .unwrap();
    assert!(out.contains("-echo hello\n+echo world\n"), "{out}");
    let out = call(
        &reg,
        &mut perms,
        &mut doom,
        "bash",
        json!({"command": "sh hello.sh"}),
        ctx,
        once,
    )
    .await
    .unwrap();
    assert_eq!(out, "world\n\nExit code: 0");
    let err = call(
        &reg,
        &mut perms,
        &mut doom,
        "bash",
        json!({"command": "rm hello.sh"}),
        ctx,
        PermissionReply::Deny,
    )
    .await
    .unwrap_err();
    // the question names the command and that `rm*` is not offered for the session
    assert_eq!(
        err,
        CallError::Refused(
            "rm hello.sh\n(not offered for the session: rm*; \"always\" allows that command only as written)"
                .into()
        )
    );
    assert!(ctx.workspace.join("hello.sh").exists());
}

#[tokio::test]
async fn truncated_output_is_readable_without_asking() {
    let f = fixture();
    let ctx = &f.ctx;
    let reg = Registry::builtin();
    let mut rules = BTreeMap::new();
    rules.insert(
        "bash".to_string(),
        PermissionSetting::Action(PermissionAction::Allow),
    );
    rules.insert(
        "external_directory".to_string(),
        PermissionSetting::Action(PermissionAction::Deny),
    );
    let mut perms = Permissions::new(&rules);
    let mut doom = DoomLoop::default();
    let out = call(
        &reg,
        &mut perms,
        &mut doom,
        "bash",
        json!({"command": "seq 1 500"}),
        ctx,
        PermissionReply::Deny,
    )
    .await
    .unwrap();
    let path = out
        .split_whitespace()
        .find(|w| w.contains("tool-output"))
        .unwrap()
        .trim_end_matches('.')
        .to_string();
    // The data dir is outside the workspace and external_directory is denied, yet the saved
    // output can be read and grepped.
    let page = call(
        &reg,
        &mut perms,
        &mut doom,
        "read",
        json!({"file_path": path, "offset": 250, "limit": 1}),
        ctx,
        PermissionReply::Deny,
    )
    .await
    .unwrap();
    assert!(page.starts_with("   250\t250\n"), "{page}");
    let hits = call(
        &reg,
        &mut perms,
        &mut doom,
        "grep",
        json!({"pattern": "^499$", "path": path}),
        ctx,
        PermissionReply::Deny,
    )
    .await
    .unwrap();
    assert!(hits.ends_with(":499: 499\n"), "{hits}");
    // Cleanup keeps fresh files.
    truncate::cleanup(&ctx.data_dir);
    assert!(std::path::Path::new(&path).exists());
}

#[tokio::test]
async fn always_and_doom_loop() {
    let f = fixture();
    let ctx = &f.ctx;
    let reg = Registry::builtin();
    let mut perms = Permissions::new(&BTreeMap::new());
    let mut doom = DoomLoop::default();
    let input = json!({"command": "echo hi"});
    match perms.check_call(&mut doom, "bash", &input, ctx) {
        Decision::Ask(req) => {
            assert_eq!(req.patterns, ["echo*"]);
            perms.reply(&req, PermissionReply::Always);
        }
        other => panic!("{other:?}"),
    }
    reg.execute("bash", input.clone(), ctx).await.unwrap();
    assert_eq!(
        perms.check_call(&mut doom, "bash", &input, ctx),
        Decision::Allow
    );
    // Third identical call in a row: asks although "echo*" is granted.
    assert!(matches!(
        perms.check_call(&mut doom, "bash", &input, ctx),
        Decision::Ask(_)
    ));
    assert_eq!(
        perms.check_call(&mut doom, "bash", &json!({"command": "echo other"}), ctx),
        Decision::Allow
    );
}
