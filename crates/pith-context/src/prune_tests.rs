use super::*;
use crate::testutil::*;

fn cfg(protect: u64, minimum: u64) -> PruneRules {
    PruneRules {
        protect,
        minimum,
        protected_tools: Vec::new(),
    }
}

/// Turns u1..u4; a1..a3 hold one completed tool output of `out` each, a4/a5 too.
fn session(out: &str) -> Vec<Message> {
    vec![
        user("u1", "one"),
        tool_msg("a1", "u1", "read", out),
        tool_msg("a2", "u1", "read", out),
        user("u2", "two"),
        tool_msg("a3", "u2", "read", out),
        user("u3", "three"),
        tool_msg("a4", "u3", "read", out),
        user("u4", "four"),
        tool_msg("a5", "u4", "read", out),
    ]
}

fn target(m: &str) -> (String, String) {
    (m.to_string(), format!("{m}.1"))
}

fn output_tokens(out: &str) -> u64 {
    let mut e = Estimator::for_model("gpt-4o");
    let m = tool_msg("x", "u", "read", out);
    e.tool_output(&m.parts[1])
}

#[test]
fn protects_recent_outputs_and_prunes_older_ones() {
    let out = words(1_000);
    let x = output_tokens(&out);
    let mut e = Estimator::for_model("gpt-4o");
    let s = session(&out);
    // a3 fills the protect window (x), a2 passes it → a2 and a1 are candidates.
    let p = plan(&s, &mut e, &cfg(x + x / 2, x));
    assert_eq!(p.targets, vec![target("a2"), target("a1")]);
    assert_eq!(p.tokens, 2 * x);
}

#[test]
fn last_two_turns_are_never_pruned() {
    let out = words(1_000);
    let mut e = Estimator::for_model("gpt-4o");
    let s = session(&out);
    // Protect nothing, prune anything: still only outputs before the last two turns.
    let p = plan(&s, &mut e, &cfg(0, 0));
    assert_eq!(p.targets, vec![target("a3"), target("a2"), target("a1")]);
    // With only two turns nothing at all is prunable.
    let p = plan(&s[5..], &mut e, &cfg(0, 0));
    assert!(p.is_empty());
}

#[test]
fn synthetic_user_messages_are_not_turns() {
    let out = words(500);
    let mut e = Estimator::for_model("gpt-4o");
    let s = vec![
        user("u1", "one"),
        tool_msg("a1", "u1", "read", &out),
        synthetic_user("k1", "continue"),
        tool_msg("a2", "u1", "read", &out),
        user("u2", "two"),
        tool_msg("a3", "u2", "read", &out),
    ];
    assert!(plan(&s, &mut e, &cfg(0, 0)).is_empty());
}

#[test]
fn minimum_batch_is_required() {
    let out = words(1_000);
    let x = output_tokens(&out);
    let mut e = Estimator::for_model("gpt-4o");
    let s = session(&out);
    // Candidates a2 + a1 = 2x: not more than a minimum of 2x → nothing.
    assert!(plan(&s, &mut e, &cfg(x + x / 2, 2 * x)).is_empty());
    assert!(!plan(&s, &mut e, &cfg(x + x / 2, 2 * x - 1)).is_empty());
}

#[test]
fn protected_tools_are_never_pruned_nor_counted() {
    let out = words(1_000);
    let x = output_tokens(&out);
    let mut e = Estimator::for_model("gpt-4o");
    let mut s = session(&out);
    s[2] = tool_msg("a2", "u1", "lookup", &out);
    let mut rules = cfg(x / 2, 0);
    assert!(plan(&s, &mut e, &rules).targets.contains(&target("a2")));
    rules.protected_tools = vec!["lookup".into()];
    let p = plan(&s, &mut e, &rules);
    // a3 passes the protect window; a2 (lookup) is skipped; a1 is a candidate.
    assert_eq!(p.targets, vec![target("a3"), target("a1")]);
}

/// A search the provider ran itself is not in the request: never a candidate, never counted.
#[test]
fn hosted_searches_are_never_pruned_nor_counted() {
    let out = words(1_000);
    let x = output_tokens(&out);
    let mut e = Estimator::for_model("gpt-4o");
    let mut s = session(&out);
    let mut a2 = assistant("a2", "u1");
    let hosted = ToolState::Completed {
        output: out,
        title: "3 pages".into(),
        metadata: serde_json::json!({"query": "q", "backend": "hosted", "hits": []}),
        time: pith_protocol::message::ToolTime {
            start: 1,
            end: 2,
            compacted: None,
        },
    };
    add(&mut a2, tool("websearch", "ws", hosted));
    s[2] = a2;
    let p = plan(&s, &mut e, &cfg(x / 2, 0));
    // a3 passes the protect window; a2 (hosted) is skipped; a1 is a candidate.
    assert_eq!(p.targets, vec![target("a3"), target("a1")]);
}

