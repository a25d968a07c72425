use super::*;
use crate::testutil::*;
use crate::view::{convert, model_order};
use pith_protocol::message::{Message, PartKind};

fn est() -> Estimator {
    Estimator::for_model("gpt-4o")
}

fn budget(context: u64, output: u64) -> Budget {
    Budget::new(
        &crate::overflow::Limits {
            context,
            input: None,
            output,
            max_tokens: None,
        },
        &pith_config::CompactionConfig::default(),
    )
}

/// Turns of roughly `size` tokens each: user, assistant with a tool call and result.
fn turns(n: usize, size: usize) -> Vec<Message> {
    let mut v = Vec::new();
    for t in 0..n {
        let u = format!("u{t}");
        v.push(user(&u, &format!("request {t}")));
        v.push(tool_msg(&format!("a{t}"), &u, "read", &words(size)));
    }
    v
}

fn cost(v: &[Message], e: &mut Estimator) -> u64 {
    v.iter().map(|m| e.message(m)).sum()
}

#[test]
fn tail_is_the_most_recent_whole_turns_that_fit() {
    let mut e = est();
    let h = turns(6, 500);
    let two = cost(&h[8..], &mut e);
    let three = cost(&h[6..], &mut e);
    assert_eq!(split_tail(&h, two, &mut e), 8);
    assert_eq!(split_tail(&h, three - 1, &mut e), 8);
    assert_eq!(split_tail(&h, three, &mut e), 6);
}

#[test]
fn tail_never_takes_everything_and_may_be_empty() {
    let mut e = est();
    let h = turns(3, 500);
    assert_eq!(
        split_tail(&h, u64::MAX, &mut e),
        2,
        "the oldest turn is summarised"
    );
    let last = cost(&h[4..], &mut e);
    assert_eq!(
        split_tail(&h, last - 1, &mut e),
        h.len(),
        "last turn too big: empty tail"
    );
    assert_eq!(split_tail(&h, 0, &mut e), h.len());
    assert_eq!(split_tail(&[], 1_000, &mut e), 0);
}

#[test]
fn tail_cut_is_always_on_a_turn_start() {
    let mut e = est();
    let mut h = turns(8, 300);
    // A turn with several steps and a synthetic continue message in the middle.
    h.insert(5, synthetic_user("k", CONTINUE_MESSAGE));
    h.insert(6, tool_msg("x1", "u2", "bash", &words(200)));
    for budget in (0..8_000).step_by(97) {
        let i = split_tail(&h, budget, &mut e);
        assert!(
            i == h.len() || crate::view::is_turn_start(&h[i]),
            "budget {budget} cut at {i}"
        );
        // The chat form of the tail starts with a user message, so no result is orphaned.
        let tail: Vec<&Message> = h[i..].iter().collect();
        let chat = convert(&tail, &mut |_, _| None);
        assert!(chat.is_empty() || matches!(chat[0], ChatMessage::User { .. }));
    }
}

#[test]
fn cut_handles_previous_summary_and_the_compaction_message() {
    let mut e = est();
    let mut stored = turns(2, 200);
    stored.push(compaction_msg("c1", Some("u1")));
    stored.push(summary_msg("s1", "c1", "## Goal\nprevious"));
    stored.extend(turns(4, 200).into_iter().skip(4).map(|mut m| {
        m.id = format!("n{}", m.id);
        m
    }));
    stored.push(compaction_msg("c2", None));
    let view = model_order(stored);
    // c1 s1 u1 a1 nu2 na2 nu3 na3 c2
    assert_eq!(view.len(), 9);
    let c = cut(&view, 1_000, &mut e);
    assert_eq!(c.previous_summary.as_deref(), Some("## Goal\nprevious"));
    assert_eq!(c.summarise.start, 2);
    assert_eq!(c.tail.end, 8, "the compaction message is in neither range");
    assert_eq!(
        c.tail_start.as_deref(),
        Some(view[c.tail.start].id.as_str())
    );
    assert!(c.tail.start > 2 && c.tail.start < 8);
    // Without a tail budget everything is summarised.
    let c = cut(&view, 0, &mut e);
    assert_eq!(c.summarise, 2..8);
    assert!(c.tail.is_empty());
    assert_eq!(c.tail_start, None);
}

