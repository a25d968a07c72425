use super::encoding::{heuristic_count, segments};
use super::*;
use crate::testutil::*;

#[test]
fn encoding_by_model_family() {
    for m in [
        "gpt-4o",
        "openai/gpt-4o-mini",
        "gpt-4.1-nano",
        "gpt-5",
        "o1",
        "o3-mini",
        "o4-mini",
    ] {
        assert_eq!(Encoding::for_model(m), Encoding::O200k, "{m}");
    }
    for m in ["gpt-4", "gpt-4-turbo", "openai/gpt-3.5-turbo", "gpt-4-0613"] {
        assert_eq!(Encoding::for_model(m), Encoding::Cl100k, "{m}");
    }
    for m in [
        "anthropic/claude-sonnet-4-5",
        "qwen3-coder",
        "llama-3.1-70b",
        "o1x",
        "",
    ] {
        assert_eq!(Encoding::for_model(m), Encoding::O200k, "{m}");
    }
}

#[test]
fn counts_are_real_bpe_counts() {
    let e = Estimator::for_model("gpt-4o");
    assert_eq!(e.text(""), 0);
    assert_eq!(e.text("hello world"), 2);
    let old = Estimator::for_model("gpt-4");
    assert_eq!(old.text("hello world"), 2);
}

#[test]
fn cjk_is_not_chars_over_four() {
    let e = Estimator::for_model("anthropic/claude-sonnet-4-5");
    let s = "上下文管理是这个编码代理的核心能力。它在压缩历史时必须保留用户给出的每一条指令、路径和标识符，".repeat(20);
    let chars = s.chars().count() as u64;
    let t = e.text(&s);
    // chars/4 would say ~chars/4; real BPE is between ~0.5 and ~1.5 tokens per CJK character.
    assert!(t > chars / 2, "{t} tokens for {chars} chars");
    assert!(t < chars * 3 / 2, "{t} tokens for {chars} chars");
}

#[test]
fn code_estimate_is_plausible() {
    let e = Estimator::for_model("gpt-4.1");
    let code = r#"
pub fn is_overflow(count: u64, limits: &Limits, cfg: &CompactionConfig) -> bool {
    if !cfg.auto || limits.context == 0 {
        return false;
    }
    count >= usable(limits, cfg)
}
"#
    .repeat(30);
    let bytes = code.len() as u64;
    let t = e.text(&code);
    assert!(
        t > bytes / 7 && t < bytes / 2,
        "{t} tokens for {bytes} bytes"
    );
}

#[test]
fn pathological_long_runs_are_counted_quickly() {
    let e = Estimator::for_model("gpt-4o");
    let s = "a".repeat(400_000);
    let start = std::time::Instant::now();
    let t = e.text(&s);
    assert!(t > 400_000 / 20 && t < 400_000, "{t}");
    assert!(start.elapsed().as_secs() < 10);
}

#[test]
fn segments_cover_the_text_on_char_boundaries() {
    let s = "héllo wörld 上下文\n".repeat(500) + &"x".repeat(5000);
    let parts: Vec<&str> = segments(&s, 100).collect();
    assert_eq!(parts.concat(), s);
    assert!(parts.iter().all(|p| p.len() <= 100 && !p.is_empty()));
    assert!(parts.len() > s.len() / 100);
}

#[test]
fn part_counts_are_cached_and_recounted_on_change() {
    let mut e = Estimator::for_model("gpt-4o");
    let mut m = user("u1", "please read src/main.rs and explain it");
    let first = e.part(&m.parts[0]);
    assert!(first > 0);
    assert_eq!(e.cache_stats(), (0, 1));
    assert_eq!(e.part(&m.parts[0]), first);
    assert_eq!(e.cache_stats(), (1, 1));
    // The text grows (streaming): counted again.
    if let PartKind::Text { text, .. } = &mut m.parts[0].kind {
        text.push_str(" in great detail please");
    }
    let grown = e.part(&m.parts[0]);
    assert!(grown > first);
    assert_eq!(e.cache_stats(), (1, 2));
}

