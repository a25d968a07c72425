//! Skills through the real engine against the mock (ARCHITECTURE.md §4.7): the listing in the
//! system prompt and the `skill` tool, `/NAME` as the user's message, `allowed-tools` narrowing
//! what the model may call (and never allowing what asks), a loaded skill carried across two
//! compactions at a 4k window by a summariser that forgets everything.

use crate::support;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use pith_config::Config;
use pith_config::skills::{Fence, Root, Scope, Skills};
use pith_protocol::event::{ContextEvent, Event, Op, TurnEnd, TurnEvent};
use serde_json::Value;
use support::engine::{Harness, harness_with_options};
use support::openai;

const PDF: &str = "---
name: pdf-tools
description: Extract text and tables from PDF files. Use when the user mentions a PDF.
license: Apache-2.0
allowed-tools: Read, Bash(pdftotext:*)
metadata:
  version: \"1.2\"
---
# PDF tools

To get the text of a PDF run `pdftotext FILE -`. For tables read `reference/tables.md` first.
";

const CHANGELOG: &str = "---
name: changelog
description: Write the changelog entry for a release from the merged changes.
---
CHANGELOG-RULE-42: one line per change, newest first, under a `## VERSION` heading; never
mention internal ticket numbers. Version: $ARGUMENTS
";

/// The skills of a workspace's `.claude/skills` holding the fixtures.
fn skills(ws: &Path) -> Skills {
    for (name, text) in [("pdf-tools", PDF), ("changelog", CHANGELOG)] {
        let dir = ws.join(".claude/skills").join(name);
        std::fs::create_dir_all(dir.join("reference")).unwrap();
        std::fs::write(dir.join("SKILL.md"), text).unwrap();
        std::fs::write(dir.join("reference/tables.md"), "use -layout").unwrap();
    }
    let roots = [Root {
        dir: ws.join(".claude/skills"),
        scope: Scope::Project,
        label: ".claude/skills".into(),
    }];
    let fence = Fence {
        workspace: ws.to_path_buf(),
        ..Fence::default()
    };
    let s = Skills::load(&roots, &fence);
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    s
}

async fn with_skills(headless: bool, edit: impl FnOnce(&mut Config)) -> Harness {
    harness_with_options(headless, edit, |o, ws| o.skills = Arc::new(skills(ws))).await
}

fn call(id: &str, tool: &str, args: &str) -> support::MockResponse {
    openai::tool_calls(&[(id, tool, args)], Some((100, 5)))
}

fn system_text(body: &Value) -> String {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "system")
        .map(support::message_text)
        .collect()
}

