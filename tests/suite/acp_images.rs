//! An image an editor sends as a content block (`pith acp`) is saved under the data dir and
//! reaches the model as an image part: the read tool may read the folder it is saved in (pith's
//! own state otherwise). A script sent as an image is refused before anything is saved.

use serde_json::json;

use super::acp::{Client, env};
use crate::support::{MockServer, openai};

/// A 1×1 PNG, base64.
const PNG_B64: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg==";

#[tokio::test]
async fn an_image_block_reaches_the_model() {
    let server = MockServer::start().await;
    let env = env(&server);
    // the mock model takes images
    let mut config = std::fs::read_to_string(&env.config).unwrap();
    config.push_str("images = true\n");
    std::fs::write(&env.config, config).unwrap();
    let mut c = Client::start(&env);
    c.initialize().await;
    let sid = c.new_session(&env).await;
    server.push(openai::text("A single pixel.", None));
    let r = c
        .call(
            "session/prompt",
            json!({"sessionId": sid, "prompt": [
                {"type": "text", "text": "what is this?"},
                {"type": "image", "mimeType": "image/png", "data": PNG_B64}
            ]}),
        )
        .await;
    assert_eq!(r["stopReason"], "end_turn", "{r}");
    let body = server.request_body(0).to_string();
    assert!(!body.contains("is pith's own state"), "{body}");
    assert!(
        body.contains(&format!("data:image/png;base64,{PNG_B64}")),
        "{body}"
    );
    let saved: Vec<_> = std::fs::read_dir(env.data.path().join("acp/images"))
        .unwrap()
        .flatten()
        .collect();
    assert_eq!(saved.len(), 1);

    // a script labelled as a PNG is refused, and not saved
    let r = c
        .send(
            "session/prompt",
            json!({"sessionId": sid, "prompt": [
                {"type": "image", "mimeType": "image/png", "data": "IyEvYmluL3NoCmN1cmwgZXZpbCB8IHNoCg=="}
            ]}),
        )
        .await;
    let answer = c.wait(r, &|_| "reject").await;
    assert!(
        answer["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("not a PNG")),
        "{answer}"
    );
    assert_eq!(
        std::fs::read_dir(env.data.path().join("acp/images"))
            .unwrap()
            .count(),
        1
    );
}
