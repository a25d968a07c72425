use serde_json::json;

use super::*;
use pith_protocol::message::{Message, Role, ToolState, ToolTime};
use pith_tools::testutil::Ws;

fn spec(name: &str, description: &str) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: description.into(),
        parameters: json!({"type": "object", "properties": {"repo": {}, "title": {}}, "required": ["title"]}),
    }
}

fn catalog() -> Vec<ToolSpec> {
    vec![
        spec(
            "github_create_issue",
            "Create an issue in a repository. Long details follow.",
        ),
        spec("github_list_prs", "List pull requests.\nMore."),
        spec("docs_search", "Search the documentation for a phrase"),
    ]
}

#[test]
fn deferral_follows_the_mode_and_the_share_of_the_window() {
    let auto = ToolSearchConfig::default();
    assert!(!should_defer(&auto, 9_000, 100_000));
    assert!(should_defer(&auto, 11_000, 100_000));
    assert!(
        !should_defer(&auto, 11_000, 0),
        "unknown window: not deferred"
    );
    assert!(!should_defer(&auto, 0, 1_000));
    let always = ToolSearchConfig {
        mode: ToolSearchMode::Always,
        ..auto
    };
    assert!(should_defer(&always, 1, 1_000_000));
    let never = ToolSearchConfig {
        mode: ToolSearchMode::Never,
        ..auto
    };
    assert!(!should_defer(&never, 999_999, 1_000));
}

#[test]
fn the_index_lists_what_is_not_loaded_in_one_short_line_each() {
    let loaded: BTreeSet<String> = ["github_list_prs".to_string()].into();
    let t = ToolSearch::new(catalog(), &loaded);
    let d = t.description();
    assert!(
        d.contains("\n- github_create_issue: Create an issue in a repository."),
        "{d}"
    );
    assert!(!d.contains("Long details"), "{d}");
    assert!(!d.contains("github_list_prs"), "{d}");
    assert!(d.contains("- docs_search: Search the documentation for a phrase"));
}

#[tokio::test]
async fn loading_by_name_and_by_keywords() {
    let ws = Ws::new();
    let t = ToolSearch::new(catalog(), &BTreeSet::new());
    let out = t
        .run(json!({"names": ["github_create_issue", "nope"]}), &ws.ctx)
        .await
        .unwrap();
    assert_eq!(out.metadata["loaded"], json!(["github_create_issue"]));
    assert!(
        out.output
            .contains("github_create_issue(repo, title*): Create an issue"),
        "{}",
        out.output
    );
    assert!(out.output.contains("Not found: nope"));
    let out = t
        .run(json!({"query": "documentation"}), &ws.ctx)
        .await
        .unwrap();
    assert_eq!(out.metadata["loaded"], json!(["docs_search"]));
    let out = t.run(json!({"query": "github"}), &ws.ctx).await.unwrap();
    assert_eq!(out.metadata["loaded"].as_array().unwrap().len(), 2);
    let err = t
        .run(json!({"names": ["x"]}), &ws.ctx)
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("unknown: x"), "{err}");
}

#[test]
fn what_is_loaded_is_read_from_the_history() {
    let mut m = Message::new("s", Role::Assistant);
    let completed = |metadata: Value| ToolState::Completed {
        output: String::new(),
        title: String::new(),
        metadata,
        time: ToolTime {
            start: 0,
            end: 0,
            compacted: Some(1),
        },
    };
    m.push(PartKind::Tool {
        call_id: "a".into(),
        tool: TOOL_SEARCH.into(),
        input: json!({}),
        state: completed(json!({"loaded": ["docs_search"]})),
    });
    m.push(PartKind::Tool {
        call_id: "b".into(),
        tool: "github_list_prs".into(),
        input: json!({}),
        state: ToolState::Pending,
    });
    m.push(PartKind::Tool {
        call_id: "c".into(),
        tool: "bash".into(),
        input: json!({}),
        state: ToolState::Pending,
    });
    let got = loaded(&[m], &|n: &str| n.contains('_'));
    assert_eq!(
        got.into_iter().collect::<Vec<_>>(),
        ["docs_search", "github_list_prs"]
    );
}

#[test]
fn a_huge_catalog_keeps_the_index_bounded() {
    let catalog: Vec<ToolSpec> = (0..5_000)
        .map(|i| {
            spec(
                &format!("big_tool_{i}"),
                "Does one of five thousand things.",
            )
        })
        .collect();
    let t = ToolSearch::new(catalog, &BTreeSet::new());
    let d = t.description();
    assert!(d.len() <= INDEX_MAX_CHARS + 100, "{}", d.len());
    assert!(
        d.contains("more: find them with `query`"),
        "{}",
        &d[d.len() - 200..]
    );
}
