use super::*;

/// A call waiting while its server asks the user does not time out meanwhile; the clock
/// runs again once the question is answered.
#[tokio::test(start_paused = true)]
async fn a_calls_clock_stops_while_the_user_is_asked() {
    let pace = Arc::new(Mutex::new(Pace::default()));
    let p = pace.clone();
    let asker = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(5)).await;
        p.lock().unwrap().take(Instant::now()).unwrap();
        let slot = Slot(p.clone());
        // the user takes 100 s
        tokio::time::sleep(Duration::from_secs(100)).await;
        drop(slot);
    });
    let start = Instant::now();
    let never = std::future::pending::<()>();
    assert_eq!(bounded(never, Duration::from_secs(10), &pace).await, None);
    // 10 s of its own plus the 100 s the user was asked
    let took = start.elapsed();
    assert!(
        took >= Duration::from_secs(110) && took < Duration::from_secs(112),
        "{took:?}"
    );
    asker.await.unwrap();
    // without a question, the plain timeout
    let start = Instant::now();
    assert_eq!(
        bounded(std::future::pending::<()>(), Duration::from_secs(10), &pace).await,
        None
    );
    assert!(start.elapsed() < Duration::from_secs(11));
    assert_eq!(
        bounded(async { 7 }, Duration::from_secs(10), &pace).await,
        Some(7)
    );
}

/// A sampling request stops the clock too (its permission question may wait long), and
/// takes no question slot: a question may still be asked meanwhile.
#[tokio::test(start_paused = true)]
async fn a_calls_clock_stops_while_a_sampling_request_runs() {
    let pace = Arc::new(Mutex::new(Pace::default()));
    let p = pace.clone();
    let sampler = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(5)).await;
        let hold = SampleHold::new(&p);
        p.lock().unwrap().take(Instant::now()).unwrap();
        drop(Slot(p.clone()));
        tokio::time::sleep(Duration::from_secs(60)).await;
        drop(hold);
    });
    let start = Instant::now();
    let never = std::future::pending::<()>();
    assert_eq!(bounded(never, Duration::from_secs(10), &pace).await, None);
    let took = start.elapsed();
    assert!(
        took >= Duration::from_secs(70) && took < Duration::from_secs(72),
        "{took:?}"
    );
    sampler.await.unwrap();
}

#[test]
fn one_question_at_a_time_and_few_in_a_row() {
    let mut pace = Pace::default();
    let t0 = Instant::now();
    pace.take(t0).unwrap();
    assert!(pace.take(t0).unwrap_err().contains("while one was open"));
    for _ in 1..MAX_QUESTIONS_IN_A_ROW {
        pace.open = false;
        pace.take(t0).unwrap();
    }
    pace.open = false;
    assert!(pace.take(t0).unwrap_err().contains("within a minute"));
    // a minute later it may ask again
    assert!(pace.take(t0 + BURST_WINDOW).is_ok());
}

/// A form of every MCP shape, as text off the wire (a `json!` map would sort the
/// properties).
const EVERY_SHAPE: &str = r#"{
        "mode": "form",
        "message": "Fill in",
        "requestedSchema": {"type": "object", "properties": {
            "mail": {"type": "string", "format": "email", "minLength": 3, "maxLength": 50, "default": "a@b.co"},
            "day": {"type": "string", "format": "date"},
            "n": {"type": "number", "minimum": 0.5, "maximum": 2.5, "default": 1.5},
            "i": {"type": "integer", "minimum": 1, "maximum": 9},
            "b": {"type": "boolean", "default": false},
            "legacy": {"type": "string", "enum": ["x", "y"], "enumNames": ["Ex", "Why"], "default": "y"},
            "titled": {"type": "string", "oneOf": [{"const": "p", "title": "Pee"}, {"const": "q", "title": "Queue"}]},
            "many": {"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}, {"const": "b", "title": "B"}]}, "minItems": 1, "maxItems": 2, "default": ["a"]},
            "plain_many": {"type": "array", "items": {"type": "string", "enum": ["u", "v"]}}
        }, "required": ["mail", "i"]}
    }"#;

fn every_shape() -> Form {
    let params: ElicitRequestParams = serde_json::from_str(EVERY_SHAPE).expect("rmcp reads it");
    form_of(params).expect("shown").1
}

/// pith reads the schema as rmcp re-writes it: every MCP shape must come through whole.
#[test]
fn every_mcp_shape_survives_the_sdks_round_trip() {
    use pith_protocol::elicitation::{FieldKind, TextFormat};
    let form = every_shape();
    let names: Vec<&str> = form.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "mail",
            "day",
            "n",
            "i",
            "b",
            "legacy",
            "titled",
            "many",
            "plain_many"
        ]
    );
    let kind = |name: &str| {
        form.fields
            .iter()
            .find(|f| f.name == name)
            .unwrap()
            .kind
            .clone()
    };
    assert_eq!(
        kind("mail"),
        FieldKind::Text {
            format: Some(TextFormat::Email),
            min_length: Some(3),
            max_length: Some(50),
            default: Some("a@b.co".into())
        }
    );
    assert!(
        matches!(kind("n"), FieldKind::Number { integer: false, default: Some(d), .. } if d == 1.5)
    );
    assert!(matches!(
        kind("i"),
        FieldKind::Number {
            integer: true,
            minimum: Some(_),
            ..
        }
    ));
    assert_eq!(
        kind("b"),
        FieldKind::Boolean {
            default: Some(false)
        }
    );
}

/// The choices of every shape, single and many, keep their values, labels and defaults.
#[test]
fn every_choice_shape_survives_the_sdks_round_trip() {
    use pith_protocol::elicitation::FieldKind;
    let form = every_shape();
    let kind = |name: &str| {
        form.fields
            .iter()
            .find(|f| f.name == name)
            .unwrap()
            .kind
            .clone()
    };
    let FieldKind::Choice { options, default } = kind("legacy") else {
        panic!("{:?}", kind("legacy"));
    };
    assert_eq!(
        (options[1].title.as_str(), default.as_deref()),
        ("Why", Some("y"))
    );
    let FieldKind::Choice { options, .. } = kind("titled") else {
        panic!("{:?}", kind("titled"));
    };
    assert_eq!(options[0].title, "Pee");
    let FieldKind::Choices {
        options,
        min_items,
        max_items,
        default,
    } = kind("many")
    else {
        panic!("{:?}", kind("many"));
    };
    assert_eq!(
        (options.len(), min_items, max_items, default),
        (2, Some(1), Some(2), vec!["a".to_string()])
    );
    assert!(matches!(kind("plain_many"), FieldKind::Choices { options, .. } if options.len() == 2));
    assert!(
        form.fields
            .iter()
            .find(|f| f.name == "mail")
            .unwrap()
            .required
    );
}

#[test]
fn a_sampling_request_with_tools_or_no_messages_is_refused() {
    let empty = CreateMessageRequestParams::new(vec![], 10);
    assert!(read_sampling(&empty).is_err());
    let ok = CreateMessageRequestParams::new(
        vec![
            SamplingMessage::user_text("hi"),
            SamplingMessage::assistant_text("yo"),
        ],
        10,
    );
    let read = read_sampling(&ok).unwrap();
    assert_eq!(read.messages.len(), 2);
    assert!(read.messages[1].assistant && read.messages[0].text == "hi");
    let long = CreateMessageRequestParams::new(
        vec![SamplingMessage::user_text(
            "x".repeat(MAX_SAMPLING_CHARS + 1),
        )],
        10,
    );
    assert!(read_sampling(&long).is_err());
}
