//! `/goal` as the user sees it: the command sends its op (a pending prompt for a goal that
//! starts turns), the status bar shows where the goal stands (its budget used, paused, met,
//! spent; cut on a narrow bar), and the transcript says each check and each change.

use crossterm::event::KeyCode;
use pith_protocol::event::{
    BudgetUnit, ContextEvent, ContextUsage, EngineState, Event, Goal, GoalAction, GoalBudget,
    GoalCheckBy, GoalStatus, Op, SessionEvent, TurnEvent,
};

use super::tests::*;

fn goal(status: GoalStatus, turns: u64) -> Goal {
    Goal {
        text: "GOAL-4471: every test in tests/auth passes and the lint step is clean".into(),
        status,
        budget: GoalBudget {
            limit: 20,
            unit: BudgetUnit::Turns,
        },
        turns,
        tokens: 48_000,
    }
}

fn changed(app: &mut super::App, g: Option<Goal>) {
    ev(app, Event::Session(SessionEvent::GoalChanged { goal: g }));
}

#[test]
fn goal_sends_its_op_and_a_bad_budget_says_how() {
    let (mut app, mut rx) = fresh();
    type_str(&mut app, "/goal all tests pass --budget 5 turns");
    key(&mut app, KeyCode::Enter);
    type_str(&mut app, "/goal pause");
    key(&mut app, KeyCode::Enter);
    let actions: Vec<GoalAction> = ops(&mut rx)
        .into_iter()
        .map(|op| match op {
            Op::Goal { action, .. } => action,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        actions,
        [
            GoalAction::Set {
                text: "all tests pass".into(),
                budget: Some(GoalBudget {
                    limit: 5,
                    unit: BudgetUnit::Turns
                })
            },
            GoalAction::Pause
        ]
    );
    let screen = render(&mut app, 100, 20);
    assert!(screen.contains("/goal all tests pass"), "pending: {screen}");
    type_str(&mut app, "/goal x --budget lots");
    key(&mut app, KeyCode::Enter);
    assert!(ops(&mut rx).is_empty());
    assert!(render(&mut app, 100, 20).contains("--budget takes N turns"));
}

#[test]
fn the_status_bar_shows_the_goal_and_the_transcript_its_checks() {
    let (mut app, mut rx) = fresh();
    ev(
        &mut app,
        Event::Context(ContextEvent::ContextUsage(ContextUsage {
            used: 12_000,
            usable: 180_000,
            window: 200_000,
            percent: 6.0,
            ..ContextUsage::default()
        })),
    );
    changed(&mut app, Some(goal(GoalStatus::Active, 3)));
    ev(
        &mut app,
        Event::Turn(TurnEvent::GoalChecked {
            met: false,
            by: GoalCheckBy::Command,
            detail: "`cargo test`: test auth::login ... FAILED".into(),
        }),
    );
    let screen = render(&mut app, 140, 12);
    assert!(
        screen.contains("◎ goal 3/20 · GOAL-4471: every test in te…"),
        "{screen}"
    );
    assert!(
        screen.contains("goal check (check command): not met yet · `cargo test`"),
        "{screen}"
    );
    insta::assert_snapshot!("status_bar_goal_active_140x12", screen);

    // while a turn runs, `/goal` is answered from what the bar knows
    ev(
        &mut app,
        Event::Turn(TurnEvent::State {
            state: EngineState::Thinking,
            detail: None,
        }),
    );
    type_str(&mut app, "/goal");
    key(&mut app, KeyCode::Enter);
    assert!(ops(&mut rx).is_empty());
    assert!(render(&mut app, 140, 12).contains("goal (active, turn 3 of 20)"));

    changed(&mut app, Some(goal(GoalStatus::Paused, 3)));
    assert!(render(&mut app, 140, 12).contains("⏸ goal paused 3/20"));
    changed(&mut app, Some(goal(GoalStatus::Met, 7)));
    let screen = render(&mut app, 140, 12);
    assert!(screen.contains("✓ goal met · GOAL-4471"), "{screen}");
    assert!(screen.contains("goal (met, turn 7 of 20)"), "{screen}");
    changed(&mut app, Some(goal(GoalStatus::BudgetReached, 20)));
    assert!(render(&mut app, 140, 12).contains("◎ goal budget spent 20/20"));
    // a narrow bar cuts the goal, never the state
    let screen = render(&mut app, 70, 12);
    assert!(screen.contains("thinking"), "{screen}");
    changed(&mut app, None);
    let screen = render(&mut app, 140, 12);
    assert!(!screen.contains("◎ goal"), "{screen}");
    assert!(screen.contains("goal cleared"), "{screen}");
}

#[test]
fn a_new_goal_says_which_one_it_replaces() {
    let (mut app, mut rx) = fresh();
    changed(&mut app, Some(goal(GoalStatus::Paused, 2)));
    type_str(&mut app, "/goal ship the release notes");
    key(&mut app, KeyCode::Enter);
    assert_eq!(ops(&mut rx).len(), 1);
    let screen = render(&mut app, 140, 12);
    assert!(
        screen.contains("replacing the goal: GOAL-4471: every test"),
        "{screen}"
    );
    // a met goal is done: nothing is replaced
    changed(&mut app, Some(goal(GoalStatus::Met, 2)));
    type_str(&mut app, "/goal another");
    key(&mut app, KeyCode::Enter);
    let screen = render(&mut app, 140, 30);
    assert_eq!(screen.matches("replacing the goal").count(), 1, "{screen}");
}
