//! An MCP server's question to the user (`elicitation/create`, form mode): the form pith shows
//! (typed fields read from the server's JSON schema, `schema`), and the answers checked against
//! it before they go back (`answer`). Every front end draws the same `Form`; the server is
//! hostile, so its text is cleaned and its shapes bounded here, once (ARCHITECTURE.md §12).

use serde::{Deserialize, Serialize};

mod answer;
mod schema;
#[cfg(test)]
mod tests;

pub use answer::{FieldError, check_formats};
pub use schema::{FormRefused, clean_message, parse_form};

/// Longest question a server may ask (characters); a longer one is refused.
pub const MAX_MESSAGE_CHARS: usize = 4_000;
/// Most fields in one form.
pub const MAX_FIELDS: usize = 20;
/// Most choices of one enum or multi-select field.
pub const MAX_CHOICES: usize = 100;
/// Longest title, description or choice label kept (longer ones are cut).
pub const MAX_LABEL_CHARS: usize = 300;
/// Longest text answer, whatever the schema allows.
pub const MAX_TEXT_CHARS: usize = 10_000;

/// A question a server asks the user, waiting for `Op::ElicitationReply`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ElicitationRequest {
    pub id: String,
    /// The MCP server asking (its configured name).
    pub server: String,
    /// The server's question: plain text, no terminal controls, bounded.
    pub message: String,
    pub form: Form,
}

/// The form of a question: its fields in the server's order.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Form {
    pub fields: Vec<Field>,
}

/// One field of a form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Field {
    /// The property name the answer is sent under.
    pub name: String,
    /// What the user reads (the schema's `title`, else the name).
    pub title: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub required: bool,
    pub kind: FieldKind,
}

/// A field's type, with its constraints and default (a default that breaks the constraints is
/// dropped when the form is read).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FieldKind {
    Text {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        format: Option<TextFormat>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        min_length: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_length: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        default: Option<String>,
    },
    Number {
        /// `integer`: only whole numbers.
        integer: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        minimum: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        maximum: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        default: Option<f64>,
    },
    Boolean {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        default: Option<bool>,
    },
    /// One of `options`.
    Choice {
        options: Vec<Choice>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        default: Option<String>,
    },
    /// Any of `options` (an array of strings).
    Choices {
        options: Vec<Choice>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        min_items: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_items: Option<u64>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        default: Vec<String>,
    },
}

/// The string formats MCP allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TextFormat {
    Email,
    Uri,
    Date,
    DateTime,
}

impl TextFormat {
    pub fn name(self) -> &'static str {
        match self {
            TextFormat::Email => "email",
            TextFormat::Uri => "uri",
            TextFormat::Date => "date",
            TextFormat::DateTime => "date-time",
        }
    }
}

/// One choice of an enum: the value sent, the label shown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Choice {
    pub value: String,
    pub title: String,
}

/// What the user did with a question.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ElicitationAction {
    /// Answered: the content goes to the server.
    Accept,
    /// Said no to the question.
    Decline,
    /// Dismissed it without a choice (or no one could ask).
    Cancel,
}

impl ElicitationAction {
    pub fn name(self) -> &'static str {
        match self {
            ElicitationAction::Accept => "accept",
            ElicitationAction::Decline => "decline",
            ElicitationAction::Cancel => "cancel",
        }
    }
}

/// An answer's content: property name → value.
pub type Answers = serde_json::Map<String, serde_json::Value>;

impl Field {
    /// The field's default as the JSON value it would be sent as.
    pub fn default_value(&self) -> Option<serde_json::Value> {
        use serde_json::Value;
        match &self.kind {
            FieldKind::Text { default, .. } => default.clone().map(Value::String),
            FieldKind::Number {
                default, integer, ..
            } => default.map(|n| number_value(n, *integer)),
            FieldKind::Boolean { default } => default.map(Value::Bool),
            FieldKind::Choice { default, .. } => default.clone().map(Value::String),
            FieldKind::Choices { default, .. } => (!default.is_empty())
                .then(|| Value::Array(default.iter().cloned().map(Value::String).collect())),
        }
    }

    /// What kind of answer it takes, in a few words (`text (email)`, `integer 1–10`, `yes/no`).
    pub fn kind_label(&self) -> String {
        let range = |lo: Option<f64>, hi: Option<f64>| match (lo, hi) {
            (Some(lo), Some(hi)) => format!(" {lo}–{hi}"),
            (Some(lo), None) => format!(" ≥ {lo}"),
            (None, Some(hi)) => format!(" ≤ {hi}"),
            (None, None) => String::new(),
        };
        match &self.kind {
            FieldKind::Text { format, .. } => match format {
                Some(f) => format!("text ({})", f.name()),
                None => "text".into(),
            },
            FieldKind::Number {
                integer,
                minimum,
                maximum,
                ..
            } => format!(
                "{}{}",
                if *integer { "integer" } else { "number" },
                range(*minimum, *maximum)
            ),
            FieldKind::Boolean { .. } => "yes/no".into(),
            FieldKind::Choice { .. } => "one of".into(),
            FieldKind::Choices { .. } => "any of".into(),
        }
    }
}

/// `n` as JSON: a whole number for an integer field (or a number that is one).
pub(crate) fn number_value(n: f64, integer: bool) -> serde_json::Value {
    if (integer || n.fract() == 0.0) && n.abs() < 9.0e15 {
        serde_json::Value::from(n as i64)
    } else {
        serde_json::Number::from_f64(n)
            .map(serde_json::Value::Number)
            .unwrap_or(serde_json::Value::Null)
    }
}

impl Form {
    /// Every field's default, when every required field has one (what `--yes` and an editor's
    /// "accept" send); `None` when some required field has none.
    pub fn defaults(&self) -> Option<Answers> {
        let mut out = Answers::new();
        for field in &self.fields {
            match field.default_value() {
                Some(v) => {
                    out.insert(field.name.clone(), v);
                }
                None if field.required => return None,
                None => {}
            }
        }
        Some(out)
    }

    /// The required fields without a default, by title.
    pub fn missing_defaults(&self) -> Vec<&str> {
        self.fields
            .iter()
            .filter(|f| f.required && f.default_value().is_none())
            .map(|f| f.title.as_str())
            .collect()
    }
}
