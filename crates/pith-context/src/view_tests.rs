use super::*;
use crate::testutil::*;
use pith_protocol::message::{PartKind, ToolState};

fn simple_session() -> Vec<Message> {
    let u1 = user("u1", "fix the bug in src/parse.rs");
    let mut a1 = assistant("a1", "u1");
    add(&mut a1, PartKind::StepStart);
    add(
        &mut a1,
        PartKind::Reasoning {
            text: "look at the file".into(),
            signature: Some("sig".into()),
            redacted: None,
        },
    );
    add(&mut a1, text("Reading it."));
    add(&mut a1, tool("read", "c1", completed("fn parse() {}")));
    add(&mut a1, tool("grep", "c2", pruned("lots of matches")));
    add(
        &mut a1,
        PartKind::StepFinish {
            usage: Default::default(),
            finish: "tool_calls".into(),
            cost: 0.0,
        },
    );
    add(&mut a1, PartKind::StepStart);
    add(
        &mut a1,
        tool(
            "bash",
            "c3",
            ToolState::Running {
                start: 1,
                title: None,
            },
        ),
    );
    add(&mut a1, tool("edit", "c4", ToolState::Pending));
    add(
        &mut a1,
        tool(
            "write",
            "c5",
            ToolState::Error {
                message: "permission denied".into(),
                start: None,
                end: None,
            },
        ),
    );
    add(
        &mut a1,
        PartKind::Patch {
            files: vec!["src/parse.rs".into()],
        },
    );
    let mut a2 = assistant("a2", "u1");
    a2.error = Some("overloaded".into());
    add(&mut a2, PartKind::StepStart);
    let mut u2 = user("u2", "and add a test");
    add(
        &mut u2,
        PartKind::Text {
            text: "<file>tests/parse.rs</file>".into(),
            synthetic: true,
        },
    );
    add(
        &mut u2,
        PartKind::File {
            path: "shot.png".into(),
            mime: "image/png".into(),
        },
    );
    vec![u1, a1, a2, u2]
}

#[test]
fn conversion_rules_snapshot() {
    insta::assert_json_snapshot!("to_chat_rules", to_chat(&simple_session()));
}

#[test]
fn tool_calls_are_followed_by_one_result_each_in_order() {
    let chat = to_chat(&simple_session());
    let mut expected: Vec<String> = Vec::new();
    for (i, m) in chat.iter().enumerate() {
        match m {
            ChatMessage::Assistant { content } => {
                assert!(expected.is_empty(), "results missing before message {i}");
                for c in content {
                    if let AssistantContent::ToolCall { id, .. } = c {
                        expected.push(id.clone());
                    }
                }
            }
            ChatMessage::ToolResult { call_id, .. } => {
                assert_eq!(&expected.remove(0), call_id);
            }
            ChatMessage::User { .. } => assert!(expected.is_empty()),
        }
    }
    assert!(expected.is_empty());
}

/// A search the provider ran itself is shown, not sent: the request holds the answer's text
/// and the other calls, with no call or result for it.
#[test]
fn a_hosted_search_is_not_sent_back() {
    let mut a = assistant("a1", "u1");
    let hosted = ToolState::Completed {
        output: "searched".into(),
        title: "2 results".into(),
        metadata: serde_json::json!({"query": "q", "backend": "hosted", "hits": []}),
        time: pith_protocol::message::ToolTime {
            start: 1,
            end: 2,
            compacted: None,
        },
    };
    add(&mut a, tool("websearch", "ws_1", hosted));
    add(&mut a, text("found it"));
    add(&mut a, tool("websearch", "call_2", completed("local hits")));
    let chat = to_chat(&[user("u1", "look it up"), a]);
    let json = serde_json::to_string(&chat).unwrap();
    assert!(
        !json.contains("ws_1") && !json.contains("searched"),
        "{json}"
    );
    assert!(json.contains("found it") && json.contains("call_2") && json.contains("local hits"));
}

#[test]
fn tool_result_rules() {
    assert_eq!(
        tool_result("c1", &completed("out")),
        ("out".to_string(), false)
    );
    let (cleared, false) = tool_result("call_7", &pruned("out")) else {
        panic!("a pruned output is not an error")
    };
    assert!(cleared.starts_with(CLEARED_TOOL_RESULT), "{cleared}");
    assert!(
        cleared.contains("recall id \"call_7\""),
        "names the call: {cleared}"
    );
    assert_eq!(
        tool_result("c1", &ToolState::Pending),
        (INTERRUPTED_TOOL_RESULT.to_string(), true)
    );
    assert_eq!(
        tool_result(
            "c1",
            &ToolState::Running {
                start: 0,
                title: None
            }
        ),
        (INTERRUPTED_TOOL_RESULT.to_string(), true)
    );
    let err = ToolState::Error {
        message: "boom".into(),
        start: None,
        end: None,
    };
    assert_eq!(tool_result("c1", &err), ("boom".to_string(), true));
}

