//! A web search's tool cell: the query in its header, the hits (title and address) under it,
//! folded to the first few; unfolded, each address on its own line. A search with no hits
//! shows what the model was told.

use serde_json::json;

use super::tests::*;
use pith_protocol::message::{Message, PartKind, Role, ToolState, ToolTime};

fn search_part(hits: usize) -> PartKind {
    let hits: Vec<_> = (1..=hits)
        .map(|i| {
            json!({
                "title": format!("Tokio tutorial, part {i}: spawning tasks"),
                "url": format!("https://tokio.rs/tokio/tutorial/part-{i}")
            })
        })
        .collect();
    PartKind::Tool {
        call_id: "call-ws".into(),
        tool: "websearch".into(),
        input: json!({"query": "tokio spawn blocking tutorial"}),
        state: ToolState::Completed {
            output: "Results for \"tokio spawn blocking tutorial\" (searxng, 8 of 8): ...".into(),
            title: format!("{} results", hits.len()),
            metadata: json!({
                "query": "tokio spawn blocking tutorial",
                "backend": "searxng",
                "hits": hits
            }),
            time: ToolTime {
                start: 1_000,
                end: 1_900,
                compacted: None,
            },
        },
    }
}

fn with_search(hits: usize) -> crate::app::App {
    let mut a = msg("M2", Role::Assistant);
    a.parts.push(part("M2", "M2-tool", search_part(hits)));
    let messages: Vec<Message> = vec![user("M1", "how do I spawn blocking work in tokio?"), a];
    app_with(messages).0
}

#[test]
fn snapshot_websearch_cell_folded_and_expanded() {
    let mut app = with_search(8);
    let folded = render(&mut app, 90, 16);
    assert!(
        folded.contains("✓ websearch tokio spawn blocking tutorial"),
        "{folded}"
    );
    assert!(
        folded.contains(
            "Tokio tutorial, part 1: spawning tasks  https://tokio.rs/tokio/tutorial/part-1"
        ),
        "{folded}"
    );
    assert!(folded.contains("… +3 results (ctrl+o)"), "{folded}");
    assert!(!folded.contains("part-6"), "{folded}");
    insta::assert_snapshot!("websearch_folded", folded);
    let i = app
        .transcript()
        .cells()
        .iter()
        .position(|c| c.key == "M2-tool")
        .unwrap();
    app.transcript_mut().toggle_cell(i);
    let expanded = render(&mut app, 90, 30);
    assert!(expanded.contains("part-8"), "{expanded}");
    insta::assert_snapshot!("websearch_expanded", expanded);
}

#[test]
fn a_search_without_hits_shows_what_the_model_was_told() {
    let mut app = with_search(0);
    let screen = render(&mut app, 90, 16);
    assert!(screen.contains("Results for"), "{screen}");
}

/// The provider's own search (stored by the engine with backend `hosted`) shows the same way;
/// a page named by its address only shows the address once.
#[test]
fn a_hosted_search_shows_its_query_and_pages() {
    let mut a = msg("M2", Role::Assistant);
    a.parts.push(part(
        "M2",
        "M2-ws",
        PartKind::Tool {
            call_id: "ws_1".into(),
            tool: "websearch".into(),
            input: json!({"query": "rust 2024 edition"}),
            state: ToolState::Completed {
                output: "The provider searched the web for \"rust 2024 edition\": 2 pages.".into(),
                title: "2 pages".into(),
                metadata: json!({"query": "rust 2024 edition", "backend": "hosted", "hits": [
                    {"title": "", "url": "https://blog.rust-lang.org/"},
                    {"title": "Edition Guide", "url": "https://doc.rust-lang.org/edition-guide/"}
                ]}),
                time: ToolTime {
                    start: 1_000,
                    end: 1_000,
                    compacted: None,
                },
            },
        },
    ));
    a.parts.push(text(
        "M2",
        "M2-t",
        "The 2024 edition shipped with Rust 1.85.",
    ));
    let (mut app, _rx) = app_with(vec![user("M1", "when did the 2024 edition ship?"), a]);
    let screen = render(&mut app, 90, 16);
    assert!(screen.contains("✓ websearch rust 2024 edition"), "{screen}");
    assert!(
        screen.contains("  ⎿ https://blog.rust-lang.org/ "),
        "{screen}"
    );
    assert!(
        screen.contains("    Edition Guide  https://doc.rust-lang.org/edition-guide/"),
        "{screen}"
    );
    assert!(screen.contains("shipped with Rust 1.85"), "{screen}");
}
