//! `recall`: brings back an item that pruning cleared from the model's view or a compaction
//! summarised away (a tool output, a message, a pasted block). Nothing is ever deleted: the
//! item is read from the store.

use serde::Deserialize;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolError, ToolMeta, ToolOutput, parse_input};
use pith_protocol::tool::RecallMetadata;

pub struct Recall;

#[derive(Deserialize)]
struct Input {
    #[serde(alias = "call_id")]
    id: String,
}

#[async_trait::async_trait]
impl Tool for Recall {
    fn name(&self) -> &'static str {
        pith_protocol::tool::Builtin::Recall.as_str()
    }

    fn description(&self) -> &'static str {
        include_str!("../../../prompts/tools/recall.md")
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "id": {"type": "string", "description": "The recall id, exactly as the placeholder or the left-the-view note names it"}
            },
            "required": ["id"]
        })
    }

    async fn run(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let input: Input = parse_input("recall", input)?;
        let id = input.id.trim().trim_matches('"');
        let found = ctx
            .outputs
            .as_ref()
            .and_then(|o| o.tool_output(&ctx.session_id, id));
        let Some((tool, output)) = found else {
            return Err(tool_err!(
                "Nothing to recall with id \"{id}\" in this session. Use the id exactly as the placeholder or the left-the-view note names it."
            ));
        };
        Ok(ToolOutput {
            title: format!("{tool} output {id}"),
            output,
            metadata: RecallMetadata {
                recalled: id.to_string(),
                tool,
            }
            .into(),
            meta: ToolMeta::default(),
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::OutputLookup;
    use crate::testutil::Ws;

    struct Outputs;

    impl OutputLookup for Outputs {
        fn tool_output(&self, session_id: &str, call_id: &str) -> Option<(String, String)> {
            (session_id == "ses_test" && call_id == "call_9")
                .then(|| ("bash".to_string(), "the old output".to_string()))
        }
    }

    #[tokio::test]
    async fn brings_back_a_stored_output_by_id() {
        let mut ws = Ws::new();
        ws.ctx.outputs = Some(Arc::new(Outputs));
        let out = Recall
            .run(json!({"id": "call_9"}), &ws.ctx)
            .await
            .expect("recalled");
        assert_eq!(out.output, "the old output");
        assert_eq!(out.title, "bash output call_9");
        // Quotes the model copied from the placeholder are forgiven; a wrong id is explained.
        assert!(
            Recall
                .run(json!({"id": "\"call_9\""}), &ws.ctx)
                .await
                .is_ok()
        );
        let err = Recall
            .run(json!({"id": "call_1"}), &ws.ctx)
            .await
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("Nothing to recall with id \"call_1\""),
            "{err}"
        );
        ws.ctx.outputs = None;
        assert!(Recall.run(json!({"id": "call_9"}), &ws.ctx).await.is_err());
    }
}
