//! Checking answers against a [`Form`] before they go to the server: types, required fields,
//! lengths and ranges, choices, formats. Only the form's own fields are sent.

use serde_json::Value;

use super::{Answers, Field, FieldKind, Form, MAX_TEXT_CHARS, TextFormat, number_value};

/// What is wrong with one field's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

impl Form {
    /// The answers to send: each field's value checked; fields the form does not have are
    /// dropped. Every error found, one per field, in the form's order.
    pub fn check(&self, answers: &Answers) -> Result<Answers, Vec<FieldError>> {
        let mut out = Answers::new();
        let mut errors = Vec::new();
        for field in &self.fields {
            let result = match answers.get(&field.name) {
                None | Some(Value::Null) if field.required => Err("required".to_string()),
                None | Some(Value::Null) => continue,
                Some(v) => field.check(v),
            };
            match result {
                Ok(v) => {
                    out.insert(field.name.clone(), v);
                }
                Err(message) => errors.push(FieldError {
                    field: field.name.clone(),
                    message,
                }),
            }
        }
        if errors.is_empty() {
            Ok(out)
        } else {
            Err(errors)
        }
    }
}

impl Field {
    /// `value` as this field sends it, or why it cannot be.
    pub fn check(&self, value: &Value) -> Result<Value, String> {
        match &self.kind {
            FieldKind::Text {
                format,
                min_length,
                max_length,
                ..
            } => self.check_text(value, *format, *min_length, *max_length),
            FieldKind::Number {
                integer,
                minimum,
                maximum,
                ..
            } => check_number(value, *integer, *minimum, *maximum),
            FieldKind::Boolean { .. } => value
                .as_bool()
                .map(Value::Bool)
                .ok_or_else(|| "must be yes or no".into()),
            FieldKind::Choice { options, .. } => match value.as_str() {
                Some(s) if options.iter().any(|o| o.value == s) => Ok(Value::String(s.into())),
                _ => Err("not one of the choices".into()),
            },
            FieldKind::Choices {
                options,
                min_items,
                max_items,
                ..
            } => check_choices(value, options, *min_items, *max_items),
        }
    }

    fn check_text(
        &self,
        value: &Value,
        format: Option<TextFormat>,
        min_length: Option<u64>,
        max_length: Option<u64>,
    ) -> Result<Value, String> {
        let Some(s) = value.as_str() else {
            return Err("must be text".into());
        };
        let n = s.chars().count() as u64;
        if let Some(lo) = min_length
            && n < lo
        {
            return Err(format!("at least {lo} characters"));
        }
        let hi = max_length.unwrap_or(MAX_TEXT_CHARS as u64);
        if n > hi || n > MAX_TEXT_CHARS as u64 {
            return Err(format!(
                "at most {} characters",
                hi.min(MAX_TEXT_CHARS as u64)
            ));
        }
        if let Some(f) = format
            && (!s.is_empty() || self.required)
            && !check_formats(f, s)
        {
            return Err(format!("not a valid {}", f.name()));
        }
        Ok(Value::String(s.to_string()))
    }

    /// What the user typed into a text or number field, as the value it would send (`None`:
    /// left empty).
    pub fn parse_input(&self, typed: &str) -> Result<Option<Value>, String> {
        let value = match &self.kind {
            FieldKind::Number { .. } => {
                let t = typed.trim();
                if t.is_empty() {
                    return Ok(None);
                }
                match t.parse::<f64>() {
                    Ok(n) if n.is_finite() => number_value(n, false),
                    _ => return Err("must be a number".into()),
                }
            }
            _ if typed.is_empty() => return Ok(None),
            _ => Value::String(typed.to_string()),
        };
        self.check(&value).map(Some)
    }
}

/// Whether `s` is written as `format` asks (a structural check: what a form can catch).
pub fn check_formats(format: TextFormat, s: &str) -> bool {
    match format {
        TextFormat::Email => is_email(s),
        TextFormat::Uri => is_uri(s),
        TextFormat::Date => is_date(s),
        TextFormat::DateTime => is_date_time(s),
    }
}

