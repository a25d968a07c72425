use serde_json::{Value, json};

use super::*;

fn order() -> Vec<String> {
    ["name", "count", "ok", "color", "tags", "mail"]
        .map(String::from)
        .to_vec()
}

fn form(schema: Value) -> Form {
    parse_form("q", &schema, &order()).expect("accepted").1
}

fn refused(schema: Value) -> String {
    parse_form("q", &schema, &[]).expect_err("refused").0
}

fn sample() -> Form {
    form(json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "title": "Your name", "minLength": 2, "maxLength": 5, "default": "Ada"},
            "count": {"type": "integer", "minimum": 1, "maximum": 10, "default": 3},
            "ok": {"type": "boolean", "default": true},
            "color": {"type": "string", "enum": ["r", "g"], "enumNames": ["Red", "Green"], "default": "g"},
            "tags": {"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}, {"const": "b"}]}, "maxItems": 1},
            "mail": {"type": "string", "format": "email"}
        },
        "required": ["name", "count"]
    }))
}

#[test]
fn a_flat_schema_becomes_typed_fields_in_the_servers_order() {
    let f = sample();
    let names: Vec<&str> = f.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["name", "count", "ok", "color", "tags", "mail"]);
    assert_eq!(f.fields[0].title, "Your name");
    assert!(f.fields[0].required && !f.fields[2].required);
    assert_eq!(
        f.fields[3].kind,
        FieldKind::Choice {
            options: vec![
                Choice {
                    value: "r".into(),
                    title: "Red".into()
                },
                Choice {
                    value: "g".into(),
                    title: "Green".into()
                }
            ],
            default: Some("g".into())
        }
    );
    let FieldKind::Choices {
        options, max_items, ..
    } = &f.fields[4].kind
    else {
        panic!("{:?}", f.fields[4]);
    };
    assert_eq!((options[1].title.as_str(), *max_items), ("b", Some(1)));
    assert_eq!(
        f.defaults().unwrap(),
        json!({"name": "Ada", "count": 3, "ok": true, "color": "g"})
            .as_object()
            .unwrap()
            .clone()
    );
}

#[test]
fn answers_are_checked_against_every_constraint() {
    let f = sample();
    let check = |v: Value| f.check(v.as_object().unwrap());
    let ok =
        check(json!({"name": "Bob", "count": 4, "extra": "dropped", "tags": ["a", "a"]})).unwrap();
    assert_eq!(
        Value::Object(ok),
        json!({"name": "Bob", "count": 4, "tags": ["a"]})
    );
    let errors = check(json!({"name": "B", "count": 11, "ok": "yes", "color": "x", "tags": ["a", "b"], "mail": "no"}))
        .unwrap_err();
    let fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(fields, ["name", "count", "ok", "color", "tags", "mail"]);
    let missing = check(json!({})).unwrap_err();
    assert_eq!(missing.len(), 2);
    assert_eq!(missing[0].message, "required");
    assert!(
        check(json!({"name": "Bob", "count": 2.5})).is_err(),
        "an integer field took 2.5"
    );
}

#[test]
fn formats_are_checked() {
    use TextFormat::*;
    assert!(
        check_formats(Email, "a@b.co")
            && !check_formats(Email, "a b@c.d")
            && !check_formats(Email, "a@b")
    );
    assert!(
        check_formats(Uri, "https://x.y/z")
            && !check_formats(Uri, "not a uri")
            && !check_formats(Uri, "1x:y")
    );
    assert!(
        check_formats(Date, "2024-02-29")
            && !check_formats(Date, "2023-02-29")
            && !check_formats(Date, "2024-13-01")
    );
    assert!(check_formats(DateTime, "2024-01-02T03:04:05Z"));
    assert!(check_formats(DateTime, "2024-01-02T03:04:05.123+02:00"));
    assert!(!check_formats(DateTime, "2024-01-02 03:04:05"));
    assert!(!check_formats(DateTime, "2024-01-02T25:04:05Z"));
}