#[test]
fn request_text_has_every_section_and_no_placeholders() {
    let t = request_text(None, SummaryAsk::default());
    for s in [
        "## Goal",
        "## Constraints & Preferences",
        "## Progress",
        "### Done",
        "### In progress",
        "### Blocked",
        "## Key Decisions",
        "## Next Steps",
        "## Critical Context",
        "## Relevant Files",
    ] {
        assert!(t.contains(s), "missing {s}");
    }
    assert!(!t.contains("{{"));
    assert!(!t.contains("previous-summary"));
    let t = request_text(Some("  "), SummaryAsk::focus(Some(" ")));
    assert!(!t.contains("previous-summary") && !t.contains("focus on"));
    assert!(!t.contains("kept-identifiers"));
    // Standing instructions come before this compaction's focus; both are kept. The anchors
    // pith keeps come before both, listed to be used, not restated.
    let anchors = [pith_protocol::carried::Anchor {
        kind: pith_protocol::carried::AnchorKind::Port,
        text: "localhost:5433".to_string(),
        recall: Some("msg_1".to_string()),
    }];
    let t = request_text(
        None,
        SummaryAsk {
            instructions: Some("Keep every ticket number (ABC-123) verbatim."),
            focus: Some("the parser"),
            anchors: &anchors,
        },
    );
    let a = t
        .find("<kept-identifiers>\n- port: localhost:5433\n</kept-identifiers>")
        .expect("anchors");
    let i = t
        .find("Keep every ticket number (ABC-123) verbatim.")
        .expect("instructions");
    let f = t.find("focus on: the parser").expect("focus");
    assert!(a < i && i < f, "{t}");
    assert!(t.contains("do not copy them out"), "{t}");
    assert!(t.contains("standing instructions"), "{t}");
    assert!(!t.contains("{{") && !t.contains("msg_1"), "{t}");
}

#[test]
fn summary_request_snapshot_with_previous_summary_and_focus() {
    let chunk = crate::view::to_chat(&turns(2, 5));
    let msgs = summary_request_messages(
        Some("## Goal\nPort the parser to nom.\n\n## Critical Context\n- crate: `parser-v2`"),
        &chunk,
        SummaryAsk::focus(Some("the failing test in tests/parse.rs")),
    );
    insta::assert_json_snapshot!("summary_request_previous_focus", msgs);
    let ChatMessage::User { content } = msgs.last().expect("final") else {
        panic!("final message is a user message");
    };
    let UserContent::Text { text } = &content[0] else {
        panic!("text");
    };
    assert!(text.starts_with("<previous-summary>\n## Goal\nPort the parser to nom."));
    assert!(text.contains("carry forward everything in it that still holds"));
    assert!(
        text.trim_end()
            .ends_with("still fill in every section above.")
    );
}

#[test]
fn chunk_not_starting_with_user_gets_a_lead_in() {
    let mut h = turns(1, 5);
    h.remove(0);
    let chunk = crate::view::to_chat(&h);
    let msgs = summary_request_messages(Some("prev"), &chunk, SummaryAsk::default());
    assert!(matches!(msgs[0], ChatMessage::User { .. }));
    assert_eq!(msgs.len(), chunk.len() + 2);
    let msgs = summary_request_messages(None, &[], SummaryAsk::default());
    assert_eq!(msgs.len(), 1);
}

#[test]
fn breaker_rules() {
    assert_eq!(breaker(100_000, 20_000, 160_000, 1), None);
    assert_eq!(breaker(100_000, 89_999, 160_000, 2), None);
    let m = breaker(100_000, 90_000, 160_000, 1).expect("did not shrink");
    assert!(m.contains("100,000 → 90,000") && !m.contains('\n'), "{m}");
    let m = breaker(100_000, 88_015, 160_000, 3).expect("third compaction");
    assert!(m.contains("3 times") && m.contains("~88,015 tokens") && !m.contains('\n'));
    assert_eq!(breaker(0, 0, 160_000, 1), None);
    assert!(breaker(u64::MAX, u64::MAX, 160_000, 1).is_some());
    // Shrunk, but still over what the model can use: the request cannot be answered.
    let m = breaker(8_000, 3_500, 3_072, 1).expect("does not fit");
    assert!(
        m.contains("~3,500") && m.contains("3,072") && !m.contains('\n'),
        "{m}"
    );
    assert_eq!(breaker(8_000, 3_000, 3_072, 1), None);
}

