//! Update-function tests: engine events (context, compaction, errors, retries, tools) on screen.

use crossterm::event::KeyCode;
use serde_json::json;
use tokio::sync::mpsc::unbounded_channel;

use pith_protocol::event::{
    ContextEvent, EngineState, ErrorKind, Event, OutputEvent, SessionEvent, TurnEnd, TurnEvent,
};
use pith_protocol::message::{CompactionPart, PartKind, Role, ToolState, Usage};

use super::app::App;
use super::tests::*;
use super::view::status;

#[test]
fn cost_and_context_update_at_once() {
    let (mut app, _rx) = app_with(conversation());
    ev(
        &mut app,
        Event::Output(OutputEvent::StepFinished {
            usage: Usage::default(),
            finish: "stop".into(),
            cost: 0.5,
        }),
    );
    assert!(
        status::status_line(&app.status_view(), 120)
            .to_string()
            .contains("$0.75")
    );
    ev(
        &mut app,
        Event::Context(ContextEvent::ContextUsage(usage(41_200))),
    );
    assert!(render(&mut app, 120, 30).contains("41.2k / 200k (21%)"));
}

#[test]
fn compaction_running_then_done() {
    let (mut app, _rx) = fresh();
    ev(
        &mut app,
        Event::Context(ContextEvent::CompactionStarted {
            auto: true,
            overflow: true,
            focus: None,
        }),
    );
    let mut c = msg("M3", Role::User);
    c.parts.push(part(
        "M3",
        "M3-c",
        PartKind::Compaction(CompactionPart {
            tail_start: None,
            auto: true,
            overflow: true,
            focus: None,
            ..Default::default()
        }),
    ));
    ev(&mut app, Event::Output(OutputEvent::Message { message: c }));
    let screen = render(&mut app, 80, 24);
    assert!(screen.contains("compacting context…"), "{screen}");
    assert!(screen.contains("compacting"), "status shows it: {screen}");
    ev(
        &mut app,
        Event::Context(ContextEvent::CompactionFinished {
            summary_message_id: "M4".into(),
            before: 190_000,
            after: 21_000,
            model_calls: 2,
            cost: Default::default(),
            kept: Default::default(),
            left: Default::default(),
        }),
    );
    ev(
        &mut app,
        Event::Context(ContextEvent::ContextUsage({
            let mut u = usage(21_000);
            u.estimated = true;
            u
        })),
    );
    let screen = render(&mut app, 80, 24);
    assert!(
        screen.contains("compacted 190k → 21k · auto · overflow"),
        "{screen}"
    );
    assert!(screen.contains("~21k / 200k (10%)"), "{screen}");
}

/// A failed step: its message carries the error, then the engine reports the same error. The
/// screen says it once.
#[test]
fn a_provider_error_is_shown_once() {
    let (mut app, _rx) = fresh();
    let mut a = msg("M1", Role::Assistant);
    a.error = Some("HTTP 401 unauthorized: bad key; check OPENAI_API_KEY".into());
    ev(&mut app, Event::Output(OutputEvent::Message { message: a }));
    ev(
        &mut app,
        Event::Turn(TurnEvent::Error {
            kind: pith_protocol::event::ErrorKind::Provider,
            message: "HTTP 401 unauthorized: bad key; check OPENAI_API_KEY".into(),
            failed_message: Some("M1".into()),
        }),
    );
    let screen = render(&mut app, 100, 24);
    assert_eq!(
        screen.matches("HTTP 401 unauthorized").count(),
        1,
        "{screen}"
    );
    // A different error still shows.
    ev(
        &mut app,
        Event::Turn(TurnEvent::Error {
            kind: pith_protocol::event::ErrorKind::Store,
            message: "cannot save the session".into(),
            failed_message: None,
        }),
    );
    let screen = render(&mut app, 100, 24);
    assert!(screen.contains("cannot save the session"), "{screen}");
}

#[test]
fn tool_events_and_errors_render() {
    let (mut app, _rx) = fresh();
    let mut a = msg("M1", Role::Assistant);
    a.parts.push(part(
        "M1",
        "M1-tool",
        PartKind::Tool {
            call_id: "c1".into(),
            tool: "read".into(),
            input: json!({"file_path": "src/missing.rs"}),
            state: ToolState::Error {
                message: "no such file".into(),
                start: None,
                end: None,
            },
        },
    ));
    a.error = Some("provider returned 500".into());
    ev(&mut app, Event::Output(OutputEvent::Message { message: a }));
    ev(
        &mut app,
        Event::Output(OutputEvent::ToolFinished {
            call_id: "c1".into(),
            tool: "read".into(),
            title: String::new(),
            error: Some("no such file".into()),
            duration_ms: 40,
        }),
    );
    ev(
        &mut app,
        Event::Turn(TurnEvent::Error {
            kind: ErrorKind::Provider,
            message: "rate limited".into(),
            failed_message: None,
        }),
    );
    let screen = render(&mut app, 80, 24);
    assert!(screen.contains("✗ read src/missing.rs  40ms"), "{screen}");
    assert!(screen.contains("no such file"));
    assert!(screen.contains("error: provider returned 500"));
    assert!(screen.contains("✗ rate limited"));
}