#[test]
fn only_completed_outputs_are_candidates() {
    let out = words(1_000);
    let mut e = Estimator::for_model("gpt-4o");
    let mut s = session(&out);
    let mut a1 = assistant("a1", "u1");
    add(
        &mut a1,
        tool(
            "bash",
            "c",
            ToolState::Error {
                message: out,
                start: None,
                end: None,
            },
        ),
    );
    add(&mut a1, tool("bash", "d", ToolState::Pending));
    s[1] = a1;
    let p = plan(&s, &mut e, &cfg(0, 0));
    assert_eq!(p.targets, vec![target("a3"), target("a2")]);
}

#[test]
fn apply_marks_without_deleting_and_is_idempotent() {
    let out = words(1_000);
    let x = output_tokens(&out);
    let c = cfg(x + x / 2, x);
    let mut e = Estimator::for_model("gpt-4o");
    let mut s = session(&out);
    let p = plan(&s, &mut e, &c);
    assert_eq!(apply(&mut s, &p, 42), 2);
    for m in [&s[1], &s[2]] {
        let PartKind::Tool {
            state: ToolState::Completed { output, time, .. },
            ..
        } = &m.parts[1].kind
        else {
            panic!("tool part");
        };
        assert_eq!(time.compacted, Some(42));
        assert_eq!(output, &out, "never deleted");
    }
    // Untouched: a3 (protected window), a4/a5 (last two turns).
    for m in [&s[4], &s[6], &s[8]] {
        let PartKind::Tool {
            state: ToolState::Completed { time, .. },
            ..
        } = &m.parts[1].kind
        else {
            panic!("tool part");
        };
        assert_eq!(time.compacted, None);
    }
    // Applying again changes nothing, and the plan is now empty.
    assert_eq!(apply(&mut s, &p, 99), 0);
    assert!(plan(&s, &mut e, &c).is_empty());
    let before = s.clone();
    let again = plan(&s, &mut e, &c);
    apply(&mut s, &again, 100);
    assert_eq!(s, before);
}

#[test]
fn walk_stops_at_an_already_pruned_output() {
    let out = words(1_000);
    let mut e = Estimator::for_model("gpt-4o");
    let mut s = session(&out);
    let mut a2 = assistant("a2", "u1");
    add(&mut a2, PartKind::StepStart);
    add(&mut a2, tool("read", "c", pruned(&out)));
    s[2] = a2;
    // a1 is older than a pruned output: not looked at.
    let p = plan(&s, &mut e, &cfg(0, 0));
    assert_eq!(p.targets, vec![target("a3")]);
}

#[test]
fn walk_stops_at_the_latest_summary_but_covers_the_tail() {
    let out = words(1_000);
    let mut e = Estimator::for_model("gpt-4o");
    // Storage order: old turn, tail turn (u2 a2), compaction, summary, newer turns.
    let s = vec![
        user("u1", "old"),
        tool_msg("a1", "u1", "read", &out),
        user("u2", "kept"),
        tool_msg("a2", "u2", "read", &out),
        compaction_msg("c1", Some("u2")),
        summary_msg("s1", "c1", "summary"),
        tool_msg("a3", "u2", "read", &out),
        user("u3", "three"),
        tool_msg("a4", "u3", "read", &out),
        user("u4", "four"),
        tool_msg("a5", "u4", "read", &out),
    ];
    let p = plan(&s, &mut e, &cfg(0, 0));
    assert_eq!(p.targets, vec![target("a3"), target("a2")]);
    // Same in model order.
    let ordered = crate::view::model_order(s);
    let p2 = plan(&ordered, &mut e, &cfg(0, 0));
    assert_eq!(p2, p);
}

#[test]
fn cost_is_proportional_to_what_is_new() {
    // A long history already pruned: the plan walks only the new outputs.
    let out = words(300);
    let c = cfg(0, 0);
    let mut s = Vec::new();
    for t in 0..200 {
        let u = format!("u{t}");
        s.push(user(&u, "go"));
        s.push(tool_msg(&format!("a{t}"), &u, "read", &out));
    }
    let mut e = Estimator::for_model("gpt-4o");
    let p = plan(&s, &mut e, &c);
    assert_eq!(p.targets.len(), 198);
    apply(&mut s, &p, 1);
    s.push(user("n1", "more"));
    s.push(tool_msg("na", "n1", "read", &out));
    let (h0, m0) = e.cache_stats();
    let p = plan(&s, &mut e, &c);
    let (h1, m1) = e.cache_stats();
    assert_eq!(p.targets, vec![target("a198")]);
    assert!(
        (h1 - h0) + (m1 - m0) <= 2,
        "looked at {} outputs",
        (h1 - h0) + (m1 - m0)
    );
}

/// A loaded skill is the model's instructions for the task: never pruned, configured or not.
#[test]
fn a_skill_output_is_never_pruned() {
    let out = words(1_000);
    let x = output_tokens(&out);
    let mut e = Estimator::for_model("gpt-4o");
    let mut s = session(&out);
    s[2] = tool_msg("a2", "u1", "skill", &out);
    let p = plan(&s, &mut e, &cfg(x / 2, 0));
    assert_eq!(p.targets, vec![target("a3"), target("a1")]);
}