#[test]
fn errored_assistant_without_content_is_skipped_but_with_content_kept() {
    let mut a = assistant("a", "u");
    a.error = Some("rate limited".into());
    add(&mut a, PartKind::StepStart);
    let chat = to_chat(&[user("u", "hi"), a.clone()]);
    assert_eq!(chat.len(), 1);
    add(&mut a, text("partial answer"));
    let chat = to_chat(&[user("u", "hi"), a]);
    assert_eq!(chat.len(), 2);
}

#[test]
fn file_parts_go_through_the_resolver() {
    let s = simple_session();
    let chat = to_chat_with(&s, &mut |path, mime| {
        Some(UserContent::Image {
            mime: mime.to_string(),
            data_base64: format!("data-of-{path}"),
        })
    });
    let ChatMessage::User { content } = chat.last().expect("messages") else {
        panic!("last is a user message");
    };
    assert!(
        matches!(&content[2], UserContent::Image { data_base64, .. } if data_base64 == "data-of-shot.png")
    );
}

/// Storage order: u1 a1 | tail: u2 a2 | c1 s1 | u3 (newer)
fn compacted_session() -> Vec<Message> {
    vec![
        user("u1", "old request"),
        tool_msg("a1", "u1", "read", "old output"),
        user("u2", "kept request"),
        tool_msg("a2", "u2", "read", "kept output"),
        compaction_msg("c1", Some("u2")),
        summary_msg("s1", "c1", "## Goal\nthe summary"),
        synthetic_user("k1", crate::CONTINUE_MESSAGE),
        user("u3", "newest request"),
    ]
}

#[test]
fn view_starts_at_the_latest_completed_compaction_with_tail_after_summary() {
    let s = compacted_session();
    assert_eq!(view_start(&s), 4);
    let p = compaction_point(&s).expect("point");
    assert_eq!(
        p,
        CompactionPoint {
            compaction: 4,
            summary: 5,
            tail: Some(2)
        }
    );
    assert_eq!(p.first_needed(), 2);
    assert_eq!(ids(&view(&s)), ["c1", "s1", "u2", "a2", "k1", "u3"]);
}

#[test]
fn model_order_input_gives_the_same_view() {
    let ordered = model_order(compacted_session());
    let ids_owned: Vec<&str> = ordered.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids_owned, ["c1", "s1", "u2", "a2", "k1", "u3"]);
    assert_eq!(to_chat(&ordered), to_chat(&compacted_session()));
    assert_eq!(model_order(ordered.clone()), ordered);
}

#[test]
fn compacted_view_snapshot() {
    insta::assert_json_snapshot!("to_chat_compacted", to_chat(&compacted_session()));
}

#[test]
fn unfinished_compaction_is_not_a_view_start_and_is_not_sent() {
    let mut s = compacted_session();
    // A second compaction whose summary is still streaming (no finish) or failed.
    s.push(compaction_msg("c2", None));
    let mut s2 = summary_msg("s2", "c2", "half a summ");
    s2.finish = None;
    s.push(s2);
    assert_eq!(view_start(&s), 4);
    assert_eq!(ids(&view(&s)), ["c1", "s1", "u2", "a2", "k1", "u3"]);
    // Once it finishes it becomes the point, and only its summary is in context.
    let last = s.len() - 1;
    s[last].finish = Some("stop".into());
    assert_eq!(view_start(&s), 8);
    assert_eq!(ids(&view(&s)), ["c2", "s2"]);
    let chat = to_chat(&s);
    let json = serde_json::to_string(&chat).expect("json");
    assert!(json.contains("half a summ"));
    assert!(
        !json.contains("the summary"),
        "only the latest summary is sent"
    );
    // An errored summary never counts.
    s[last].error = Some("boom".into());
    assert_eq!(view_start(&s), 4);
}

#[test]
fn second_compaction_tail_inside_previous_tail_skips_old_pair() {
    // Model-ordered list after a live second compaction: c1 s1 u2 a2 u3 a3 c2 s2 (tail from u3).
    let mut s = model_order(compacted_session());
    s.push(tool_msg("a3", "u3", "bash", "newest output"));
    s.push(compaction_msg("c2", Some("a2")));
    s.push(summary_msg("s2", "c2", "second summary"));
    // tail_start = a2 lies after c1/s1: the old pair must not come back.
    assert_eq!(ids(&view(&s)), ["c2", "s2", "a2", "k1", "u3", "a3"]);
}

