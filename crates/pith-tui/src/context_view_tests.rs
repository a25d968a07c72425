//! `/context` and the compaction divider as a newcomer reads them: whole lines at 100 columns,
//! counts with thousands separators, what a compaction did in words.

use crossterm::event::KeyCode;
use pith_protocol::event::{
    Breakdown, CompactionCost, ContextEvent, Event, OutputEvent, SubagentTotals,
};
use pith_protocol::message::{CompactionPart, PartKind, Role};

use super::tests::*;

fn breakdown() -> Breakdown {
    Breakdown {
        system: 3_100,
        tools: 8_200,
        summary: 2_000,
        messages: 12_400,
        tool_outputs: 16_300,
        pruned: 41_000,
        free: 138_000,
        reserved: 20_000,
        window: 200_000,
        last_compaction: Some(CompactionCost {
            input: 41_234,
            cache_read: 37_000,
            cost: 0.0123,
            cache_friendly: false,
            background: true,
        }),
        subagents: SubagentTotals {
            runs: 12,
            tokens: 1_234_567,
            cost: 12.34,
        },
        pinned: 0,
        left: Default::default(),
        exact: true,
    }
}

/// At 100 columns every line of `/context` is whole: the sub-agents' and the last
/// compaction's notes were cut at the popup's edge.
#[test]
fn context_lines_are_whole_at_100_columns() {
    let (mut app, _rx) = app_with(conversation());
    type_str(&mut app, "/context");
    key(&mut app, KeyCode::Enter);
    ev(
        &mut app,
        Event::Context(ContextEvent::ContextBreakdown {
            breakdown: breakdown(),
            pins: Vec::new(),
            instructions: Vec::new(),
        }),
    );
    let screen = render(&mut app, 100, 30);
    let flat = screen
        .lines()
        .map(|l| l.trim_matches('"').trim_end_matches('│').trim())
        .collect::<Vec<_>>()
        .join(" ");
    for whole in [
        "(in their own contexts)",
        "(written in the background)",
        "1,234,567 tokens",
    ] {
        assert!(flat.contains(whole), "{screen}");
    }
    assert!(!flat.contains("k in,"), "no jargon: {screen}");
    insta::assert_snapshot!("context_breakdown_100x30", screen);
}

/// The divider says what a compaction did in words: from how many tokens to how many, and
/// what writing the summary cost (not `8.9k in`).
#[test]
fn the_compaction_divider_reads_without_jargon() {
    let (mut app, _rx) = fresh();
    ev(
        &mut app,
        Event::Context(ContextEvent::CompactionStarted {
            auto: false,
            overflow: false,
            focus: None,
        }),
    );
    let mut c = msg("M3", Role::User);
    c.parts.push(part(
        "M3",
        "M3-c",
        PartKind::Compaction(CompactionPart::default()),
    ));
    ev(&mut app, Event::Output(OutputEvent::Message { message: c }));
    ev(
        &mut app,
        Event::Context(ContextEvent::CompactionFinished {
            summary_message_id: "M4".into(),
            before: 41_200,
            after: 9_800,
            model_calls: 1,
            cost: CompactionCost {
                input: 8_900,
                cache_read: 8_277,
                cost: 0.01,
                cache_friendly: true,
                background: false,
            },
            kept: Default::default(),
            left: Default::default(),
        }),
    );
    let screen = render(&mut app, 100, 30);
    assert!(screen.contains("compacted 41.2k → 9.8k"), "{screen}");
    assert!(
        screen.contains("summary: read 8.9k, 93% cached, $0.01"),
        "{screen}"
    );
    assert!(!screen.contains("k in,"), "{screen}");
}
