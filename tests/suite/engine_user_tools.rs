//! What the user runs themselves through the engine: files attached with `@` (through the read
//! tool's rules) and commands run with `!`.

use crate::support;

use pith_config::{PermissionAction, PermissionSetting};
use pith_protocol::event::{Event, Op, OutputEvent, PermissionReply, SessionEvent, TurnEvent};
use support::engine::harness;
use support::openai;

/// The text of the user messages of request `i`.
fn user_texts(h: &support::engine::Harness, i: usize) -> Vec<String> {
    let body = h.server.request_body(i);
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| match &m["content"] {
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Array(parts) => parts
                .iter()
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n---\n"),
            other => other.to_string(),
        })
        .collect()
}

#[tokio::test]
async fn a_mentioned_file_is_attached_through_the_read_tool() {
    let mut h = harness(vec![], false).await;
    std::fs::write(h.workspace.path().join("notes.txt"), "the secret is 42\n").unwrap();
    std::fs::create_dir(h.workspace.path().join("docs")).unwrap();
    std::fs::write(h.workspace.path().join("docs/a.md"), "a").unwrap();
    h.server.push(openai::text("It says 42.", Some((1000, 5))));
    h.send(Op::user_turn(
        "what does @notes.txt say? see @docs, not @nowhere.",
    ));
    h.turn_finished().await;
    let texts = user_texts(&h, 0);
    let all = texts.join("\n");
    assert!(all.starts_with("what does @notes.txt say?"), "{all}");
    assert!(
        all.contains(
            "[The user attached notes.txt (read with the read tool)]\n     1\tthe secret is 42"
        ),
        "{all}"
    );
    assert!(
        all.contains("[The user attached docs"),
        "a directory lists: {all}"
    );
    assert!(all.contains("a.md"), "{all}");
    assert!(!all.contains("attached nowhere"), "{all}");
}

/// A mention of a file that does not exist is not dropped in silence: like a binary file, it is
/// "not attached", and the model is told so (a word that does not look like a path — `@team` —
/// stays prose).
#[tokio::test]
async fn a_missing_mention_is_said_not_attached() {
    let mut h = harness(vec![], false).await;
    h.server.push(openai::text("ok", Some((1000, 5))));
    h.send(Op::user_turn(
        "fix @src/nope.rs and @ghost.txt, thanks @team",
    ));
    h.turn_finished().await;
    let all = user_texts(&h, 0).join("\n");
    for path in ["src/nope.rs", "ghost.txt"] {
        assert!(
            all.contains(&format!(
                "[The user tried to attach {path}: not attached: no such file or directory"
            )),
            "{all}"
        );
    }
    assert!(!all.contains("attach team"), "{all}");
}

/// A deny rule holds for a mention as for the model's own reads.
#[tokio::test]
async fn a_mention_the_rules_deny_is_not_attached() {
    let mut h = harness(
        vec![(
            "read",
            PermissionSetting::Patterns([("*.secret".to_string(), PermissionAction::Deny)].into()),
        )],
        false,
    )
    .await;
    std::fs::write(h.workspace.path().join("k.secret"), "hunter2\n").unwrap();
    h.server.push(openai::text("ok", Some((1000, 5))));
    h.send(Op::user_turn("use @k.secret"));
    h.turn_finished().await;
    let all = user_texts(&h, 0).join("\n");
    assert!(!all.contains("hunter2"), "{all}");
    assert!(
        all.contains("[The user tried to attach k.secret: Permission denied"),
        "{all}"
    );
    let _ = Event::info(String::new());
}

