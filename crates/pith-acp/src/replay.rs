//! A stored session replayed as `session/update`s (`session/load`): the user's prompts, the
//! answers and thinking, every tool call in its final state, the compactions.

use std::path::Path;

use agent_client_protocol_schema::v1::{
    ContentBlock, ContentChunk, SessionUpdate, TextContent, ToolCall, ToolCallStatus, ToolKind,
};

use super::tools;
use super::translate::{COMPACTION_TITLE, message_chunk, thought_chunk};
use pith_protocol::message::{Message, PartKind, Role, ToolState};

fn user_chunk(text: String) -> SessionUpdate {
    SessionUpdate::UserMessageChunk(ContentChunk::new(ContentBlock::Text(TextContent::new(
        text,
    ))))
}

/// The updates that show `messages` (oldest first).
pub fn updates(workspace: &Path, messages: &[Message]) -> Vec<SessionUpdate> {
    let mut out = Vec::new();
    for m in messages {
        for part in &m.parts {
            match (&part.kind, m.role) {
                (PartKind::Text { text, synthetic }, Role::User) if !synthetic => {
                    out.push(user_chunk(
                        m.command.clone().unwrap_or_else(|| text.clone()),
                    ));
                }
                (PartKind::Text { text, synthetic }, Role::Assistant)
                    if !synthetic && !m.summary =>
                {
                    out.push(message_chunk(text.clone()));
                }
                (PartKind::Reasoning { text, .. }, _) if !text.is_empty() => {
                    out.push(thought_chunk(text.clone()));
                }
                (
                    PartKind::Tool {
                        call_id,
                        tool,
                        input,
                        state,
                    },
                    Role::Assistant,
                ) => out.push(tool_call(workspace, call_id, tool, input, state)),
                (PartKind::Compaction(c), _) => {
                    let text = match &c.focus {
                        Some(f) => format!("The conversation was summarised (focus: {f})."),
                        None => "The conversation was summarised.".to_string(),
                    };
                    let call =
                        ToolCall::new(format!("pith-compaction-{}", part.id), COMPACTION_TITLE)
                            .kind(ToolKind::Think)
                            .status(ToolCallStatus::Completed)
                            .content(vec![tools::text(text)]);
                    out.push(SessionUpdate::ToolCall(call));
                }
                _ => {}
            }
        }
    }
    out
}

fn tool_call(
    workspace: &Path,
    call_id: &str,
    tool: &str,
    input: &serde_json::Value,
    state: &ToolState,
) -> SessionUpdate {
    let mut call = ToolCall::new(call_id.to_string(), tools::title(tool, input))
        .kind(tools::kind(tool))
        .locations(tools::locations(workspace, tool, input))
        .raw_input(Some(input.clone()));
    let done = tools::from_state(workspace, tool, input, state);
    call = call.status(match state {
        ToolState::Completed { .. } => ToolCallStatus::Completed,
        // a call that never finished (the run was stopped) did not succeed
        _ => ToolCallStatus::Failed,
    });
    if let Some(content) = done.content {
        call = call.content(content);
    }
    SessionUpdate::ToolCall(call)
}
