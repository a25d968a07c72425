use super::*;
use crate::config::skills::edit_distance;
use crate::custom_commands::{CustomCommand, Source};

fn custom(names: &[&str]) -> Commands {
    Commands {
        list: names
            .iter()
            .map(|n| CustomCommand {
                name: n.to_string(),
                description: String::new(),
                argument_hint: String::new(),
                model: None,
                agent: None,
                body: format!("Do {n}: $ARGUMENTS"),
                source: Source::User,
                path: std::path::PathBuf::from(format!("{n}.md")),
            })
            .collect(),
        warnings: Vec::new(),
        origin: None,
        skills: Default::default(),
    }
}

/// Servers `gh` (offers `review`) and `slow` (prompts not known yet).
fn mcp(server: &str, prompt: &str) -> Option<bool> {
    match server {
        "gh" => Some(prompt == "review"),
        "slow" => Some(true),
        _ => None,
    }
}

fn r(text: &str) -> Route {
    route(text, &custom(&["standup", "git:review"]), &mcp)
}

#[test]
fn prompts_are_not_commands() {
    for text in [
        "hello",
        "/usr/bin/foo is broken",
        "/usr/bin/env",
        "/",
        "/ hello",
        "why does a/b/c fail",
        "  /etc/hosts: what is it",
        "/gh:x/y do it",
    ] {
        assert_eq!(r(text), Route::Prompt, "{text:?}");
    }
}

#[test]
fn built_ins_with_their_arguments_and_aliases() {
    assert_eq!(
        r("  /Compact  keep the API  "),
        Route::Builtin {
            command: Command::Compact,
            args: Some("keep the API".into())
        }
    );
    assert_eq!(
        r("/exit"),
        Route::Builtin {
            command: Command::Quit,
            args: None
        }
    );
    assert_eq!(
        r("/?"),
        Route::Builtin {
            command: Command::Help,
            args: None
        }
    );
}

#[test]
fn custom_commands_and_mcp_prompts() {
    let Route::Custom(e) = r("/standup today") else {
        panic!("{:?}", r("/standup today"))
    };
    assert_eq!(e.label, "/standup today");
    assert_eq!(e.text, "Do standup: today");
    assert!(matches!(r("/git:review a.rs"), Route::Custom(e) if e.text == "Do git:review: a.rs"));
    assert_eq!(
        r("/gh:review 12"),
        Route::McpPrompt {
            server: "gh".into(),
            prompt: "review".into(),
            args: "12".into()
        }
    );
    assert!(matches!(r("/slow:any"), Route::McpPrompt { .. }));
    let e = r("/gh:nope").error().unwrap();
    assert!(e.starts_with("gh has no prompt named nope"), "{e}");
}

#[test]
fn unknown_commands_are_errors_with_a_suggestion() {
    assert_eq!(
        r("/nosuchcmd foo"),
        Route::Unknown {
            name: "nosuchcmd".into(),
            suggestion: None
        }
    );
    assert_eq!(
        r("/nosuchcmd foo").error().unwrap(),
        "unknown command /nosuchcmd"
    );
    assert_eq!(
        r("/compcat").error().unwrap(),
        "unknown command /compcat (did you mean /compact?)"
    );
    assert_eq!(
        r("/stand").error().unwrap(),
        "unknown command /stand (did you mean /standup?)"
    );
    assert_eq!(
        r("/git:reveiw").error().unwrap(),
        "unknown command /git:reveiw (did you mean /git:review?)"
    );
    // an unknown server's prompt is an unknown command
    assert!(matches!(r("/nowhere:thing"), Route::Unknown { .. }));
    assert_eq!(r("/hlep"), r("/hlep"));
    assert!(r("/hello").error().is_some());
    assert_eq!(r("/compact").error(), None);
}

#[test]
fn edit_distances() {
    assert_eq!(edit_distance("", ""), 0);
    assert_eq!(edit_distance("abc", ""), 3);
    assert_eq!(edit_distance("kitten", "sitting"), 3);
    assert_eq!(edit_distance("compcat", "compact"), 2);
}

#[test]
fn pin_and_unpin_are_ops_every_front_end_sends_alike() {
    let op = |text: &str| shared_op(route(text, &custom(&[]), &mcp), text, Path::new("/w"));
    assert_eq!(
        op("/pin the API port is 8443, never 8080"),
        Ok(Op::Pin {
            text: Some("the API port is 8443, never 8080".into())
        })
    );
    assert_eq!(op("/pin"), Ok(Op::Pin { text: None }));
    assert_eq!(op("/unpin 2"), Ok(Op::Unpin { number: Some(2) }));
    assert_eq!(op("/unpin ALL"), Ok(Op::Unpin { number: None }));
    for bad in ["/unpin", "/unpin 0", "/unpin two"] {
        let err = op(bad).unwrap_err();
        assert!(
            err.error().is_some_and(|e| e.contains("/unpin all")),
            "{bad}: {err:?}"
        );
    }
}

#[test]
fn goal_is_an_op_every_front_end_sends_alike() {
    use crate::event::{BudgetUnit, GoalAction, GoalBudget};
    let op = |text: &str| shared_op(route(text, &custom(&[]), &mcp), text, Path::new("/w"));
    let action = |text: &str| match op(text) {
        Ok(Op::Goal { action, id }) => {
            assert!(!id.is_empty());
            action
        }
        other => panic!("{text}: {other:?}"),
    };
    assert_eq!(action("/goal"), GoalAction::Show);
    assert_eq!(action("/goal clear"), GoalAction::Clear);
    assert_eq!(
        action("/goal all tests pass --budget 5 turns"),
        GoalAction::Set {
            text: "all tests pass".into(),
            budget: Some(GoalBudget {
                limit: 5,
                unit: BudgetUnit::Turns
            })
        }
    );
    let err = op("/goal x --budget lots").unwrap_err();
    assert!(
        err.error().is_some_and(|e| e.contains("--budget")),
        "{err:?}"
    );
}

/// `/NAME args` of a skill sends its instructions with the arguments; a built-in or custom
/// command of the same name wins.
#[test]
fn a_skill_is_a_command_after_builtins_and_custom_ones() {
    let mut c = custom(&["standup"]);
    let mut skills = crate::config::skills::Skills::default();
    for n in ["changelog", "standup", "compact"] {
        let (s, _) = crate::config::skills::parse(
            std::path::Path::new(&format!("/home/u/.claude/skills/{n}/SKILL.md")),
            n,
            &format!("---\nname: {n}\ndescription: d\n---\nWrite the {n} for $ARGUMENTS."),
        )
        .unwrap();
        skills.list.push(s);
    }
    c.skills = std::sync::Arc::new(skills);
    let Route::Custom(e) = route("/changelog v2.1", &c, &mcp) else {
        panic!("not a skill command");
    };
    assert_eq!(e.label, "/changelog v2.1");
    assert!(
        e.text.starts_with("<skill name=\"changelog\""),
        "{}",
        e.text
    );
    assert!(e.text.contains("Write the changelog for v2.1."));
    assert!(
        e.text
            .contains("Base directory for this skill: /home/u/.claude/skills/changelog")
    );
    let Route::Custom(e) = route("/standup", &c, &mcp) else {
        panic!()
    };
    assert_eq!(e.text, "Do standup: ");
    assert!(matches!(route("/compact", &c, &mcp), Route::Builtin { .. }));
    assert_eq!(
        route("/chnagelog", &c, &mcp).error().unwrap(),
        "unknown command /chnagelog (did you mean /changelog?)"
    );
}
