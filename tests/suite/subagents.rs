//! Sub-agents through the real engine against the mock provider: the `task` tool runs a child
//! session with its own context and the parent gets only its answer.

use crate::support;

use std::sync::Arc;

use pith_config::{AgentConfig, ModelConfig, PermissionAction, PermissionSetting};
use pith_protocol::event::{
    ContextEvent, Event, Op, OutputEvent, PermissionReply, SubagentEvent, TurnEnd, TurnEvent,
};
use pith_protocol::message::{MessageError, PartKind, Role, ToolState};
use pith_store::Store;
use serde_json::{Value, json};
use support::engine::Harness;
use support::openai;
use support::pith::normalized;

/// An engine whose config `configure` changes; `headless`: no one answers questions.
async fn harness(configure: impl FnOnce(&mut pith_config::Config), headless: bool) -> Harness {
    support::engine::harness_with(Vec::new(), headless, configure).await
}

const CHILD_MARK: &str = "You are a sub-agent";

/// The text of every message of a request, one string.
fn messages_text(body: &Value) -> String {
    body["messages"].to_string()
}

fn is_child(body: &Value) -> bool {
    body["messages"][0]["content"]
        .as_str()
        .is_some_and(|s| s.contains(CHILD_MARK))
}

/// The first user message's text.
fn first_user(body: &Value) -> String {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "user")
        .map(|m| m["content"].to_string())
        .unwrap_or_default()
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|t| {
            t.iter()
                .map(|t| t["function"]["name"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// How many tool results the request carries.
fn results(body: &Value) -> usize {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .count()
}

fn task_call(id: &str, agent: &str, prompt: &str) -> (String, String, String) {
    (
        id.to_string(),
        "task".to_string(),
        json!({"description": format!("{agent} job"), "prompt": prompt, "agent": agent})
            .to_string(),
    )
}

fn calls(c: &[(String, String, String)]) -> support::MockResponse {
    let refs: Vec<(&str, &str, &str)> = c
        .iter()
        .map(|(a, b, c)| (a.as_str(), b.as_str(), c.as_str()))
        .collect();
    openai::tool_calls(&refs, Some((500, 20)))
}

fn store(h: &Harness) -> Store {
    Store::open(h.data.path()).unwrap()
}

/// Runs one user turn to its end, answering nothing.
async fn turn(h: &mut Harness, text: &str) -> TurnEnd {
    h.send(Op::UserTurn {
        id: "u1".into(),
        text: text.into(),
        pasted: Vec::new(),
    });
    h.turn_finished().await
}

#[tokio::test]
async fn a_child_uses_tools_and_only_its_answer_reaches_the_parent() {
    let mut h = harness(|_| {}, true).await;
    std::fs::write(
        h.workspace.path().join("notes.txt"),
        "CHILD-ONLY-CONTENT: the flag is --zebra\n",
    )
    .unwrap();
    h.server.respond_with(flag_hunt);
    let events = turn_events(&mut h, "what is the flag?").await;
    assert_eq!(
        events.last(),
        Some(&Event::Turn(TurnEvent::TurnFinished {
            reason: TurnEnd::Stop
        }))
    );
    let reqs = h.server.requests();
    assert_eq!(reqs.len(), 4, "parent, child, child, parent");
    let parent: Vec<&Value> = reqs
        .iter()
        .map(|r| &r.body)
        .filter(|b| !is_child(b))
        .collect();
    let child: Vec<&Value> = reqs
        .iter()
        .map(|r| &r.body)
        .filter(|b| is_child(b))
        .collect();
    assert_eq!((parent.len(), child.len()), (2, 2));
    assert_child_has_its_own_context(&child);
    // what the child read never reaches the parent; its answer does, after its task id
    let s = store(&h);
    let kids = s.children(&h.session_id).unwrap();
    assert_eq!(kids.len(), 1);
    let kid = &kids[0];
    assert_eq!(kid.agent.as_deref(), Some("explore"));
    assert_eq!(kid.title, "explore job");
    assert_parent_gets_only_the_answer(&h, &parent, &kid.id);
    assert_child_history_stored(&h, &s, &kid.id);
    assert_child_events_tagged(&h, &events, &kid.id);
    assert!(
        h.server.violations().is_empty(),
        "{:?}",
        h.server.violations()
    );
}

/// The model of [`a_child_uses_tools_and_only_its_answer_reaches_the_parent`]: the parent sends
/// an explore child to find the flag, the child reads `notes.txt` and answers, the parent
/// answers with what the child said.
fn flag_hunt(body: &Value) -> support::MockResponse {
    if is_child(body) {
        if results(body) == 0 {
            openai::tool_calls(
                &[("c1", "read", r#"{"file_path":"notes.txt"}"#)],
                Some((700, 10)),
            )
        } else {
            openai::text("The flag is --zebra (notes.txt:1).", Some((900, 12)))
        }
    } else if results(body) == 0 {
        calls(&[task_call("t1", "explore", "Find the flag in this repo.")])
    } else {
        openai::text("It is --zebra.", Some((600, 5)))
    }
}

/// Runs one user turn and returns every event up to and including its end, answering nothing.
async fn turn_events(h: &mut Harness, text: &str) -> Vec<Event> {
    let mut events = Vec::new();
    h.send(Op::UserTurn {
        id: "u1".into(),
        text: text.into(),
        pasted: Vec::new(),
    });
    loop {
        let ev = h.until("event", |_| true).await;
        let end = matches!(ev, Event::Turn(TurnEvent::TurnFinished { .. }));
        events.push(ev);
        if end {
            break;
        }
    }
    events
}

/// The child has its own context: the brief, its tools, the read-only agent's tools only.
fn assert_child_has_its_own_context(child: &[&Value]) {
    assert!(first_user(child[0]).contains("Find the flag in this repo."));
    assert!(!messages_text(child[0]).contains("what is the flag?"));
    assert_eq!(
        tool_names(child[0]),
        ["read", "glob", "grep", "list", "recall"]
    );
    assert!(messages_text(child[1]).contains("CHILD-ONLY-CONTENT"));
}

/// What the child read never reaches the parent; its answer does, after its task id; the task
/// tool tells the model which agents there are.
fn assert_parent_gets_only_the_answer(h: &Harness, parent: &[&Value], kid: &str) {
    for p in parent {
        assert!(!messages_text(p).contains("CHILD-ONLY-CONTENT"));
    }
    let result = &h.tool_results(3)[0];
    assert!(
        result.starts_with(&format!("task_id: {kid}")) && result.contains("--zebra (notes.txt:1)"),
        "{result}"
    );
    let mut body = normalized(parent[1], h.workspace.path());
    body["tools"] = json!(tool_names(parent[1]));
    let body: Value =
        serde_json::from_str(&body.to_string().replace(kid, "[CHILD_SESSION]")).unwrap();
    insta::assert_json_snapshot!("parent_request_after_task", body);
    let task = parent[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "task")
        .unwrap();
    let d = task["function"]["description"].as_str().unwrap();
    assert!(
        d.contains("- explore: ") && d.contains("- general: "),
        "{d}"
    );
}

/// The child's history is stored as its own session, with what it read.
fn assert_child_history_stored(h: &Harness, s: &Store, kid: &str) {
    let msgs = s.load_all(kid).unwrap();
    assert_eq!(msgs.len(), 3);
    assert!(msgs.iter().any(|m| m.parts.iter().any(|p| matches!(
        &p.kind,
        PartKind::Tool { tool, state: ToolState::Completed { output, .. }, .. }
            if tool == "read" && output.contains("CHILD-ONLY-CONTENT")
    ))));
    assert_eq!(s.load_all(&h.session_id).unwrap().len(), 3);
}

/// The child's events come tagged with its session, as `pith run --format json` prints them, and
/// the parent's own context figure never counted the child's tokens.
fn assert_child_events_tagged(h: &Harness, events: &[Event], kid: &str) {
    let tagged: Vec<Value> = events
        .iter()
        .filter(|e| matches!(e, Event::Subagent(SubagentEvent { .. })))
        .map(|e| serde_json::to_value(e).unwrap())
        .collect();
    assert!(tagged.iter().all(|e| e["type"] == "subagent"
        && e["session_id"] == kid
        && e["parent_session_id"] == h.session_id.as_str()
        && e["agent"] == "explore"
        && e["call_id"] == "t1"));
    assert!(
        tagged
            .iter()
            .any(|e| e["event"]["type"] == "tool_finished" && e["event"]["tool"] == "read")
    );
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::Context(ContextEvent::ContextUsage(u)) if u.used >= 900 && u.used < 1000))
    );
}

/// The order in which the children's requests arrived, by the prompt that started each.
fn child_order(h: &Harness) -> Vec<String> {
    h.server
        .requests()
        .iter()
        .filter(|r| is_child(&r.body))
        .map(|r| {
            let first = first_user(&r.body);
            let who = if first.contains("job A") { "A" } else { "B" };
            format!("{who}{}", results(&r.body) + 1)
        })
        .collect()
}

async fn two_children(max_parallel: usize) -> Harness {
    let mut h = harness(|c| c.task.max_parallel = max_parallel, true).await;
    std::fs::write(h.workspace.path().join("a.txt"), "alpha").unwrap();
    h.server.respond_with(|body| {
        if is_child(body) {
            let a = first_user(body).contains("job A");
            if results(body) == 0 {
                let args = if a {
                    r#"{"file_path":"a.txt"}"#
                } else {
                    r#"{"pattern":"*.txt"}"#
                };
                let tool = if a { "read" } else { "glob" };
                openai::tool_calls(&[("c1", tool, args)], Some((700, 10)))
            } else {
                openai::text(if a { "report A" } else { "report B" }, Some((800, 5)))
            }
        } else if results(body) == 0 {
            calls(&[
                task_call("tA", "explore", "job A"),
                task_call("tB", "explore", "job B"),
            ])
        } else {
            openai::text("both done", Some((600, 5)))
        }
    });
    assert_eq!(turn(&mut h, "do both").await, TurnEnd::Stop);
    h
}

#[tokio::test]
async fn two_children_run_at_the_same_time() {
    let h = two_children(4).await;
    let order = child_order(&h);
    assert_eq!(order.len(), 4);
    // both children had asked their first question before either asked its second
    let first_two: Vec<&str> = order[..2].iter().map(|s| &s[1..]).collect();
    assert_eq!(first_two, ["1", "1"], "{order:?}");
    let results = h.tool_results(h.server.requests().len() - 1);
    assert!(
        results[0].contains("report A") && results[1].contains("report B"),
        "{results:?}"
    );
    assert_eq!(store(&h).children(&h.session_id).unwrap().len(), 2);
}

#[tokio::test]
async fn the_bound_on_parallel_children_holds() {
    let h = two_children(1).await;
    assert_eq!(child_order(&h), ["A1", "A2", "B1", "B2"]);
}

#[tokio::test]
async fn a_child_asks_the_same_user_and_never_has_more_rights() {
    // the parent may not write; a general child (all tools) may not either
    let mut h = harness(
        |c| {
            c.permission.insert(
                "write".into(),
                PermissionSetting::Action(PermissionAction::Ask),
            );
        },
        false,
    )
    .await;
    h.server.respond_with(|body| {
        if is_child(body) {
            if results(body) == 0 {
                openai::tool_calls(
                    &[("c1", "write", r#"{"file_path":"out.txt","content":"hi"}"#)],
                    Some((700, 10)),
                )
            } else {
                openai::text("wrote it", Some((800, 5)))
            }
        } else if results(body) == 0 {
            calls(&[task_call("t1", "general", "write out.txt")])
        } else {
            openai::text("ok", Some((600, 5)))
        }
    });
    h.send(Op::UserTurn {
        id: "u1".into(),
        text: "go".into(),
        pasted: Vec::new(),
    });
    let asked = h.permission_asked().await;
    assert_eq!(asked.tool, "write");
    assert_eq!(asked.agent.as_deref(), Some("general"));
    h.send(Op::PermissionReply {
        id: asked.id,
        reply: PermissionReply::Deny,
        message: None,
    });
    assert_eq!(h.turn_finished().await, TurnEnd::Stop);
    assert!(!h.workspace.path().join("out.txt").exists());
    let last = h.server.requests().len() - 1;
    assert!(h.tool_results(last)[0].contains("wrote it"));
}

#[tokio::test]
async fn headless_rules_hold_for_children() {
    let mut h = harness(
        |c| {
            c.permission.insert(
                "write".into(),
                PermissionSetting::Action(PermissionAction::Ask),
            );
        },
        true,
    )
    .await;
    h.server.respond_with(|body| {
        if is_child(body) {
            if results(body) == 0 {
                openai::tool_calls(
                    &[("c1", "write", r#"{"file_path":"out.txt","content":"hi"}"#)],
                    Some((700, 10)),
                )
            } else {
                openai::text("could not write", Some((800, 5)))
            }
        } else if results(body) == 0 {
            calls(&[task_call("t1", "general", "write out.txt")])
        } else {
            openai::text("ok", Some((600, 5)))
        }
    });
    assert_eq!(turn(&mut h, "go").await, TurnEnd::Stop);
    assert!(!h.workspace.path().join("out.txt").exists());
    let child_second = h
        .server
        .requests()
        .into_iter()
        .filter(|r| is_child(&r.body))
        .nth(1)
        .unwrap();
    assert!(messages_text(&child_second.body).contains("no one to ask"));
}

#[tokio::test]
async fn interrupting_the_parent_interrupts_the_children() {
    let mut h = harness(|_| {}, false).await;
    h.server.respond_with(|body| {
        if is_child(body) {
            // the child's answer never ends
            support::MockResponse::sse([openai::frame(&openai::delta_chunk(
                json!({"role": "assistant", "content": "working on it"}),
                None,
            ))])
            .hold_open()
        } else {
            calls(&[task_call("t1", "explore", "look around")])
        }
    });
    h.send(Op::UserTurn {
        id: "u1".into(),
        text: "go".into(),
        pasted: Vec::new(),
    });
    h.until("the child streaming", |e| {
        matches!(e, Event::Subagent(SubagentEvent { event, .. }) if matches!(**event, Event::Output(OutputEvent::TextDelta { .. })))
    })
    .await;
    h.send(Op::Interrupt);
    assert_eq!(h.turn_finished().await, TurnEnd::Interrupted);
    let s = store(&h);
    let kid = &s.children(&h.session_id).unwrap()[0];
    let msgs = s.load_all(&kid.id).unwrap();
    let last = msgs.last().unwrap();
    assert_eq!(last.role, Role::Assistant);
    assert_eq!(last.error, Some(MessageError::Interrupted));
    let parent = s.load_all(&h.session_id).unwrap();
    assert!(parent.iter().flat_map(|m| &m.parts).any(|p| matches!(
        &p.kind,
        PartKind::Tool { tool, state: ToolState::Error { message, .. }, .. }
            if tool == "task" && message.contains("interrupted")
    )));
}

#[tokio::test]
async fn children_cannot_nest_beyond_the_depth_limit() {
    let mut h = harness(|c| c.task.max_depth = 2, true).await;
    h.server.respond_with(|body| {
        let first = first_user(body);
        let level = if first.contains("LEVEL2") {
            2
        } else if first.contains("LEVEL1") {
            1
        } else {
            0
        };
        match (level, results(body)) {
            (0, 0) => calls(&[task_call("t0", "general", "LEVEL1")]),
            (1, 0) => calls(&[task_call("t1", "general", "LEVEL2")]),
            (2, 0) => openai::tool_calls(
                &[("t2", "task", &task_call("x", "general", "LEVEL3").2)],
                Some((500, 10)),
            ),
            (_, _) => openai::text(&format!("done at {level}"), Some((500, 5))),
        }
    });
    assert_eq!(turn(&mut h, "go").await, TurnEnd::Stop);
    let reqs = h.server.requests();
    let has_task = |level: &str| {
        reqs.iter()
            .find(|r| first_user(&r.body).contains(level))
            .map(|r| tool_names(&r.body).contains(&"task".to_string()))
            .unwrap()
    };
    assert!(has_task("LEVEL1"), "a child may start a child at depth 2");
    assert!(!has_task("LEVEL2"), "the grandchild is at the limit");
    // the grandchild's attempt is an unknown tool, answered as an error it can act on
    let grandchild_second = reqs
        .iter()
        .filter(|r| first_user(&r.body).contains("LEVEL2"))
        .nth(1)
        .unwrap();
    assert!(messages_text(&grandchild_second.body).contains("Unknown tool `task`"));
    assert!(!reqs.iter().any(|r| first_user(&r.body).contains("LEVEL3")));
    let s = store(&h);
    let child = &s.children(&h.session_id).unwrap()[0];
    assert_eq!(s.children(&child.id).unwrap().len(), 1);
}

#[tokio::test]
async fn a_failed_child_is_an_error_result_not_a_failed_turn() {
    let mut h = harness(|_| {}, true).await;
    h.server.respond_with(|body| {
        if is_child(body) {
            support::MockResponse::status(
                401,
                openai::error_body("invalid_api_key", "bad key for the child"),
            )
        } else if results(body) == 0 {
            calls(&[task_call("t1", "explore", "look")])
        } else {
            openai::text("the agent failed; carrying on", Some((600, 5)))
        }
    });
    assert_eq!(turn(&mut h, "go").await, TurnEnd::Stop);
    let last = h.server.requests().len() - 1;
    let r = &h.tool_results(last)[0];
    assert!(
        r.contains("The explore agent failed") && r.contains("task_id: "),
        "{r}"
    );
}

#[tokio::test]
async fn a_task_id_continues_the_same_child() {
    let mut h = harness(|_| {}, true).await;
    let ids: Arc<std::sync::Mutex<Vec<String>>> = Default::default();
    let seen = ids.clone();
    h.server.respond_with(move |body| {
        if is_child(body) {
            let n = body["messages"].as_array().unwrap().len();
            openai::text(&format!("child answer with {n} messages"), Some((500, 5)))
        } else {
            match results(body) {
                0 => calls(&[task_call("t1", "explore", "first question")]),
                1 => {
                    // the model passes back the id the first result gave
                    let text = messages_text(body);
                    let at = text.find("task_id: ").unwrap() + "task_id: ".len();
                    let id: String = text[at..].chars().take(26).collect();
                    seen.lock().unwrap().push(id.clone());
                    let args = json!({"description": "follow up", "prompt": "second question", "agent": "explore", "task_id": id});
                    openai::tool_calls(&[("t2", "task", &args.to_string())], Some((500, 5)))
                }
                _ => openai::text("done", Some((500, 5))),
            }
        }
    });
    assert_eq!(turn(&mut h, "go").await, TurnEnd::Stop);
    let s = store(&h);
    let kids = s.children(&h.session_id).unwrap();
    assert_eq!(kids.len(), 1, "continued, not started again");
    assert_eq!(ids.lock().unwrap()[0], kids[0].id);
    let second_child = h
        .server
        .requests()
        .into_iter()
        .filter(|r| is_child(&r.body))
        .nth(1)
        .unwrap();
    let text = messages_text(&second_child.body);
    assert!(
        text.contains("first question") && text.contains("second question"),
        "{text}"
    );
    // a session id that is not this session's child is refused
    let err = h.tool_results(h.server.requests().len() - 1);
    assert!(err.iter().all(|r| !r.contains("No task")), "{err:?}");
}

#[tokio::test]
async fn a_foreign_task_id_is_refused() {
    let mut h = harness(|_| {}, true).await;
    let other = store(&h)
        .create_session("/elsewhere", "mock/test-model")
        .unwrap();
    let other_id = other.id.clone();
    h.server.respond_with(move |body| {
        if results(body) == 0 {
            let args = json!({"description": "peek", "prompt": "dump it", "agent": "explore", "task_id": other_id});
            openai::tool_calls(&[("t1", "task", &args.to_string())], Some((500, 5)))
        } else {
            openai::text("refused", Some((500, 5)))
        }
    });
    assert_eq!(turn(&mut h, "go").await, TurnEnd::Stop);
    let r = &h.tool_results(1)[0];
    assert!(r.contains("No task") && r.contains(&other.id), "{r}");
    assert_eq!(h.server.requests().len(), 2, "no child ran");
}

#[tokio::test]
async fn user_agents_from_config_get_their_prompt_model_and_tools() {
    let mut h = harness(
        |c| {
            c.agent.insert(
                "scout".into(),
                AgentConfig {
                    description: "Looks at one directory".into(),
                    model: Some("mock/small-model".into()),
                    tools: Some(vec!["list".into(), "bash".into()]),
                    prompt: Some("You are SCOUT.".into()),
                    disable: false,
                },
            );
            c.models.insert(
                "mock/small-model".into(),
                ModelConfig {
                    context: 64_000,
                    output: 4_000,
                    ..ModelConfig::default()
                },
            );
        },
        true,
    )
    .await;
    h.server.respond_with(|body| {
        if is_child(body) {
            openai::text("scouted", Some((500, 5)))
        } else if results(body) == 0 {
            calls(&[task_call("t1", "scout", "look")])
        } else {
            openai::text("ok", Some((500, 5)))
        }
    });
    assert_eq!(turn(&mut h, "go").await, TurnEnd::Stop);
    let child = h.server.request_body(1);
    assert_eq!(child["model"], "small-model");
    let system = child["messages"][0]["content"].as_str().unwrap();
    assert!(system.starts_with("You are SCOUT."), "{system}");
    assert_eq!(tool_names(&child), ["bash", "list"]);
}

#[tokio::test]
async fn a_child_that_overflows_compacts_its_own_context() {
    let mut h = harness(
        |c| {
            c.agent.insert(
                "explore".into(),
                AgentConfig {
                    model: Some("mock/small-model".into()),
                    ..AgentConfig::default()
                },
            );
            c.models.insert(
                "mock/small-model".into(),
                ModelConfig {
                    context: 20_000,
                    output: 4_000,
                    ..ModelConfig::default()
                },
            );
        },
        true,
    )
    .await;
    let summary = "## Goal\nFind the flag.\n## Constraints & Preferences\nNone\n## Progress\nRead notes.\n## Key Decisions\nNone\n## Next Steps\nNone\n## Critical Context\nCHILD-SUMMARY\n## Relevant Files\nNone";
    h.server.respond_with(move |body| {
        let last = body["messages"].as_array().unwrap().last().unwrap()["content"].to_string();
        if is_child(body) && last.contains("[pith: context compaction]") {
            openai::text(summary, Some((17_000, 300)))
        } else if is_child(body) {
            // the child's context is over its small window after this step
            openai::text("child report", Some((17_000, 100)))
        } else if results(body) == 0 {
            calls(&[task_call("t1", "explore", "look")])
        } else {
            openai::text("ok", Some((700, 5)))
        }
    });
    assert_eq!(turn(&mut h, "go").await, TurnEnd::Stop);
    let s = store(&h);
    let kid = &s.children(&h.session_id).unwrap()[0];
    let kid_msgs = s.load_all(&kid.id).unwrap();
    assert!(kid_msgs.iter().any(|m| m.summary), "the child compacted");
    assert!(s.get_session(&kid.id).unwrap().compaction_point.is_some());
    assert!(!s.load_all(&h.session_id).unwrap().iter().any(|m| m.summary));
    assert!(
        s.get_session(&h.session_id)
            .unwrap()
            .compaction_point
            .is_none()
    );
    let reqs = h.server.requests();
    let last = reqs.last().unwrap();
    assert!(!is_child(&last.body));
    assert!(!messages_text(&last.body).contains("CHILD-SUMMARY"));
    assert!(h.tool_results(reqs.len() - 1)[0].contains("child report"));
    assert!(
        h.server.violations().is_empty(),
        "{:?}",
        h.server.violations()
    );
}

#[tokio::test]
async fn pith_run_json_tags_child_events_with_the_child_session() {
    let server = support::MockServer::start().await;
    let env = support::pith::PithEnv::new(&server.url(), 128_000, 16_000, "");
    std::fs::write(env.path().join("notes.txt"), "hello").unwrap();
    server.respond_with(|body| {
        if is_child(body) {
            if results(body) == 0 {
                openai::tool_calls(
                    &[("c1", "read", r#"{"file_path":"notes.txt"}"#)],
                    Some((700, 10)),
                )
            } else {
                openai::text("child says hello", Some((800, 5)))
            }
        } else if results(body) == 0 {
            calls(&[task_call("t1", "explore", "read notes")])
        } else {
            openai::text("parent done", Some((600, 5)))
        }
    });
    let (out, events) = env.run_json(&["go"]).await;
    assert!(out.status.success(), "{}", support::pith::stderr(&out));
    let session = support::pith::of_type(&events, "session_loaded")[0]["session"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let tagged = support::pith::of_type(&events, "subagent");
    assert!(!tagged.is_empty());
    let child = tagged[0]["session_id"].as_str().unwrap().to_string();
    assert_ne!(child, session);
    for e in &tagged {
        assert_eq!(e["session_id"], child.as_str());
        assert_eq!(e["parent_session_id"], session.as_str());
        assert_eq!(e["agent"], "explore");
    }
    let inner: Vec<&str> = tagged
        .iter()
        .map(|e| e["event"]["type"].as_str().unwrap())
        .collect();
    for t in [
        "tool_started",
        "tool_finished",
        "step_finished",
        "turn_finished",
    ] {
        assert!(inner.contains(&t), "{t} missing: {inner:?}");
    }
    // the run's own end is the parent's, once
    assert_eq!(support::pith::of_type(&events, "turn_finished").len(), 1);
    // text mode shows the child's tools under the task line
    let out = env.run(&["run", "go again"]).await;
    let err = support::pith::stderr(&out);
    assert!(
        err.contains("· task ") && err.contains("  · explore: read notes.txt"),
        "{err}"
    );
}
