//! `todowrite`: the agent's task list for the session.

use serde::Deserialize;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolError, ToolMeta, ToolOutput, parse_input};
use pith_protocol::tool::{Builtin, Todo, TodoMetadata, TodoPriority, TodoStatus};

pub struct TodoWrite;

#[derive(Deserialize)]
struct InputTodo {
    #[serde(default)]
    id: Option<Value>,
    content: String,
    status: TodoStatus,
    #[serde(default)]
    priority: Option<TodoPriority>,
}

#[derive(Deserialize)]
struct Input {
    todos: Vec<InputTodo>,
}

#[async_trait::async_trait]
impl Tool for TodoWrite {
    fn name(&self) -> &'static str {
        Builtin::TodoWrite.as_str()
    }

    fn description(&self) -> &'static str {
        include_str!("../../../prompts/tools/todowrite.md")
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "todos": {
                    "type": "array",
                    "description": "The complete, updated task list",
                    "items": {
                        "type": "object",
                        "properties": {
                            "content": {"type": "string", "description": "What to do"},
                            "status": {"type": "string", "enum": ["pending", "in_progress", "completed", "cancelled"]},
                            "priority": {"type": "string", "enum": ["high", "medium", "low"]},
                            "id": {"type": "string", "description": "Stable identifier (optional)"}
                        },
                        "required": ["content", "status"]
                    }
                }
            },
            "required": ["todos"],
            "additionalProperties": false
        })
    }

    async fn run(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let input: Input = parse_input("todowrite", input)?;
        let mut todos = Vec::with_capacity(input.todos.len());
        for (i, t) in input.todos.into_iter().enumerate() {
            let content = t.content.trim().to_string();
            if content.is_empty() {
                return Err(tool_err!("todowrite: item {} has empty content", i + 1));
            }
            let id = match t.id {
                Some(Value::String(s)) if !s.trim().is_empty() => s,
                Some(Value::Number(n)) => n.to_string(),
                _ => (i + 1).to_string(),
            };
            todos.push(Todo {
                id,
                content,
                status: t.status,
                priority: t.priority.unwrap_or_default(),
            });
        }
        if let Ok(mut slot) = ctx.state.todos.lock() {
            *slot = todos.clone();
        }
        let open = todos.iter().filter(|t| t.status.is_open()).count();
        let mut out = String::new();
        for t in &todos {
            let mark = match t.status {
                TodoStatus::Pending => "[ ]",
                TodoStatus::InProgress => "[~]",
                TodoStatus::Completed => "[x]",
                TodoStatus::Cancelled => "[-]",
            };
            let prio = match t.priority {
                TodoPriority::High => " (high)",
                TodoPriority::Medium => "",
                TodoPriority::Low => " (low)",
            };
            out.push_str(&format!("{mark} {}{prio}\n", t.content));
        }
        if todos.is_empty() {
            out.push_str("(the task list is empty)\n");
        }
        out.push_str(&format!("\n{open} open of {} tasks.", todos.len()));
        Ok(ToolOutput {
            title: format!("{open} open todos"),
            output: out,
            metadata: TodoMetadata { todos }.into(),
            meta: ToolMeta::default(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::Ws;

    #[tokio::test]
    async fn replaces_the_list() {
        let ws = Ws::new();
        let input = json!({"todos": [
            {"content": "Write the parser", "status": "completed", "priority": "high"},
            {"content": "Test it", "status": "in_progress"},
            {"content": "Docs", "status": "pending", "priority": "low", "id": "d"},
            {"content": "Old idea", "status": "cancelled"}
        ]});
        let out = TodoWrite.run(input, &ws.ctx).await.unwrap();
        assert_eq!(
            out.output,
            "[x] Write the parser (high)\n[~] Test it\n[ ] Docs (low)\n[-] Old idea\n\n2 open of 4 tasks."
        );
        assert_eq!(out.title, "2 open todos");
        let stored = ws.ctx.state.todos.lock().unwrap().clone();
        assert_eq!(
            out.metadata["todos"][1],
            json!({"id": "2", "content": "Test it", "status": "in_progress", "priority": "medium"})
        );
        assert_eq!(stored[1].status, TodoStatus::InProgress);
        assert_eq!(stored[2].id, "d");
        assert_eq!(
            out.metadata["todos"],
            serde_json::to_value(&stored).unwrap()
        );

        TodoWrite.run(json!({"todos": []}), &ws.ctx).await.unwrap();
        assert!(ws.ctx.state.todos.lock().unwrap().is_empty());
    }

    #[tokio::test]
    async fn bad_input() {
        let ws = Ws::new();
        let err = TodoWrite
            .run(
                json!({"todos": [{"content": "x", "status": "doing"}]}),
                &ws.ctx,
            )
            .await
            .unwrap_err();
        assert!(matches!(&err, ToolError::InvalidInput { tool, .. } if tool == "todowrite"));
        let err = err.to_string();
        assert!(
            err.starts_with("Invalid input for todowrite") && err.contains("doing"),
            "{err}"
        );
        let err = TodoWrite
            .run(
                json!({"todos": [{"content": " ", "status": "pending"}]}),
                &ws.ctx,
            )
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("empty content"), "{err}");
        // Nothing was stored by the failed calls.
        assert!(ws.ctx.state.todos.lock().unwrap().is_empty());
    }
}
