//! `/goal` through the real engine against the scripted mock (ARCHITECTURE.md §5.2): the model
//! goes back to work after each turn until the check command passes or the model, asked in a
//! side request, says MET; the turns and tokens budgets always stop it; pause, resume and
//! clear; a resumed session has its goal; the goal is in every request, through compactions
//! with a summariser that forgets it; twenty-five goal turns stay bounded; `pith run --goal`
//! prints the goal's events and exits 1 when it is not met.

use crate::support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use pith_config::{Config, PermissionAction, PermissionSetting};
use pith_protocol::event::{
    BudgetUnit, ContextEvent, Event, Goal, GoalAction, GoalBudget, GoalCheckBy, GoalStatus, Op,
    SessionEvent, TurnEnd, TurnEvent,
};
use pith_store::Store;
use serde_json::Value;
use support::engine::{Harness, harness_with};
use support::openai;
use support::pith::{PithEnv, of_type, stderr};

const GOAL: &str = "GOAL-4471: the file done.txt exists in the workspace";

fn goal_op(action: GoalAction) -> Op {
    Op::Goal {
        id: pith_protocol::message::new_id(),
        action,
    }
}

fn set(text: &str, budget: Option<(u64, BudgetUnit)>) -> Op {
    goal_op(GoalAction::Set {
        text: text.into(),
        budget: budget.map(|(limit, unit)| GoalBudget { limit, unit }),
    })
}

/// What a goal's run sent, up to its turn's end.
#[derive(Default, Debug)]
struct Run {
    checks: Vec<(bool, GoalCheckBy, String)>,
    changes: Vec<Option<Goal>>,
    infos: Vec<String>,
    compactions: usize,
    end: Option<TurnEnd>,
}

impl Run {
    fn last(&self) -> Goal {
        self.changes.last().cloned().flatten().expect("a goal")
    }
}

async fn run(h: &mut Harness) -> Run {
    let mut r = Run::default();
    loop {
        match h.until("goal events", |_| true).await {
            Event::Turn(TurnEvent::GoalChecked { met, by, detail }) => {
                r.checks.push((met, by, detail))
            }
            Event::Session(SessionEvent::GoalChanged { goal }) => r.changes.push(goal),
            Event::Turn(TurnEvent::Info { message }) => r.infos.push(message),
            Event::Context(ContextEvent::CompactionFinished { .. }) => r.compactions += 1,
            Event::Turn(TurnEvent::TurnFinished { reason }) => {
                r.end = Some(reason);
                return r;
            }
            _ => {}
        }
    }
}

/// The goal a `/goal`, `pause` or `clear` is answered with (the event naming its submission).
async fn answered(h: &mut Harness, op: Op) -> Option<Goal> {
    let id = op.own_id().unwrap().to_string();
    h.send(op);
    let msg = h
        .until_msg("the goal", |m| {
            m.submission() == Some(&id)
                && matches!(
                    m.event,
                    Event::Session(SessionEvent::GoalChanged { .. })
                        | Event::Turn(TurnEvent::Error { .. })
                )
        })
        .await;
    match msg.event {
        Event::Session(SessionEvent::GoalChanged { goal }) => goal,
        other => panic!("not answered with the goal: {other:?}"),
    }
}

fn last_user_text(body: &Value) -> String {
    support::message_text(body["messages"].as_array().unwrap().last().unwrap())
}

fn is_check(body: &Value) -> bool {
    last_user_text(body).contains("pith checks whether the user's goal is met")
}

fn system_text(body: &Value) -> String {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "system")
        .map(support::message_text)
        .collect::<Vec<_>>()
        .join("\n")
}

fn allow_bash_and_write() -> Vec<(&'static str, PermissionSetting)> {
    let allow = || PermissionSetting::Action(PermissionAction::Allow);
    vec![("bash", allow()), ("write", allow())]
}