#[test]
fn the_first_run_hint_is_the_first_entry() {
    // what `first_run::hint` says with no key set (the binary's test checks the wording)
    let hint = "No model is configured and no API key was found. Set OPENAI_API_KEY, or point \
                pith at a local server — add to ~/.config/pith/config.toml:\n\
                model = \"ollama/qwen2.5-coder:14b\"";
    let (tx, _rx) = unbounded_channel();
    let mut i = init(Vec::new());
    i.first_run_hint = Some(hint.to_string());
    let mut app = App::new(i, tx);
    assert!(render(&mut app, 80, 24).contains("No model is configured"));
}

#[test]
fn the_engine_announcing_the_start_session_keeps_the_screen() {
    let mut i = super::tests::init(Vec::new());
    i.first_run_hint = Some("No model is configured; using openai/gpt-4.1".into());
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let mut app = App::new(i, tx);
    ev(
        &mut app,
        Event::Session(SessionEvent::SessionLoaded {
            session: super::tests::session(),
            messages: Vec::new(),
            more_history: false,
        }),
    );
    let screen = render(&mut app, 80, 24);
    assert!(screen.contains("No model is configured"), "{screen}");
    assert!(!screen.contains("new session"), "{screen}");

    // a fresh app shows the welcome screen after the same announcement
    let (mut app, _rx) = fresh();
    ev(
        &mut app,
        Event::Session(SessionEvent::SessionLoaded {
            session: super::tests::session(),
            messages: Vec::new(),
            more_history: false,
        }),
    );
    assert!(render(&mut app, 80, 24).contains("/help for commands"));
}

#[test]
fn an_interrupted_answer_is_marked_once() {
    let (mut app, _rx) = fresh();
    let mut a = super::tests::msg("M2", Role::Assistant);
    ev(
        &mut app,
        Event::Output(OutputEvent::Message { message: a.clone() }),
    );
    stream(&mut app, "M2", "M2-t", &["Half an ans"]);
    a.parts
        .push(super::tests::text("M2", "M2-t", "Half an ans"));
    a.error = Some("interrupted".into());
    ev(&mut app, Event::Output(OutputEvent::Message { message: a }));
    ev(
        &mut app,
        Event::Turn(TurnEvent::TurnFinished {
            reason: TurnEnd::Interrupted,
        }),
    );
    let screen = render(&mut app, 80, 24);
    assert!(
        screen.contains("Half an ans"),
        "partial answer kept: {screen}"
    );
    assert_eq!(screen.matches("interrupted").count(), 1, "{screen}");
    assert!(!screen.contains("error"), "{screen}");
}

#[test]
fn a_mid_turn_message_shows_what_the_user_typed() {
    let (mut app, _rx) = fresh();
    ev(
        &mut app,
        Event::Turn(TurnEvent::State {
            state: EngineState::Thinking,
            detail: None,
        }),
    );
    type_str(&mut app, "also mention cats");
    key(&mut app, KeyCode::Enter);
    assert!(app.transcript().pending()[0].queued);
    let id = app.transcript().pending()[0].id.clone();
    let mut echo = user("M3", "also mention cats");
    echo.submission_id = Some(id);
    echo.mid_turn = true;
    ev(
        &mut app,
        Event::Output(OutputEvent::Message {
            message: echo.clone(),
        }),
    );
    assert!(
        app.transcript().pending().is_empty(),
        "the queued copy is acknowledged"
    );
    let screen = render(&mut app, 80, 24);
    assert!(screen.contains("› also mention cats"), "{screen}");
    assert!(screen.contains("sent while the agent worked"), "{screen}");
    // and history recalls the text
    let (mut app, _rx) = app_with(vec![echo]);
    key(&mut app, KeyCode::Up);
    assert_eq!(app.composer().text(), "also mention cats");
}

/// The retry status: attempt, when, why — once, and gone as soon as the answer streams.
#[test]
fn retry_status_gives_the_reason_and_clears_when_the_answer_streams() {
    let (mut app, _rx) = fresh();
    ev(
        &mut app,
        Event::Turn(TurnEvent::State {
            state: EngineState::Thinking,
            detail: None,
        }),
    );
    ev(
        &mut app,
        Event::Turn(TurnEvent::Retrying {
            attempt: 1,
            max: 4,
            delay_ms: 8_000,
            message: "overloaded_error: Overloaded".into(),
        }),
    );
    ev(
        &mut app,
        Event::Turn(TurnEvent::State {
            state: EngineState::Retrying,
            detail: None,
        }),
    );
    let line = status::status_line(&app.status_view(), 160).to_string();
    assert!(line.contains("retry 1/4 in "), "{line}");
    assert!(line.contains("overloaded_error: Overloaded"), "{line}");
    assert_eq!(line.matches("1/4").count(), 1, "{line}");
    // At 80 columns the reason gives way, never the retry itself, and nothing runs off the edge.
    ev(
        &mut app,
        Event::Turn(TurnEvent::Retrying {
            attempt: 2,
            max: 4,
            delay_ms: 8_000,
            message: "cannot reach http://127.0.0.1:8080/v1/chat/completions: connection refused"
                .into(),
        }),
    );
    for w in [80usize, 60] {
        let line = status::status_line(&app.status_view(), w);
        assert!(line.width() <= w, "{w}: {}", line.width());
        let text = line.to_string();
        assert!(text.contains("↻ retry 2/4 in "), "{w}: {text}");
    }
    ev(
        &mut app,
        Event::Output(OutputEvent::Message {
            message: msg("M1", Role::Assistant),
        }),
    );
    stream(&mut app, "M1", "M1-t", &["Here"]);
    let line = status::status_line(&app.status_view(), 160).to_string();
    assert!(!line.contains("retry"), "{line}");
    assert!(line.contains("responding"), "{line}");
}