#[test]
fn tool_cost_follows_state_and_pruning() {
    let mut e = Estimator::for_model("gpt-4o");
    let out = words(3_000);
    let mut m = assistant("a1", "u1");
    add(&mut m, tool("bash", "c1", ToolState::Pending));
    let pending = e.part(&m.parts[0]);
    m.parts[0].kind = tool("bash", "c1", completed(&out));
    let done = e.part(&m.parts[0]);
    assert!(done > pending + 2_000, "{done} vs {pending}");
    assert!(e.tool_output(&m.parts[0]) >= 2_000);
    m.parts[0].kind = tool("bash", "c1", pruned(&out));
    let cleared = e.part(&m.parts[0]);
    assert!(cleared < 60, "{cleared}");
    assert_eq!(e.tool_output(&m.parts[0]), 0);
    // Errors count their message.
    m.parts[0].kind = tool(
        "bash",
        "c1",
        ToolState::Error {
            message: words(500),
            start: None,
            end: None,
        },
    );
    assert!(e.part(&m.parts[0]) > 400);
}

#[test]
fn parts_not_sent_cost_nothing() {
    let mut e = Estimator::for_model("gpt-4o");
    let mut m = assistant("a1", "u1");
    add(&mut m, PartKind::StepStart);
    add(
        &mut m,
        PartKind::Patch {
            files: vec!["a.rs".into()],
        },
    );
    assert_eq!(e.message(&m), 0);
    add(&mut m, text("done"));
    assert!(e.message(&m) > 0);
    let c = compaction_msg("c1", None);
    assert!(e.message(&c) > 5);
}

#[test]
fn learned_ratio_comes_from_growth_and_is_smoothed_and_clamped() {
    let mut e = Estimator::for_model("gpt-4o");
    let s = words(1_000);
    let raw = e.text(&s);
    e.learn(500, 0);
    assert_eq!(e.ratio(), 1.0);
    // The first report teaches nothing about the ratio (overhead and content are mixed in it).
    e.learn(1_000, 1_500);
    assert_eq!(e.ratio(), 1.0);
    // The content grew by 1,000 estimated tokens and the report by 1,500: ratio 1.5.
    e.learn(2_000, 3_000);
    assert!((e.ratio() - 1.5).abs() < 1e-9, "{}", e.ratio());
    let scaled = e.text(&s);
    assert!((scaled as f64 - raw as f64 * 1.5).abs() <= 1.0);
    // Estimates produced at 1.5 that grow exactly as reported: the ratio stays.
    e.learn(4_500, 4_500);
    assert!((e.ratio() - 1.5).abs() < 1e-9, "{}", e.ratio());
    // Growth too small to say anything is skipped.
    e.learn(4_530, 9_000);
    assert!((e.ratio() - 1.5).abs() < 1e-9, "{}", e.ratio());
    let mut content = 4_530;
    let mut reported = 9_000;
    for _ in 0..50 {
        content += 1_000;
        reported += 100_000;
        e.learn(content, reported);
    }
    assert!((e.ratio() - 2.0).abs() < 1e-6);
    for _ in 0..50 {
        content += 10_000;
        reported += 1;
        e.learn(content, reported);
    }
    assert!((e.ratio() - 0.5).abs() < 1e-6);
}

#[test]
fn overhead_a_server_does_not_send_is_learned_apart_from_the_content_ratio() {
    // A llama.cpp template without tools: ~2,500 estimated tokens of definitions cost nothing,
    // while content costs what tiktoken says (ratio 1). One ratio would have learned ~0.2 and
    // made every later tool output look five times smaller than it is.
    let mut e = Estimator::for_model("gpt-4o");
    let system = vec![words(300)];
    let tools = vec![pith_protocol::llm::ToolSpec {
        name: "bash".into(),
        description: words(1_000),
        parameters: serde_json::json!({"type": "object"}),
    }];
    let overhead = e.request_overhead(&system, &tools);
    assert!(overhead > 2_000, "{overhead}");
    // A floor of a tenth of the estimate keeps a misread from zeroing it.
    assert!(overhead / 10 < 400, "{overhead}");
    let real_overhead = 400;
    let mut content = 50;
    e.learn(content, real_overhead + content);
    for grow in [900, 1_500, 700] {
        content += grow;
        e.learn(content, real_overhead + content);
    }
    assert!((e.ratio() - 1.0).abs() < 0.01, "{}", e.ratio());
    let learned = e.request_overhead(&system, &tools);
    assert!(
        learned.abs_diff(real_overhead) <= 5,
        "learned overhead {learned}, real {real_overhead}"
    );
    // A text is still counted at full weight.
    assert_eq!(
        e.text(&words(1_000)),
        Estimator::for_model("gpt-4o").text(&words(1_000))
    );
}

