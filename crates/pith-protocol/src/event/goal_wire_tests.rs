//! The goal's events and op on the wire (`pith run --format json`, an editor): pinned to the
//! text, and read back.

use super::*;

/// `msg` prints as `text` exactly, and `text` reads back as `msg`.
fn pinned(msg: EventMsg, text: &str) {
    assert_eq!(serde_json::to_string(&msg).unwrap(), text);
    assert_eq!(serde_json::from_str::<EventMsg>(text).unwrap(), msg);
}

fn answering(event: impl Into<Event>, id: &str) -> EventMsg {
    EventMsg::from(event.into()).answering(&id.to_string())
}

fn text(s: &str) -> String {
    s.to_string()
}

pub(super) fn a_goal() -> Goal {
    Goal {
        text: text("make the tests pass"),
        status: GoalStatus::Active,
        budget: GoalBudget {
            limit: 20,
            unit: BudgetUnit::Turns,
        },
        turns: 3,
        tokens: 1200,
    }
}

#[test]
fn goal_events_and_op_print_as_pinned() {
    pinned(
        answering(
            SessionEvent::GoalChanged {
                goal: Some(a_goal()),
            },
            "G1",
        ),
        concat!(
            r#"{"type":"goal_changed","goal":{"text":"make the tests pass","status":"active","#,
            r#""budget":{"limit":20,"unit":"turns"},"turns":3,"tokens":1200},"submission":"G1"}"#
        ),
    );
    pinned(
        SessionEvent::GoalChanged { goal: None }.into(),
        r#"{"type":"goal_changed","goal":null}"#,
    );
    pinned(
        TurnEvent::GoalChecked {
            met: true,
            by: GoalCheckBy::Model,
            detail: text("all 12 tests pass"),
        }
        .into(),
        r#"{"type":"goal_checked","met":true,"by":"model","detail":"all 12 tests pass"}"#,
    );
    for (status, name) in [
        (GoalStatus::Paused, "paused"),
        (GoalStatus::Met, "met"),
        (GoalStatus::BudgetReached, "budget_reached"),
    ] {
        assert_eq!(serde_json::to_value(status).unwrap(), name);
    }
    let op = Op::Goal {
        id: text("G2"),
        action: GoalAction::Set {
            text: text("ship it"),
            budget: Some(GoalBudget {
                limit: 5000,
                unit: BudgetUnit::Tokens,
            }),
        },
    };
    let json = serde_json::to_string(&op).unwrap();
    assert_eq!(
        json,
        r#"{"op":"goal","id":"G2","action":"set","text":"ship it","budget":{"limit":5000,"unit":"tokens"}}"#
    );
    assert_eq!(serde_json::from_str::<Op>(&json).unwrap(), op);
    let pause: Op = serde_json::from_str(r#"{"op":"goal","id":"G3","action":"pause"}"#).unwrap();
    assert_eq!(
        pause,
        Op::Goal {
            id: text("G3"),
            action: GoalAction::Pause
        }
    );
    assert_eq!(Submission::new(pause).id, "G3");
}