#[tokio::test]
async fn a_goal_goes_on_until_the_check_command_passes() {
    let mut h = harness_with(allow_bash_and_write(), true, |c: &mut Config| {
        c.goal.check = Some(
            "test -f done.txt && echo present || { echo 'done.txt is missing'; exit 1; }".into(),
        );
    })
    .await;
    h.server.push_all([
        openai::text("I looked around.", Some((1_000, 5))),
        openai::text("Still thinking about it.", Some((1_100, 5))),
        openai::tool_calls(
            &[("c1", "write", r#"{"path":"done.txt","content":"ok\n"}"#)],
            Some((1_200, 5)),
        ),
        openai::text("Wrote done.txt.", Some((1_300, 5))),
    ]);
    h.send(set(GOAL, Some((1_000, BudgetUnit::Turns))));
    let r = run(&mut h).await;
    assert_eq!(r.end, Some(TurnEnd::Stop));
    let verdicts: Vec<bool> = r.checks.iter().map(|c| c.0).collect();
    assert!(
        r.checks.iter().all(|c| c.1 == GoalCheckBy::Command),
        "{r:?}"
    );
    assert_eq!(verdicts, [false, false, true], "{r:?}");
    assert!(r.checks[0].2.contains("done.txt is missing"), "{r:?}");
    let goal = r.last();
    assert_eq!(goal.status, GoalStatus::Met);
    assert_eq!(goal.turns as usize, r.checks.len());
    assert!(
        r.infos.iter().any(|i| i.starts_with("goal met after")),
        "{r:?}"
    );
    // each continuation names the goal, its turn and what the check printed
    let body = h.server.request_body(1);
    let note = last_user_text(&body);
    assert!(note.contains("goal turn 2 of 1000"), "{note}");
    assert!(
        note.contains(GOAL) && note.contains("done.txt is missing"),
        "{note}"
    );
    // every request carries the goal in the system prompt while it is active
    for i in 0..h.server.requests().len() {
        let system = system_text(&h.server.request_body(i));
        assert!(system.contains(&format!("Goal: {GOAL}")), "request {i}");
        assert!(system.contains("`test -f done.txt"), "request {i}");
    }
    // met: the goal leaves the system prompt
    h.server.push(openai::text("hello", Some((1_400, 5))));
    h.send(Op::user_turn("thanks"));
    let r = run(&mut h).await;
    assert!(r.checks.is_empty(), "a met goal is not checked again");
    let system = system_text(&h.server.request_body(h.server.requests().len() - 1));
    assert!(!system.contains(GOAL), "{system}");
}

#[tokio::test]
async fn without_a_check_command_the_model_is_asked_until_it_says_met() {
    let mut h = harness_with(vec![], true, |_| {}).await;
    h.server.push_all([
        openai::text("Step one done.", Some((1_000, 10))),
        openai::text("CONTINUE: the second half is missing", Some((1_050, 8))),
        openai::text("Step two done.", Some((1_100, 10))),
        openai::text("**MET**: both halves are written", Some((1_150, 8))),
    ]);
    h.send(set("both halves are written", None));
    let r = run(&mut h).await;
    assert_eq!(r.end, Some(TurnEnd::Stop));
    assert_eq!(
        r.checks,
        [
            (
                false,
                GoalCheckBy::Model,
                "the second half is missing".to_string()
            ),
            (
                true,
                GoalCheckBy::Model,
                "both halves are written".to_string()
            ),
        ]
    );
    let goal = r.last();
    assert_eq!((goal.status, goal.turns), (GoalStatus::Met, 2));
    // steps and checks alike: input + output
    assert_eq!(goal.tokens, 1_010 + 1_058 + 1_110 + 1_158);
    // the default budget is goal.max_turns turns
    assert_eq!(
        goal.budget,
        GoalBudget {
            limit: 30,
            unit: BudgetUnit::Turns
        }
    );
    // the check is the session's own request with the question appended (cache-friendly),
    // capped small; the model's reason goes back to it
    let step = h.server.request_body(0);
    let check = h.server.request_body(1);
    assert!(is_check(&check) && !is_check(&step));
    assert_eq!(check["messages"][0], step["messages"][0], "the same prefix");
    assert_eq!(check["max_tokens"], 1024);
    let note = last_user_text(&h.server.request_body(2));
    assert!(
        note.contains("the second half is missing") && note.contains("goal turn 2 of 30"),
        "{note}"
    );
}

#[tokio::test]
async fn a_turns_budget_stops_it_and_resume_grants_another() {
    let mut h = harness_with(vec![], true, |_| {}).await;
    let count = Arc::new(AtomicUsize::new(0));
    let c = count.clone();
    h.server.respond_with(move |body| {
        c.fetch_add(1, Ordering::SeqCst);
        if is_check(body) {
            openai::text("CONTINUE: not yet", Some((500, 4)))
        } else {
            openai::text("working", Some((500, 2)))
        }
    });
    h.send(set("never quite done", Some((3, BudgetUnit::Turns))));
    let r = run(&mut h).await;
    assert_eq!(r.end, Some(TurnEnd::Stop));
    assert_eq!(r.checks.len(), 3);
    assert_eq!(count.load(Ordering::SeqCst), 6, "3 turns, 3 checks");
    let goal = r.last();
    assert_eq!((goal.status, goal.turns), (GoalStatus::BudgetReached, 3));
    assert!(
        r.infos
            .iter()
            .any(|i| i.contains("budget of 3 turns is spent")),
        "{r:?}"
    );
    // nothing more is started for it
    assert_eq!(
        answered(&mut h, goal_op(GoalAction::Show)).await,
        Some(goal.clone())
    );
    // pause leaves a spent goal as it is; resume gives it the same budget again
    let paused = answered(&mut h, goal_op(GoalAction::Pause)).await.unwrap();
    assert_eq!(paused.status, GoalStatus::BudgetReached);
    h.send(goal_op(GoalAction::Resume));
    let r = run(&mut h).await;
    assert_eq!(r.checks.len(), 3);
    assert_eq!(r.last().status, GoalStatus::BudgetReached);
    assert_eq!(count.load(Ordering::SeqCst), 12);
    // clear: no goal, and the store holds none
    assert_eq!(answered(&mut h, goal_op(GoalAction::Clear)).await, None);
    let store = Store::open(h.data.path()).unwrap();
    assert_eq!(store.goal(&h.session_id).unwrap(), None);
    // resume with no goal is refused and ends at once
    h.send(goal_op(GoalAction::Resume));
    let r = run(&mut h).await;
    assert_eq!(r.end, Some(TurnEnd::Error));
}

#[tokio::test]
async fn a_tokens_budget_stops_it() {
    let mut h = harness_with(vec![], true, |_| {}).await;
    h.server.respond_with(|body| {
        if is_check(body) {
            openai::text("CONTINUE: more to do", Some((1_000, 10)))
        } else {
            openai::text("working", Some((1_000, 10)))
        }
    });
    h.send(set("write the report", Some((3_000, BudgetUnit::Tokens))));
    let r = run(&mut h).await;
    let goal = r.last();
    assert_eq!(goal.status, GoalStatus::BudgetReached);
    // turn 1: 2,020 with its check; turn 2 passes 3,000
    assert_eq!((goal.turns, goal.tokens), (2, 4_040));
    assert_eq!(h.server.requests().len(), 4);
    assert!(
        r.infos
            .iter()
            .any(|i| i.contains("budget of 3,000 tokens is spent (2 turns, 4,040 tokens)")),
        "{r:?}"
    );
}

#[tokio::test]
async fn pause_keeps_it_out_of_the_requests_and_a_resumed_session_has_it() {
    let mut h = harness_with(vec![], true, |_| {}).await;
    // a session left with its goal active (pith was stopped mid-way)
    let active = Goal {
        text: GOAL.into(),
        status: GoalStatus::Active,
        budget: GoalBudget {
            limit: 5,
            unit: BudgetUnit::Turns,
        },
        turns: 2,
        tokens: 900,
    };
    Store::open(h.data.path())
        .unwrap()
        .set_goal(&h.session_id, &active)
        .unwrap();
    let paused = answered(&mut h, goal_op(GoalAction::Pause)).await.unwrap();
    assert_eq!(
        paused,
        Goal {
            status: GoalStatus::Paused,
            ..active
        }
    );
    h.server
        .push(openai::text("something else, done", Some((500, 2))));
    h.send(Op::user_turn("something else"));
    let r = run(&mut h).await;
    assert!(r.checks.is_empty(), "a paused goal is not checked");
    assert_eq!(h.server.requests().len(), 1);
    let system = system_text(&h.server.request_body(0));
    assert!(!system.contains(GOAL), "{system}");

    // the session is left and resumed in a new engine: its goal comes with it, paused
    h.send(Op::Shutdown);
    let Harness {
        handle,
        data,
        workspace,
        session_id,
        server,
    } = h;
    handle.done.await.expect("the first engine ends");
    let store = Arc::new(Store::open(data.path()).unwrap());
    let session = store.get_session(&session_id).unwrap();
    let config = support::engine::mock_config(&server);
    let ws = workspace.path().canonicalize().unwrap();
    let handle = pith_engine::spawn(
        support::engine::options(config, &ws, data.path(), true),
        store,
        session,
    )
    .unwrap();
    let mut h = Harness {
        server,
        handle,
        workspace,
        data,
        session_id,
    };
    // announced at start, as it was left
    match h
        .until("the goal at start", |e| {
            matches!(e, Event::Session(SessionEvent::GoalChanged { .. }))
        })
        .await
    {
        Event::Session(SessionEvent::GoalChanged { goal }) => {
            assert_eq!(goal, Some(paused.clone()))
        }
        _ => unreachable!(),
    }
    // resumed: back in the requests, checked after the turn
    h.server.push(openai::text("back at it", Some((500, 2))));
    h.server.push(openai::text("MET: done", Some((500, 2))));
    let from = h.server.requests().len();
    h.send(goal_op(GoalAction::Resume));
    let r = run(&mut h).await;
    assert_eq!(r.last().status, GoalStatus::Met);
    let body = h.server.request_body(from);
    assert!(system_text(&body).contains(&format!("Goal: {GOAL}")));
    assert!(last_user_text(&body).contains("The user resumed the goal"));
}

/// A 20k window with a 2k output cap; every step answers ~900 tokens of text; summaries
/// forget everything; checks say CONTINUE until the 25th, which says MET.
#[tokio::test]
async fn twenty_five_goal_turns_through_compactions_stay_bounded() {
    let mut h = harness_with(vec![], true, |c: &mut Config| {
        let m = c.models.values_mut().next().unwrap();
        m.context = 20_000;
        m.output = 2_000;
        c.compaction.background = Some(0.0);
    })
    .await;
    let checks = Arc::new(AtomicUsize::new(0));
    let n = checks.clone();
    h.server.respond_with(move |body| {
        let prompt = (body.to_string().len() / 4) as u64;
        let last = last_user_text(body);
        if last.starts_with("[pith: context compaction]") || body.get("tools").is_none() {
            let summary = "## Goal\nUnknown.\n## Constraints & Preferences\nNone\n## Progress\nSome.\n## Key Decisions\nNone\n## Next Steps\nNone\n## Critical Context\nNone\n## Relevant Files\nNone";
            return openai::text(summary, Some((prompt, 60)));
        }
        if is_check(body) {
            let k = n.fetch_add(1, Ordering::SeqCst) + 1;
            let answer = if k >= 25 {
                "MET: all parts written".to_string()
            } else {
                format!("CONTINUE: part {} is next", k + 1)
            };
            return openai::text(&answer, Some((prompt, 10)));
        }
        let answer = "I wrote the next part of the module, with tests and notes. ".repeat(60);
        openai::text(&answer, Some((prompt, (answer.len() / 4) as u64)))
    });
    h.send(set(GOAL, Some((40, BudgetUnit::Turns))));
    let r = run(&mut h).await;
    assert_eq!(r.end, Some(TurnEnd::Stop), "{:?}", r.infos);
    assert_eq!(r.checks.len(), 25);
    let goal = r.last();
    assert_eq!((goal.status, goal.turns), (GoalStatus::Met, 25));
    assert!(r.compactions >= 1, "{} compactions", r.compactions);
    // every request of the session (steps and checks) carries the goal once, whatever the
    // summaries forgot; none grows past the window
    let mut sizes = Vec::new();
    for i in 0..h.server.requests().len() {
        let body = h.server.request_body(i);
        if body.get("tools").is_none() {
            continue;
        }
        let system = system_text(&body);
        assert_eq!(system.matches(GOAL).count(), 1, "request {i}");
        sizes.push(body.to_string().len() / 4);
    }
    assert!(sizes.iter().all(|s| *s < 20_000), "{sizes:?}");
    // after the last compaction (a summary that forgot the goal), the request still carries
    // the goal's block word for word
    let summarised = (0..h.server.requests().len())
        .map(|i| h.server.request_body(i))
        .filter(|b| b.get("tools").is_some() && !is_check(b))
        .rfind(|b| b.to_string().contains("Unknown."))
        .expect("a request after a compaction");
    let system = system_text(&summarised);
    let block = &system[system.find("## The user's goal (/goal)").unwrap()..];
    insta::assert_snapshot!("goal_block_after_compaction", block);
    // each continuation is bounded, whatever came before it
    let notes: Vec<String> = (0..h.server.requests().len())
        .map(|i| last_user_text(&h.server.request_body(i)))
        .filter(|t| t.starts_with("Goal not met yet"))
        .collect();
    assert!(notes.len() >= 20, "{}", notes.len());
    assert!(notes.iter().all(|n| n.len() < 3_000));
}

#[tokio::test]
async fn pith_run_goal_prints_the_goal_events_and_exits_1_when_not_met() {
    let server = support::MockServer::start().await;
    let env = PithEnv::new(&server.url(), 32_000, 2_000, "");
    server.respond_with(|body| {
        if is_check(body) {
            openai::text("CONTINUE: not there yet", Some((800, 4)))
        } else {
            openai::text("working on it", Some((800, 4)))
        }
    });
    let (out, events) = env
        .run_json(&[
            "--goal",
            "the report is written",
            "--goal-budget",
            "2 turns",
        ])
        .await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let checks = of_type(&events, "goal_checked");
    assert_eq!(checks.len(), 2, "{events:?}");
    assert_eq!(checks[0]["by"], "model");
    assert_eq!(checks[0]["met"], false);
    let changes = of_type(&events, "goal_changed");
    let last = &changes.last().unwrap()["goal"];
    assert_eq!(last["status"], "budget_reached");
    assert_eq!(last["turns"], 2);
    assert_eq!(of_type(&events, "turn_finished").len(), 1);

    // `-c "/goal"` shows it; met on resume, the run exits 0
    let out = env.run(&["-c", "run", "/goal"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("budget spent, 2 of 2 turns") && text.contains("the report is written"),
        "{text}"
    );
    let out = env.run(&["run", "/goal"]).await;
    assert_eq!(out.status.code(), Some(2), "a session's goal needs -c");
    server.push(openai::text("finished", Some((800, 4))));
    server.push(openai::text("MET: written", Some((800, 4))));
    let (out, events) = env.run_json(&["-c", "/goal resume"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let changes = of_type(&events, "goal_changed");
    assert_eq!(changes.last().unwrap()["goal"]["status"], "met");
}

/// A text answer streamed slowly (`n` chunks, `ms` apart).
fn slow_text(n: usize, ms: u64) -> support::MockResponse {
    let mut frames: Vec<String> = (0..n)
        .map(|i| {
            openai::frame(&openai::delta_chunk(
                serde_json::json!({"content": format!("word{i} ")}),
                None,
            ))
        })
        .collect();
    frames.push(openai::frame(&openai::delta_chunk(
        serde_json::json!({}),
        Some("stop"),
    )));
    frames.push(openai::done());
    support::MockResponse::sse(frames).delay_ms(ms)
}

#[tokio::test]
async fn an_interrupt_stops_the_loop_and_pauses_the_goal() {
    let mut h = harness_with(vec![], true, |_| {}).await;
    h.server.push_all([
        openai::text("first turn", Some((500, 2))),
        openai::text("CONTINUE: more", Some((500, 2))),
        slow_text(200, 20),
    ]);
    h.send(set(GOAL, Some((10, BudgetUnit::Turns))));
    // the second turn is streaming: interrupt it
    h.until("the second turn streams", |e| {
        matches!(e, Event::Output(pith_protocol::event::OutputEvent::TextDelta { delta, .. }) if delta.starts_with("word"))
    })
    .await;
    h.send(Op::Interrupt);
    let r = run(&mut h).await;
    assert_eq!(r.end, Some(TurnEnd::Interrupted));
    let goal = r.last();
    assert_eq!((goal.status, goal.turns), (GoalStatus::Paused, 1));
    assert_eq!(h.server.requests().len(), 3, "no check after the interrupt");
}

#[tokio::test]
async fn headless_a_check_command_no_rule_allows_is_refused_and_never_met() {
    // no rule for bash: headless, an "ask" is a refusal; the budget still stops the goal
    let mut h = harness_with(vec![], true, |c: &mut Config| {
        c.goal.check = Some("cargo test --quiet".into());
    })
    .await;
    h.server
        .respond_with(|_| openai::text("working", Some((500, 2))));
    h.send(set(GOAL, Some((2, BudgetUnit::Turns))));
    let r = run(&mut h).await;
    assert_eq!(r.checks.len(), 2);
    for (met, by, detail) in &r.checks {
        assert!(!met && *by == GoalCheckBy::Command);
        assert!(
            detail.contains("`cargo test --quiet` did not run"),
            "{detail}"
        );
    }
    assert_eq!(r.last().status, GoalStatus::BudgetReached);
}

#[tokio::test]
async fn an_interrupt_during_the_check_command_ends_the_turn_and_pauses_the_goal() {
    let mut h = harness_with(allow_bash_and_write(), true, |c: &mut Config| {
        c.goal.check = Some("sleep 20; exit 1".into());
    })
    .await;
    h.server.push(openai::text("working", Some((500, 2))));
    h.send(set(GOAL, None));
    h.until(
        "the check runs",
        |e| matches!(e, Event::Turn(TurnEvent::State { detail: Some(d), .. }) if d == "goal check"),
    )
    .await;
    let asked = std::time::Instant::now();
    h.send(Op::Interrupt);
    let r = run(&mut h).await;
    assert!(asked.elapsed() < std::time::Duration::from_secs(10));
    assert_eq!(r.end, Some(TurnEnd::Interrupted));
    assert!(r.checks.is_empty(), "{r:?}");
    let goal = r.last();
    assert_eq!((goal.status, goal.turns), (GoalStatus::Paused, 1));
}
