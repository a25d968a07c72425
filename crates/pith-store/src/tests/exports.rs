//! `/export`: the JSON holds everything, the Markdown reads well.

use super::*;
use crate::export::{export_json, export_markdown};

fn sample_history() -> (Session, Vec<Message>) {
    let store = Store::open_in_memory().unwrap();
    let mut s = store.create_session("/w", "openai/gpt-4.1").unwrap();
    s.title = "Fix it".into();
    let u = add_message(&store, &s.id, Role::User, vec![text("please fix")]);
    let mut a = add_message(&store, &s.id, Role::Assistant, every_part_kind());
    a.model = Some("openai/gpt-4.1".into());
    let mut sum = add_message(&store, &s.id, Role::Assistant, vec![text("## Goal\nfix")]);
    sum.summary = true;
    (s, vec![u, a, sum])
}

#[test]
fn json_export_holds_everything() {
    let (s, msgs) = sample_history();
    let v = export_json(&s, &msgs);
    assert_eq!(v["format"], "pith-session");
    assert_eq!(v["session"]["title"], "Fix it");
    assert_eq!(v["messages"].as_array().unwrap().len(), 3);
    let back: Vec<Message> = serde_json::from_value(v["messages"].clone()).unwrap();
    assert_eq!(back, msgs);
    // The pruned output is still there in full, marked as compacted.
    let text = v.to_string();
    assert!(text.contains("fn main() {}"));
    assert!(text.contains("\"compacted\":3"));
    assert_eq!(v["messages"][2]["summary"], true);
}

#[test]
fn markdown_export_is_readable() {
    let (s, mut msgs) = sample_history();
    // An output that itself holds a fence must not break out of its block.
    msgs[1].push(PartKind::Tool {
        call_id: "c9".into(),
        tool: "bash".into(),
        input: json!({"command": "cat README.md"}),
        state: ToolState::Completed {
            output: "```rust\nfn x() {}\n```".into(),
            title: "cat".into(),
            metadata: json!(null),
            time: ToolTime {
                start: 1,
                end: 2,
                compacted: None,
            },
        },
    });
    let md = export_markdown(&s, &msgs);
    assert!(md.starts_with("# Fix it\n"));
    assert_eq!(md.matches("\n## User · ").count(), 1, "{md}");
    assert_eq!(md.matches("\n## Assistant").count(), 2, "{md}");
    assert!(md.contains("## User · "));
    assert!(md.contains("## Assistant (openai/gpt-4.1) · "));
    assert!(md.contains("### Tool `bash` — pending"));
    assert!(md.contains("### Tool `read` — completed: a.rs"));
    assert!(md.contains("```json\n{\n  \"command\": \"ls\"\n}\n```"));
    assert!(md.contains(
        "*(pruned from the model's context at 1970-01-01 00:00:00 UTC; kept here in full)*"
    ));
    assert!(md.contains("```\nfn main() {}\n```"));
    assert!(md.contains("Error:\n\n```\nno such file\n```"));
    assert!(
        md.contains("**Compaction requested** (automatic, context overflow) — focus: the parser")
    );
    assert!(md.contains("**Compaction summary**"));
    assert!(md.contains("````\n```rust\nfn x() {}\n```\n````"), "{md}");
    assert!(!md.contains("sent while the agent worked"), "{md}");
    msgs[0].mid_turn = true;
    let md = export_markdown(&s, &msgs);
    assert!(md.contains("*(sent while the agent worked)*"), "{md}");
}