#[test]
fn chunk_budget_leaves_room_and_has_a_floor() {
    let e = est();
    let big = budget(200_000, 64_000);
    let b = chunk_budget(&big, SummaryAsk::default(), &e);
    assert!(b < 168_000 * 9 / 10 - big.summary_cap && b > 100_000, "{b}");
    let with_focus = chunk_budget(&big, SummaryAsk::focus(Some(&words(500))), &e);
    assert!(with_focus + 400 < b);
    // A 4k window: the summary cap (512) is kept free, the chunk gets the rest.
    let small = budget(4_096, 4_096);
    let c = chunk_budget(&small, SummaryAsk::default(), &e);
    assert!(c < 3_072 * 9 / 10 - 512 && c >= small.min_chunk, "{c}");
    let tiny = budget(2_048, 0);
    assert_eq!(
        chunk_budget(&tiny, SummaryAsk::focus(Some(&words(2_000))), &e),
        tiny.min_chunk
    );
}

#[test]
fn an_oversized_previous_summary_becomes_a_chunk() {
    let e = est();
    let b = budget(4_096, 512);
    assert!(previous_summary_fits(&words(300), &b, &e));
    assert!(!previous_summary_fits(&words(3_000), &b, &e));
    let ChatMessage::User { content } = previous_summary_as_history("## Goal\nx") else {
        panic!("a user message")
    };
    assert!(matches!(&content[0], UserContent::Text { text } if text.ends_with("## Goal\nx")));
    // As a chunk it is split like any oversized user message: every piece fits.
    let budget = chunk_budget(&b, SummaryAsk::default(), &e);
    let pieces = chunks(vec![previous_summary_as_history(&words(6_000))], budget, &e);
    assert!(pieces.len() >= 3, "{}", pieces.len());
    for p in &pieces {
        assert!(e.chat_messages(p) <= budget);
    }
}

#[test]
fn summaries_are_checked_for_every_section() {
    let full = "## Goal\nx\n## Constraints & Preferences\nNone\n## Progress\n### Done\n- a\n\
                ## Key Decisions\nNone\n## Next Steps\n1. b\n## Critical Context\n`x`\n\
                ## Relevant Files\n- f";
    assert!(missing_sections(full).is_empty());
    // Other heading styles count too.
    let styled = "**Goal**: x\n# constraints and preferences\n1. Progress\nKey decisions:\n\
                  ### NEXT STEPS\n__Critical Context__\nRelevant files";
    assert!(
        missing_sections(styled).is_empty(),
        "{:?}",
        missing_sections(styled)
    );
    assert_eq!(
        missing_sections("## Goal\nfix it\n## Progress\ndone"),
        vec![
            "Constraints",
            "Key Decisions",
            "Next Steps",
            "Critical Context",
            "Relevant Files"
        ]
    );
    // A word in running text is not a heading.
    assert_eq!(missing_sections("The goal is to fix it.").len(), 7);
    let note = retry_note(&["Goal", "Next Steps"], false, 512);
    assert!(
        note.contains("missing these sections: Goal, Next Steps"),
        "{note}"
    );
    assert!(note.contains("512") && !note.contains("{{"), "{note}");
    let note = retry_note(&[], true, 512);
    assert!(note.contains("cut off at the 512-token limit"), "{note}");
}

