//! MCP elicitation and sampling through the real engine, against a server written with the
//! official Python SDK (`crates/pith-test-support/mcp/elicit_server.py`): the server's form
//! reaches the front end as `ElicitationAsked`, and what the user answers (accept with values,
//! decline, cancel) is exactly what the server gets; headless runs decline with a note, or with
//! `--yes` accept a form whose required fields all have defaults; a hostile form is never shown
//! and a flood of questions is cut; sampling asks permission (`mcp_sampling`) and then runs one
//! request with the session's model and no tools.

use crate::support;

use pith_config::{Config, PermissionAction, PermissionSetting};
use pith_protocol::elicitation::{ElicitationAction, ElicitationRequest, FieldKind};
use pith_protocol::event::{Event, Op, PermissionReply, TurnEnd, TurnEvent};
use serde_json::{Value, json};
use support::engine::{Harness, harness_with, harness_with_options};
use support::mcp;
use support::openai;

fn call(id: &str, tool: &str, args: Value) -> support::MockResponse {
    let args = args.to_string();
    openai::tool_calls(&[(id, tool, args.as_str())], Some((1000, 10)))
}

fn allow(c: &mut Config, key: &str) {
    c.permission.insert(
        key.into(),
        PermissionSetting::Action(PermissionAction::Allow),
    );
}

/// An engine with the eliciting server as `e`, its tools allowed.
async fn with_server(py: &str, headless: bool, edit: impl FnOnce(&mut Config)) -> Harness {
    let server = mcp::elicit_stdio(py);
    harness_with(vec![], headless, move |c| {
        c.mcp.insert("e".into(), server);
        allow(c, "e");
        edit(c);
    })
    .await
}

/// The notes of a turn that must ask nothing (a form declined unshown, a headless run), to
/// its end, which must be a plain stop.
async fn notes_of_an_unasked_turn(h: &mut Harness) -> Vec<String> {
    let mut notes = Vec::new();
    loop {
        match h.until("turn end", |_| true).await {
            Event::Turn(TurnEvent::Info { message }) => notes.push(message),
            Event::Turn(TurnEvent::ElicitationAsked(r)) => panic!("asked: {r:?}"),
            Event::Turn(TurnEvent::TurnFinished { reason }) => {
                assert_eq!(reason, TurnEnd::Stop);
                return notes;
            }
            _ => {}
        }
    }
}

async fn asked(h: &mut Harness) -> ElicitationRequest {
    match h
        .until("elicitation asked", |e| {
            matches!(e, Event::Turn(TurnEvent::ElicitationAsked(_)))
        })
        .await
    {
        Event::Turn(TurnEvent::ElicitationAsked(r)) => r,
        _ => unreachable!(),
    }
}

fn reply(h: &Harness, id: &str, action: ElicitationAction, content: Option<Value>) {
    h.send(Op::ElicitationReply {
        id: id.to_string(),
        action,
        content: content.map(|c| c.as_object().unwrap().clone()),
    });
}

/// Runs the tool `tool` with the model, answering its one question with `answer`; the result.
async fn answered(
    action: ElicitationAction,
    content: Option<Value>,
) -> Option<(ElicitationRequest, String)> {
    let py = mcp::python()?;
    let mut h = with_server(&py, false, |_| {}).await;
    h.server.push(call("c1", "e_configure", json!({})));
    h.server.push(openai::text("ok", Some((1100, 2))));
    h.send(Op::user_turn("deploy"));
    let req = asked(&mut h).await;
    reply(&h, &req.id, action, content);
    assert_eq!(h.turn_finished().await, TurnEnd::Stop);
    let result = h.tool_results(1).join("\n");
    Some((req, result))
}

#[tokio::test]
async fn an_accepted_form_sends_the_users_values_to_the_server() {
    let Some((req, result)) = answered(
        ElicitationAction::Accept,
        Some(json!({"name": "v2", "replicas": 3, "notify": false, "env": "prod", "smuggled": "x"})),
    )
    .await
    else {
        return;
    };
    assert_eq!(req.server, "e");
    assert_eq!(req.message, "How should staging be deployed?");
    let names: Vec<&str> = req.form.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["name", "replicas", "notify", "env"]);
    assert!(
        matches!(
            &req.form.fields[1].kind,
            FieldKind::Number {
                integer: true,
                minimum: Some(1.0),
                maximum: Some(9.0),
                default: Some(2.0)
            }
        ),
        "{:?}",
        req.form.fields[1]
    );
    assert!(
        matches!(&req.form.fields[3].kind, FieldKind::Choice { options, .. } if options.len() == 2)
    );
    assert_eq!(
        result, r#"accept: {"env": "prod", "name": "v2", "notify": false, "replicas": 3}"#,
        "a field the form does not have never reaches the server"
    );
}