#[test]
fn typed_input_is_parsed_by_the_fields_type() {
    let f = sample();
    assert_eq!(f.fields[1].parse_input(" 7 "), Ok(Some(json!(7))));
    assert!(f.fields[1].parse_input("seven").is_err());
    assert!(f.fields[1].parse_input("12").is_err());
    assert_eq!(f.fields[1].parse_input(""), Ok(None));
    assert_eq!(f.fields[0].parse_input("Eve"), Ok(Some(json!("Eve"))));
    assert!(f.fields[0].parse_input("toolong").is_err());
}

#[test]
fn hostile_shapes_are_refused_whole() {
    let nested =
        json!({"type": "object", "properties": {"a": {"type": "object", "properties": {}}}});
    assert!(refused(nested).contains("`object` is not supported"));
    let many: serde_json::Map<String, Value> = (0..=MAX_FIELDS)
        .map(|i| (format!("f{i}"), json!({"type": "string"})))
        .collect();
    assert!(refused(json!({"type": "object", "properties": many})).contains("more than"));
    let choices: Vec<String> = (0..=MAX_CHOICES).map(|i| i.to_string()).collect();
    assert!(
        refused(
            json!({"type": "object", "properties": {"c": {"type": "string", "enum": choices}}})
        )
        .contains("choices")
    );
    assert!(
        refused(json!({"type": "object", "properties": {}, "required": ["ghost"]}))
            .contains("ghost")
    );
    assert!(
        refused(
            json!({"type": "object", "properties": {"d": {"type": "string", "format": "regex"}}})
        )
        .contains("format")
    );
    assert!(refused(json!({"type": "array"})).contains("not of type object"));
    let long = "x".repeat(MAX_MESSAGE_CHARS + 1);
    assert!(parse_form(&long, &json!({"type": "object"}), &[]).is_err());
}

#[test]
fn text_a_server_writes_loses_its_terminal_controls() {
    let (message, f) = parse_form(
        "Pick\u{1b}[2J\u{1b}]0;pwned\u{7}\u{9b}31m one\nplease",
        &json!({"type": "object", "properties": {"x": {"type": "string", "title": "T\u{1b}[31mitle\nmore", "description": "d\u{8}d"}}}),
        &[],
    )
    .unwrap();
    assert!(
        !message.chars().any(|c| c.is_control() && c != '\n'),
        "{message:?}"
    );
    assert!(message.contains("Pick") && message.contains("please"));
    let field = &f.fields[0];
    assert!(
        !field.title.chars().any(char::is_control),
        "{:?}",
        field.title
    );
    assert!(
        !field
            .description
            .as_deref()
            .unwrap()
            .chars()
            .any(char::is_control)
    );
}

#[test]
fn a_default_its_own_constraints_reject_is_dropped() {
    let f = form(json!({"type": "object", "properties": {
        "n": {"type": "integer", "minimum": 5, "default": 1},
        "c": {"type": "string", "enum": ["a"], "default": "zzz"},
        "m": {"type": "string", "format": "email", "default": "nope"}
    }, "required": ["n"]}));
    assert!(f.fields.iter().all(|f| f.default_value().is_none()));
    assert_eq!(
        f.defaults(),
        None,
        "a required field without a default has no defaults"
    );
    assert_eq!(f.missing_defaults(), ["n"]);
}

/// A form's answer is written as the editor and `pith run --format json` read it.
#[test]
fn an_elicitation_reply_reads_back_and_names_its_action() {
    let op = crate::event::Op::ElicitationReply {
        id: "f".into(),
        action: ElicitationAction::Accept,
        content: serde_json::json!({"env": "dev"}).as_object().cloned(),
    };
    let json = serde_json::to_value(&op).unwrap();
    assert_eq!(
        json,
        serde_json::json!({"op": "elicitation_reply", "id": "f", "action": "accept", "content": {"env": "dev"}})
    );
    assert_eq!(
        serde_json::from_value::<crate::event::Op>(json).unwrap(),
        op
    );
    let declined = serde_json::json!({"op": "elicitation_reply", "id": "f", "action": "decline"});
    assert!(matches!(
        serde_json::from_value::<crate::event::Op>(declined).unwrap(),
        crate::event::Op::ElicitationReply { content: None, .. }
    ));
}