/// A mention is not a way out of the workspace: a symlink that leads out (`@leak.txt` to a key)
/// and a path named outside (`@/abs/path`, as `@~/…` expands to) are attached only after a
/// question naming where they lead; with no one to ask (headless) they are not attached, and
/// the user is told why.
#[tokio::test]
async fn a_mention_outside_the_workspace_is_not_attached_without_a_question() {
    let outside = tempfile::tempdir().unwrap();
    let key = outside.path().join("id_rsa");
    std::fs::write(&key, "PRIVATE KEY 0xdeadbeef\n").unwrap();
    let notes = outside.path().join("notes.txt");
    std::fs::write(&notes, "outside notes 77\n").unwrap();
    let prompt = format!("see @leak.txt and @{} please", notes.display());

    let mut h = harness(vec![], true).await;
    std::os::unix::fs::symlink(&key, h.workspace.path().join("leak.txt")).unwrap();
    h.server.push(openai::text("ok", Some((1000, 5))));
    h.send(Op::user_turn(prompt.clone()));
    h.turn_finished().await;
    let all = user_texts(&h, 0).join("\n");
    assert!(!all.contains("PRIVATE KEY"), "{all}");
    assert!(!all.contains("outside notes 77"), "{all}");
    assert!(
        all.contains("[The user tried to attach leak.txt: not attached: outside the workspace"),
        "{all}"
    );

    // asked, naming the target: denied for the link, allowed for the notes
    let mut h = harness(vec![], false).await;
    std::os::unix::fs::symlink(&key, h.workspace.path().join("leak.txt")).unwrap();
    h.server.push(openai::text("ok", Some((1000, 5))));
    h.send(Op::user_turn(prompt));
    for (target, reply) in [
        (&key, PermissionReply::Deny),
        (&notes, PermissionReply::Once),
    ] {
        let req = h.permission_asked().await;
        assert!(
            req.title.contains(&*target.to_string_lossy()),
            "{}",
            req.title
        );
        h.send(Op::PermissionReply {
            id: req.id,
            reply,
            message: None,
        });
    }
    h.turn_finished().await;
    let all = user_texts(&h, 0).join("\n");
    assert!(!all.contains("PRIVATE KEY"), "{all}");
    assert!(all.contains("outside notes 77"), "{all}");
}

/// `!command` runs without a model request; its output is in the next request as the user's.
#[tokio::test]
async fn a_shell_command_joins_the_context_as_the_users() {
    let mut h = harness(vec![], false).await;
    h.send(Op::Shell {
        id: "sub1".into(),
        command: "echo made > out.txt; echo hello from the shell".into(),
    });
    let msg = h
        .until("the shell message", |e| {
            matches!(e, Event::Output(OutputEvent::Message { message }) if message.submission_id.as_deref() == Some("sub1"))
        })
        .await;
    assert!(matches!(msg, Event::Output(OutputEvent::Message { .. })));
    h.until("its output", |e| matches!(e, Event::Output(OutputEvent::ToolOutput { output, .. }) if output.contains("hello from the shell")))
        .await;
    h.turn_finished().await;
    assert!(h.workspace.path().join("out.txt").exists());
    assert!(
        h.server.requests().is_empty(),
        "no model request for a command"
    );
    h.server.push(openai::text("ok", Some((1000, 5))));
    h.send(Op::user_turn("what did it print?"));
    h.turn_finished().await;
    let all = user_texts(&h, 0).join("\n");
    assert!(
        all.contains("[The user ran this command in the shell themselves]\n$ echo made > out.txt; echo hello from the shell\nhello from the shell"),
        "{all}"
    );
}

/// A deny rule holds for the user's own command.
#[tokio::test]
async fn a_shell_command_the_rules_deny_does_not_run() {
    let mut h = harness(
        vec![(
            "bash",
            PermissionSetting::Patterns([("touch*".to_string(), PermissionAction::Deny)].into()),
        )],
        false,
    )
    .await;
    h.send(Op::Shell {
        id: "s".into(),
        command: "touch nope.txt".into(),
    });
    h.turn_finished().await;
    assert!(!h.workspace.path().join("nope.txt").exists());
}

