//! What the user runs themselves through the engine: files attached with `@` (through the read
//! tool's rules) and commands run with `!`.

mod support;

use pith::config::{Action, PermissionSetting};
use pith::event::{Event, Op};
use support::engine::harness;
use support::openai;

/// The text of the user messages of request `i`.
fn user_texts(h: &support::engine::Harness, i: usize) -> Vec<String> {
    let body = h.server.request_body(i);
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| match &m["content"] {
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Array(parts) => parts
                .iter()
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n---\n"),
            other => other.to_string(),
        })
        .collect()
}

#[tokio::test]
async fn a_mentioned_file_is_attached_through_the_read_tool() {
    let mut h = harness(vec![], false).await;
    std::fs::write(h.workspace.path().join("notes.txt"), "the secret is 42\n").unwrap();
    std::fs::create_dir(h.workspace.path().join("docs")).unwrap();
    std::fs::write(h.workspace.path().join("docs/a.md"), "a").unwrap();
    h.server.push(openai::text("It says 42.", Some((1000, 5))));
    h.send(Op::user_turn(
        "what does @notes.txt say? see @docs, not @nowhere.",
    ));
    h.turn_finished().await;
    let texts = user_texts(&h, 0);
    let all = texts.join("\n");
    assert!(all.starts_with("what does @notes.txt say?"), "{all}");
    assert!(
        all.contains(
            "[The user attached notes.txt (read with the read tool)]\n     1\tthe secret is 42"
        ),
        "{all}"
    );
    assert!(
        all.contains("[The user attached docs"),
        "a directory lists: {all}"
    );
    assert!(all.contains("a.md"), "{all}");
    assert!(!all.contains("attached nowhere"), "{all}");
}

/// A deny rule holds for a mention as for the model's own reads.
#[tokio::test]
async fn a_mention_the_rules_deny_is_not_attached() {
    let mut h = harness(
        vec![(
            "read",
            PermissionSetting::Patterns([("*.secret".to_string(), Action::Deny)].into()),
        )],
        false,
    )
    .await;
    std::fs::write(h.workspace.path().join("k.secret"), "hunter2\n").unwrap();
    h.server.push(openai::text("ok", Some((1000, 5))));
    h.send(Op::user_turn("use @k.secret"));
    h.turn_finished().await;
    let all = user_texts(&h, 0).join("\n");
    assert!(!all.contains("hunter2"), "{all}");
    assert!(
        all.contains("[The user tried to attach k.secret: Permission denied"),
        "{all}"
    );
    let _ = Event::Info {
        message: String::new(),
    };
}
