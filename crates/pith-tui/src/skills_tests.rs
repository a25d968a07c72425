//! `/skills` in the TUI (ARCHITECTURE.md §4.7): a picker of the skills with where each comes
//! from and what it costs; enter puts `/NAME ` in the composer; without skills it says where
//! they are looked for and opens nothing. Skills are in the slash popup after the commands.

use std::sync::Arc;

use crossterm::event::KeyCode;

use super::tests::*;
use pith_commands::custom_commands::Commands;
use pith_config::skills::{Scope, Skills};

fn with_skills() -> (
    crate::app::App,
    tokio::sync::mpsc::UnboundedReceiver<pith_protocol::event::Submission>,
) {
    let (mut app, rx) = fresh();
    let mut skills = Skills::default();
    for (name, front, scope, root) in [
        (
            "pdf-tools",
            "description: Extract text and tables from PDF files. Use when the user mentions a PDF.\nallowed-tools: Read, Bash(pdftotext:*)",
            Scope::Project,
            ".claude/skills",
        ),
        (
            "changelog",
            "description: Write the changelog entry for a release from the merged changes.",
            Scope::User,
            "~/.codex/skills",
        ),
    ] {
        let (mut s, _) = pith_config::skills::parse(
            std::path::Path::new(&format!("/w/{root}/{name}/SKILL.md")),
            name,
            &format!(
                "---\nname: {name}\n{front}\n---\n{}",
                "Step by step instructions. ".repeat(20)
            ),
        )
        .unwrap();
        s.scope = scope;
        s.root = root.into();
        skills.list.push(s);
    }
    skills.list.sort_by(|a, b| a.name.cmp(&b.name));
    app.set_custom_commands(Commands {
        skills: Arc::new(skills),
        ..Commands::default()
    });
    (app, rx)
}

#[test]
fn skills_lists_them_with_source_and_cost_and_enter_puts_the_command_in_the_composer() {
    let (mut app, _rx) = with_skills();
    type_str(&mut app, "/skills");
    key(&mut app, KeyCode::Enter);
    assert!(app.popup().is_some());
    let screen = render(&mut app, 120, 20);
    assert!(
        screen.contains("/pdf-tools") && screen.contains("project .claude/skills"),
        "{screen}"
    );
    insta::assert_snapshot!(screen);
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Enter);
    assert_eq!(app.popup(), None);
    assert_eq!(app.composer().text(), "/pdf-tools ");
}

#[test]
fn skills_with_none_says_where_they_are_looked_for_and_opens_nothing() {
    let (mut app, _rx) = fresh();
    app.set_custom_commands(Commands::default());
    type_str(&mut app, "/skills");
    key(&mut app, KeyCode::Enter);
    assert_eq!(app.popup(), None);
    let screen = render(&mut app, 160, 20);
    assert!(screen.contains("no skills found"), "{screen}");
}

#[test]
fn a_skill_runs_from_the_slash_popup_as_its_instructions() {
    let (mut app, mut rx) = with_skills();
    type_str(&mut app, "/chang");
    let screen = render(&mut app, 100, 24);
    assert!(screen.contains("/changelog"), "{screen}");
    type_str(&mut app, "elog v2.1");
    key(&mut app, KeyCode::Enter);
    let sent = ops(&mut rx);
    assert!(
        matches!(&sent[..], [pith_protocol::event::Op::RunCommand { label, text, .. }]
            if label == "/changelog v2.1" && text.starts_with("<skill name=\"changelog\"") && text.contains("ARGUMENTS: v2.1")),
        "{sent:?}"
    );
}
