use serde_json::json;

use crate::test_parts::{Parts, Scripted};
use pith_protocol::message::{Message, PartKind, Role, ToolState, ToolTime};

/// Saves and counts `m` in the parts' session.
fn push(p: &mut Parts, m: Message) {
    p.meter.add_message(&m);
    p.log.save_message(&m);
    p.log.push(m);
}

fn user(p: &Parts, text: &str) -> Message {
    let mut m = Message::new(p.log.session_id(), Role::User);
    m.push(PartKind::Text {
        text: text.into(),
        synthetic: false,
    });
    m
}

/// An assistant step: `text` (when not empty), then a `bash` call of `command` that exited
/// with `exit`.
fn step(p: &Parts, text: &str, call: &str, command: &str, exit: i32) -> Message {
    let mut m = Message::new(p.log.session_id(), Role::Assistant);
    if !text.is_empty() {
        m.push(PartKind::Text {
            text: text.into(),
            synthetic: false,
        });
    }
    m.push(PartKind::Tool {
        call_id: call.into(),
        tool: "bash".into(),
        input: json!({ "command": command }),
        state: ToolState::Completed {
            output: format!("{} ", "output".repeat(200)),
            title: command.into(),
            metadata: json!({ "command": command, "exit_code": exit }),
            time: ToolTime {
                start: 1,
                end: 2,
                compacted: None,
            },
        },
    });
    m.finish = Some(pith_protocol::llm::FinishReason::ToolCalls);
    m
}

/// A summary written in the background is installed later than it was planned: the frontier
/// it carries is the session's at the swap — the check run since, the step in hand and the
/// step announced since — not the one planned with it.
#[test]
fn the_frontier_at_a_swap_is_the_sessions_then_not_the_planned_one() {
    let mut p = Parts::new(Scripted::new(Vec::new()));
    for i in 0..4 {
        let u = user(&p, &format!("Request {i}: {}", "words ".repeat(300)));
        push(&mut p, u);
        let s = step(
            &p,
            "Let me run the tests.",
            &format!("t{i}"),
            "cargo test",
            101,
        );
        push(&mut p, s);
    }
    let (planned, n) = {
        let mut turn = p.turn();
        let mut planner = turn.planner();
        let budget = planner.budget();
        let (cut, carried) = planner.plan_cut(&budget, 500, true);
        (carried, cut.tail.start)
    };
    assert!(n > 0, "something is summarised");
    let f = &planned.frontier;
    assert_eq!(f.verified.len(), 1, "{f:?}");
    // with no report line, what the run printed last
    assert!(
        f.verified[0]
            .result
            .starts_with("failed (exit 101): output"),
        "{f:?}"
    );
    assert_eq!(f.next.as_deref(), Some("Let me run the tests."));

    // The session goes on while the summary is written.
    let later = step(
        &p,
        "Fixed the bound. Next, I'll run clippy on the parser.",
        "t9",
        "timeout 600 cargo test 2>&1",
        0,
    );
    push(&mut p, later);
    let swapped = p.turn().planner().carried_at_swap(planned, n);

    let f = &swapped.frontier;
    let runs: Vec<_> = f
        .verified
        .iter()
        .map(|c| (c.command.as_str(), c.passed, c.recall.as_deref()))
        .collect();
    assert_eq!(runs, [("cargo test", Some(true), Some("t9"))]);
    // the failing run before it is the check's first run
    assert!(
        f.verified[0]
            .before
            .as_deref()
            .is_some_and(|b| b.starts_with("failed (exit 101)")),
        "{f:?}"
    );
    assert_eq!(
        f.next.as_deref(),
        Some("Next, I'll run clippy on the parser.")
    );
    assert_eq!(
        f.in_progress,
        ["bash timeout 600 cargo test 2>&1 [t9]"],
        "the step in hand at the swap"
    );
}

/// A user message one compaction carried whole and a later one cuts keeps the id of the stored
/// message it came from, so the later note lists it for `recall`.
#[test]
fn a_message_carried_once_and_cut_later_keeps_its_id() {
    use pith_protocol::message::{Carried, CompactionPart};
    let mut p = Parts::new(Scripted::new(Vec::new()));
    // the message itself left the view with the first compaction (not in this view)
    let first_id = "01FIRSTMESSAGE".to_string();
    let mut c = Message::new(p.log.session_id(), Role::User);
    c.push(PartKind::Compaction(CompactionPart {
        auto: true,
        carried: Box::new(Carried {
            user_messages: vec![format!(
                "Keep port 5433 and region eu-west-3. {}",
                "words ".repeat(400)
            )],
            user_message_ids: vec![Some(first_id.clone())],
            ..Carried::default()
        }),
        ..Default::default()
    }));
    let mut summary = Message::new(p.log.session_id(), Role::Assistant);
    summary.summary = true;
    summary.parent_id = Some(c.id.clone());
    summary.finish = Some(pith_protocol::llm::FinishReason::Stop);
    summary.push(PartKind::Text {
        text: "What did we do so far?".into(),
        synthetic: false,
    });
    push(&mut p, c);
    push(&mut p, summary);
    for i in 0..3 {
        let u = user(&p, &format!("Request {i}: {}", "more ".repeat(300)));
        push(&mut p, u);
        let s = step(&p, "Running it.", &format!("t{i}"), "cargo test", 0);
        push(&mut p, s);
    }
    let mut turn = p.turn();
    let mut planner = turn.planner();
    let budget = planner.budget();
    let (_, mut carried) = planner.plan_cut(&budget, 500, false);
    planner.carry_users(&mut carried, 120);
    assert!(
        carried
            .uncarried
            .iter()
            .any(|s| s.id.as_deref() == Some(first_id.as_str())),
        "{:?}",
        carried.uncarried
    );
    // what is carried says where each message came from, by position
    assert_eq!(carried.user_message_ids.len(), carried.user_messages.len());
}