fn is_email(s: &str) -> bool {
    let Some((local, domain)) = s.rsplit_once('@') else {
        return false;
    };
    !local.is_empty()
        && !s.chars().any(|c| c.is_whitespace() || c.is_control())
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && !domain.contains('@')
}

fn is_uri(s: &str) -> bool {
    let Some((scheme, rest)) = s.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        && !rest.is_empty()
        && !s.chars().any(|c| c.is_whitespace() || c.is_control())
}

fn digits(s: &str, n: usize) -> Option<u32> {
    (s.len() == n && s.bytes().all(|b| b.is_ascii_digit()))
        .then(|| s.parse().ok())
        .flatten()
}

fn is_date(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    let [y, m, d] = parts[..] else {
        return false;
    };
    let (Some(y), Some(m), Some(d)) = (digits(y, 4), digits(m, 2), digits(d, 2)) else {
        return false;
    };
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&d)
}

fn is_date_time(s: &str) -> bool {
    let Some((date, time)) = s.split_once(['T', 't']) else {
        return false;
    };
    if !is_date(date) {
        return false;
    }
    let (clock, offset) = if let Some(t) = time.strip_suffix(['Z', 'z']) {
        (t, None)
    } else if let Some(i) = time.rfind(['+', '-']) {
        (&time[..i], Some(&time[i + 1..]))
    } else {
        return false;
    };
    let clock = clock.split_once('.').map_or(clock, |(c, frac)| {
        if !frac.is_empty() && frac.bytes().all(|b| b.is_ascii_digit()) {
            c
        } else {
            ""
        }
    });
    let hms: Vec<&str> = clock.split(':').collect();
    let [h, m, sec] = hms[..] else {
        return false;
    };
    let ok_clock = matches!((digits(h, 2), digits(m, 2), digits(sec, 2)),
        (Some(h), Some(m), Some(s)) if h < 24 && m < 60 && s <= 60);
    let ok_offset = offset.is_none_or(|o| {
        matches!(o.split_once(':'), Some((h, m)) if digits(h, 2).is_some_and(|h| h < 24) && digits(m, 2).is_some_and(|m| m < 60))
    });
    ok_clock && ok_offset
}

fn check_number(
    value: &Value,
    integer: bool,
    minimum: Option<f64>,
    maximum: Option<f64>,
) -> Result<Value, String> {
    let Some(n) = value.as_f64().filter(|n| n.is_finite()) else {
        return Err("must be a number".into());
    };
    if integer && n.fract() != 0.0 {
        return Err("must be a whole number".into());
    }
    if let Some(lo) = minimum
        && n < lo
    {
        return Err(format!("at least {lo}"));
    }
    if let Some(hi) = maximum
        && n > hi
    {
        return Err(format!("at most {hi}"));
    }
    Ok(number_value(n, integer))
}

fn check_choices(
    value: &Value,
    options: &[super::Choice],
    min_items: Option<u64>,
    max_items: Option<u64>,
) -> Result<Value, String> {
    let Some(items) = value.as_array() else {
        return Err("must be a list of choices".into());
    };
    let mut picked: Vec<String> = Vec::new();
    for item in items {
        match item.as_str() {
            Some(s) if options.iter().any(|o| o.value == s) => {
                if !picked.iter().any(|p| p == s) {
                    picked.push(s.to_string());
                }
            }
            _ => return Err("not one of the choices".into()),
        }
    }
    let n = picked.len() as u64;
    if let Some(lo) = min_items
        && n < lo
    {
        return Err(format!("pick at least {lo}"));
    }
    if let Some(hi) = max_items
        && n > hi
    {
        return Err(format!("pick at most {hi}"));
    }
    Ok(Value::Array(
        picked.into_iter().map(Value::String).collect(),
    ))
}
