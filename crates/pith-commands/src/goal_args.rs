//! What `/goal` was given: nothing (show the goal), `pause`, `resume`, `clear` (or `off`), or an
//! objective with an optional `--budget N turns` / `--budget N tokens` anywhere in it
//! (ARCHITECTURE.md §5.2).

use crate::event::{BudgetUnit, GoalAction, GoalBudget, MAX_GOAL_CHARS};

/// What `/goal` says when what it was given is not a goal.
pub const GOAL_USAGE: &str = "/goal TEXT [--budget N turns|N tokens] sets a goal; /goal alone shows it; /goal pause|resume|clear";

/// The action of `/goal ARGS`; `Err`: why it is not one, in one line.
pub fn goal_action(args: Option<&str>) -> Result<GoalAction, String> {
    let Some(args) = args.map(str::trim).filter(|a| !a.is_empty()) else {
        return Ok(GoalAction::Show);
    };
    match args.to_ascii_lowercase().as_str() {
        "pause" => return Ok(GoalAction::Pause),
        "resume" => return Ok(GoalAction::Resume),
        "clear" | "off" => return Ok(GoalAction::Clear),
        _ => {}
    }
    let (text, budget) = split_budget(args)?;
    if text.is_empty() {
        return Err(format!("a budget needs a goal to go with it: {GOAL_USAGE}"));
    }
    let chars = text.chars().count();
    if chars > MAX_GOAL_CHARS {
        return Err(format!(
            "the goal has {chars} characters; it may hold {MAX_GOAL_CHARS}"
        ));
    }
    Ok(GoalAction::Set { text, budget })
}

/// `args` without its `--budget …` (the objective, trimmed) and the budget it named.
fn split_budget(args: &str) -> Result<(String, Option<GoalBudget>), String> {
    let words: Vec<&str> = args.split(' ').collect();
    let Some(at) = words
        .iter()
        .position(|w| *w == "--budget" || w.starts_with("--budget="))
    else {
        return Ok((args.to_string(), None));
    };
    let mut value: Vec<&str> = Vec::new();
    let mut end = at + 1;
    if let Some(v) = words[at].strip_prefix("--budget=") {
        value.push(v);
    } else {
        // the number, then its unit when one follows
        while end < words.len() && words[end].is_empty() {
            end += 1;
        }
        if end < words.len() {
            value.push(words[end]);
            end += 1;
        }
    }
    if end < words.len() && unit_of(words[end]).is_some() {
        value.push(words[end]);
        end += 1;
    }
    let budget = parse_budget(&value.join(" "))?;
    let text: Vec<&str> = words[..at].iter().chain(&words[end..]).copied().collect();
    Ok((text.join(" ").trim().to_string(), Some(budget)))
}

fn unit_of(word: &str) -> Option<BudgetUnit> {
    match word.to_ascii_lowercase().as_str() {
        "turn" | "turns" => Some(BudgetUnit::Turns),
        "token" | "tokens" | "tok" => Some(BudgetUnit::Tokens),
        _ => None,
    }
}

/// `20`, `20 turns`, `50000 tokens`, `200k tokens`, `1.5m tokens`, `200k` (a `k` or `m`
/// means tokens).
pub fn parse_budget(value: &str) -> Result<GoalBudget, String> {
    let bad = || format!("--budget takes N turns or N tokens (200k tokens), got {value:?}");
    let mut parts = value.split_whitespace();
    let number = parts.next().ok_or_else(bad)?.to_ascii_lowercase();
    let unit = match parts.next() {
        Some(u) => Some(unit_of(u).ok_or_else(bad)?),
        None => None,
    };
    if parts.next().is_some() {
        return Err(bad());
    }
    let (digits, scale) = match number.chars().last() {
        Some('k') => (&number[..number.len() - 1], 1_000.0),
        Some('m') => (&number[..number.len() - 1], 1_000_000.0),
        _ => (number.as_str(), 1.0),
    };
    let n: f64 = digits.replace('_', "").parse().map_err(|_| bad())?;
    let limit = (n * scale).round();
    if !limit.is_finite() || limit < 1.0 || limit > u64::MAX as f64 {
        return Err(bad());
    }
    let unit = match unit {
        Some(u) => u,
        None if scale > 1.0 => BudgetUnit::Tokens,
        None => BudgetUnit::Turns,
    };
    Ok(GoalBudget {
        limit: limit as u64,
        unit,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(text: &str, budget: Option<(u64, BudgetUnit)>) -> Result<GoalAction, String> {
        Ok(GoalAction::Set {
            text: text.into(),
            budget: budget.map(|(limit, unit)| GoalBudget { limit, unit }),
        })
    }

    #[test]
    fn words_alone_show_pause_resume_clear() {
        assert_eq!(goal_action(None), Ok(GoalAction::Show));
        assert_eq!(goal_action(Some("  ")), Ok(GoalAction::Show));
        assert_eq!(goal_action(Some("pause")), Ok(GoalAction::Pause));
        assert_eq!(goal_action(Some("Resume")), Ok(GoalAction::Resume));
        assert_eq!(goal_action(Some("clear")), Ok(GoalAction::Clear));
        assert_eq!(goal_action(Some("off")), Ok(GoalAction::Clear));
        // a word inside an objective is the objective
        assert_eq!(
            goal_action(Some("pause the queue worker")),
            set("pause the queue worker", None)
        );
    }

    #[test]
    fn a_budget_anywhere_in_turns_or_tokens() {
        use BudgetUnit::*;
        assert_eq!(
            goal_action(Some("all tests pass --budget 20 turns")),
            set("all tests pass", Some((20, Turns)))
        );
        assert_eq!(
            goal_action(Some("--budget 200k tokens migrate to v2")),
            set("migrate to v2", Some((200_000, Tokens)))
        );
        assert_eq!(
            goal_action(Some("lint clean --budget 5")),
            set("lint clean", Some((5, Turns)))
        );
        assert_eq!(
            goal_action(Some("ship --budget=1.5m")),
            set("ship", Some((1_500_000, Tokens)))
        );
        assert_eq!(
            goal_action(Some("docs --budget 50000 tokens and a changelog")),
            set("docs and a changelog", Some((50_000, Tokens)))
        );
        assert_eq!(
            goal_action(Some("fix it --budget 1 turn")),
            set("fix it", Some((1, Turns)))
        );
    }

    #[test]
    fn what_is_not_a_goal_says_why() {
        for bad in [
            "x --budget",
            "x --budget 0 turns",
            "x --budget many turns",
            "x --budget -3",
        ] {
            let e = goal_action(Some(bad)).unwrap_err();
            assert!(e.contains("--budget takes"), "{bad}: {e}");
        }
        let e = goal_action(Some("--budget 3 turns")).unwrap_err();
        assert!(e.contains("needs a goal"), "{e}");
        let long = "x".repeat(MAX_GOAL_CHARS + 1);
        assert!(goal_action(Some(&long)).unwrap_err().contains("4000"));
    }
}
