//! An image attached with `@shot.png` (or pasted as a path in the TUI, which becomes the same
//! mention) reaches the model as an image part in both wire formats; a model that does not take
//! images gets a note instead and the user is told at once; a path outside the workspace follows
//! the read tool's rules.

use crate::support;

use pith_config::{Config, PermissionAction, PermissionSetting, ProviderKind};
use pith_protocol::event::{Event, Op, TurnEvent};
use serde_json::Value;
use support::engine::{Harness, harness_with};
use support::openai;

/// A 1×1 PNG.
const PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
    0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0xf0,
    0x1f, 0x00, 0x05, 0x00, 0x01, 0xff, 0x89, 0x99, 0x3d, 0x1d, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45,
    0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
];

async fn engine(kind: ProviderKind, images: bool) -> Harness {
    harness_with(vec![], false, move |c: &mut Config| {
        c.provider.values_mut().next().unwrap().kind = kind;
        c.models.values_mut().next().unwrap().images = Some(images);
    })
    .await
}

/// The last user message of request `i`, the workspace path replaced.
fn user_message(h: &Harness, i: usize) -> Value {
    let body = h.server.request_body(i);
    let user = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .unwrap()
        .clone();
    let ws = h.workspace.path().canonicalize().unwrap();
    let text = serde_json::to_string(&user)
        .unwrap()
        .replace(&*ws.to_string_lossy(), "[workspace]");
    serde_json::from_str(&text).unwrap()
}

async fn ask_about_the_image(h: &mut Harness) -> Vec<String> {
    std::fs::write(h.workspace.path().join("shot.png"), PNG).unwrap();
    h.send(Op::user_turn("what is in @shot.png"));
    let mut infos = Vec::new();
    loop {
        match h.until("turn events", |_| true).await {
            Event::Turn(TurnEvent::Info { message, .. }) => infos.push(message),
            Event::Turn(TurnEvent::TurnFinished { .. }) => break,
            _ => {}
        }
    }
    infos
}

#[tokio::test]
async fn openai_request_carries_the_image() {
    let mut h = engine(ProviderKind::Openai, true).await;
    h.server
        .push(openai::text("a single pixel", Some((100, 3))));
    let infos = ask_about_the_image(&mut h).await;
    assert!(infos.iter().all(|i| !i.contains("not sent")), "{infos:?}");
    insta::assert_json_snapshot!("openai_image_part", user_message(&h, 0));
}

#[tokio::test]
async fn anthropic_request_carries_the_image() {
    let mut h = engine(ProviderKind::Anthropic, true).await;
    let blocks = [support::anthropic::Block::Text("a single pixel")];
    h.server.push(support::anthropic::message(
        &blocks,
        "end_turn",
        (100, 3, 0, 0),
    ));
    ask_about_the_image(&mut h).await;
    insta::assert_json_snapshot!("anthropic_image_part", user_message(&h, 0));
}

/// A model without images gets a note, and the user hears it before the answer.
#[tokio::test]
async fn a_model_without_images_gets_a_note_and_the_user_is_told() {
    let mut h = engine(ProviderKind::Openai, false).await;
    h.server
        .push(openai::text("I cannot see it", Some((100, 3))));
    let infos = ask_about_the_image(&mut h).await;
    assert!(
        infos
            .iter()
            .any(|i| i.contains("shot.png is not sent as an image")
                && i.contains("does not take images")),
        "{infos:?}"
    );
    let user = user_message(&h, 0).to_string();
    assert!(!user.contains("iVBOR"), "no image data: {user}");
    assert!(
        user.contains("not sent: this model does not take images"),
        "{user}"
    );
}

/// An image outside the workspace is read under the read tool's rules: denied there, nothing
/// of it is sent.
#[tokio::test]
async fn an_image_outside_the_workspace_follows_the_read_rules() {
    let mut h = harness_with(
        vec![(
            "external_directory",
            PermissionSetting::Action(PermissionAction::Deny),
        )],
        false,
        |c: &mut Config| c.models.values_mut().next().unwrap().images = Some(true),
    )
    .await;
    let outside = tempfile::tempdir().unwrap();
    let path = outside.path().join("secret.png");
    std::fs::write(&path, PNG).unwrap();
    h.server.push(openai::text("ok", Some((100, 3))));
    h.send(Op::user_turn(format!("look at @{}", path.display())));
    h.turn_finished().await;
    let user = user_message(&h, 0).to_string();
    assert!(!user.contains("iVBOR"), "the image was sent: {user}");
}
