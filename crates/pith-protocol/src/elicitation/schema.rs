//! Reading a server's `requestedSchema` into a [`Form`]: only the flat shapes MCP allows
//! (string with `format`/`minLength`/`maxLength`, number/integer with `minimum`/`maximum`,
//! boolean, a single choice by `enum` (+`enumNames`) or `oneOf` of `const`/`title`, a
//! multi-select array of such choices), bounded in size. Anything else refuses the whole form:
//! pith never shows half a question.

use serde_json::{Map, Value};

use super::{
    Choice, Field, FieldKind, Form, MAX_CHOICES, MAX_FIELDS, MAX_LABEL_CHARS, MAX_MESSAGE_CHARS,
    MAX_TEXT_CHARS, TextFormat,
};
use crate::text;

/// Longest property or choice value accepted.
const MAX_NAME_CHARS: usize = 200;

/// Why a form was refused (it is declined, and the user told why in one line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormRefused(pub String);

impl std::fmt::Display for FormRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn refuse<T>(why: impl Into<String>) -> Result<T, FormRefused> {
    Err(FormRefused(why.into()))
}

/// A label the user reads: no controls, one line, bounded.
fn label(s: &str) -> String {
    text::one_line_max(&text::strip_controls(s), MAX_LABEL_CHARS)
}

/// The server's message as shown: no terminal controls (newlines kept), bounded.
pub fn clean_message(message: &str) -> Result<String, FormRefused> {
    if message.chars().count() > MAX_MESSAGE_CHARS {
        return refuse(format!(
            "its message is longer than {MAX_MESSAGE_CHARS} characters"
        ));
    }
    let clean = text::strip_controls(message).replace('\t', "    ");
    Ok(clean.trim().to_string())
}

/// The question `message` with the form `schema` describes, or why it is refused. `order`: the
/// property names as the server wrote them (a JSON map may not keep that order); properties it
/// leaves out follow in the map's order.
pub fn parse_form(
    message: &str,
    schema: &Value,
    order: &[String],
) -> Result<(String, Form), FormRefused> {
    let message = clean_message(message)?;
    let Some(obj) = schema.as_object() else {
        return refuse("its schema is not an object");
    };
    if obj.get("type").and_then(Value::as_str) != Some("object") {
        return refuse("its schema is not of type object");
    }
    let empty = Map::new();
    let props = match obj.get("properties") {
        None => &empty,
        Some(Value::Object(p)) => p,
        Some(_) => return refuse("its `properties` is not an object"),
    };
    if props.len() > MAX_FIELDS {
        return refuse(format!("it asks for more than {MAX_FIELDS} fields"));
    }
    let required: Vec<&str> = match obj.get("required") {
        None => Vec::new(),
        Some(Value::Array(r)) => r.iter().filter_map(Value::as_str).collect(),
        Some(_) => return refuse("its `required` is not a list"),
    };
    if let Some(unknown) = required.iter().find(|r| !props.contains_key(**r)) {
        return refuse(format!(
            "it requires `{}`, which it does not describe",
            label(unknown)
        ));
    }
    let mut names: Vec<&String> = order.iter().filter(|n| props.contains_key(*n)).collect();
    names.dedup();
    names.extend(props.keys().filter(|k| !order.contains(k)));
    let mut fields = Vec::with_capacity(props.len());
    for name in names {
        let prop = &props[name];
        if name.is_empty() || name.chars().count() > MAX_NAME_CHARS {
            return refuse("a field name is empty or too long");
        }
        let field = parse_field(name, prop, required.contains(&name.as_str()))
            .map_err(|FormRefused(why)| FormRefused(format!("field `{}`: {why}", label(name))))?;
        fields.push(field);
    }
    Ok((message, Form { fields }))
}

fn parse_field(name: &str, prop: &Value, required: bool) -> Result<Field, FormRefused> {
    let Some(p) = prop.as_object() else {
        return refuse("not an object");
    };
    let title = p
        .get("title")
        .and_then(Value::as_str)
        .map(label)
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| label(name));
    let description = p
        .get("description")
        .and_then(Value::as_str)
        .map(label)
        .filter(|d| !d.is_empty());
    let kind = match p.get("type").and_then(Value::as_str) {
        Some("string") if p.contains_key("enum") || p.contains_key("oneOf") => single_choice(p)?,
        Some("string") => text_field(p)?,
        Some(t @ ("number" | "integer")) => number_field(p, t == "integer")?,
        Some("boolean") => FieldKind::Boolean {
            default: p.get("default").and_then(Value::as_bool),
        },
        Some("array") => multi_choice(p)?,
        Some(other) => return refuse(format!("type `{}` is not supported", label(other))),
        None => return refuse("it has no type"),
    };
    Ok(Field {
        name: name.to_string(),
        title,
        description,
        required,
        kind,
    })
}

fn uint(p: &Map<String, Value>, key: &str) -> Result<Option<u64>, FormRefused> {
    match p.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match v.as_u64() {
            Some(n) => Ok(Some(n)),
            None => refuse(format!("`{key}` is not a whole number ≥ 0")),
        },
    }
}

fn number(p: &Map<String, Value>, key: &str) -> Result<Option<f64>, FormRefused> {
    match p.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match v.as_f64().filter(|n| n.is_finite()) {
            Some(n) => Ok(Some(n)),
            None => refuse(format!("`{key}` is not a number")),
        },
    }
}