#[tokio::test]
async fn the_listing_is_in_the_system_prompt_and_the_tool_loads_a_skill_with_its_folder() {
    let mut h = with_skills(true, |_| {}).await;
    h.server.push(call("c1", "skill", r#"{"name":"pdf"}"#));
    h.server
        .push(call("c2", "skill", r#"{"name":"pdf-tools"}"#));
    h.server.push(openai::text("done", Some((100, 2))));
    h.send(Op::user_turn("get the text out of report.pdf"));
    assert_eq!(h.turn_finished().await, TurnEnd::Stop);
    let first = h.server.request_body(0);
    let system = system_text(&first);
    assert!(
        system.contains("- pdf-tools: Extract text and tables from PDF files.")
            && system.contains("- changelog: Write the changelog entry"),
        "{system}"
    );
    // the body is not in the prompt until loaded
    assert!(!system.contains("pdftotext FILE"), "{system}");
    assert!(first.to_string().contains("\"name\":\"skill\""));
    let results = h.tool_results(2);
    assert!(
        results[0].contains("No skill named \"pdf\". Did you mean: pdf-tools?"),
        "{}",
        results[0]
    );
    let dir = h
        .workspace
        .path()
        .canonicalize()
        .unwrap()
        .join(".claude/skills/pdf-tools");
    assert!(
        results[1].contains(&format!("Base directory for this skill: {}", dir.display()))
            && results[1].contains("To get the text of a PDF run `pdftotext FILE -`."),
        "{}",
        results[1]
    );
}

#[tokio::test]
async fn allowed_tools_narrow_the_calls_until_the_next_message_and_never_allow_what_asks() {
    let mut h = with_skills(true, |_| {}).await;
    h.server
        .push(call("c1", "skill", r#"{"name":"pdf-tools"}"#));
    h.server.push(openai::tool_calls(
        &[
            ("c2", "glob", r#"{"pattern":"*.pdf"}"#),
            ("c3", "bash", r#"{"command":"pdftotext report.pdf -"}"#),
        ],
        Some((100, 5)),
    ));
    h.server.push(openai::text("could not", Some((100, 2))));
    h.send(Op::user_turn("get the text out of report.pdf"));
    assert_eq!(h.turn_finished().await, TurnEnd::Stop);
    let results = h.tool_results(2);
    // glob is allowed by the rules, but not by the skill
    assert!(
        results[1].contains("the active skill pdf-tools allows only these tools")
            && results[1].contains("read, bash(pdftotext …)"),
        "{}",
        results[1]
    );
    // bash(pdftotext …) is in the skill's list, but bash still asks: headless, that is a denial
    assert!(
        results[2].contains("Permission needed") && !results[2].contains("active skill"),
        "{}",
        results[2]
    );
    // the user's next message ends the skill: glob runs again
    h.server.push(call("c4", "glob", r#"{"pattern":"*.pdf"}"#));
    h.server.push(openai::text("none", Some((100, 2))));
    h.send(Op::user_turn("then list the PDFs"));
    assert_eq!(h.turn_finished().await, TurnEnd::Stop);
    let after = h.tool_results(4);
    assert!(!after.last().unwrap().contains("active skill"), "{after:?}");
}

#[tokio::test]
async fn slash_name_sends_the_skill_as_the_users_message_and_it_is_active_for_that_turn() {
    let mut h = with_skills(true, |_| {}).await;
    let custom = pith_commands::custom_commands::Commands {
        skills: Arc::new(skills(&h.workspace.path().canonicalize().unwrap())),
        ..Default::default()
    };
    let route = pith_commands::route::route("/pdf-tools report.pdf", &custom, &|_, _| None);
    let op = pith_commands::route::shared_op(route, "/pdf-tools report.pdf", h.workspace.path())
        .unwrap();
    h.server.push(call(
        "c1",
        "write",
        r#"{"file_path":"out.txt","content":"x"}"#,
    ));
    h.server.push(openai::text("ok", Some((100, 2))));
    h.send(op);
    assert_eq!(h.turn_finished().await, TurnEnd::Stop);
    let body = h.server.request_body(0);
    let messages = body["messages"].as_array().unwrap();
    let user = support::message_text(messages.last().unwrap());
    assert!(
        user.starts_with("<skill name=\"pdf-tools\"")
            && user.contains("pdftotext FILE -")
            && user.contains("ARGUMENTS: report.pdf"),
        "{user}"
    );
    // write is not in pdf-tools' list: refused before any question
    let results = h.tool_results(1);
    assert!(
        results[0].contains("active skill pdf-tools"),
        "{}",
        results[0]
    );
}

const SUMMARY: &str = "## Goal\nKeep going.\n## Constraints & Preferences\nNone\n## Progress\nSome.\n## Key Decisions\nNone\n## Next Steps\nNone\n## Critical Context\nNone\n## Relevant Files\nNone";

fn is_summary_request(body: &Value) -> bool {
    let last = support::message_text(body["messages"].as_array().unwrap().last().unwrap());
    last.starts_with("[pith: context compaction]")
        || body.get("tools").is_none() && body.to_string().contains("## Critical Context")
}

#[tokio::test]
async fn a_loaded_skill_is_carried_across_two_compactions_at_a_4k_window() {
    let mut h = with_skills(true, |c| {
        let m = c.models.values_mut().next().unwrap();
        m.context = 4_096;
        m.output = 512;
        c.compaction.background = Some(0.0);
    })
    .await;
    // the first step loads the skill; every other step answers at length; every summary forgets
    let steps = Arc::new(AtomicUsize::new(0));
    h.server.respond_with(move |body| {
        let prompt = (body.to_string().len() / 4) as u64;
        if is_summary_request(body) {
            return openai::text(SUMMARY, Some((prompt, 60)));
        }
        if steps.fetch_add(1, Ordering::SeqCst) == 0 {
            return openai::tool_calls(
                &[("c1", "skill", r#"{"name":"changelog"}"#)],
                Some((prompt, 5)),
            );
        }
        let answer = "An answer about the release notes, with details. ".repeat(12);
        openai::text(&answer, Some((prompt, (answer.len() / 4) as u64)))
    });
    let mut compactions = 0;
    let mut n = 0;
    while compactions < 2 {
        h.send(Op::user_turn(format!(
            "Step {n}: the next part of the changelog. {}",
            "More. ".repeat(20)
        )));
        loop {
            match h.until("turn events", |_| true).await {
                Event::Context(ContextEvent::CompactionFinished { .. }) => compactions += 1,
                Event::Turn(TurnEvent::TurnFinished { reason }) => {
                    assert_eq!(reason, TurnEnd::Stop);
                    break;
                }
                _ => {}
            }
        }
        n += 1;
        assert!(n < 40, "only {compactions} compactions");
    }
    let from = h.server.requests().len();
    h.send(Op::user_turn("write the entry now"));
    assert_eq!(h.turn_finished().await, TurnEnd::Stop);
    let next = (from..h.server.requests().len())
        .map(|i| h.server.request_body(i))
        .find(|b| !is_summary_request(b))
        .unwrap()
        .to_string();
    assert!(
        next.contains("Skills you loaded") && next.contains("CHANGELOG-RULE-42"),
        "{next}"
    );
}

/// `pith run` with the peers' folders: an untrusted workspace gives only the user's skills (and
/// says why), a trusted one the project's too; a malformed SKILL.md is one warning with its file
/// and line, and the run goes on; `/NAME args` sends the skill.
#[tokio::test]
async fn pith_run_finds_skills_by_trust_and_a_malformed_one_is_a_warning() {
    use support::pith::{PithEnv, stderr, stdout};
    let server = support::MockServer::start().await;
    let env = PithEnv::new(&server.url(), 128_000, 16_000, "");
    let put = |root: &Path, name: &str, text: &str| {
        std::fs::create_dir_all(root.join(name)).unwrap();
        std::fs::write(root.join(name).join("SKILL.md"), text).unwrap();
    };
    let ws = env.workspace.path();
    put(
        &env.home.path().join(".claude/skills"),
        "changelog",
        CHANGELOG,
    );
    put(&ws.join(".claude/skills"), "pdf-tools", PDF);
    put(
        &ws.join(".agents/skills"),
        "broken",
        "---\nname: broken\ndescription: fine\nno colon here\n---\nbody\n",
    );
    let out = env.run(&["run", "/skills"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let listed = stdout(&out);
    assert!(
        listed.contains("/changelog · user ~/.claude/skills") && !listed.contains("/pdf-tools"),
        "{listed}"
    );
    assert!(stderr(&out).contains("project skills not used: this directory is not trusted"));
    let out = env.run(&["run", "--trust", "/skills"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let listed = stdout(&out);
    assert!(
        listed.contains("/pdf-tools · project .claude/skills") && listed.contains("/changelog"),
        "{listed}"
    );
    let warned = stderr(&out);
    assert!(
        warned.contains(".agents/skills/broken/SKILL.md:4: expected `key: value`; skill skipped"),
        "{warned}"
    );
    assert!(server.requests().is_empty(), "/skills sends nothing");
    server.push(openai::text("entry written", Some((100, 3))));
    let out = env.run(&["run", "--trust", "/changelog v2.1"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let body = server.request_body(0);
    let last = support::message_text(body["messages"].as_array().unwrap().last().unwrap());
    assert!(
        last.starts_with("<skill name=\"changelog\"") && last.contains("Version: v2.1"),
        "{last}"
    );
}

/// The real binary in tmux with a user's skill: `/skills` shows it with its source, and the
/// model loads it with the tool (the listing in the system prompt, the body in the result).
#[test]
fn the_tui_lists_a_users_skill_and_the_model_loads_it_in_tmux() {
    use super::tui_e2e::{open, quit, status_line, write_config};
    if std::process::Command::new("tmux")
        .arg("-V")
        .output()
        .is_err()
    {
        eprintln!("SKIPPED: tmux is not installed (.ci/run installs it)");
        return;
    }
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let server = rt.block_on(support::MockServer::start());
    server.push(call("c1", "skill", r#"{"name":"pdf-tools"}"#));
    server.push(openai::text("Extracted the text.", Some((2_000, 20))));
    let data = tempfile::tempdir().expect("tempdir");
    let work = tempfile::tempdir().expect("tempdir");
    let home = tempfile::tempdir().expect("tempdir");
    let dir = home.path().join(".claude/skills/pdf-tools");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(dir.join("SKILL.md"), PDF).expect("write");
    let config = write_config(data.path(), &server.openai_base_url());
    let cmd = format!(
        "env PITH_DATA_DIR='{}' PITH_CONFIG='{}' HOME='{}' TERM=xterm-256color '{}'; sleep 30",
        data.path().display(),
        config.display(),
        home.path().display(),
        env!("CARGO_BIN_EXE_pith")
    );
    let session = open(
        &format!("pith-e2e-skills-{}", std::process::id()),
        work.path(),
        &cmd,
    );
    session.wait_for("the status bar", 40, |s| status_line(s).contains("idle"));
    session.type_text("/skills");
    session.keys(&["Enter"]);
    session.wait_for("the skills picker", 30, |s| {
        s.contains("/pdf-tools") && s.contains("user ~/.claude/skills")
    });
    session.keys(&["Escape"]);
    session.type_text("get the text of report.pdf");
    session.keys(&["Enter"]);
    session.wait_for("the answer", 40, |s| s.contains("Extracted the text."));
    let first = server.request_body(0);
    assert!(
        system_text(&first).contains("- pdf-tools: Extract text and tables from PDF files."),
        "{}",
        system_text(&first)
    );
    let results: Vec<String> = server.request_body(1)["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(support::message_text)
        .collect();
    assert!(
        results[0].contains("Base directory for this skill:")
            && results[0].contains("pdftotext FILE -"),
        "{results:?}"
    );
    quit(&session);
}