/// Issue 4 §9: across three successive compactions, every fact the user gave is either in the
/// verbatim tail or in the input of each summary request; no request loses the previous summary.
#[test]
fn retention_across_three_compactions() {
    let mut e = est();
    let mut stored: Vec<Message> = Vec::new();
    let mut facts: Vec<String> = Vec::new();
    let mut n = 0;
    let mut summaries = 0;
    for round in 0..3 {
        for _ in 0..6 {
            let fact = format!("ID-{n:04} at /repo/src/m{n}.rs");
            let u = format!("u{n}");
            stored.push(user(&u, &format!("remember {fact}")));
            stored.push(tool_msg(&format!("a{n}"), &u, "read", &words(3_000)));
            facts.push(fact);
            n += 1;
        }
        let cid = format!("c{round}");
        stored.push(compaction_msg(&cid, None));
        let view = model_order(stored.clone());
        let c = cut(&view, 2_000, &mut e);
        let b = budget(40_000, 4_000);
        if round > 0 {
            assert!(
                c.previous_summary.is_some(),
                "round {round} lost the previous summary"
            );
        }
        let refs: Vec<&Message> = view[c.summarise.clone()].iter().collect();
        let msgs = prepare(convert(&refs, &mut |_, _| None), b.tool_result_chars);
        let budget = chunk_budget(&b, SummaryAsk::default(), &e);
        let mut running = c.previous_summary.clone();
        let mut request_inputs = String::new();
        for chunk in chunks(msgs, budget, &e) {
            let req = summary_request_messages(running.as_deref(), &chunk, SummaryAsk::default());
            let body = serde_json::to_string(&req).expect("json");
            if let Some(prev) = &running {
                assert!(
                    body.contains(&prev.replace('\n', "\\n")),
                    "previous summary missing"
                );
            }
            // A faithful summariser: keeps every fact it was shown.
            let kept: Vec<&String> = facts.iter().filter(|f| body.contains(f.as_str())).collect();
            running = Some(
                kept.iter()
                    .map(|f| format!("- {f}"))
                    .collect::<Vec<_>>()
                    .join("\n"),
            );
            request_inputs.push_str(&body);
            summaries += 1;
        }
        let tail_text: String = view[c.tail.clone()].iter().map(|m| m.text()).collect();
        for f in &facts {
            assert!(
                request_inputs.contains(f.as_str()) || tail_text.contains(f.as_str()),
                "round {round}: {f} is neither summarised nor kept"
            );
        }
        // Record the compaction as the engine would.
        let ci = stored.len() - 1;
        if let Some(PartKind::Compaction(cp)) = stored[ci].parts.first_mut().map(|p| &mut p.kind) {
            cp.tail_start = c.tail_start.clone();
        }
        stored.push(summary_msg(
            &format!("s{round}"),
            &cid,
            running.as_deref().unwrap_or(""),
        ));
        stored.push(synthetic_user(&format!("k{round}"), CONTINUE_MESSAGE));
    }
    assert!(summaries >= 3);
    // The final view holds every fact: in the summary or the tail.
    let body = serde_json::to_string(&crate::view::to_chat(&stored)).expect("json");
    for f in &facts {
        assert!(
            body.contains(f.as_str()),
            "{f} lost after three compactions"
        );
    }
}

#[test]
fn the_words_note_holds_the_newest_words_within_its_limit() {
    let e = Estimator::for_model("gpt-4o");
    let carried = |t: &str| CarrySource {
        id: None,
        text: t.to_string(),
        pasted: Vec::new(),
    };
    assert_eq!(words_note(&[], 500, &e), None);
    assert_eq!(words_note(&[carried("  ")], 500, &e), None);
    let words = vec![
        carried(&format!(
            "The code word is OLDEST-1. {}",
            "lorem ipsum dolor ".repeat(400)
        )),
        carried("The code word is MIDDLE-2."),
        CarrySource {
            id: Some("m3".into()),
            text: format!("The code word is NEWEST-3. {}", "lorem ipsum ".repeat(400)),
            pasted: Vec::new(),
        },
    ];
    let note = words_note(&words, 300, &e).unwrap();
    assert!(e.text(&note) <= 300, "{}", e.text(&note));
    // A message still in the history is named, not repeated; an earlier one is quoted.
    assert!(
        note.contains(
            "(in the conversation above) the message that begins \"The code word is NEWEST-3."
        ),
        "{note}"
    );
    let newest = &note[note.find("NEWEST-3").unwrap()..];
    assert!(newest.matches("lorem").count() < 20, "{note}");
    assert!(note.contains("The code word is MIDDLE-2."), "{note}");
    assert!(
        note.find("MIDDLE-2") < note.find("NEWEST-3"),
        "oldest first: {note}"
    );
    assert!(
        note.contains("OLDEST-1") && note.contains("characters cut"),
        "{note}"
    );
    assert!(note.contains("<user-words>"), "{note}");
}
