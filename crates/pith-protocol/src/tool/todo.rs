//! The agent's todo list, as `todowrite` sets it, the engine keeps it, a compaction carries it
//! and front ends show it: one typed item, stored as the JSON the tool always wrote
//! (`{"id", "content", "status", "priority"}`, lower-case strings).

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

/// Where an item stands.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    #[default]
    Pending,
    #[serde(alias = "in-progress", alias = "inprogress")]
    InProgress,
    #[serde(alias = "done")]
    Completed,
    #[serde(alias = "canceled")]
    Cancelled,
}

impl TodoStatus {
    /// The stored name.
    pub const fn as_str(self) -> &'static str {
        match self {
            TodoStatus::Pending => "pending",
            TodoStatus::InProgress => "in_progress",
            TodoStatus::Completed => "completed",
            TodoStatus::Cancelled => "cancelled",
        }
    }

    /// The status `s` names, the spellings models use for it included (`done`, `in-progress`,
    /// `canceled`, …).
    pub fn parse(s: &str) -> Option<TodoStatus> {
        TodoStatus::deserialize(serde_json::Value::from(s)).ok()
    }

    /// Still to be done (pending or in progress).
    pub fn is_open(self) -> bool {
        matches!(self, TodoStatus::Pending | TodoStatus::InProgress)
    }
}

/// How much an item matters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TodoPriority {
    High,
    #[default]
    Medium,
    Low,
}

impl TodoPriority {
    /// The priority `s` names.
    pub fn parse(s: &str) -> Option<TodoPriority> {
        TodoPriority::deserialize(serde_json::Value::from(s)).ok()
    }
}

/// One item of the list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Todo {
    /// Stable within a list: the model's, or the item's 1-based place.
    #[serde(default)]
    pub id: String,
    pub content: String,
    #[serde(default)]
    pub status: TodoStatus,
    #[serde(default)]
    pub priority: TodoPriority,
}

impl Todo {
    /// One item of a list as given (a `todowrite` call's input, or a stored list), read
    /// leniently for showing it: a missing or non-string `content` is empty, an unknown or
    /// missing status is pending, an unknown or missing priority is medium, a missing id empty.
    pub fn read(item: &Value) -> Todo {
        let s = |k: &str| item.get(k).and_then(Value::as_str);
        Todo {
            id: s("id").unwrap_or_default().to_string(),
            content: s("content").unwrap_or_default().to_string(),
            status: s("status").and_then(TodoStatus::parse).unwrap_or_default(),
            priority: s("priority")
                .and_then(TodoPriority::parse)
                .unwrap_or_default(),
        }
    }

    /// A list as given (see [`Todo::read`]); `None` when `list` is no array.
    pub fn read_list(list: &Value) -> Option<Vec<Todo>> {
        Some(list.as_array()?.iter().map(Todo::read).collect())
    }
}

/// A stored list, read leniently (an item of another shape reads as [`Todo::read`] does), so a
/// session whose list is odd still loads.
pub(crate) fn lenient_list<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Todo>, D::Error> {
    let value = Value::deserialize(d)?;
    Ok(Todo::read_list(&value).unwrap_or_default())
}

/// [`lenient_list`] for an optional list.
pub(crate) fn lenient_option<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<Vec<Todo>>, D::Error> {
    let value = Option::<Value>::deserialize(d)?;
    Ok(value.as_ref().and_then(Todo::read_list))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_item_is_stored_as_the_tool_always_wrote_it() {
        let item = Todo {
            id: "2".into(),
            content: "Test it".into(),
            status: TodoStatus::InProgress,
            priority: TodoPriority::Medium,
        };
        let text = serde_json::to_string(&item).unwrap();
        assert_eq!(
            text,
            r#"{"id":"2","content":"Test it","status":"in_progress","priority":"medium"}"#
        );
        let back: Todo = serde_json::from_str(&text).unwrap();
        assert_eq!(back, item);
        for s in [
            TodoStatus::Pending,
            TodoStatus::InProgress,
            TodoStatus::Completed,
            TodoStatus::Cancelled,
        ] {
            assert_eq!(serde_json::to_value(s).unwrap(), s.as_str());
            assert_eq!(TodoStatus::parse(s.as_str()), Some(s));
        }
    }

    #[test]
    fn the_spellings_models_use_read_as_the_status() {
        let status = |s| TodoStatus::parse(s);
        assert_eq!(status("done"), Some(TodoStatus::Completed));
        assert_eq!(status("in-progress"), Some(TodoStatus::InProgress));
        assert_eq!(status("inprogress"), Some(TodoStatus::InProgress));
        assert_eq!(status("canceled"), Some(TodoStatus::Cancelled));
        assert_eq!(status("doing"), None);
        assert_eq!(TodoPriority::parse("high"), Some(TodoPriority::High));
        assert_eq!(TodoPriority::parse("urgent"), None);
        assert!(TodoStatus::InProgress.is_open() && !TodoStatus::Cancelled.is_open());
    }

    #[test]
    fn a_given_item_reads_leniently() {
        let item = json!({"content": "a", "status": "doing", "priority": 1});
        let read = Todo::read(&item);
        assert_eq!(read.content, "a");
        assert_eq!(read.status, TodoStatus::Pending);
        assert_eq!(read.priority, TodoPriority::Medium);
        assert_eq!(Todo::read(&json!({"status": "done"})).content, "");
        assert_eq!(
            Todo::read(&json!({"status": "done"})).status,
            TodoStatus::Completed
        );
        assert_eq!(Todo::read_list(&json!({"a": 1})), None);
        assert_eq!(Todo::read_list(&json!([1])).map(|l| l.len()), Some(1));
    }
}
