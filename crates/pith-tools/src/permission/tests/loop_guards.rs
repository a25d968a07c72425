//! The doom-loop check and the broken-call guard.

use super::*;

#[test]
fn doom_loop_record() {
    let mut d = DoomLoop::default();
    let a = json!({"command": "ls"});
    let b = json!({"command": "ls -la"});
    assert!(!d.record("bash", &a));
    assert!(!d.record("bash", &a));
    assert!(d.record("bash", &a));
    assert!(d.record("bash", &a), "a fourth identical call still counts");
    assert!(!d.record("bash", &b));
    assert!(
        !d.record("read", &b),
        "same input to another tool breaks the streak"
    );
    assert!(!d.record("read", &b));
    assert!(!d.record("bash", &a));
    // A new user turn starts afresh (the engine makes a new one).
    d = DoomLoop::default();
    assert!(!d.record("read", &b) && !d.record("read", &b));
    // Object key order does not matter.
    let mut d = DoomLoop::default();
    let x: Value = serde_json::from_str(r#"{"a":1,"b":2}"#).unwrap();
    let y: Value = serde_json::from_str(r#"{"b":2,"a":1}"#).unwrap();
    assert!(!d.record("t", &x) && !d.record("t", &y) && d.record("t", &x));
}

#[test]
fn waiting_on_a_job_again_is_no_loop_but_reading_it_again_and_again_is() {
    let mut d = DoomLoop::default();
    let wait = json!({"id": 1, "wait_secs": 60});
    for _ in 0..5 {
        assert!(!d.record("job_output", &wait));
    }
    let read = json!({"id": 1});
    assert!(!d.record("job_output", &read));
    assert!(!d.record("job_output", &read));
    assert!(d.record("job_output", &read));
    // (only job_output's wait is exempt)
    let mut d = DoomLoop::default();
    let other = json!({"command": "x", "wait_secs": 5});
    assert!(!d.record("bash", &other));
    assert!(!d.record("bash", &other));
    assert!(d.record("bash", &other));
}

#[test]
fn doom_loop_counts_broken_calls() {
    // The same unparsable arguments three times: stop.
    let mut d = DoomLoop::default();
    let raw = json!("{\"command\": ");
    assert_eq!(d.record_broken("bash", &raw), None);
    assert_eq!(d.record_broken("bash", &raw), None);
    let why = d.record_broken("bash", &raw).unwrap().to_string();
    assert!(
        why.contains("same call to `bash` 3 times") && why.contains("not valid JSON"),
        "{why}"
    );
    // Different broken calls: stop at the limit; a call that runs breaks the streak.
    let mut d = DoomLoop::default();
    for i in 0..BROKEN_CALLS_LIMIT - 1 {
        assert_eq!(d.record_broken("nope", &json!({"i": i})), None);
    }
    assert!(!d.record("bash", &json!({"command": "ls"})));
    for i in 0..BROKEN_CALLS_LIMIT - 1 {
        assert_eq!(d.record_broken("nope", &json!({"i": i})), None);
    }
    let why = d
        .record_broken("nope", &json!({"i": 99}))
        .unwrap()
        .to_string();
    assert!(
        why.contains("5 tool calls in a row") && why.contains("no tool has that name"),
        "{why}"
    );
}

#[test]
fn doom_loop_asks_even_when_allowed() {
    let ws = Ws::new();
    let mut p = defaults_only();
    let mut d = DoomLoop::default();
    let input = json!({"file_path": "a.rs"});
    assert!(is_allow(&p.check_call(&mut d, "read", &input, &ws.ctx)));
    assert!(is_allow(&p.check_call(&mut d, "read", &input, &ws.ctx)));
    let r = ask(p.check_call(&mut d, "read", &input, &ws.ctx));
    assert!(r.title.contains("3 times in a row"), "{}", r.title);
    assert!(r.patterns.is_empty());
    // Configurable.
    let mut p = Permissions::new(&rules("[permission]\ndoom_loop = \"allow\""));
    let mut d = DoomLoop::default();
    for _ in 0..5 {
        assert!(is_allow(&p.check_call(&mut d, "read", &input, &ws.ctx)));
    }
    let mut p = Permissions::new(&rules("[permission]\ndoom_loop = \"deny\""));
    let mut d = DoomLoop::default();
    p.check_call(&mut d, "read", &input, &ws.ctx);
    p.check_call(&mut d, "read", &input, &ws.ctx);
    deny(p.check_call(&mut d, "read", &input, &ws.ctx));
}