/// An interrupted /compact leaves no "context compacted" behind.
#[test]
fn an_interrupted_compaction_is_not_shown_as_done() {
    let (mut app, _rx) = app_with(conversation());
    ev(
        &mut app,
        Event::Context(ContextEvent::CompactionStarted {
            auto: false,
            overflow: false,
            focus: None,
        }),
    );
    ev(
        &mut app,
        Event::Turn(TurnEvent::TurnFinished {
            reason: TurnEnd::Interrupted,
        }),
    );
    let screen = render(&mut app, 80, 30);
    assert!(!screen.contains("context compacted"), "{screen}");
    assert!(screen.contains("interrupted"), "{screen}");
}

/// A retried step's partial output and a dropped message leave the screen.
#[test]
fn removed_parts_and_messages_leave_the_screen() {
    let (mut app, _rx) = fresh();
    ev(
        &mut app,
        Event::Output(OutputEvent::Message {
            message: msg("M1", Role::Assistant),
        }),
    );
    stream(&mut app, "M1", "M1-t", &["a partial answer that broke off"]);
    assert!(render(&mut app, 80, 24).contains("partial answer"));
    ev(
        &mut app,
        Event::Output(OutputEvent::PartsRemoved {
            message_id: "M1".into(),
            part_ids: vec!["M1-t".into()],
        }),
    );
    assert!(!render(&mut app, 80, 24).contains("partial answer"));
    stream(&mut app, "M1", "M1-u", &["the retried answer"]);
    assert!(render(&mut app, 80, 24).contains("the retried answer"));
    ev(
        &mut app,
        Event::Output(OutputEvent::MessageRemoved {
            message_id: "M1".into(),
        }),
    );
    assert!(!render(&mut app, 80, 24).contains("retried answer"));
}

/// The engine refused a prompt before storing it: the prompt comes back to the composer as it
/// was typed (the paste still a chip), no longer pending, with the reason on screen.
#[test]
fn a_refused_prompt_comes_back_to_the_composer_with_the_reason() {
    use super::app::Msg;
    use crossterm::event::Event as TermEvent;
    let (mut app, mut rx) = fresh();
    type_str(&mut app, "explain this log: ");
    let big: String = (0..5_000).map(|i| format!("log line {i}\n")).collect();
    app.update(Msg::Term(TermEvent::Paste(big)));
    key(&mut app, KeyCode::Enter);
    let sent = prompts(&mut rx);
    let (id, text) = sent.first().cloned().expect("sent");
    assert!(app.composer().is_empty());
    assert_eq!(app.transcript().pending().len(), 1);
    ev(
        &mut app,
        Event::Session(SessionEvent::PromptRefused {
            id,
            text: text.clone(),
            tokens: 75_000,
            usable: 10_000,
            message: "not sent: this prompt (~75000 tokens with the system prompt and tools) \
                      does not fit the 10000 tokens this model can use"
                .into(),
        }),
    );
    ev(
        &mut app,
        Event::Turn(TurnEvent::TurnFinished {
            reason: TurnEnd::Error,
        }),
    );
    assert!(
        app.transcript().pending().is_empty(),
        "no longer shown as pending"
    );
    assert_eq!(
        app.composer().text(),
        "explain this log: [pasted 5000 lines]"
    );
    assert_eq!(
        app.composer().expanded(),
        text,
        "sending again sends the same"
    );
    let screen = render(&mut app, 80, 24);
    assert!(screen.contains("your prompt is back in the"), "{screen}");
    insta::assert_snapshot!("prompt_refused_80x24", screen);
}

/// Something typed since is not overwritten: the refused prompt is one ↑ away.
#[test]
fn a_refused_prompt_leaves_a_busy_composer_alone() {
    let (mut app, mut rx) = fresh();
    type_str(&mut app, "a long question");
    key(&mut app, KeyCode::Enter);
    let (id, text) = prompts(&mut rx).first().cloned().expect("sent");
    type_str(&mut app, "next");
    ev(
        &mut app,
        Event::Session(SessionEvent::PromptRefused {
            id,
            text,
            tokens: 11_000,
            usable: 10_000,
            message: "not sent".into(),
        }),
    );
    assert_eq!(app.composer().text(), "next");
    let screen = render(&mut app, 80, 24);
    assert!(screen.contains("recall the prompt with ↑"), "{screen}");
}
