//! Permission modes (issue 31): plan mode lets only reading tools run, even under `--yes`, and
//! ends with a plan the user accepts; accept-edits writes in the workspace without a question;
//! bypass asks nothing; deny rules hold in every mode.

use crate::support;

use pith_config::PermissionSetting;
use pith_protocol::event::{
    Event, Op, PermissionMode, PermissionReply, SettingsEvent, TurnEnd, TurnEvent,
};
use support::MockServer;
use support::engine::harness_with;
use support::openai;
use support::pith::{PithEnv, last_tool_result, stderr};

fn call(id: &str, tool: &str, args: &str) -> support::MockResponse {
    openai::tool_calls(&[(id, tool, args)], Some((1_000, 5)))
}

#[tokio::test]
async fn plan_mode_refuses_a_write_even_with_yes_and_runs_what_reads() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 32_000, 2_000, "");
    server.push_all([
        call("c1", "write", r#"{"file_path":"plan.txt","content":"x"}"#),
        call("c2", "bash", r#"{"command":"echo hi > note.txt"}"#),
        call("c3", "bash", r#"{"command":"ls"}"#),
        openai::text("Here is the plan.", Some((1_200, 5))),
    ]);
    let (out, _) = env
        .run_json(&["--yes", "--permission-mode", "plan", "plan the change"])
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        !env.path().join("plan.txt").exists(),
        "the write ran in plan mode"
    );
    assert!(
        !env.path().join("note.txt").exists(),
        "the command wrote in plan mode"
    );
    let reqs = server.requests();
    let second =
        support::message_text(reqs[1].body["messages"].as_array().unwrap().last().unwrap());
    assert!(second.contains("plan mode"), "{second}");
    // The model is told it is planning, and is offered the tool that presents the plan.
    let first = reqs[0].body.to_string();
    assert!(first.contains("You are in plan mode"), "{first}");
    assert!(first.contains("exit_plan_mode"));
    let ls = last_tool_result(&server);
    assert!(!ls.contains("plan mode"), "ls is a read: {ls}");
}

/// Issue 37: plan mode reads a command's options as the command does — combined flags, an
/// attached argument, `--expression`, an abbreviated long option — so none of these writes,
/// even under `--yes`.
#[tokio::test]
async fn plan_mode_sees_writing_options_however_they_are_spelt() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 32_000, 2_000, "");
    std::fs::write(env.path().join("keep.txt"), "b\na\n").unwrap();
    let lines = [
        "sed -ni q keep.txt",
        "sed -in p keep.txt",
        "sed -n --expression='w stolen.txt' keep.txt",
        "sort -uo sorted.txt keep.txt",
        "sort --out=sorted2.txt keep.txt",
    ];
    let mut replies: Vec<support::MockResponse> = lines
        .iter()
        .enumerate()
        .map(|(i, line)| {
            let args = serde_json::json!({ "command": line }).to_string();
            call(&format!("c{i}"), "bash", &args)
        })
        .collect();
    replies.push(openai::text("Here is the plan.", Some((1_200, 5))));
    server.push_all(replies);
    let (out, _) = env
        .run_json(&["--yes", "--permission-mode", "plan", "plan the change"])
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(env.path().join("keep.txt")).unwrap(),
        "b\na\n",
        "a sed in plan mode changed the file"
    );
    for made in ["stolen.txt", "sorted.txt", "sorted2.txt", "keep.txtn"] {
        assert!(
            !env.path().join(made).exists(),
            "{made} was written in plan mode"
        );
    }
}

#[tokio::test]
async fn accept_edits_writes_in_the_workspace_without_a_question() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 32_000, 2_000, "");
    server.push_all([
        call("c1", "write", r#"{"file_path":"a.txt","content":"hello"}"#),
        call("c2", "bash", r#"{"command":"touch b.txt"}"#),
        openai::text("done", Some((1_200, 5))),
    ]);
    let (out, _) = env
        .run_json(&["--permission-mode", "accept-edits", "write a file"])
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(env.path().join("a.txt")).unwrap(),
        "hello"
    );
    assert!(
        !env.path().join("b.txt").exists(),
        "a command still asks (refused headless)"
    );
}