fn text_field(p: &Map<String, Value>) -> Result<FieldKind, FormRefused> {
    let format = match p.get("format").and_then(Value::as_str) {
        None => None,
        Some("email") => Some(TextFormat::Email),
        Some("uri") => Some(TextFormat::Uri),
        Some("date") => Some(TextFormat::Date),
        Some("date-time") => Some(TextFormat::DateTime),
        Some(other) => return refuse(format!("format `{}` is not supported", label(other))),
    };
    let min_length = uint(p, "minLength")?;
    let max_length = uint(p, "maxLength")?;
    if let (Some(lo), Some(hi)) = (min_length, max_length)
        && lo > hi
    {
        return refuse("`minLength` is above `maxLength`");
    }
    if min_length.is_some_and(|lo| lo > MAX_TEXT_CHARS as u64) {
        return refuse("`minLength` is above what pith takes");
    }
    let mut kind = FieldKind::Text {
        format,
        min_length,
        max_length,
        default: None,
    };
    let default = p.get("default").and_then(Value::as_str).map(str::to_string);
    if let (Some(d), FieldKind::Text { default, .. }) = (default, &mut kind) {
        *default = Some(d);
    }
    Ok(keep_valid_default(kind))
}

fn number_field(p: &Map<String, Value>, integer: bool) -> Result<FieldKind, FormRefused> {
    let minimum = number(p, "minimum")?;
    let maximum = number(p, "maximum")?;
    if let (Some(lo), Some(hi)) = (minimum, maximum)
        && lo > hi
    {
        return refuse("`minimum` is above `maximum`");
    }
    let default = p
        .get("default")
        .and_then(Value::as_f64)
        .filter(|n| n.is_finite());
    Ok(keep_valid_default(FieldKind::Number {
        integer,
        minimum,
        maximum,
        default,
    }))
}

/// The choices of `enum` (with `enumNames` as their labels) or of `oneOf`/`anyOf` entries
/// `{const, title}`.
fn choices(p: &Map<String, Value>) -> Result<Vec<Choice>, FormRefused> {
    let mut out = Vec::new();
    if let Some(values) = p.get("enum") {
        let Some(values) = values.as_array() else {
            return refuse("`enum` is not a list");
        };
        let names = p.get("enumNames").and_then(Value::as_array);
        for (i, v) in values.iter().enumerate() {
            let Some(value) = v.as_str() else {
                return refuse("an `enum` value is not a string");
            };
            let title = names
                .and_then(|n| n.get(i))
                .and_then(Value::as_str)
                .unwrap_or(value);
            out.push((value, title));
        }
    } else if let Some(list) = p.get("oneOf").or_else(|| p.get("anyOf")) {
        let Some(list) = list.as_array() else {
            return refuse("`oneOf` is not a list");
        };
        for entry in list {
            let Some(value) = entry.get("const").and_then(Value::as_str) else {
                return refuse("a choice has no string `const`");
            };
            let title = entry.get("title").and_then(Value::as_str).unwrap_or(value);
            out.push((value, title));
        }
    } else {
        return refuse("it lists no choices");
    }
    if out.is_empty() {
        return refuse("it lists no choices");
    }
    if out.len() > MAX_CHOICES {
        return refuse(format!("it lists more than {MAX_CHOICES} choices"));
    }
    let mut seen = std::collections::HashSet::new();
    let mut choices = Vec::with_capacity(out.len());
    for (value, title) in out {
        if value.chars().count() > MAX_NAME_CHARS {
            return refuse("a choice is too long");
        }
        if !seen.insert(value) {
            return refuse("a choice is listed twice");
        }
        choices.push(Choice {
            value: value.to_string(),
            title: label(title),
        });
    }
    Ok(choices)
}

fn single_choice(p: &Map<String, Value>) -> Result<FieldKind, FormRefused> {
    let options = choices(p)?;
    let default = p.get("default").and_then(Value::as_str).map(str::to_string);
    Ok(keep_valid_default(FieldKind::Choice { options, default }))
}

fn multi_choice(p: &Map<String, Value>) -> Result<FieldKind, FormRefused> {
    let Some(items) = p.get("items").and_then(Value::as_object) else {
        return refuse("an array without `items`");
    };
    if items
        .get("type")
        .and_then(Value::as_str)
        .is_some_and(|t| t != "string")
    {
        return refuse("only arrays of string choices are supported");
    }
    let options = choices(items)?;
    let min_items = uint(p, "minItems")?;
    let max_items = uint(p, "maxItems")?;
    if let (Some(lo), Some(hi)) = (min_items, max_items)
        && lo > hi
    {
        return refuse("`minItems` is above `maxItems`");
    }
    let default = match p.get("default") {
        Some(Value::Array(d)) => d
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    };
    Ok(keep_valid_default(FieldKind::Choices {
        options,
        min_items,
        max_items,
        default,
    }))
}

/// `kind` without a default its own constraints reject (a server's default is a suggestion,
/// never sent unchecked).
fn keep_valid_default(mut kind: FieldKind) -> FieldKind {
    let probe = Field {
        name: String::new(),
        title: String::new(),
        description: None,
        required: true,
        kind: kind.clone(),
    };
    let Some(value) = probe.default_value() else {
        return kind;
    };
    if probe.check(&value).is_err() {
        match &mut kind {
            FieldKind::Text { default, .. } | FieldKind::Choice { default, .. } => *default = None,
            FieldKind::Number { default, .. } => *default = None,
            FieldKind::Boolean { default } => *default = None,
            FieldKind::Choices { default, .. } => default.clear(),
        }
    }
    kind
}