#[tokio::test]
async fn a_declined_form_is_declined() {
    let Some((_, result)) = answered(ElicitationAction::Decline, None).await else {
        return;
    };
    assert_eq!(result, "decline");
}

#[tokio::test]
async fn a_cancelled_form_is_cancelled() {
    let Some((_, result)) = answered(ElicitationAction::Cancel, None).await else {
        return;
    };
    assert_eq!(result, "cancel");
}

#[tokio::test]
async fn an_answer_the_form_does_not_allow_is_never_sent() {
    let Some((_, result)) = answered(
        ElicitationAction::Accept,
        Some(json!({"name": "v2", "replicas": 99, "notify": false, "env": "prod"})),
    )
    .await
    else {
        return;
    };
    assert_eq!(result, "cancel", "replicas 99 is above the form's maximum");
}

#[tokio::test]
async fn an_interrupt_withdraws_the_form() {
    let Some(py) = mcp::python() else { return };
    let mut h = with_server(&py, false, |_| {}).await;
    h.server.push(call("c1", "e_configure", json!({})));
    h.send(Op::user_turn("deploy"));
    let req = asked(&mut h).await;
    h.send(Op::Interrupt);
    assert_eq!(h.turn_finished().await, TurnEnd::Interrupted);
    // a late answer finds nothing to answer
    reply(&h, &req.id, ElicitationAction::Accept, Some(json!({})));
}

/// Headless: runs `tool`, returns its result and the notes said.
async fn headless(tool: &str, auto_yes: bool) -> Option<(String, Vec<String>)> {
    let py = mcp::python()?;
    let server = mcp::elicit_stdio(&py);
    let mut h = harness_with_options(
        true,
        move |c| {
            c.mcp.insert("e".into(), server);
            allow(c, "e");
        },
        |o, _| o.auto_yes = auto_yes,
    )
    .await;
    h.server.push(call("c1", tool, json!({})));
    h.server.push(openai::text("ok", Some((1100, 2))));
    h.send(Op::user_turn("go"));
    let notes = notes_of_an_unasked_turn(&mut h).await;
    Some((h.tool_results(1).join("\n"), notes))
}

#[tokio::test]
async fn headless_declines_with_a_note() {
    let Some((result, notes)) = headless("e_configure", false).await else {
        return;
    };
    assert_eq!(result, "decline");
    assert!(
        notes.iter().any(
            |n| n.contains("MCP server e asked: \"How should staging be deployed?\"")
                && n.contains("declined")
                && n.contains("--yes")
        ),
        "{notes:?}"
    );
}

#[tokio::test]
async fn headless_yes_accepts_a_form_whose_fields_all_have_defaults() {
    let Some((result, notes)) = headless("e_configure", true).await else {
        return;
    };
    assert_eq!(
        result,
        r#"accept: {"env": "dev", "name": "v1", "notify": true, "replicas": 2}"#
    );
    assert!(
        notes
            .iter()
            .any(|n| n.contains("accepted with its defaults (--yes)")),
        "{notes:?}"
    );
}

#[tokio::test]
async fn headless_yes_declines_a_required_field_without_a_default() {
    let Some((result, notes)) = headless("e_ask_name", true).await else {
        return;
    };
    assert_eq!(result, "decline");
    assert!(
        notes.iter().any(|n| n.contains("has no default")),
        "{notes:?}"
    );
}

#[tokio::test]
async fn a_hostile_form_is_never_shown() {
    let Some(py) = mcp::python() else { return };
    let mut h = with_server(&py, false, |_| {}).await;
    h.server.push(call("c1", "e_hostile", json!({})));
    h.server.push(openai::text("ok", Some((1100, 2))));
    h.send(Op::user_turn("go"));
    let notes = notes_of_an_unasked_turn(&mut h).await;
    // declined with a note, as any form pith does not show — not a protocol error
    let result = h.tool_results(1).join("\n");
    assert!(result.contains("decline"), "{result}");
    assert!(!result.contains("error"), "{result}");
    assert!(
        notes.iter().any(
            |n| n.contains("MCP server e asked a question pith does not show")
                && !n.contains('\u{1b}')
        ),
        "{notes:?}"
    );
}