#[tokio::test]
async fn bypass_asks_nothing_but_a_deny_rule_holds() {
    let server = MockServer::start().await;
    let env = PithEnv::new(
        &server.url(),
        32_000,
        2_000,
        "[permission]\nwrite = { \"secret*\" = \"deny\" }\n",
    );
    server.push_all([
        call("c1", "bash", r#"{"command":"touch ran.txt"}"#),
        call("c2", "write", r#"{"file_path":"secret.txt","content":"x"}"#),
        openai::text("done", Some((1_200, 5))),
    ]);
    let (out, _) = env.run_json(&["--permission-mode", "bypass", "go"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(env.path().join("ran.txt").exists(), "bypass asks nothing");
    assert!(
        !env.path().join("secret.txt").exists(),
        "the deny rule holds"
    );
    assert!(
        last_tool_result(&server).to_lowercase().contains("deny")
            || last_tool_result(&server).contains("not allowed")
    );
}

/// In the TUI's engine: the plan is put to the user; accepted, plan mode ends and a write runs.
#[tokio::test]
async fn an_accepted_plan_ends_plan_mode() {
    let mut h = harness_with(
        vec![(
            "write",
            PermissionSetting::Action(pith_config::PermissionAction::Allow),
        )],
        false,
        |c| {
            c.permission_mode = PermissionMode::Plan;
        },
    )
    .await;
    h.server.push_all([
        call("c1", "exit_plan_mode", r#"{"plan":"1. Write a.txt"}"#),
        call("c2", "write", r#"{"file_path":"a.txt","content":"done"}"#),
        openai::text("Done.", Some((1_200, 5))),
    ]);
    h.send(Op::user_turn("plan, then do it"));
    let req = h.permission_asked().await;
    assert_eq!(req.tool, "exit_plan_mode");
    h.send(Op::PermissionReply {
        id: req.id,
        reply: PermissionReply::Once,
        message: None,
    });
    h.until("mode change", |e| {
        matches!(
            e,
            Event::Settings(SettingsEvent::PermissionModeChanged {
                mode: PermissionMode::Default,
                ..
            })
        )
    })
    .await;
    assert_eq!(h.turn_finished().await, TurnEnd::Stop);
    assert_eq!(
        std::fs::read_to_string(h.workspace.path().join("a.txt")).unwrap(),
        "done"
    );
    let results = h.tool_results(2);
    assert!(results[0].contains("accepted the plan"), "{results:?}");
}

/// A mode change sent just before a prompt applies to that prompt: the engine's runner reads
/// its prompt queue before its control channel, so the change must not wait behind it.
#[tokio::test]
async fn a_mode_change_sent_before_a_prompt_applies_to_it() {
    for _ in 0..20 {
        let mut h = harness_with(vec![], false, |_| {}).await;
        h.server.push_all([
            call("c1", "write", r#"{"file_path":"x.txt","content":"x"}"#),
            openai::text("ok", Some((1_200, 5))),
        ]);
        h.send(Op::SetPermissionMode {
            mode: PermissionMode::Plan,
        });
        h.send(Op::user_turn("write x"));
        assert_eq!(h.turn_finished().await, TurnEnd::Stop);
        assert!(!h.workspace.path().join("x.txt").exists());
        assert!(
            h.tool_results(1)[0].contains("plan mode"),
            "{:?}",
            h.tool_results(1)
        );
    }
}

/// Plan mode cannot write by construction (issue 37): what the classifier lets through runs
/// in the read-only sandbox, so a writing flag it misses (`sed -ni`, which truncates) changes
/// nothing, and the command finds the workspace read-only.
#[tokio::test]
async fn plan_mode_commands_run_with_the_workspace_read_only() {
    if !super::security_sandbox::sandbox_supported() {
        return;
    }
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 32_000, 2_000, "");
    std::fs::write(env.path().join("f.txt"), "keep me\n").unwrap();
    server.push_all([
        call("c1", "bash", r#"{"command":"sed -ni q f.txt"}"#),
        call(
            "c2",
            "bash",
            r#"{"command":"test -w . && echo WRITABLE || echo READ-ONLY"}"#,
        ),
        openai::text("Here is the plan.", Some((1_200, 5))),
    ]);
    let (out, _) = env
        .run_json(&["--yes", "--permission-mode", "plan", "plan the change"])
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(env.path().join("f.txt")).unwrap(),
        "keep me\n",
        "a plan-mode command truncated a file"
    );
    if pith_tools::sandbox::support().has_namespaces() {
        let probe = last_tool_result(&server);
        assert!(probe.contains("READ-ONLY"), "{probe}");
    }
}

/// Issue 38: "Yes, and auto-accept edits" (always) leaves plan mode for accept-edits, where a
/// write in the workspace runs without a question; "No, keep planning" (deny) stays in plan
/// mode and tells the model to keep planning.
#[tokio::test]
async fn each_answer_to_a_plan_chooses_what_comes_next() {
    let mut h = harness_with(vec![], false, |c| {
        c.permission_mode = PermissionMode::Plan;
    })
    .await;
    h.server.push_all([
        call("c1", "exit_plan_mode", r#"{"plan":"1. Write a.txt"}"#),
        call("c2", "write", r#"{"file_path":"a.txt","content":"done"}"#),
        openai::text("Done.", Some((1_200, 5))),
    ]);
    h.send(Op::user_turn("plan, then do it"));
    let req = h.permission_asked().await;
    assert_eq!(req.tool, "exit_plan_mode");
    h.send(Op::PermissionReply {
        id: req.id,
        reply: PermissionReply::Always,
        message: None,
    });
    h.until("accept-edits", |e| {
        matches!(
            e,
            Event::Settings(SettingsEvent::PermissionModeChanged {
                mode: PermissionMode::AcceptEdits,
                ..
            })
        )
    })
    .await;
    // the write runs with no question
    assert_eq!(h.turn_finished().await, TurnEnd::Stop);
    assert_eq!(
        std::fs::read_to_string(h.workspace.path().join("a.txt")).unwrap(),
        "done"
    );
    assert!(h.tool_results(2)[0].contains("accepted the plan"));

    let mut h = harness_with(vec![], false, |c| {
        c.permission_mode = PermissionMode::Plan;
    })
    .await;
    h.server.push_all([
        call("c1", "exit_plan_mode", r#"{"plan":"1. Write a.txt"}"#),
        openai::text("What should change?", Some((1_200, 5))),
    ]);
    h.send(Op::user_turn("plan it"));
    let req = h.permission_asked().await;
    h.send(Op::PermissionReply {
        id: req.id,
        reply: PermissionReply::Deny,
        message: None,
    });
    assert_eq!(h.turn_finished().await, TurnEnd::Stop);
    let results = h.tool_results(1);
    assert!(results[0].contains("keep planning"), "{results:?}");
    // still planning: a write is refused
    h.server.push_all([
        call("c2", "write", r#"{"file_path":"b.txt","content":"x"}"#),
        openai::text("ok", Some((1_200, 5))),
    ]);
    h.send(Op::user_turn("write it anyway"));
    assert_eq!(h.turn_finished().await, TurnEnd::Stop);
    assert!(!h.workspace.path().join("b.txt").exists());
}

/// Red-team finding 8b: a mode change reaches a sub-agent already running. The child's first
/// write asks; while it waits the user switches to plan mode and then approves it; the
/// child's next write is refused by plan mode (before: the child kept its own copy of the
/// old mode and asked, or with accept-edits wrote).
#[tokio::test]
async fn plan_mode_reaches_a_running_sub_agent() {
    let mut h = harness_with(vec![], false, |c| {
        c.permission.insert(
            "write".into(),
            PermissionSetting::Action(pith_config::PermissionAction::Ask),
        );
    })
    .await;
    h.server.respond_with(|body| {
        let child = body["messages"][0]["content"]
            .as_str()
            .is_some_and(|s| s.contains("You are a sub-agent"));
        let done = body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "tool")
            .count();
        match (child, done) {
            (true, 0) => call("a", "write", r#"{"file_path":"a.txt","content":"a"}"#),
            (true, 1) => call("b", "write", r#"{"file_path":"b.txt","content":"b"}"#),
            (true, _) => openai::text("child done", Some((800, 5))),
            (false, 0) => call(
                "t1",
                "task",
                r#"{"description":"job","prompt":"write two files","agent":"general"}"#,
            ),
            (false, _) => openai::text("ok", Some((900, 5))),
        }
    });
    h.send(Op::user_turn("go"));
    let asked = h.permission_asked().await;
    h.send(Op::SetPermissionMode {
        mode: PermissionMode::Plan,
    });
    h.send(Op::PermissionReply {
        id: asked.id,
        reply: PermissionReply::Once,
        message: None,
    });
    let mut asked_again = false;
    loop {
        let ev = h
            .until("the end or a question", |e| {
                matches!(
                    e,
                    Event::Turn(TurnEvent::PermissionAsked(_))
                        | Event::Turn(TurnEvent::TurnFinished { .. })
                )
            })
            .await;
        match ev {
            Event::Turn(TurnEvent::PermissionAsked(req)) => {
                asked_again = true;
                h.send(Op::PermissionReply {
                    id: req.id,
                    reply: PermissionReply::Deny,
                    message: None,
                });
            }
            _ => break,
        }
    }
    assert!(h.workspace.path().join("a.txt").exists());
    assert!(!h.workspace.path().join("b.txt").exists());
    assert!(
        !asked_again,
        "the child still asked: it did not see plan mode"
    );
}
