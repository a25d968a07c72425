use super::*;
use crate::context::testutil::*;
use crate::context::view::{convert, model_order};
use crate::message::{Message, PartKind};

fn est() -> Estimator {
    Estimator::for_model("gpt-4o")
}

fn cfg_preserve(v: Option<u64>) -> CompactionConfig {
    CompactionConfig {
        preserve_recent_tokens: v,
        ..CompactionConfig::default()
    }
}

#[test]
fn preserve_recent_default_is_a_clamped_quarter() {
    assert_eq!(preserve_recent_tokens(4_000, &cfg_preserve(None)), 2_000);
    assert_eq!(preserve_recent_tokens(20_000, &cfg_preserve(None)), 5_000);
    assert_eq!(preserve_recent_tokens(168_000, &cfg_preserve(None)), 8_000);
    assert_eq!(
        preserve_recent_tokens(168_000, &cfg_preserve(Some(123))),
        123
    );
    assert_eq!(preserve_recent_tokens(0, &cfg_preserve(None)), 2_000);
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
            i == h.len() || crate::context::view::is_turn_start(&h[i]),
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
    let t = request_text(None, None);
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
    let t = request_text(Some("  "), Some(" "));
    assert!(!t.contains("previous-summary") && !t.contains("focus on"));
}

#[test]
fn summary_request_snapshot_with_previous_summary_and_focus() {
    let chunk = crate::context::view::to_chat(&turns(2, 5));
    let msgs = summary_request_messages(
        Some("## Goal\nPort the parser to nom.\n\n## Critical Context\n- crate: `parser-v2`"),
        &chunk,
        Some("the failing test in tests/parse.rs"),
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
    let chunk = crate::context::view::to_chat(&h);
    let msgs = summary_request_messages(Some("prev"), &chunk, None);
    assert!(matches!(msgs[0], ChatMessage::User { .. }));
    assert_eq!(msgs.len(), chunk.len() + 2);
    let msgs = summary_request_messages(None, &[], None);
    assert_eq!(msgs.len(), 1);
}

#[test]
fn breaker_rules() {
    assert_eq!(breaker(100_000, 20_000, 1), None);
    assert_eq!(breaker(100_000, 89_999, 2), None);
    let m = breaker(100_000, 90_000, 1).expect("did not shrink");
    assert!(m.contains("100000 → 90000") && !m.contains('\n'));
    let m = breaker(100_000, 10_000, 3).expect("third compaction");
    assert!(m.contains("3 times") && !m.contains('\n'));
    assert_eq!(breaker(0, 0, 1), None);
    assert!(breaker(u64::MAX, u64::MAX, 1).is_some());
}

#[test]
fn chunk_budget_leaves_room_and_has_a_floor() {
    let e = est();
    let b = chunk_budget(168_000, None, None, &e);
    assert!(b < 168_000 * 9 / 10 - SUMMARY_RESERVE && b > 100_000, "{b}");
    let with_prev = chunk_budget(168_000, Some(&words(3_000)), Some("focus"), &e);
    assert!(with_prev + 2_500 < b);
    // A small window keeps a quarter for the summary instead of the full reserve.
    let small = chunk_budget(20_000, None, None, &e);
    assert!(
        small > 18_000 - SUMMARY_RESERVE && small < 18_000 - 5_000,
        "{small}"
    );
    assert_eq!(chunk_budget(2_000, None, None, &e), MIN_CHUNK_BUDGET);
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
        if round > 0 {
            assert!(
                c.previous_summary.is_some(),
                "round {round} lost the previous summary"
            );
        }
        let refs: Vec<&Message> = view[c.summarise.clone()].iter().collect();
        let msgs = prepare(convert(&refs, &mut |_, _| None));
        let budget = chunk_budget(12_000, c.previous_summary.as_deref(), None, &e);
        let mut running = c.previous_summary.clone();
        let mut request_inputs = String::new();
        for chunk in chunks(msgs, budget, &e) {
            let req = summary_request_messages(running.as_deref(), &chunk, None);
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
    let body = serde_json::to_string(&crate::context::view::to_chat(&stored)).expect("json");
    for f in &facts {
        assert!(
            body.contains(f.as_str()),
            "{f} lost after three compactions"
        );
    }
}