#[tokio::test]
async fn a_flood_of_questions_is_cut_after_a_few() {
    let Some(py) = mcp::python() else { return };
    let mut h = with_server(&py, false, |_| {}).await;
    h.server.push(call("c1", "e_flood", json!({"times": 7})));
    h.server.push(openai::text("ok", Some((1100, 2))));
    h.send(Op::user_turn("go"));
    let mut shown = 0;
    let mut notes = Vec::new();
    loop {
        match h.until("turn end", |_| true).await {
            Event::Turn(TurnEvent::ElicitationAsked(r)) => {
                shown += 1;
                reply(&h, &r.id, ElicitationAction::Decline, None);
            }
            Event::Turn(TurnEvent::Info { message }) => notes.push(message),
            Event::Turn(TurnEvent::TurnFinished { .. }) => break,
            _ => {}
        }
    }
    assert_eq!(shown, pith_mcp::questions::MAX_QUESTIONS_IN_A_ROW);
    assert_eq!(h.tool_results(1).join(""), ["decline"; 7].join(" "));
    assert!(
        notes.iter().any(|n| n.contains("within a minute")),
        "{notes:?}"
    );
}

#[tokio::test]
async fn sampling_allowed_runs_one_request_without_tools() {
    let Some(py) = mcp::python() else { return };
    let mut h = with_server(&py, false, |c| {
        allow(c, "mcp_sampling");
        // $1 per million tokens in, $1,000 per million out: the sampled answer's 5 tokens cost
        // half a cent
        let m = c.models.values_mut().next().unwrap();
        m.cost_input = 1.0;
        m.cost_output = 1000.0;
    })
    .await;
    h.server
        .push(call("c1", "e_summarize", json!({"text": "a long story"})));
    h.server
        .push(openai::text("a story, briefly told", Some((40, 5))));
    h.server.push(openai::text("done", Some((1100, 2))));
    h.send(Op::user_turn("summarize"));
    let note = match h
        .until("sampling note", |e| {
            matches!(e, Event::Turn(TurnEvent::Info { message }) if message.contains("sampled"))
        })
        .await
    {
        Event::Turn(TurnEvent::Info { message }) => message,
        _ => unreachable!(),
    };
    assert!(note.contains("40 tokens in, 5 out ($0.0050)"), "{note}");
    assert_eq!(h.turn_finished().await, TurnEnd::Stop);
    // the session's cost counts the sampled answer: its steps (1000+10, 1100+2 tokens) and it
    let store = pith_store::Store::open(h.data.path()).unwrap();
    let cost = store.get_session(&h.session_id).unwrap().cost;
    let steps = (1000.0 + 1100.0) * 1.0 / 1e6 + (10.0 + 2.0) * 1000.0 / 1e6;
    let sampled = 40.0 * 1.0 / 1e6 + 5.0 * 1000.0 / 1e6;
    assert!(
        (cost - (steps + sampled)).abs() < 1e-9,
        "cost {cost}, steps {steps}"
    );
    let sampling = h.server.request_body(1);
    assert!(
        sampling["tools"].as_array().is_none_or(|t| t.is_empty()),
        "{sampling}"
    );
    let messages = sampling["messages"].to_string();
    assert!(messages.contains("Answer in five words."), "{messages}");
    assert!(messages.contains("Summarize: a long story"), "{messages}");
    assert_eq!(
        sampling["max_tokens"]
            .as_u64()
            .or(sampling["max_completion_tokens"].as_u64()),
        Some(50)
    );
    let result = h.tool_results(2).join("\n");
    assert!(result.starts_with("sampled ("), "{result}");
    assert!(result.ends_with("a story, briefly told"), "{result}");
}

#[tokio::test]
async fn sampling_asks_and_a_denial_reaches_the_server() {
    let Some(py) = mcp::python() else { return };
    let mut h = with_server(&py, false, |_| {}).await;
    h.server
        .push(call("c1", "e_summarize", json!({"text": "secret plans"})));
    h.server.push(openai::text("done", Some((1100, 2))));
    h.send(Op::user_turn("summarize"));
    let req = h.permission_asked().await;
    assert_eq!(req.tool, "mcp_sampling");
    assert_eq!(req.patterns, ["e"]);
    assert!(
        req.title
            .contains("MCP server e wants the model to answer: Summarize: secret plans"),
        "{}",
        req.title
    );
    h.send(Op::PermissionReply {
        id: req.id,
        reply: PermissionReply::Deny,
        message: Some("use the cached summary instead".into()),
    });
    assert_eq!(h.turn_finished().await, TurnEnd::Stop);
    let result = h.tool_results(1).join("\n");
    assert!(result.starts_with("sampling failed"), "{result}");
    // the user's note goes to the server that asked
    assert!(
        result.contains("denied sampling: use the cached summary instead"),
        "{result}"
    );
    assert_eq!(h.server.requests().len(), 2, "no sampling request was made");
}