#[test]
fn summary_without_parent_pairs_with_nearest_compaction() {
    let mut s = vec![user("u1", "a"), compaction_msg("c1", None)];
    let mut sm = summary_msg("s1", "c1", "sum");
    sm.parent_id = None;
    s.push(sm);
    assert_eq!(view_start(&s), 1);
}

#[test]
fn no_compaction_means_whole_history() {
    let s = simple_session();
    assert_eq!(view_start(&s), 0);
    assert_eq!(compaction_point(&s), None);
    assert_eq!(view(&s).len(), 4);
}

#[test]
fn pointer_refresh_is_incremental_and_survives_rebase() {
    let mut s = compacted_session();
    let mut p = ViewPointer::new();
    assert_eq!(p.refresh(&s).map(|p| p.compaction), Some(4));
    s.push(tool_msg("a3", "u3", "bash", "x"));
    assert_eq!(p.refresh(&s).map(|p| p.compaction), Some(4));
    s.push(compaction_msg("c2", None));
    s.push(summary_msg("s2", "c2", "second"));
    assert_eq!(p.refresh(&s).map(|p| p.compaction), Some(9));
    assert_eq!(ids(&p.view(&s)), ["c2", "s2"]);
    // The engine drops everything before the view from memory.
    s.drain(..9);
    p.rebase(9);
    assert_eq!(p.point().map(|p| p.compaction), Some(0));
    assert_eq!(p.refresh(&s).map(|p| p.summary), Some(1));
    // Indices that no longer match are noticed (rescan).
    s.insert(0, user("x", "y"));
    assert_eq!(p.refresh(&s).map(|p| p.compaction), Some(1));
}

#[test]
fn turn_starts() {
    assert!(is_turn_start(&user("u", "hi")));
    assert!(!is_turn_start(&synthetic_user("k", "continue")));
    assert!(!is_turn_start(&compaction_msg("c", None)));
    assert!(!is_turn_start(&assistant("a", "u")));
}

/// A message typed while the agent worked is stored as typed and sent inside the reminder.
#[test]
fn mid_turn_messages_are_wrapped_when_sent() {
    let mut late = user("u2", "also fix the tests");
    late.mid_turn = true;
    let chat = to_chat(&[user("u1", "fix it"), late]);
    let texts: Vec<&UserContent> = chat
        .iter()
        .filter_map(|m| match m {
            ChatMessage::User { content } => content.first(),
            _ => None,
        })
        .collect();
    assert_eq!(
        texts,
        [
            &UserContent::Text {
                text: "fix it".into()
            },
            &UserContent::Text {
                text: "<system-reminder>\nThe user sent the following message:\nalso fix the tests\n\nPlease address this message and continue with your tasks.\n</system-reminder>".into()
            },
        ]
    );
}

/// Files the user attached and commands the user ran are tool parts of the user's message: the
/// model reads them as the user's words, and a pruned one as the usual placeholder.
#[test]
fn tools_in_a_user_message_are_the_users_text() {
    let mut u = user("u1", "explain @src/a.rs");
    let mut attached = tool("read", "m1", completed("1\tfn a() {}"));
    if let PartKind::Tool { input, .. } = &mut attached {
        *input = serde_json::json!({"file_path": "src/a.rs"});
    }
    add(&mut u, attached);
    let mut ran = tool("bash", "s1", pruned("long output"));
    if let PartKind::Tool { input, .. } = &mut ran {
        *input = serde_json::json!({"command": "ls"});
    }
    add(&mut u, ran);
    let refs = vec![&u];
    let wire = convert(&refs, &mut |_, _| None);
    let ChatMessage::User { content } = &wire[0] else {
        panic!("{wire:?}")
    };
    let texts: Vec<&str> = content
        .iter()
        .map(|c| match c {
            UserContent::Text { text } => text.as_str(),
            _ => "",
        })
        .collect();
    assert_eq!(texts[0], "explain @src/a.rs");
    assert_eq!(
        texts[1],
        "[The user attached src/a.rs (read with the read tool)]\n1\tfn a() {}"
    );
    assert!(texts[2].starts_with("[The user ran this command in the shell themselves]\n$ ls\n"));
    assert!(!texts[2].contains("long output"), "pruned: {}", texts[2]);
    assert_eq!(wire.len(), 1, "one user message, no tool result of its own");
}