#[test]
fn cached_parts_follow_the_ratio() {
    let mut e = Estimator::for_model("gpt-4o");
    let m = user("u1", &words(1_000));
    let before = e.part(&m.parts[0]);
    e.learn(1_000, 1_000);
    e.learn(2_000, 3_000);
    let after = e.part(&m.parts[0]);
    assert_eq!(
        e.cache_stats().0,
        1,
        "a ratio change must not invalidate the cache"
    );
    assert!(after > before * 19 / 10);
}

#[test]
fn chat_message_estimates() {
    let e = Estimator::for_model("gpt-4o");
    let msgs = vec![
        ChatMessage::User {
            content: vec![UserContent::Text { text: words(100) }],
        },
        ChatMessage::Assistant {
            content: vec![AssistantContent::ToolCall {
                id: "c".into(),
                name: "read".into(),
                input: serde_json::json!({"path": "src/lib.rs"}),
            }],
        },
        ChatMessage::ToolResult {
            call_id: "c".into(),
            content: words(200),
            is_error: false,
        },
    ];
    let total = e.chat_messages(&msgs);
    let each: u64 = msgs.iter().map(|m| e.chat_message(m)).sum();
    assert_eq!(total, each);
    assert!(total > 300 && total < 1_000, "{total}");
}

#[test]
fn request_overhead_is_cached_by_content() {
    let mut e = Estimator::for_model("gpt-4o");
    let sys = vec![words(2_000)];
    let a = e.request_overhead(&sys, &[]);
    assert!(a > 1_500);
    assert_eq!(e.fixed.len(), 1);
    assert_eq!(e.request_overhead(&sys, &[]), a);
    assert_eq!(e.fixed.len(), 1);
}

#[test]
fn lazy_estimator_uses_the_heuristic_until_exact_is_wanted() {
    let cjk = "上下文管理决定了代理能走多远。".repeat(40);
    let part = crate::testutil::user("m1", &cjk).parts[0].clone();
    let mut exact = Estimator::for_model("gpt-4o");
    let want = exact.part(&part);
    let mut lazy = Estimator::lazy("gpt-4o");
    assert!(!lazy.is_exact());
    let heuristic = lazy.part(&part);
    assert_eq!(heuristic, heuristic_count(&cjk) + PART_OVERHEAD);
    assert_ne!(
        heuristic, want,
        "the heuristic must differ for this test to mean anything"
    );
    // A learned ratio belongs to the heuristic counts and is dropped on the switch.
    lazy.learn(100, 150);
    lazy.learn(300, 450);
    assert!(lazy.ratio() > 1.0);
    lazy.want_exact();
    assert!(lazy.is_exact());
    assert_eq!(lazy.ratio(), 1.0);
    // The cached heuristic count is recounted, not reused.
    assert_eq!(lazy.part(&part), want);
    assert_eq!(lazy.text(&cjk), exact.text(&cjk));
}

#[test]
fn lazy_overhead_is_recounted_after_the_switch() {
    let system = vec!["You are pith. ".repeat(200)];
    let mut lazy = Estimator::lazy("gpt-4o");
    let mut exact = Estimator::for_model("gpt-4o");
    let before = lazy.request_overhead(&system, &[]);
    lazy.want_exact();
    let after = lazy.request_overhead(&system, &[]);
    assert_eq!(after, exact.request_overhead(&system, &[]));
    assert_ne!(before, after);
}

#[test]
fn a_mid_turn_message_counts_the_reminder_it_is_sent_in() {
    let mut e = Estimator::for_model("gpt-4o");
    let plain = user("u1", "also fix the tests");
    let mut late = plain.clone();
    late.mid_turn = true;
    let wrapped = crate::view::wrap_mid_turn("also fix the tests");
    let extra = e.message(&late) - e.message(&plain);
    let reminder = e.text(&wrapped) - e.text("also fix the tests");
    assert!(
        extra > 10 && extra.abs_diff(reminder) <= 2,
        "{extra} tokens added for a reminder of {reminder}"
    );
    assert_eq!(
        e.messages([&late, &plain]),
        e.message(&late) + e.message(&plain)
    );
}
