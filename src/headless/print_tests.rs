use super::*;
use pith_protocol::event::{OutputEvent, TurnEvent};

fn retrying(attempt: u32, delay_ms: u64) -> Event {
    Event::Turn(TurnEvent::Retrying {
        attempt,
        max: 4,
        delay_ms,
        message: "cannot reach http://x: connection refused".into(),
    })
}

fn error() -> Event {
    Event::Turn(TurnEvent::Error {
        kind: pith_protocol::event::ErrorKind::Provider,
        message: "cannot reach http://x: connection refused (still failing after 4 retries)".into(),
        failed_message: None,
    })
}

/// (stdout, stderr) after `events`.
fn printed(tty: bool, events: &[Event]) -> (String, String) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let mut p = Printer::new(&mut out, &mut err, tty);
    for e in events {
        p.event(e);
    }
    p.finish();
    drop(p);
    (
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
    )
}

#[test]
fn retries_are_short_lines_and_the_fault_is_said_once() {
    let (out, err) = printed(false, &[retrying(1, 500), retrying(2, 1234), error()]);
    assert_eq!(out, "");
    assert_eq!(
        err,
        "retrying 1/4 in 0.5 s\nretrying 2/4 in 1.2 s\n\
         pith: error: cannot reach http://x: connection refused (still failing after 4 retries)\n"
    );
}

#[test]
fn on_a_terminal_the_retry_line_is_rewritten_in_place() {
    let (_, err) = printed(true, &[retrying(1, 500), retrying(2, 1234), error()]);
    assert_eq!(
        err,
        "\r\u{1b}[2Kretrying 1/4 in 0.5 s\r\u{1b}[2Kretrying 2/4 in 1.2 s\r\u{1b}[2K\
         pith: error: cannot reach http://x: connection refused (still failing after 4 retries)\n"
    );
    // a retry that helped: its line is taken away before the answer
    let delta = Event::Output(OutputEvent::TextDelta {
        message_id: "m".into(),
        part_id: "p".into(),
        delta: "hi".into(),
    });
    let (out, err) = printed(true, &[retrying(1, 500), delta]);
    assert_eq!(out, "hi\n");
    assert_eq!(err, "\r\u{1b}[2Kretrying 1/4 in 0.5 s\r\u{1b}[2K");
}

#[test]
fn hostile_text_is_cleaned_on_both_streams() {
    let delta = Event::Output(OutputEvent::TextDelta {
        message_id: "m".into(),
        part_id: "p".into(),
        delta: "a\u{1b}]52;c;SGk=\u{7}b".into(),
    });
    let info = Event::info("note\u{1b}[2J");
    let (out, err) = printed(true, &[delta, info]);
    assert_eq!(out, "ab\n");
    assert_eq!(err, "note\n");
}

#[test]
fn a_calls_line_shows_its_command_file_or_search() {
    use serde_json::json;
    assert_eq!(short_input("bash", &json!({"command": "ls\nrm x"})), "ls");
    assert_eq!(short_input("read", &json!({"file_path": "a.rs"})), "a.rs");
    assert_eq!(short_input("list", &json!({"path": "src"})), "src");
    // a search shows where it looks, else what it looks for
    let grep = json!({"pattern": "fn", "path": "src"});
    assert_eq!(short_input("grep", &grep), "src");
    assert_eq!(short_input("glob", &json!({"pattern": "*.rs"})), "*.rs");
    // other tools: the first of those keys, else the input's JSON
    assert_eq!(short_input("github_search", &grep), "src");
    let task = json!({"description": "look", "prompt": "p"});
    assert_eq!(short_input("task", &task), task.to_string());
    assert_eq!(short_input("bash", &json!({"command": 3})), "3");
}

#[test]
fn a_compaction_prints_its_one_line_and_the_continue_note_as_pith_s() {
    use pith_protocol::carried::{Kept, LeftCounts};
    use pith_protocol::event::ContextEvent;
    use pith_protocol::message::{Part, PartKind};
    let finished = Event::Context(ContextEvent::CompactionFinished {
        summary_message_id: "s".into(),
        before: 41_200,
        after: 9_800,
        model_calls: 1,
        cost: Default::default(),
        kept: Kept {
            user_messages: 14,
            todos: 2,
            anchors: 23,
            ..Kept::default()
        },
        left: LeftCounts {
            tool_outputs: 31,
            pastes: 6,
            replies: 12,
            user_messages: 0,
        },
    });
    let cont = Event::Output(OutputEvent::PartUpdated {
        part: Part {
            id: "p".into(),
            message_id: "m".into(),
            kind: PartKind::Text {
                text: pith_protocol::compaction_note::CONTINUE_MESSAGE.into(),
                synthetic: true,
            },
        },
    });
    let (out, err) = printed(false, &[finished.clone(), cont]);
    assert_eq!(out, "", "nothing of it is the answer");
    assert_eq!(
        err,
        "compacted 41.2k → 9.8k · kept: your 14 messages, todo, 23 anchors · left: 31 tool outputs, 6 pastes, 12 replies\npith: continuing after the compaction\n"
    );
    // the JSON carries the typed figures
    let mut json = Vec::new();
    print_json(&mut json, &EventMsg::from(finished));
    let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(v["type"], "compaction_finished");
    assert_eq!(v["kept"]["anchors"], 23);
    assert_eq!(v["left"]["tool_outputs"], 31);
}

#[test]
fn a_loaded_subfolder_instruction_file_is_said_on_stderr() {
    use pith_protocol::event::{ContextEvent, InstructionFile, InstructionOrigin};
    let loaded = Event::Context(ContextEvent::InstructionsLoaded {
        file: InstructionFile {
            path: "sub/AGENTS.md".into(),
            origin: InstructionOrigin::Nested,
            tokens: 1_312,
        },
    });
    let (out, err) = printed(false, &[loaded]);
    assert_eq!(out, "");
    assert_eq!(err, "↳ loaded sub/AGENTS.md (1,312 tokens)\n");
}