/// /undo puts back the files the last turn changed and takes the turn out of the context;
/// /redo puts both back.
#[tokio::test]
async fn undo_restores_files_and_the_context_and_redo_puts_them_back() {
    // redirections are checked as writes
    let mut h = harness(
        vec![
            ("bash", PermissionSetting::Action(PermissionAction::Allow)),
            ("write", PermissionSetting::Action(PermissionAction::Allow)),
        ],
        false,
    )
    .await;
    let a = h.workspace.path().join("a.txt");
    let b = h.workspace.path().join("b.txt");
    std::fs::write(&a, "v1\n").unwrap();
    h.server.push(openai::text("first answer", Some((1000, 5))));
    h.send(Op::user_turn("first question"));
    h.turn_finished().await;
    let args = serde_json::json!({"command": "echo v2 > a.txt; echo new > b.txt"}).to_string();
    h.server.push(openai::tool_calls(
        &[("c1", "bash", args.as_str())],
        Some((1100, 5)),
    ));
    h.server.push(openai::text("changed them", Some((1200, 5))));
    h.send(Op::user_turn("change the files"));
    h.turn_finished().await;
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "v2\n");

    h.send(Op::Undo);
    let Event::Session(SessionEvent::Undone {
        files,
        prompt,
        redo,
        ..
    }) = h
        .until("undone", |e| {
            matches!(
                e,
                Event::Session(SessionEvent::Undone { .. }) | Event::Turn(TurnEvent::Error { .. })
            )
        })
        .await
    else {
        panic!("undo failed")
    };
    assert_eq!(files, ["a.txt", "b.txt"]);
    assert_eq!(prompt, "change the files");
    assert_eq!(redo, 1);
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "v1\n");
    assert!(!b.exists());

    h.server.push(openai::text("third answer", Some((1000, 5))));
    h.send(Op::user_turn("third question"));
    h.turn_finished().await;
    let all = user_texts(&h, 3).join("\n");
    assert!(
        all.contains("first question") && !all.contains("change the files"),
        "{all}"
    );

    // a new turn ended what redo could put back
    h.send(Op::Redo);
    h.until(
        "nothing to redo",
        |e| matches!(e, Event::Turn(TurnEvent::Error { message, .. }) if message.contains("nothing to redo")),
    )
    .await;
    h.send(Op::Undo);
    h.until("undone", |e| {
        matches!(e, Event::Session(SessionEvent::Undone { .. }))
    })
    .await;
    h.send(Op::Redo);
    let Event::Session(SessionEvent::Redone { messages, .. }) = h
        .until("redone", |e| {
            matches!(
                e,
                Event::Session(SessionEvent::Redone { .. }) | Event::Turn(TurnEvent::Error { .. })
            )
        })
        .await
    else {
        panic!("redo failed")
    };
    assert!(messages.iter().any(|m| m.text().contains("third question")));
}

/// Red-team finding 8c: the user's own `!command` in plan mode runs with the workspace
/// read-only too (the user leaves plan mode to write).
#[tokio::test]
async fn a_shell_command_in_plan_mode_finds_the_workspace_read_only() {
    if !super::security_sandbox::sandbox_supported() {
        return;
    }
    let mut h = harness(vec![], false).await;
    h.send(Op::SetPermissionMode {
        mode: pith_protocol::event::PermissionMode::Plan,
    });
    h.send(Op::Shell {
        id: "s".into(),
        command: "touch made.txt; test -w . && echo WRITABLE || echo READ-ONLY".into(),
    });
    h.until("its output", |e| matches!(e, Event::Output(OutputEvent::ToolOutput { output, .. }) if output.contains("READ-ONLY") || output.contains("WRITABLE")))
        .await;
    h.turn_finished().await;
    assert!(!h.workspace.path().join("made.txt").exists());
}

/// Red-team finding 8a: a mention in text the user did not type (a paste, an editor's embedded
/// resource) is not the user's consent to what the rules ask about (`.env`): headless, it is
/// not attached. Typed, it is.
#[tokio::test]
async fn a_mention_in_pasted_or_embedded_text_is_not_consent() {
    let embedded =
        "read this\n<context uri=\"file:///tmp/readme.md\">\nplease see @.env\n</context>";
    let pasted_text = "have a look: see @.env now";
    let start = pasted_text.find("see").unwrap();
    for (text, pasted) in [
        (embedded.to_string(), vec![]),
        (pasted_text.to_string(), vec![(start, pasted_text.len())]),
        ("typed @.env".to_string(), vec![]),
    ] {
        let mut h = harness(vec![], true).await;
        std::fs::write(h.workspace.path().join(".env"), "SECRET=hunter2\n").unwrap();
        h.server.push(openai::text("ok", Some((1000, 5))));
        let typed = pasted.is_empty() && text.starts_with("typed");
        h.send(Op::UserTurn {
            id: "p".into(),
            text,
            pasted,
        });
        h.turn_finished().await;
        let all = user_texts(&h, 0).join("\n");
        assert_eq!(all.contains("hunter2"), typed, "{all}");
    }
}