#[tokio::test]
async fn headless_sampling_is_denied_without_yes() {
    let Some(py) = mcp::python() else { return };
    let mut h = with_server(&py, true, |_| {}).await;
    h.server
        .push(call("c1", "e_summarize", json!({"text": "x"})));
    h.server.push(openai::text("done", Some((1100, 2))));
    h.send(Op::user_turn("summarize"));
    assert_eq!(h.turn_finished().await, TurnEnd::Stop);
    let result = h.tool_results(1).join("\n");
    assert!(result.starts_with("sampling failed"), "{result}");
}

#[tokio::test]
async fn headless_yes_allows_sampling_and_says_so() {
    let Some(py) = mcp::python() else { return };
    let server = mcp::elicit_stdio(&py);
    let mut h = harness_with_options(
        true,
        move |c| {
            c.mcp.insert("e".into(), server);
            allow(c, "e");
        },
        |o, _| o.auto_yes = true,
    )
    .await;
    h.server
        .push(call("c1", "e_summarize", json!({"text": "x"})));
    h.server.push(openai::text("short", Some((10, 1))));
    h.server.push(openai::text("done", Some((1100, 2))));
    h.send(Op::user_turn("summarize"));
    h.until("the allowed note", |e| {
        matches!(e, Event::Turn(TurnEvent::Info { message })
            if message.contains("MCP server e wants the model to answer: Summarize: x (allowed: --yes)"))
    })
    .await;
    assert_eq!(h.turn_finished().await, TurnEnd::Stop);
    let result = h.tool_results(2).join("\n");
    assert!(result.ends_with("short"), "{result}");
}

#[tokio::test]
async fn a_form_too_large_to_show_is_declined_with_a_note() {
    let Some(py) = mcp::python() else { return };
    let mut h = with_server(&py, false, |_| {}).await;
    h.server.push(call("c1", "e_wide", json!({})));
    h.server.push(openai::text("ok", Some((1100, 2))));
    h.send(Op::user_turn("go"));
    let notes = notes_of_an_unasked_turn(&mut h).await;
    assert_eq!(h.tool_results(1).join(""), "decline");
    assert!(
        notes.iter().any(
            |n| n.contains("MCP server e asked a question pith does not show")
                && n.contains("more than 20 fields")
        ),
        "{notes:?}"
    );
}

#[tokio::test]
async fn a_shown_form_carries_no_terminal_controls() {
    let Some(py) = mcp::python() else { return };
    let mut h = with_server(&py, false, |_| {}).await;
    h.server.push(call("c1", "e_escapes", json!({})));
    h.server.push(openai::text("ok", Some((1100, 2))));
    h.send(Op::user_turn("go"));
    let req = asked(&mut h).await;
    let texts = [req.message.as_str(), req.form.fields[0].title.as_str()];
    for t in texts {
        assert!(
            !t.chars().any(|c| c.is_control() && c != '\n'),
            "a control reached the front end: {t:?}"
        );
    }
    assert!(req.message.starts_with("Proceed?"), "{:?}", req.message);
    reply(
        &h,
        &req.id,
        ElicitationAction::Accept,
        Some(json!({"ok": true})),
    );
    assert_eq!(h.turn_finished().await, TurnEnd::Stop);
    assert_eq!(h.tool_results(1).join(""), r#"accept: {"ok": true}"#);
}

/// A server's question waits for the user like a permission question: the `notification`
/// hooks run.
#[tokio::test]
async fn a_form_runs_the_notification_hooks() {
    let Some(py) = mcp::python() else { return };
    let mut h = with_server(&py, false, |c| {
        c.hooks.notification.push(pith_config::HookConfig {
            matcher: None,
            command: "jq -r .message > notified.txt".into(),
            timeout: None,
            source: None,
        });
    })
    .await;
    h.server.push(call("c1", "e_configure", json!({})));
    h.server.push(openai::text("ok", Some((1100, 2))));
    h.send(Op::user_turn("deploy"));
    let req = asked(&mut h).await;
    let notified = h.workspace.path().join("notified.txt");
    let mut said = String::new();
    for _ in 0..200 {
        said = std::fs::read_to_string(&notified).unwrap_or_default();
        if said.ends_with('\n') {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(said.trim(), "MCP server e asks you a question");
    reply(&h, &req.id, ElicitationAction::Decline, None);
    assert_eq!(h.turn_finished().await, TurnEnd::Stop);
}
