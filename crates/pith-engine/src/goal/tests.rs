use super::*;
use pith_protocol::event::GoalCheckBy;

fn goal(status: GoalStatus, unit: BudgetUnit) -> Goal {
    Goal {
        text: "all tests pass".into(),
        status,
        budget: GoalBudget { limit: 20, unit },
        turns: 2,
        tokens: 1_500,
    }
}

#[test]
fn only_an_active_goal_is_in_the_system_prompt() {
    let g = goal(GoalStatus::Active, BudgetUnit::Turns);
    let b = block(&g, None).unwrap();
    assert!(b.starts_with(GOAL_HEADER), "{b}");
    assert!(b.ends_with("Goal: all tests pass"), "{b}");
    assert!(b.contains("you will be asked"), "{b}");
    let b = block(&g, Some("cargo test")).unwrap();
    assert!(b.contains("`cargo test`: exit code 0 means met"), "{b}");
    for s in [
        GoalStatus::Paused,
        GoalStatus::Met,
        GoalStatus::BudgetReached,
    ] {
        assert_eq!(block(&goal(s, BudgetUnit::Turns), None), None, "{s:?}");
    }
}

#[test]
fn the_continuation_names_the_goal_its_budget_and_the_check_bounded() {
    let g = goal(GoalStatus::Active, BudgetUnit::Turns);
    let note = continuation(&g, "FAILED tests/a.rs");
    assert!(note.contains("goal turn 3 of 20"), "{note}");
    assert!(note.contains("<goal>\nall tests pass\n</goal>"), "{note}");
    assert!(note.contains("FAILED tests/a.rs"), "{note}");
    let g = goal(GoalStatus::Active, BudgetUnit::Tokens);
    let note = continuation(&g, "x");
    assert!(note.contains("20 tokens, 0 left"), "{note}");
    // a check that printed a lot is carried as its last lines
    let long: String = (0..5_000).map(|i| format!("line {i}\n")).collect();
    let note = continuation(&goal(GoalStatus::Active, BudgetUnit::Turns), &long);
    assert!(note.len() < NOTE_CHARS + 400, "{}", note.len());
    assert!(note.contains("line 4999") && !note.contains("line 10\n"));
    assert!(note.contains("[…]\nline "), "cut at a line's start");
}

#[test]
fn verdicts_are_read_leniently() {
    let cases = [
        ("MET: all 12 tests pass", true, "all 12 tests pass"),
        ("met — the build is green", true, "the build is green"),
        ("**MET**: done", true, "done"),
        ("CONTINUE: fix b.rs next", false, "fix b.rs next"),
        (
            "Continue. The lint step fails.",
            false,
            "The lint step fails.",
        ),
        ("\n\n`CONTINUE`", false, ""),
        (
            "The tests still fail, so the goal is NOT MET.",
            false,
            "The tests still fail, so the goal is NOT MET.",
        ),
        (
            "Looking at the output, the goal is MET.",
            true,
            "Looking at the output, the goal is MET.",
        ),
        (
            "Methodically, I CONTINUE",
            false,
            "Methodically, I CONTINUE",
        ),
    ];
    for (text, met, reason) in cases {
        assert_eq!(parse_verdict(text), (met, reason.to_string()), "{text}");
    }
    let (met, why) = parse_verdict("I think so");
    assert!(!met);
    assert!(why.contains("no verdict"), "{why}");
    let (met, _) = parse_verdict("");
    assert!(!met);
    // a word that starts like a verdict is not one
    assert!(!parse_verdict("Metrics look fine").0);
    let _ = GoalCheckBy::Model;
}

#[test]
fn a_tail_is_the_text_when_short() {
    assert_eq!(tail("  a\nb ", 10), "a\nb");
    assert_eq!(tail("abcdef", 3), "[…]\ndef");
}
